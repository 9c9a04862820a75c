/* ad_test.h - k-sample Anderson-Darling test (Scholz & Stephens 1987).
 *
 * The midrank version (eq. 7, valid with ties), the standardised statistic
 * and the p-value interpolation exactly as scipy.stats.anderson_ksamp
 * (scipy 1.10, the default midrank=True) computes them, so the results can
 * be compared with scipy. */
#ifndef VPR_AD_TEST_H
#define VPR_AD_TEST_H
#include <stddef.h>

struct vpr_ad_result {
    double a2kn;        /* raw A2akN */
    double statistic;   /* standardised: (A2akN - (k-1)) / sigma */
    double pvalue;      /* interpolated; floored at 0.001, capped at 0.25 */
};

/* samples[i] holds n[i] values; they are sorted in place. Returns 0, or -1
 * (with why set) when the test is undefined: k < 2, an empty sample, fewer
 * than two distinct observations in all, or N < 4 (the variance formula
 * divides by (N-1)(N-2)(N-3)). */
int vpr_ad_ksamp(double **samples, const size_t *n, size_t k,
                 struct vpr_ad_result *res, const char **why);

#endif
