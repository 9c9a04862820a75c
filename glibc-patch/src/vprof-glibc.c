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
 * Output naming follows docs/FORMATS.md "Output naming" exactly as
 * libvprof/runtime.c does (first free layout.<pid>[.k] under VPROF_OUT;
 * without VPROF_OUT, <pid> beside gmon.out and only when there are values).
 * TODO(libvprof): that naming logic is written twice (here and in
 * runtime.c's open_outputs); it should move to one libvprof file that both
 * shells call. */
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
#include "vprof_format.h"
#include "vprof-glibc.h"

/* Read by the frame-pointer unwinder (unwind-fp.c): a return address
 * outside the executable's text ends the walk. */
unsigned long __vprof_fp_text_lo, __vprof_fp_text_hi;

static struct vprof_exeinfo exe;
static int core_status;                 /* 1 values, 0 none, -1 rejected */
static char meta_path[PATH_MAX];
static char meta_err[800];
static char out_dir[PATH_MAX];          /* "" = no vprof files */
static char id[64];
static char layout_path[PATH_MAX], values_path[PATH_MAX];
static int have_layout, have_values;
static int active;                      /* ticks go to the core */
static int inflight;                    /* ticks running right now */
static unsigned tick_hz;
static uint64_t start_ns;

static uint64_t mono_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static int mkdir_p (const char *dir)
{
  char p[PATH_MAX];
  if (snprintf (p, sizeof p, "%s", dir) >= (int) sizeof p)
    return -1;
  for (char *s = p + 1; *s; s++)
    if (*s == '/')
      {
        *s = 0;
        if (mkdir (p, 0755) < 0 && errno != EEXIST)
          return -1;
        *s = '/';
      }
  return mkdir (p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static void absolute (const char *path, char *out, size_t len)
{
  char cwd[PATH_MAX];
  if (path[0] == '/' || !getcwd (cwd, sizeof cwd))
    snprintf (out, len, "%s", path);
  else
    snprintf (out, len, "%s/%s", cwd, path);
}

static void load_metadata (void)
{
  meta_path[0] = 0;
  if (vprof_cfg.meta)
    snprintf (meta_path, sizeof meta_path, "%s", vprof_cfg.meta);
  else if (exe.path[0])
    {
      snprintf (meta_path, sizeof meta_path, "%s.vmeta", exe.path);
      if (access (meta_path, F_OK) != 0)
        meta_path[0] = 0;
    }
  struct vprof_core_config cc = {
    .meta_path = meta_path[0] ? meta_path : NULL,
    .load_bias = exe.bias,
    .text_lo = exe.text_lo,
    .text_hi = exe.text_hi,
    .build_id = exe.build_id,
    .build_id_len = exe.build_id_len,
    .unwind_depth = vprof_cfg.unwind,
    .table_div = vprof_cfg.table_div,
    .max_elems = VPROF_MAX_ELEMS,
    .safe_lo = exe.seg_lo,
    .safe_hi = exe.seg_hi,
    .n_safe = exe.n_segs,
    .read_pipe = vprof_cfg.read_pipe,
  };
  meta_err[0] = 0;
  core_status = vprof_core_init (&cc, meta_err, sizeof meta_err);
  if (core_status < 0)
    vprof_warn ("%s (profiling continues without values)", meta_err);
}

/* Picks the id, creates layout.<id> and values.<id>, writes the layout
 * head, the executable mappings and the variables. */
static void open_outputs (void)
{
  int pid = (int) getpid ();
  have_layout = have_values = 0;
  out_dir[0] = id[0] = 0;
  if (vprof_cfg.out_dir)
    {
      absolute (vprof_cfg.out_dir, out_dir, sizeof out_dir);
      if (mkdir_p (out_dir) < 0)
        {
          vprof_warn ("%s: cannot create directory: %s", out_dir,
                      strerror (errno));
          out_dir[0] = 0;
          return;
        }
    }
  else if (core_status == 1)
    {
      if (vprof_cfg.gmon_prefix)
        {
          char p[PATH_MAX];
          absolute (vprof_cfg.gmon_prefix, p, sizeof p);
          char *slash = strrchr (p, '/');
          if (slash == NULL)          /* relative, and no cwd to prefix */
            snprintf (out_dir, sizeof out_dir, ".");
          else
            {
              *slash = 0;
              snprintf (out_dir, sizeof out_dir, "%s", p[0] ? p : "/");
            }
        }
      else if (!getcwd (out_dir, sizeof out_dir))
        out_dir[0] = 0;
    }
  if (!out_dir[0])
    return;

  int fd = -1;
  for (int k = 0; k < 10000; k++)
    {
      if (k)
        snprintf (id, sizeof id, "%d.%d", pid, k);
      else
        snprintf (id, sizeof id, "%d", pid);
      snprintf (layout_path, sizeof layout_path, "%s/layout.%s", out_dir, id);
      int excl = vprof_cfg.out_dir ? O_EXCL : O_TRUNC;
      fd = open (layout_path,
                 O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | excl, 0644);
      if (fd >= 0 || errno != EEXIST)
        break;
    }
  if (fd < 0)
    {
      vprof_warn ("%s: %s", layout_path, strerror (errno));
      out_dir[0] = 0;
      return;
    }
  have_layout = 1;

  if (core_status == 1)
    {
      snprintf (values_path, sizeof values_path, "%s/values.%s", out_dir, id);
      int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
      int vfd = open (values_path, flags | O_EXCL, 0644);
      if (vfd < 0 && errno == EEXIST && unlink (values_path) == 0)
        vfd = open (values_path, flags | O_EXCL, 0644);
      char err[800];
      if (vfd < 0)
        vprof_warn ("%s: %s", values_path, strerror (errno));
      else if (vprof_core_open_values (vfd, vprof_cfg.max_samples, tick_hz,
                                       start_ns, err, sizeof err) < 0)
        vprof_warn ("%s: %s", values_path, err);
      else
        have_values = 1;
    }

  char status[900];
  if (core_status == 1)
    snprintf (status, sizeof status, "ok");
  else if (core_status == 0)
    snprintf (status, sizeof status, "none");
  else
    snprintf (status, sizeof status, "error %s", meta_err);
  struct vpf_layout l;
  memset (&l, 0, sizeof l);
  l.pid = pid;
  l.ppid = (int) getppid ();
  l.exe = exe.path;
  l.build_id = exe.build_id_hex;
  l.load_bias = exe.bias;
  l.text_lo = exe.text_lo;
  l.text_hi = exe.text_hi;
  l.hz = tick_hz;
  l.unwind = vprof_cfg.unwind;
  l.meta_path = meta_path;
  l.meta_status = status;
  l.start_ns = start_ns;
  vpf_layout_write_head (fd, &l);
  vprof_exeinfo_write_maps (fd);
  const struct vpf_meta *m = vprof_core_meta ();
  for (uint32_t i = 0; m && i < m->hdr.n_vars; i++)
    {
      const struct vpf_var_desc *v = &m->vars[i];
      vpf_layout_write_var (fd, i, vpf_meta_str (m, v->file),
                            vpf_meta_str (m, v->function), v->line,
                            vpf_meta_str (m, v->name), vpf_meta_str (m, v->type),
                            v->tags, v->kind, v->size);
    }
  close (fd);
}

int __vprof_glibc_start (unsigned long lowpc, unsigned long highpc, int hz)
{
  static int started;
  if (started)
    return active;
  started = 1;
  vprof_config_read ();
  tick_hz = hz > 0 ? (unsigned) hz : 0;
  start_ns = mono_ns ();
  if (vprof_exeinfo_get (&exe) < 0)
    {
      exe.text_lo = lowpc;
      exe.text_hi = highpc;
    }
  __vprof_fp_text_lo = exe.text_lo;
  __vprof_fp_text_hi = exe.text_hi;
  load_metadata ();
  open_outputs ();
  if (have_layout)
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
    vprof_core_tick ((const ucontext_t *) uc, mono_ns (), 1);
  __atomic_sub_fetch (&inflight, 1, __ATOMIC_SEQ_CST);
}

int __vprof_glibc_gmon_open (void)
{
  if (!vprof_cfg.out_dir || !out_dir[0] || !have_layout)
    return -1;
  char p[PATH_MAX];
  snprintf (p, sizeof p, "%s/gmon.%s.out", out_dir, id);
  int fd = open (p, O_CREAT | O_TRUNC | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0666);
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
  start_ns = mono_ns ();
  open_outputs ();
  if (!have_layout)
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
  vprof_core_counts (&c);
  if (have_values)
    {
      vprof_core_close ();
      /* As libvprof does: trim by name, the program may have closed or
         reused the descriptor.  */
      int vfd = open (values_path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
      if (vfd >= 0)
        {
          if (ftruncate (vfd, (off_t) (VPF_HEADER_SIZE
                                       + c.samples * sizeof (struct vpf_value_rec))) < 0)
            {
              /* the header still says how many records there are */
            }
          close (vfd);
        }
    }
  if (have_layout)
    {
      int lfd = open (layout_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
      if (lfd >= 0)
        {
          vpf_layout_write_end (lfd, c.ticks, c.samples, c.dropped, c.faults,
                                mono_ns ());
          close (lfd);
        }
    }
  if (c.dropped)
    vprof_warn ("sample file full: %llu value samples dropped (raise VPROF_MAX_SAMPLES)",
                (unsigned long long) c.dropped);
}
