/* session.c - naming, opening and closing one process's vprof files; see
 * session.h. */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "stacks.h"
#include "vprof_format.h"

static int mkdir_p(const char *dir)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return -1;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static void absolute(const char *path, char *out, size_t len)
{
    char cwd[PATH_MAX];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(out, len, "%s", path);
    else
        snprintf(out, len, "%s/%s", cwd, path);
}

void vprof_session_load_metadata(struct vprof_session *s)
{
    s->meta_path[0] = 0;
    if (vprof_cfg.meta) {
        snprintf(s->meta_path, sizeof s->meta_path, "%s", vprof_cfg.meta);
    } else if (s->exe.path[0]) {
        snprintf(s->meta_path, sizeof s->meta_path, "%s.vmeta", s->exe.path);
        if (access(s->meta_path, F_OK) != 0)
            s->meta_path[0] = 0;
    }
    struct vprof_core_config cc = {
        .meta_path = s->meta_path[0] ? s->meta_path : NULL,
        .load_bias = s->exe.bias,
        .text_lo = s->exe.text_lo,
        .text_hi = s->exe.text_hi,
        .build_id = s->exe.build_id,
        .build_id_len = s->exe.build_id_len,
        .unwind_depth = vprof_cfg.unwind,
        .unwind_all = vprof_cfg.unwind_all,
        .table_div = vprof_cfg.table_div,
        .max_elems = VPROF_MAX_ELEMS,
        .safe_lo = s->exe.seg_lo,
        .safe_hi = s->exe.seg_hi,
        .n_safe = s->exe.n_segs,
        .read_pipe = vprof_cfg.read_pipe,
        .tick_reads = vprof_cfg.tick_reads,
        .tick_budget_ns = (uint64_t)vprof_cfg.tick_us * 1000,
        .period_ns = s->hz ? 1000000000ull / s->hz : 0,
    };
    s->meta_err[0] = 0;
    s->core_status = vprof_core_init(&cc, s->meta_err, sizeof s->meta_err);
    if (s->core_status < 0)
        vprof_warn("%s (profiling continues without values)", s->meta_err);
}

/* A privileged (setuid/setgid) process writes only where its real user
 * could: access(2) checks with the real ids. */
static int dir_allowed(const char *dir)
{
    if (!vprof_cfg.secure || access(dir, W_OK | X_OK) == 0)
        return 1;
    vprof_warn("%s: the real user may not write here: no profile files "
               "(setuid/setgid program)", dir);
    return 0;
}

/* With VPROF_OUT: that directory (created); otherwise, only when there are
 * values to write, the directory gmon.out goes to. */
static int pick_dir(struct vprof_session *s)
{
    s->out_dir[0] = 0;
    if (vprof_cfg.out_dir) {
        absolute(vprof_cfg.out_dir, s->out_dir, sizeof s->out_dir);
        if (mkdir_p(s->out_dir) < 0) {
            vprof_warn("%s: cannot create directory: %s", s->out_dir, strerror(errno));
            s->out_dir[0] = 0;
        }
    } else if (s->core_status == 1) {
        if (vprof_cfg.gmon_prefix) {
            char p[PATH_MAX];
            absolute(vprof_cfg.gmon_prefix, p, sizeof p);
            char *slash = strrchr(p, '/');
            if (!slash) {               /* relative, and no cwd to prefix */
                snprintf(s->out_dir, sizeof s->out_dir, ".");
            } else {
                *slash = 0;
                snprintf(s->out_dir, sizeof s->out_dir, "%s", p[0] ? p : "/");
            }
        } else if (!getcwd(s->out_dir, sizeof s->out_dir)) {
            s->out_dir[0] = 0;
        }
    }
    if (s->out_dir[0] && !dir_allowed(s->out_dir))
        s->out_dir[0] = 0;
    return s->out_dir[0] ? 0 : -1;
}

/* ---------- creating files ----------
 *
 * Every file vprof writes is created here (the scanner's latency.<id>
 * too, through vprof_session_create): O_CREAT|O_EXCL|O_NOFOLLOW, so an
 * existing file — a hard link or a symlink planted under the name — is
 * never opened for writing. A name that exists anyway is unlinked (the
 * name only: a hard link's target and a symlink's target are untouched)
 * and the file created exclusively once more; that is also how a new run
 * replaces an old gmon.out, as gprof users expect. */
static int create_excl(const char *path, int flags, int mode)
{
    flags |= O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = open(path, flags, mode);
    if (fd < 0 && errno == EEXIST && unlink(path) == 0)
        fd = open(path, flags, mode);
    return fd;
}

