/* scan.h - one process's gmon histogram and value samples into the model. */
#ifndef VPR_SCAN_H
#define VPR_SCAN_H
#include "model.h"

/* Side VPR_NORMAL must be scanned completely before VPR_BUGGY: buggy
 * samples are compared with the normal ranges while they stream by.
 * Returns 0, or -1 with a message naming the file and offset. */
int vpr_scan_process(struct vpr_model *m, int side, size_t run,
                     const struct vpr_proc *p, char *err, size_t errlen);

/* The blame pass over one buggy process, after vpr_attribute: each tick's
 * weight goes to the frame chosen by --blame among those with anomalous
 * evidence (m->f[].blamed, summed over runs). */
int vpr_blame_process(struct vpr_model *m, size_t run, const struct vpr_proc *p,
                      char *err, size_t errlen);

#endif
