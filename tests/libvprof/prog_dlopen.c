/* prog_dlopen - ticks in code dlopen'ed after start-up while the dynamic
 * loader's lock is held (tests/libvprof/t_dlopen.sh).
 *
 * The same source is the plugin (built with -DPLUGIN -shared -fPIC): a
 * loop that burns CPU, called through dlopen/dlsym, so a tick lands in an
 * object the runtime did not see at start-up. libunwind finds the unwind
 * info of such code with dl_iterate_phdr, which takes the loader's
 * dl_load_write_lock; a tick that waits for it waits with SIGPROF blocked,
 * and a thread that holds it may be waiting for the ticked thread.
 *
 *   prog_dlopen PLUGIN MS held    the deadlock, made certain: a helper
 *       thread enters dl_iterate_phdr and, in its callback (the loader's
 *       lock held), waits for a mutex the main thread holds while it runs
 *       the plugin for MS ms of CPU. Without the profiler the main thread
 *       finishes, unlocks, the helper goes on. A tick that calls into the
 *       loader from the plugin's frames never returns: the program hangs.
 *   prog_dlopen PLUGIN MS churn   the main thread runs the plugin for MS
 *       ms of CPU while a helper loops on dlopen/dlclose of the plugin
 *       (a second handle: the object stays mapped, but the loader's lists
 *       are taken and walked each time)
 *       and dl_iterate_phdr, the lock taken and released all the time.
 *
 * Prints plugin_spin's address, then "done" and exits 0 when the work
 * ended. */
#define _GNU_SOURCE
#include <time.h>

#ifdef PLUGIN

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Burns ms of this thread's CPU in the plugin's own code. */
__attribute__((noinline)) double plugin_spin(double ms)
{
    double end = cpu_now() + ms / 1e3, x = 1;
    while (cpu_now() < end)
        for (int i = 0; i < 20000; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

#else

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int in_callback, stop;   /* atomic */
static const char *plugin_path;

/* Called with the loader's lock held: waits for the main thread's mutex
 * once (the first object only). */
static int wait_for_main(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    (void)data;
    __atomic_store_n(&in_callback, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&held);
    pthread_mutex_unlock(&held);
    return 1;
}

static void *holder(void *arg)
{
    (void)arg;
    dl_iterate_phdr(wait_for_main, NULL);
    return NULL;
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    ++*(int *)data;
    return 0;
}

/* Takes and releases the loader's locks until told to stop. */
static void *churner(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        void *h = dlopen(plugin_path, RTLD_NOW);
        int n = 0;
        dl_iterate_phdr(count_objects, &n);
        if (h)
            dlclose(h);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[3], "held") && strcmp(argv[3], "churn"))) {
        fprintf(stderr, "usage: prog_dlopen PLUGIN MS held|churn\n");
        return 2;
    }
    plugin_path = argv[1];
    double ms = atof(argv[2]);
    void *h = dlopen(plugin_path, RTLD_NOW);
    double (*spin)(double) = h ? (double (*)(double))dlsym(h, "plugin_spin") : NULL;
    if (!spin) {
        fprintf(stderr, "prog_dlopen: %s\n", dlerror());
        return 2;
    }
    /* where the plugin's loop lies: the test tells its ticks by it */
    printf("plugin_spin %p\n", (void *)spin);
    fflush(stdout);
    pthread_t t;
    int hold = !strcmp(argv[3], "held");
    if (hold) {
        pthread_mutex_lock(&held);
        pthread_create(&t, NULL, holder, NULL);
        while (!__atomic_load_n(&in_callback, __ATOMIC_ACQUIRE))
            sched_yield();
    } else {
        pthread_create(&t, NULL, churner, NULL);
    }
    volatile double x = spin(ms);
    (void)x;
    if (hold)
        pthread_mutex_unlock(&held);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}

#endif
