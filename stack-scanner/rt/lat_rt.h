/* lat_rt.h - internals of the stack-scanner runtime shared by its files:
 * configuration, the registry of threads, event emission and the output
 * file. Nothing here is public; the public parts are vprof_latency.h (request
 * API) and libvprof/hooks.h (start/atfork/stop). */
#ifndef VPROF_LAT_RT_H
#define VPROF_LAT_RT_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "lat_abi.h"
#include "vprof_format.h"

#define VL_HIDDEN __attribute__((visibility("hidden")))

/* ---- configuration (lat_config.c); documented in docs/LATENCY.md ---- */
struct vl_config {
    int on;                 /* VPROF_LATENCY: off (default) | on */
    uint32_t scan_ns;       /* VPROF_SCAN_NS: 20000; 0 = busy polling */
    uint64_t wait_ns;       /* VPROF_WAIT_NS: 1000 */
    uint64_t capacity;      /* VPROF_LATENCY_MAX: events the file holds */
    uint32_t syscalls;      /* VPROF_LATENCY_SYSCALLS: bit set of enum vl_sys */
    int scan_rt;            /* VPROF_SCAN_PRIO: 0 normal (default), 1 rt */
    const char *funcs;      /* VPROF_LATENCY_FUNCS: NULL = every function */
};
VL_HIDDEN extern struct vl_config vl_cfg;
VL_HIDDEN void vl_config_load(void);  /* idempotent, async-signal-safe */

/* Fast gate read by every shim and the request API: 1 when events are
 * recorded (VPROF_LATENCY=on). */
VL_HIDDEN extern int vl_recording;

/* True when a shimmed call should be observed: events are recorded and the
 * call is not the runtime's own (the scanner, the writer). */
static inline int vl_observing(void)
{
    return __builtin_expect(__atomic_load_n(&vl_recording, __ATOMIC_RELAXED), 0) &&
           !__vprof_lat_tls.internal;
}

/* ---- the shims' real functions ----
 * Each shim file binds its real functions with dlsym(RTLD_NEXT) in one
 * function, and vprof_latency_bind (hooks.h) calls them all before the
 * first profiling tick. A tick may reach a shim (libunwind validates
 * addresses with read() on a pipe, and read is ours) and must then find
 * it bound: dlsym takes the loader's lock, and a tick that interrupted
 * the same thread while it took or released that lock would wait for it
 * forever, with every signal blocked. VL_ENSURE(fn, bind) binds late when
 * a shim is called before that (another library's constructor). */
#define VL_ENSURE(fn, bind) do { if (__builtin_expect(!fn, 0)) bind(); } while (0)
VL_HIDDEN void vl_sys_bind(void);       /* lat_shim_sys.c */
VL_HIDDEN void vl_pthread_bind(void);   /* lat_shim_pthread.c */
VL_HIDDEN void vl_rwlock_bind(void);    /* lat_shim_rwlock.c */
VL_HIDDEN void vl_sem_bind(void);       /* lat_shim_sem.c */

enum vl_sys {
    VL_SYS_READ, VL_SYS_WRITE, VL_SYS_NANOSLEEP, VL_SYS_CLOCK_NANOSLEEP,
    VL_SYS_SLEEP, VL_SYS_USLEEP, VL_SYS_POLL, VL_SYS_SELECT, VL_SYS_EPOLL_WAIT,
    VL_SYS_ACCEPT, VL_SYS_ACCEPT4, VL_SYS_CONNECT, VL_SYS_RECV,
    VL_SYS_RECVFROM, VL_SYS_FSYNC, VL_SYS_FDATASYNC, VL_SYS_COUNT
};
VL_HIDDEN extern const char *const vl_sys_names[VL_SYS_COUNT];

static inline uint64_t vl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- registry of threads (lat_registry.c) ---- */
#define VL_MAX_THREADS 512
#define VL_RING 256          /* events per thread buffer (power of two) */
#define VL_INLINE_RECS 64    /* scanner's records per thread before it mallocs */

enum { VL_FREE = 0, VL_CLAIMING, VL_LIVE, VL_DEAD };

