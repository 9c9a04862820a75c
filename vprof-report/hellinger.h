/* hellinger.h - Hellinger distance of two samples over shared bins. */
#ifndef VPR_HELLINGER_H
#define VPR_HELLINGER_H
#include <stddef.h>

/* Bin edges shared by both samples (see docs/vprof-report.md, "Binning"):
 * when the pooled samples have at most max_bins distinct values, one bin per
 * distinct value; otherwise max_bins bins whose edges are the pooled
 * quantiles i/max_bins (duplicate edges merged), so heavy tails do not
 * collapse everything into one bin. a and b must be sorted ascending.
 * Returns the number of bins; edges gets n_bins + 1 values (malloc'd). */
size_t vpr_shared_bins(const double *a, size_t na, const double *b,
                       size_t nb, size_t max_bins, double **edges);

/* Counts of sorted x over the bins [edges[i], edges[i+1]) (last bin closed). */
void vpr_bin_counts(const double *x, size_t n, const double *edges,
                    size_t n_bins, double *counts);

/* H = sqrt(1 - sum_i sqrt(p_i q_i)) over the shared bins, in [0, 1].
 * a and b sorted ascending and non-empty. */
double vpr_hellinger(const double *a, size_t na, const double *b, size_t nb,
                     size_t max_bins);

#endif
