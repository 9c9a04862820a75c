/* common.c - error messages, tags, value kinds and field encoding shared by
 * the text formats. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vprof_format.h"

/* ---------- buffered text writer ---------- */

void vpf_tw_init(struct vpf_textw *w, int fd)
{
    w->n = 0;
    w->fd = fd;
    w->err = 0;
}

int vpf_write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    size_t off = 0;
    while (off < n) {
        ssize_t r = write(fd, s + off, n - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        off += (size_t)r;
    }
    return 0;
}

void vpf_tw_flush(struct vpf_textw *w)
{
    if (!w->err && vpf_write_all(w->fd, w->b, w->n) < 0)
        w->err = 1;
    w->n = 0;
}

void vpf_tw_put(struct vpf_textw *w, const char *s, size_t n)
{
    while (n) {
        if (w->n == sizeof w->b)
            vpf_tw_flush(w);
        size_t k = sizeof w->b - w->n < n ? sizeof w->b - w->n : n;
        memcpy(w->b + w->n, s, k);
        w->n += k;
        s += k;
        n -= k;
    }
}

void vpf_tw_put_u(struct vpf_textw *w, uint64_t v)
{
    char t[24];
    int i = sizeof t;
    do {
        t[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    vpf_tw_put(w, t + i, sizeof t - (size_t)i);
}

void vpf_set_err(vpf_err *e, const char *fmt, ...)
{
    if (!e)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

int vpf_grow_try(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap && *p)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (elem && c > SIZE_MAX / elem)
        return -1;
    size_t bytes = c * elem;
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

uint64_t vpf_hash_mem(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t vpf_hash_str(uint64_t h, const char *s)
{
    return s ? vpf_hash_mem(h, s, strlen(s)) : h;
}

int vpf_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t vpf_var_key_hash(const char *file, const char *function, const char *name)
{
    return vpf_hash_str(vpf_hash_str(vpf_hash_str(VPF_FNV_BASIS, file), function), name);
}

static const struct { const char *word; uint16_t bit; } tag_words[] = {
    {"loop", VPF_TAG_LOOP}, {"cond", VPF_TAG_COND},
    {"branch", VPF_TAG_COND}, /* the paper's figure spells it this way */
    {"args", VPF_TAG_ARGS}, {"global", VPF_TAG_GLOBAL},
};

uint16_t vpf_tags_parse(const char *s)
{
    uint16_t tags = 0;
    while (s && *s) {
        size_t n = strcspn(s, "|");
        for (size_t i = 0; i < sizeof tag_words / sizeof tag_words[0]; i++)
            if (strlen(tag_words[i].word) == n && !strncmp(s, tag_words[i].word, n))
                tags |= tag_words[i].bit;
        s += n;
        if (*s == '|')
            s++;
    }
    return tags;
}

void vpf_tags_format(uint16_t tags, char *buf, size_t len)
{
    static const struct { const char *word; uint16_t bit; } out[] = {
        {"loop", VPF_TAG_LOOP}, {"cond", VPF_TAG_COND}, {"args", VPF_TAG_ARGS},
    };
    size_t used = 0;
    if (len == 0)
        return;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
        if (!(tags & out[i].bit))
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? "|" : "", out[i].word);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    if (!used)
        snprintf(buf, len, "none");
}

const char *vpf_kind_name(unsigned kind)
{
    static const char *names[] = {"int", "uint", "float", "ptr-basic", "ptr", "bool"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

static int must_escape(unsigned char c)
{
    return c == ',' || c == '\t' || c == '%' || c == '\n' || c == '\r';
}

void vpf_encode_field(const char *src, char *dst, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    if (len == 0)
        return;
    for (; src && *src; src++) {
        unsigned char c = (unsigned char)*src;
        if (must_escape(c)) {
            if (o + 3 >= len)
                break;
            dst[o++] = '%';
            dst[o++] = hex[c >> 4];
            dst[o++] = hex[c & 15];
        } else {
            if (o + 1 >= len)
                break;
            dst[o++] = (char)c;
        }
    }
    dst[o] = 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int vpf_decode_field(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p != '%') {
            *o++ = *p;
            continue;
        }
        int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
        if (hi < 0 || lo < 0)
            return -1;
        *o++ = (char)(hi << 4 | lo);
        p += 2;
    }
    *o = 0;
    return 0;
}

void *vpf_map_file(const char *path, size_t min_len, size_t *len, vpf_err *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        vpf_set_err(e, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        vpf_set_err(e, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    *len = (size_t)st.st_size;
    if (*len == 0 || *len < min_len) {
        close(fd);
        vpf_set_err(e, "%s: offset %zu: file truncated inside its %zu-byte header", path, *len,
                    min_len);
        return NULL;
    }
    void *p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        vpf_set_err(e, "%s: mmap: %s", path, strerror(errno));
        return NULL;
    }
    return p;
}

void *vpf_read_file(const char *path, size_t *len, vpf_err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        vpf_set_err(e, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, r;
    char *buf = malloc(cap);
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        vpf_set_err(e, "%s: %s", path, bad ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int vpf_system_path(const char *path)
{
    if (!path || path[0] != '/') return 0;
    /* lexically normalized: /usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include */
    char norm[4096];
    size_t n = 0;
    for (const char *p = path; *p;) {
        while (*p == '/') p++;
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (n > 0 && norm[n - 1] != '/') n--;
            if (n > 0) n--;
        } else if (len && !(len == 1 && p[0] == '.')) {
            if (n + len + 2 >= sizeof norm) return 0;
            norm[n++] = '/';
            memcpy(norm + n, p, len);
            n += len;
        }
        p += len;
    }
    norm[n] = 0;
    return !strncmp(norm, "/usr/include/", 13) || !strncmp(norm, "/usr/lib/", 9) ||
           !strncmp(norm, "/usr/local/include/", 19);
}
