/* libFuzzer target: the --ad-test input path: numbers split in two samples
 * and the Anderson-Darling test and Hellinger distance on them. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ad_test.h"
#include "hellinger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = size / 8;
    if (n < 2 || n > 4096) return 0;
    double *x = malloc(n * sizeof *x);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, data + 8 * i, 8);
        if (isfinite(v)) x[k++] = v;
    }
    size_t na = k / 2;
    double *s[2] = {x, x + na};
    size_t ns[2] = {na, k - na};
    struct vpr_ad_result r;
    if (na && k - na && vpr_ad_ksamp(s, ns, 2, &r, NULL) == 0) {
        double h = vpr_hellinger(s[0], ns[0], s[1], ns[1], 32);
        if (!(h >= 0 && h <= 1)) abort();
    }
    free(x);
    return 0;
}
