/* vprof-glibc.c - the glibc shell around the libvprof sampling core (see
 * vprof-glibc.h for who calls what).
 *
 * The knobs (config.c), the facts about the executable (exeinfo.c), the
 * core (core.c and friends) and the file formats (libvprof/format) are
 * libvprof's own sources, compiled into libc unchanged. What is here is
 * only what differs from libvprof's interposition shell: glibc owns the
 * timer, the histogram, the arcs and the gmon writer, so this file only
 * names the files, opens them, and forwards ticks.
 *
 * Output naming, metadata loading and closing are libvprof's session.c,
 * the same code libvprof/runtime.c calls (docs/FORMATS.md "Output
 * naming"). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core.h"
#include "exeinfo.h"
#include "session.h"
#include "vprof_format.h"
#include "vprof-glibc.h"

/* Read by the frame-pointer unwinder (unwind-fp.c): a return address
 * outside the executable's text ends the walk. */
unsigned long __vprof_fp_text_lo, __vprof_fp_text_hi;

static struct vprof_session sess;       /* this process's vprof files */
static int active;                      /* ticks go to the core */
static int inflight;                    /* ticks running right now */

int __vprof_glibc_start (unsigned long lowpc, unsigned long highpc, int hz)
{
  static int started;
  if (started)
    return active;
  started = 1;
  vprof_config_read ();
  sess.hz = hz > 0 ? (unsigned) hz : 0;
  sess.start_ns = vprof_mono_ns ();
  if (vprof_exeinfo_get (&sess.exe) < 0)
    {
      sess.exe.text_lo = lowpc;
      sess.exe.text_hi = highpc;
    }
  __vprof_fp_text_lo = sess.exe.text_lo;
  __vprof_fp_text_hi = sess.exe.text_hi;
  vprof_session_load_metadata (&sess);
  vprof_session_open_outputs (&sess);
  if (sess.have_layout)
    {
      vprof_core_thread_init ();
      __atomic_store_n (&active, 1, __ATOMIC_RELEASE);
    }
  return active;
}

void __vprof_glibc_tick (void *uc)
{
  if (!__atomic_load_n (&active, __ATOMIC_ACQUIRE))
    return;
  __atomic_add_fetch (&inflight, 1, __ATOMIC_SEQ_CST);
  /* Re-checked after announcing ourselves: stop() clears `active` first
     and then waits for `inflight` to drain.  */
  if (__atomic_load_n (&active, __ATOMIC_SEQ_CST))
    vprof_core_tick ((const ucontext_t *) uc, vprof_mono_ns (), 1);
  __atomic_sub_fetch (&inflight, 1, __ATOMIC_SEQ_CST);
}

int __vprof_glibc_gmon_open (void)
{
  if (!vprof_cfg.out_dir || !sess.out_dir[0] || !sess.have_layout)
    return -1;
  /* Named and created as libvprof does (session.c): exclusively, never
     through a planted link.  */
  char p[PATH_MAX];
  int fd = vprof_session_open_gmon (&sess, p, sizeof p);
  if (fd < 0)
    vprof_warn ("%s: %s (writing glibc's default gmon file instead)", p,
                strerror (errno));
  return fd;
}

int __vprof_glibc_fork_child (void)
{
  if (!__atomic_load_n (&active, __ATOMIC_ACQUIRE))
    return 0;
  /* Only the forking thread exists here; a count copied from another
     thread's tick in the parent would make stop() wait for nothing.  */
  __atomic_store_n (&inflight, 0, __ATOMIC_SEQ_CST);
  vprof_core_fork_child ();
  sess.start_ns = vprof_mono_ns ();
  vprof_session_open_outputs (&sess);
  if (!sess.have_layout)
    __atomic_store_n (&active, 0, __ATOMIC_RELEASE);
  /* The child starts its own profile either way: it writes its own files
     (or none), and its histogram must not repeat the parent's.  */
  return 1;
}

void __vprof_glibc_stop (void)
{
  if (!__atomic_exchange_n (&active, 0, __ATOMIC_SEQ_CST))
    return;
  /* A tick that started before the timer was stopped may still be inside
     the core on another thread; it must finish before the file goes.  */
  for (int i = 0; i < 100000 && __atomic_load_n (&inflight, __ATOMIC_SEQ_CST);
       i++)
    sched_yield ();

  struct vprof_core_counts c;
  vprof_session_close (&sess, &c);
  if (c.dropped)
    vprof_warn ("sample file full: %llu value samples dropped (raise VPROF_MAX_SAMPLES)",
                (unsigned long long) c.dropped);
}
