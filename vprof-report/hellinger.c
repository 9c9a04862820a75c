/* hellinger.c - Hellinger distance over histograms with shared bins, built
 * with GSL histograms. */
#include "hellinger.h"
#include "vprof_xalloc.h"

#include <gsl/gsl_histogram.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double *merge_sorted(const double *a, size_t na, const double *b,
                            size_t nb)
{
    double *z = vpf_xcalloc(na + nb, sizeof *z);
    size_t i = 0, j = 0, k = 0;
    while (i < na || j < nb)
        z[k++] = (j >= nb || (i < na && a[i] <= b[j])) ? a[i++] : b[j++];
    return z;
}

size_t vpr_shared_bins(const double *a, size_t na, const double *b,
                       size_t nb, size_t max_bins, double **edges)
{
    size_t N = na + nb;
    double *z = merge_sorted(a, na, b, nb);
    if (max_bins < 1) max_bins = 1;
    size_t distinct = 0;
    for (size_t i = 0; i < N; i++)
        if (i == 0 || z[i] != z[i - 1]) distinct++;
    double *e = vpf_xcalloc((distinct < max_bins ? distinct : max_bins) + 2, sizeof *e);
    size_t ne = 0;
    if (distinct <= max_bins) {
        for (size_t i = 0; i < N; i++)
            if (i == 0 || z[i] != z[i - 1]) e[ne++] = z[i];
    } else {
        for (size_t q = 0; q < max_bins; q++) {
            double v = z[(size_t)((double)q * (double)N / (double)max_bins)];
            if (ne == 0 || v > e[ne - 1]) e[ne++] = v;
        }
    }
    /* upper edge: just above the maximum, so the maximum falls inside */
    double top = z[N - 1];
    double up = nextafter(top, INFINITY);
    if (!isfinite(up)) up = top;
    if (!(up > e[ne - 1])) up = nextafter(e[ne - 1], INFINITY);
    e[ne++] = up;
    free(z);
    *edges = e;
    return ne - 1;
}

void vpr_bin_counts(const double *x, size_t n, const double *edges,
                    size_t n_bins, double *counts)
{
    gsl_histogram *h = gsl_histogram_alloc(n_bins);
    gsl_histogram_set_ranges(h, edges, n_bins + 1);
    for (size_t i = 0; i < n; i++)
        if (gsl_histogram_increment(h, x[i]) != 0 && x[i] >= edges[n_bins])
            gsl_histogram_accumulate(h, edges[n_bins - 1], 1.0); /* top */
    for (size_t i = 0; i < n_bins; i++) counts[i] = gsl_histogram_get(h, i);
    gsl_histogram_free(h);
}

double vpr_hellinger(const double *a, size_t na, const double *b, size_t nb,
                     size_t max_bins)
{
    if (!na || !nb) return 1.0;
    double *edges;
    size_t nbins = vpr_shared_bins(a, na, b, nb, max_bins, &edges);
    double *ca = vpf_xcalloc(nbins, sizeof *ca), *cb = vpf_xcalloc(nbins, sizeof *cb);
    vpr_bin_counts(a, na, edges, nbins, ca);
    vpr_bin_counts(b, nb, edges, nbins, cb);
    double bc = 0;
    for (size_t i = 0; i < nbins; i++)
        bc += sqrt(ca[i] / (double)na * cb[i] / (double)nb);
    free(ca); free(cb); free(edges);
    double h2 = 1.0 - bc;
    return h2 <= 0 ? 0.0 : (h2 >= 1 ? 1.0 : sqrt(h2));
}