struct vl_srec {             /* scanner's view of one live record */
    uint64_t gen;
    uintptr_t addr;
    uint64_t func, site;
    uint64_t first_ns;
};

struct vl_slot {
    /* shared with the owning thread */
    int state;               /* VL_FREE.. (atomic) */
    int busy;                /* scanner is reading this thread's stack */
    int tid;
    pthread_t thread;
    struct vl_tls *tls;
    uint64_t reg_ns, death_ns;
    uint32_t head;           /* ring producer index (owning thread) */
    uint32_t tail;           /* ring consumer index (scanner) */
    struct vpf_latency_rec ring[VL_RING];
    /* private to the scanner */
    int bounds_ok, is_main;
    uintptr_t lo, hi, mapped_lo;
    uint64_t maps_refresh_ns;
    uintptr_t last_top, race_top;
    uint64_t last_gen, last_ok_ns;
    struct vl_srec *recs;    /* inline_recs, or malloc'd for deep chains */
    uint32_t n_recs, cap_recs;
    struct vl_srec inline_recs[VL_INLINE_RECS];
};
VL_HIDDEN extern struct vl_slot vl_slots[VL_MAX_THREADS];
VL_HIDDEN extern int vl_slots_hw;    /* slots ever used (high-water mark) */
VL_HIDDEN extern uint64_t vl_n_registered, vl_n_full;   /* statistics */

/* The calling thread's slot, registering it if needed (NULL when not
 * recording or the registry is full). Async-signal-safe. */
VL_HIDDEN struct vl_slot *vl_self(void);
/* After fork, in the child: every other thread is gone. */
VL_HIDDEN void vl_registry_atfork_child(void);

/* ---- events (lat_emit.c) ---- */
/* Records one event from an application thread: into its ring, else
 * straight into the file. Async-signal-safe. */
VL_HIDDEN void vl_emit(uint8_t kind, uint64_t start_ns, uint64_t dur_ns,
                       uint64_t func, uint64_t site, uint32_t other_tid,
                       uint32_t generation);
/* Scanner: moves a slot's ring into the file. */
VL_HIDDEN void vl_drain(struct vl_slot *s);

/* ---- output file (lat_file.c) ---- */
/* Creates latency.<id> through the runtime's create_file (hooks.h). */
VL_HIDDEN int vl_file_open(int (*create_file)(const char *name), const char *id,
                           uint64_t start_ns);
VL_HIDDEN void vl_file_put(const struct vpf_latency_rec *r);
VL_HIDDEN void vl_file_close(int clean);
VL_HIDDEN void vl_file_forget(void);   /* child after fork: drop the parent's */
VL_HIDDEN void vl_warn(const char *msg1, const char *msg2);

/* ---- VPROF_LATENCY_FUNCS (lat_funcs.c) ---- */
VL_HIDDEN extern int vl_funcs_limited;      /* a list is in force */
VL_HIDDEN void vl_funcs_load(void);         /* once; before the file opens */
VL_HIDDEN int vl_func_allowed(uint64_t func);   /* entry address on the list */

/* ---- /proc/self/maps (lat_text.c) ---- */
/* Calls fn for each mapping (exec: its x permission) until fn returns
 * non-zero; read(2) only, no static state. */
VL_HIDDEN void vl_maps_each(int (*fn)(uintptr_t lo, uintptr_t hi, int exec, void *ctx), void *ctx);

/* ---- scanner (lat_scan.c) ---- */
struct vprof_rt_services;
/* Starts the scanner thread through the runtime's thread service
 * (libvprof/hooks.h): never the program's pthread_create. */
VL_HIDDEN int vl_scanner_start(const struct vprof_rt_services *rt);
VL_HIDDEN void vl_scanner_stop(void);       /* final scan, drain, then return */
VL_HIDDEN void vl_scanner_atfork_child(void);

/* Flag bits of vpf_latency_rec.flags besides VPF_REC_COMMITTED. */
#define VL_FLAG_OPEN 0x01     /* call still running at stop: duration is a lower bound */

#endif
