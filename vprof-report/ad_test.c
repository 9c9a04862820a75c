/* ad_test.c - k-sample Anderson-Darling test, midrank version.
 *
 * Follows scipy/stats/_morestats.py (1.10) anderson_ksamp and
 * _anderson_ksamp_midrank step by step; the constants of the p-value
 * interpolation are Table 2 of Scholz & Stephens (1987), as in scipy. */
#include "ad_test.h"
#include "vprof_xalloc.h"

#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double midrank_statistic(double **s, const size_t *n, size_t k,
                                const double *z, size_t N)
{
    double a2 = 0;
    for (size_t i = 0; i < k; i++) {
        double inner_sum = 0;
        size_t p = 0;
        for (size_t j = 0; j < N;) {
            double zj = z[j];
            /* z[j..right) are the ties of zj; p walks sample i */
            size_t left = j, right = j;
            while (right < N && z[right] == zj) right++;
            double lj = (double)(right - left);
            double bj = (double)left + lj / 2.0;
            size_t sl = p;
            while (sl < n[i] && s[i][sl] < zj) sl++;
            size_t sr = sl;
            while (sr < n[i] && s[i][sr] == zj) sr++;
            p = sl;
            double fij = (double)(sr - sl);
            double mij = (double)sr - fij / 2.0;
            double num = (double)N * mij - bj * (double)n[i];
            inner_sum += lj / (double)N * num * num /
                         (bj * ((double)N - bj) - (double)N * lj / 4.0);
            j = right;
        }
        a2 += inner_sum / (double)n[i];
    }
    return a2 * ((double)N - 1.0) / (double)N;
}

/* numpy.polyfit(x, y, 2) then polyval at t: least squares by SVD. */
static double quad_fit_eval(const double *x, const double *y, size_t m,
                            double t)
{
    gsl_matrix *X = gsl_matrix_alloc(m, 3);
    gsl_vector *Y = gsl_vector_alloc(m), *c = gsl_vector_alloc(3);
    gsl_matrix *cov = gsl_matrix_alloc(3, 3);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(m, 3);
    for (size_t i = 0; i < m; i++) {
        gsl_matrix_set(X, i, 0, x[i] * x[i]);
        gsl_matrix_set(X, i, 1, x[i]);
        gsl_matrix_set(X, i, 2, 1.0);
        gsl_vector_set(Y, i, y[i]);
    }
    double chisq;
    gsl_multifit_linear(X, Y, c, cov, &chisq, w);
    double v = (gsl_vector_get(c, 0) * t + gsl_vector_get(c, 1)) * t +
               gsl_vector_get(c, 2);
    gsl_multifit_linear_free(w);
    gsl_matrix_free(cov);
    gsl_matrix_free(X);
    gsl_vector_free(Y);
    gsl_vector_free(c);
    return v;
}

int vpr_ad_ksamp(double **samples, const size_t *n, size_t k,
                 struct vpr_ad_result *res, const char **why)
{
    static const char *dummy;
    if (!why) why = &dummy;
    if (k < 2) { *why = "needs at least two samples"; return -1; }
    size_t N = 0;
    for (size_t i = 0; i < k; i++) {
        if (n[i] == 0) { *why = "a sample has no observations"; return -1; }
        N += n[i];
    }
    double *z = vpf_xcalloc(N, sizeof *z);
    if (!z) { *why = "out of memory"; return -1; }
    size_t off = 0;
    for (size_t i = 0; i < k; i++) {
        gsl_sort(samples[i], 1, n[i]);
        memcpy(z + off, samples[i], n[i] * sizeof *z);
        off += n[i];
    }
    gsl_sort(z, 1, N);
    if (z[0] == z[N - 1]) {
        free(z);
        *why = "fewer than two distinct observations";
        return -1;
    }
    if (N < 4) { free(z); *why = "fewer than 4 observations"; return -1; }

    double a2kn = midrank_statistic(samples, n, k, z, N);
    free(z);

    double H = 0;
    for (size_t i = 0; i < k; i++) H += 1.0 / (double)n[i];
    /* hs_cs = cumsum(1 / arange(N-1, 1, -1)); h = hs_cs[-1] + 1;
     * g = sum(hs_cs / arange(2, N)) */
    double cs = 0, g = 0;
    for (size_t j = 0; j < N - 2; j++) {
        cs += 1.0 / (double)(N - 1 - j);
        g += cs / (double)(j + 2);
    }
    double h = cs + 1.0;
    double K = (double)k, NN = (double)N;
    double a = (4 * g - 6) * (K - 1) + (10 - 6 * g) * H;
    double b = (2 * g - 4) * K * K + 8 * h * K + (2 * g - 14 * h - 4) * H -
               8 * h + 4 * g - 6;
    double c = (6 * h + 2 * g - 2) * K * K + (4 * h - 4 * g + 6) * K +
               (2 * h - 6) * H + 4 * h;
    double d = (2 * h + 6) * K * K - 4 * h * K;
    double sigmasq = (a * NN * NN * NN + b * NN * NN + c * NN + d) /
                     ((NN - 1.) * (NN - 2.) * (NN - 3.));
    double m = K - 1;
    double A2 = (a2kn - m) / sqrt(sigmasq);

    static const double b0[7] = {0.675, 1.281, 1.645, 1.96, 2.326, 2.573, 3.085};
    static const double b1[7] = {-0.245, 0.25, 0.678, 1.149, 1.822, 2.364, 3.615};
    static const double b2[7] = {-0.105, -0.305, -0.362, -0.391, -0.396, -0.345, -0.154};
    static const double sig[7] = {0.25, 0.1, 0.05, 0.025, 0.01, 0.005, 0.001};
    double crit[7], logsig[7], cmin = INFINITY, cmax = -INFINITY;
    for (int i = 0; i < 7; i++) {
        crit[i] = b0[i] + b1[i] / sqrt(m) + b2[i] / m;
        logsig[i] = log(sig[i]);
        if (crit[i] < cmin) cmin = crit[i];
        if (crit[i] > cmax) cmax = crit[i];
    }
    double p;
    if (A2 < cmin) p = 0.25;
    else if (A2 > cmax) p = 0.001;
    else p = exp(quad_fit_eval(crit, logsig, 7, A2));
    res->a2kn = a2kn;
    res->statistic = A2;
    res->pvalue = p;
    return 0;
}
