/* lat_config.c - the stack scanner's knobs, read from the environment once.
 * Defaults and meanings are documented in docs/LATENCY.md. Read with
 * libvprof's primitives (config.h: vprof_env, i.e. secure_getenv — a
 * setuid/setgid program ignores them — and vprof_parse_u64): no stdio, no
 * malloc, because the first reader may be the entry slow path of an
 * instrumented function. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lat_rt.h"

struct vl_config vl_cfg = {
    .on = 0, .scan_ns = 20000, .wait_ns = 1000, .capacity = 1u << 22,
    .syscalls = (1u << VL_SYS_COUNT) - 1,
};
int vl_recording;
static int loaded;

const char *const vl_sys_names[VL_SYS_COUNT] = {
    "read", "write", "nanosleep", "clock_nanosleep", "sleep", "usleep",
    "poll", "select", "epoll_wait", "accept", "accept4", "connect", "recv",
    "recvfrom", "fsync", "fdatasync",
};

static int word_is(const char *w, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(w, lit, n) == 0;
}

/* "all", "none", or a comma list of names from vl_sys_names and the groups
 * sleep, poll, net, io. */
static int parse_syscalls(const char *s, uint32_t *out)
{
    uint32_t m = 0;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (word_is(s, n, "all"))
            m |= (1u << VL_SYS_COUNT) - 1;
        else if (word_is(s, n, "none") || n == 0)
            ;
        else if (word_is(s, n, "sleep"))
            m |= 1u << VL_SYS_NANOSLEEP | 1u << VL_SYS_CLOCK_NANOSLEEP |
                 1u << VL_SYS_SLEEP | 1u << VL_SYS_USLEEP;
        else if (word_is(s, n, "poll"))
            m |= 1u << VL_SYS_POLL | 1u << VL_SYS_SELECT | 1u << VL_SYS_EPOLL_WAIT;
        else if (word_is(s, n, "net"))
            m |= 1u << VL_SYS_ACCEPT | 1u << VL_SYS_ACCEPT4 | 1u << VL_SYS_CONNECT |
                 1u << VL_SYS_RECV | 1u << VL_SYS_RECVFROM;
        else if (word_is(s, n, "io"))
            m |= 1u << VL_SYS_READ | 1u << VL_SYS_WRITE | 1u << VL_SYS_FSYNC |
                 1u << VL_SYS_FDATASYNC;
        else {
            int i, found = 0;
            for (i = 0; i < VL_SYS_COUNT; i++)
                if (word_is(s, n, vl_sys_names[i])) {
                    m |= 1u << i;
                    found = 1;
                }
            if (!found)
                return 0;
        }
        s += n;
        if (*s == ',')
            s++;
    }
    *out = m;
    return 1;
}

void vl_config_load(void)
{
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE))
        return;
    const char *v = vprof_env("VPROF_LATENCY");
    if (v && (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes")))
        vl_cfg.on = 1;
    else if (v && *v && strcmp(v, "off") && strcmp(v, "0") && strcmp(v, "no"))
        vl_warn("VPROF_LATENCY must be on or off; latency capture stays off", v);

    uint64_t u;
    if ((v = vprof_env("VPROF_SCAN_NS"))) {
        if (vprof_parse_u64(v, &u) && u <= 1000000000u)
            vl_cfg.scan_ns = (uint32_t)u;
        else
            vl_warn("VPROF_SCAN_NS must be 0..1000000000; using 20000", v);
    }
    if ((v = vprof_env("VPROF_WAIT_NS"))) {
        if (vprof_parse_u64(v, &u))
            vl_cfg.wait_ns = u;
        else
            vl_warn("VPROF_WAIT_NS must be a number of ns; using 1000", v);
    }
    if ((v = vprof_env("VPROF_LATENCY_MAX"))) {
        if (vprof_parse_u64(v, &u) && u >= 1 && u <= (1ull << 32))
            vl_cfg.capacity = u;
        else
            vl_warn("VPROF_LATENCY_MAX must be 1..4294967296; using 4194304", v);
    }
    if ((v = vprof_env("VPROF_SCAN_PRIO"))) {
        if (!strcmp(v, "rt"))
            vl_cfg.scan_rt = 1;
        else if (strcmp(v, "normal"))
            vl_warn("VPROF_SCAN_PRIO must be normal or rt; using normal", v);
    }
    if ((v = vprof_env("VPROF_LATENCY_SYSCALLS"))) {
        uint32_t m;
        if (parse_syscalls(v, &m))
            vl_cfg.syscalls = m;
        else
            vl_warn("VPROF_LATENCY_SYSCALLS: unknown name; shimming all", v);
    }
    /* parsed by lat_funcs.c; through vprof_env like every knob, so a
     * setuid program never reads a list (or an @FILE) the user names */
    vl_cfg.funcs = vprof_env("VPROF_LATENCY_FUNCS");
    __atomic_store_n(&vl_recording, vl_cfg.on, __ATOMIC_RELEASE);
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

/* Read the knobs before main so the shims' gate is set early. */
__attribute__((constructor(101))) static void vl_config_ctor(void)
{
    vl_config_load();
}
