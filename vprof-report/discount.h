/* discount.h - cost calibration (vProf §5.1): variable-discounter,
 * aggregation to functions, hist-discounter, calibrated cost and ranking. */
#ifndef VPR_DISCOUNT_H
#define VPR_DISCOUNT_H
#include "model.h"

/* Discount ratio of one dimension from its two samples (sorted in place):
 * sets st, r, p, statistic and Hellinger distance. */
void vpr_dim_discount(const struct vpr_opts *o, double *normal, size_t nn,
                      double *buggy, size_t nb, enum vpr_dim_state *st,
                      double *r, double *p, double *stat, double *hell);
/* Every variable: dimensions, lowest ratio. */
void vpr_discount_vars(struct vpr_model *m);
/* Costs per function (mean over runs), attribution of variables to
 * functions, each function's discount (variable-discounter, hist-discounter,
 * latency dimension). */
void vpr_attribute(struct vpr_model *m);
/* Is variable vi attributed to function fi (after vpr_attribute)? */
int vpr_attributed(const struct vpr_model *m, size_t vi, size_t fi);
/* Calibrated cost (--rank) and the ranking into m->order; after the blame
 * pass (scan.h) when --rank blame. */
void vpr_rank_functions(struct vpr_model *m);

/* How many times more each call of f cost in the buggy runs than in the
 * normal ones (its inherited cost per call, gmon's call counts); 0: no
 * calls or no cost on a side. */
double vpr_per_call_growth(const struct vpr_model *m, const struct vpr_func *f);
/* Hist-discounter alone: h/c from per-run raw costs of one function against
 * the per-run rankings; exposed for the unit test. rank_n[i][run] is the
 * rank (0 = first) of the function in that normal run, rank_b likewise;
 * absent = SIZE_MAX. A comparison counts (h) when the two ranks are at most
 * window places apart (the paper's artifact: 3), or, with window < 0, when
 * the normal rank is strictly higher (the paper's text). */
double vpr_hist_ratio(const size_t *rank_n, size_t n_normal,
                      const size_t *rank_b, size_t n_buggy, int window,
                      double valid, unsigned *h, unsigned *c);
/* Hist-discounter by share (--hist-rule share, the default): per (normal,
 * buggy) run pair in which the function has a cost, cost_* its raw cost
 * and tot_* the run's CPU time (s). When its buggy share of the run is
 * significantly larger (its ticks, at hz, split between the two runs
 * against their lengths: a one-sided binomial test at pvalue), the pair's
 * ratio is the part of its buggy cost its normal share explains, 1 -
 * added / cost_b; otherwise 1 (h counts these pairs). r = the pairs'
 * mean, 0 below valid. */
double vpr_hist_share_ratio(const double *cost_n, const double *tot_n, size_t n_normal,
                            const double *cost_b, const double *tot_b, size_t n_buggy,
                            double hz, double pvalue, double valid, unsigned *h,
                            unsigned *c);

#endif
