/* locate.h - where vprof-cc finds its parts: everything is relative to the
 * vprof-cc executable itself (/proc/self/exe), so the same binary works from
 * the build tree (build/bin, build/lib) and after `make install PREFIX=P`
 * (P/bin, P/lib), with no environment setup. */
#ifndef VPROF_CC_LOCATE_H
#define VPROF_CC_LOCATE_H

struct cc_paths {
    char bindir[4096];  /* directory of vprof-cc (vprof-meta lives here) */
    char libdir[4096];  /* bindir/../lib, canonical */
    char plugin[4096];  /* libdir/vprof-schema.so */
    char latency_plugin[4096]; /* libdir/vprof-latency.so (--latency) */
    char runtime[4096]; /* libdir/libvprof.so */
    char meta[4096];    /* bindir/vprof-meta */
};

/* Returns 0, or -1 with a message printed. */
int cc_locate(struct cc_paths *p);

#endif