/* Identity of a file we created, to recognise it when it is reopened by
 * name (the program may have closed our descriptor; someone may have put
 * another file under the name). */
static void remember(int fd, struct vprof_file_id *id)
{
    struct stat st;
    id->ok = fstat(fd, &st) == 0;
    id->dev = id->ok ? (uint64_t)st.st_dev : 0;
    id->ino = id->ok ? (uint64_t)st.st_ino : 0;
}

/* Reopens a file we created, or -1 when the name now holds another. */
static int reopen_same(const char *path, int flags, const struct vprof_file_id *id)
{
    struct stat st;
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && (!id->ok || fstat(fd, &st) < 0 || (uint64_t)st.st_dev != id->dev ||
                    (uint64_t)st.st_ino != id->ino)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* True when DIR/<prefix><id><suffix> exists, as anything. */
static int taken(const struct vprof_session *s, const char *prefix, const char *suffix)
{
    char p[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s%s%s", s->out_dir, prefix, s->id, suffix);
    return fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The first of <pid>, <pid>.1, ... for which no file of this process's
 * exists yet (layout, values, latency, with VPROF_OUT gmon) and whose
 * layout file is then created exclusively: an exec'd image keeps the pid,
 * and a name that is taken gets a new id rather than an overwrite.
 * Returns the layout's descriptor. */
static int create_layout(struct vprof_session *s)
{
    int pid = (int)getpid(), fd = -1;
    for (int k = 0; k < 10000; k++) {
        if (k)
            snprintf(s->id, sizeof s->id, "%d.%d", pid, k);
        else
            snprintf(s->id, sizeof s->id, "%d", pid);
        snprintf(s->layout_path, sizeof s->layout_path, "%s/layout.%s", s->out_dir, s->id);
        if (taken(s, "values.", "") || taken(s, "latency.", "") || taken(s, "stacks.", "") ||
            (vprof_cfg.out_dir && taken(s, "gmon.", ".out")))
            continue;
        fd = open(s->layout_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  VPROF_FILE_MODE(0));
        if (fd >= 0 || errno != EEXIST)
            break;
    }
    if (fd < 0)
        vprof_warn("%s: %s", s->layout_path, strerror(errno));
    else
        remember(fd, &s->layout_file);
    return fd;
}

/* Creates DIR/<prefix><id> for a record file (path and identity kept for
 * the exit); the descriptor, or -1 (said on stderr). */
static int create_record_file(struct vprof_session *s, const char *prefix, char *path,
                              size_t len, struct vprof_file_id *id)
{
    snprintf(path, len, "%s/%s%s", s->out_dir, prefix, s->id);
    int fd = create_excl(path, O_RDWR, VPROF_FILE_MODE(0));
    if (fd < 0)
        vprof_warn("%s: %s", path, strerror(errno));
    else
        remember(fd, id);
    return fd;
}

static void open_values(struct vprof_session *s)
{
    char err[800];
    int fd = create_record_file(s, "values.", s->values_path, sizeof s->values_path,
                                &s->values_file);
    if (fd < 0)
        return;
    if (vprof_core_open_values(fd, vprof_cfg.max_samples, s->hz, s->start_ns, err,
                               sizeof err) < 0)
        vprof_warn("%s: %s", s->values_path, err);
    else
        s->have_values = 1;
}

/* VPROF_STACKS: every tick's call chain (stacks.c). */
static void open_stacks(struct vprof_session *s)
{
    char err[800];
    int fd = create_record_file(s, "stacks.", s->stacks_path, sizeof s->stacks_path,
                                &s->stacks_file);
    if (fd < 0)
        return;
    if (vprof_stacks_open(fd, vprof_cfg.stacks, vprof_cfg.stacks_max, s->hz, s->start_ns,
                          s->exe.text_lo, s->exe.text_hi, err, sizeof err) < 0)
        vprof_warn("%s: %s", s->stacks_path, err);
    else
        s->have_stacks = 1;
}

/* Trims a record file we made to its header and n records (the sparse
 * rest was never written). Reopened by name: the program may have closed
 * or reused our descriptor; only if it is still the file we made. */
static void trim(const char *path, const struct vprof_file_id *id, uint64_t n, uint64_t rec_size)
{
    int fd = reopen_same(path, O_WRONLY, id);
    if (fd < 0)
        return;
    if (ftruncate(fd, (off_t)(VPF_HEADER_SIZE + n * rec_size)) < 0) {
        /* the header still says how many records there are */
    }
    close(fd);
}

int vprof_session_create(const struct vprof_session *s, const char *name)
{
    char p[PATH_MAX];
    if (!s->out_dir[0] || snprintf(p, sizeof p, "%s/%s", s->out_dir, name) >= (int)sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return create_excl(p, O_RDWR, VPROF_FILE_MODE(0));
}

static void write_layout_head(const struct vprof_session *s, int fd)
{
    char status[900];
    uint32_t refused = s->core_status == 1 ? vprof_core_refused() : 0;
    if (refused)    /* (still "ok": the rest of the file is used) */
        snprintf(status, sizeof status,
                 "ok (%u location entries refused: invalid expression program)", refused);
    else if (s->core_status == 1)
        snprintf(status, sizeof status, "ok");
    else if (s->core_status == 0)
        snprintf(status, sizeof status, "none");
    else
        snprintf(status, sizeof status, "error %s", s->meta_err);
    struct vpf_layout l;
    memset(&l, 0, sizeof l);
    l.pid = (int)getpid();
    l.ppid = (int)getppid();
    l.exe = (char *)s->exe.path;
    l.build_id = (char *)s->exe.build_id_hex;
    l.load_bias = s->exe.bias;
    l.text_lo = s->exe.text_lo;
    l.text_hi = s->exe.text_hi;
    l.hz = s->hz;
    l.timer = (char *)s->timer;
    l.unwind = vprof_cfg.unwind;
    l.unwind_all = vprof_cfg.unwind_all;
    l.meta_path = (char *)s->meta_path;
    l.meta_status = status;
    l.start_ns = s->start_ns;
    vpf_layout_write_head(fd, &l);
    vprof_exeinfo_write_maps(fd);
    const struct vpf_meta *m = vprof_core_meta();
    for (uint32_t i = 0; m && i < m->hdr.n_vars; i++) {
        const struct vpf_var_desc *v = &m->vars[i];
        vpf_layout_write_var(fd, i, vpf_meta_str(m, v->file), vpf_meta_str(m, v->function),
                             v->line, vpf_meta_str(m, v->name), vpf_meta_str(m, v->type),
                             v->tags, v->kind, v->size);
    }
}

void vprof_session_open_outputs(struct vprof_session *s)
{
    s->have_layout = s->have_values = s->have_stacks = 0;
    s->id[0] = 0;
    if (pick_dir(s) < 0)
        return;
    int fd = create_layout(s);
    if (fd < 0) {
        s->out_dir[0] = 0;
        return;
    }
    s->have_layout = 1;
    if (s->core_status == 1)
        open_values(s);
    if (vprof_cfg.stacks)
        open_stacks(s);
    write_layout_head(s, fd);
    close(fd);
}

int vprof_session_open_gmon(const struct vprof_session *s, char *path, size_t len)
{
    if (vprof_cfg.out_dir && s->out_dir[0])
        snprintf(path, len, "%s/gmon.%s.out", s->out_dir, s->id);
    else if (vprof_cfg.gmon_prefix)
        snprintf(path, len, "%s.%d", vprof_cfg.gmon_prefix, (int)getpid());
    else
        snprintf(path, len, "gmon.out");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        slash[slash == dir] = 0;        /* "/gmon.out" -> "/" */
    if (!dir_allowed(dir)) {
        errno = EACCES;
        return -1;
    }
    return create_excl(path, O_WRONLY, VPROF_FILE_MODE(1));
}

void vprof_session_close(struct vprof_session *s, struct vprof_core_counts *c)
{
    vprof_core_counts(c);
    if (s->have_values) {
        vprof_core_close();
        trim(s->values_path, &s->values_file, c->samples, sizeof(struct vpf_value_rec));
        s->have_values = 0;
    }
    if (s->have_stacks) {
        uint64_t n;
        vprof_stacks_close(&n, &c->stacks_dropped);
        trim(s->stacks_path, &s->stacks_file, n, VPF_STACK_REC_SIZE(vprof_cfg.stacks));
        s->have_stacks = 0;
    }
    if (s->have_layout) {
        int lfd = reopen_same(s->layout_path, O_WRONLY | O_APPEND, &s->layout_file);
        if (lfd >= 0) {
            vpf_layout_write_budget(lfd, vprof_cfg.tick_reads, vprof_cfg.tick_us, c->cut,
                                    c->overdue);
            vpf_layout_write_end(lfd, c->ticks, c->samples, c->dropped, c->faults,
                                 vprof_mono_ns());
            close(lfd);
        }
    }
}
