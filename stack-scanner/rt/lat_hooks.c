/* lat_hooks.c - the entry points libvprof calls (libvprof/hooks.h): bind
 * the shims before the first tick, start the scanner with the process's
 * output file, restart both in a forked child, and drain and close at
 * exit. The scanner's do nothing unless VPROF_LATENCY=on. */
#include "hooks.h"
#include "lat_rt.h"

static int active;                   /* atomic: file open and scanner running */

void vprof_latency_bind(void)
{
    vl_sys_bind();
    vl_pthread_bind();
    vl_rwlock_bind();
    vl_sem_bind();
}

void vprof_latency_start(const struct vprof_latency_args *a)
{
    vl_config_load();
    if (!vl_cfg.on || __atomic_load_n(&active, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&vl_recording, 1, __ATOMIC_RELEASE);
    vl_funcs_load();
    if (!a->rt || !a->rt->create_file || vl_file_open(a->rt->create_file, a->id, a->start_ns) < 0)
        return;
    if (vl_scanner_start(a->rt) < 0) {
        vl_file_close(1);
        return;
    }
    __atomic_store_n(&active, 1, __ATOMIC_RELEASE);
}

void vprof_latency_atfork_child(const struct vprof_latency_args *a)
{
    /* Only this thread survived the fork; the parent's scanner did not. */
    vl_scanner_atfork_child();
    vl_registry_atfork_child();
    vl_file_forget();
    int was = __atomic_exchange_n(&active, 0, __ATOMIC_ACQ_REL);
    if (was)
        vprof_latency_start(a);
}

void vprof_latency_stop(void)
{
    if (!__atomic_exchange_n(&active, 0, __ATOMIC_ACQ_REL))
        return;
    /* Threads still running after this pay only the shims' gate again. */
    __atomic_store_n(&vl_recording, 0, __ATOMIC_RELEASE);
    vl_scanner_stop();
    vl_file_close(1);
}
