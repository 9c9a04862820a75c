/* callgraph.h - gprof's data in vprof: the PC histogram and the call-graph
 * arcs recorded by mcount, kept exactly as glibc's gmon does so that the
 * written gmon.out is arc-for-arc what glibc would write. */
#ifndef VPROF_CALLGRAPH_H
#define VPROF_CALLGRAPH_H

#include <stdint.h>

/* Sets up for [lowpc, highpc) (run-time addresses, rounded like glibc);
 * bias is subtracted from every address written (glibc writes link-time
 * addresses for PIE). arcs = hash slots, 0 = sized from the text. */
int vprof_cg_setup(uint64_t lowpc, uint64_t highpc, uint64_t bias, uint64_t arcs);

/* Recording on/off (moncontrol). */
void vprof_cg_enable(int on);

/* Histogram tick at pc worth `weight` periods (async-signal-safe,
 * lock-free). Also feeds a profil(3) buffer, even while moncontrol is off. */
void vprof_cg_hist_tick(uint64_t pc, unsigned weight);

/* Zeroes histogram and arcs (fork child starts afresh). */
void vprof_cg_reset(void);

/* Writes gmon.out to fd (async-signal-safe). Returns 0 or -1. */
int vprof_cg_write(int fd, uint32_t prof_rate);

uint64_t vprof_cg_arcs_dropped(void);

/* profil(3) buffer, incremented on each tick while set. */
void vprof_cg_set_profil(unsigned short *buf, uint64_t bufsiz, uint64_t offset, unsigned scale);

/* Called by the mcount/__fentry__ trampolines (mcount.S). */
void vprof_mcount_internal(uint64_t frompc, uint64_t selfpc);

#endif
