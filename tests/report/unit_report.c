/* Unit tests of vprof-report's analysis steps, each on its own: Hellinger
 * distance and binning, reservoirs, the per-dimension discount, the
 * hist-discounter, bug-pattern rules and histogram assignment. Prints one
 * "ok - ..." / "not ok - ..." line per check. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discount.h"
#include "hellinger.h"
#include "hist_assign.h"
#include "latency.h"
#include "model.h"
#include "pattern.h"
#include "reservoir.h"
#include "vprof_format.h"

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - %s\n", name); \
    else { printf("not ok - %s\n", name); fails++; } } while (0)

static void fill(double *x, size_t n, double a, double step)
{
    for (size_t i = 0; i < n; i++) x[i] = a + step * (double)i;
}

static void test_hellinger(void)
{
    double a[100], b[100];
    fill(a, 100, 0, 1);
    fill(b, 100, 0, 1);
    CHECK("hellinger: identical samples -> 0", vpr_hellinger(a, 100, b, 100, 32) < 1e-12);
    fill(b, 100, 1000, 1);
    CHECK("hellinger: disjoint samples -> 1", fabs(vpr_hellinger(a, 100, b, 100, 32) - 1) < 1e-12);
    /* two values: p = (1/2, 1/2), q = (1, 0): H = sqrt(1 - sqrt(1/2)) */
    double c[2] = {0, 1}, d[2] = {0, 0};
    CHECK("hellinger: two-bin closed form",
          fabs(vpr_hellinger(c, 2, d, 2, 32) - sqrt(1 - sqrt(0.5))) < 1e-12);
    double *e;
    size_t nb = vpr_shared_bins(c, 2, d, 2, 32, &e);
    CHECK("bins: one per distinct value when few", nb == 2 && e[0] == 0 && e[1] == 1 && e[2] > 1);
    free(e);
    nb = vpr_shared_bins(a, 100, b, 100, 10, &e);
    CHECK("bins: quantile edges when many values", nb == 10 && e[0] == 0 && e[5] == 1000);
    double cnt[10];
    vpr_bin_counts(a, 100, e, nb, cnt);
    double sum = 0;
    for (int i = 0; i < 10; i++) sum += cnt[i];
    CHECK("bins: every value counted once", sum == 100 && cnt[0] == 20);
    free(e);
}

static void test_reservoir(void)
{
    struct vpr_reservoir r, s;
    vpr_res_init(&r, 1000, 42);
    vpr_res_init(&s, 1000, 42);
    for (int i = 0; i < 500; i++) vpr_res_add(&r, i);
    CHECK("reservoir: keeps everything below capacity", r.n == 500 && r.v[499] == 499);
    for (int i = 500; i < 100000; i++) vpr_res_add(&r, i);
    for (int i = 0; i < 100000; i++) vpr_res_add(&s, i);
    CHECK("reservoir: bounded at capacity", r.n == 1000 && r.seen == 100000);
    CHECK("reservoir: deterministic for a seed", !memcmp(r.v, s.v, 1000 * sizeof *r.v));
    double mean = 0;
    for (size_t i = 0; i < r.n; i++) mean += r.v[i] / r.n;
    CHECK("reservoir: uniform over the stream (mean)", fabs(mean - 50000) < 3000);
    vpr_res_free(&r);
    vpr_res_free(&s);
}

static void test_dim_discount(void)
{
    struct vpr_opts o = {.default_discount = 0.8, .valid_discount = 0.1, .pvalue = 0.05,
                         .bins = 32};
    enum vpr_dim_state st;
    double r, p, stat, h, a[400], b[400];
    for (int i = 0; i < 400; i++) { a[i] = i % 40; b[i] = (i * 7) % 40; }
    vpr_dim_discount(&o, a, 400, b, 400, &st, &r, &p, &stat, &h);
    CHECK("dimension: same distribution -> DefaultDiscount", st == VPR_DS_SAME && r == 0.8);
    for (int i = 0; i < 400; i++) { a[i] = i % 40; b[i] = i % 40 + 20; }
    vpr_dim_discount(&o, a, 400, b, 400, &st, &r, &p, &stat, &h);
    CHECK("dimension: shifted -> 1 - Hellinger", st == VPR_DS_DIFFERS && fabs(r - (1 - h)) < 1e-12 && h > 0.5 && h < 1);
    for (int i = 0; i < 400; i++) { a[i] = i % 40; b[i] = i % 40 + 1000; }
    vpr_dim_discount(&o, a, 400, b, 400, &st, &r, &p, &stat, &h);
    CHECK("dimension: disjoint -> below ValidDiscount -> 0", st == VPR_DS_DIFFERS && r == 0);
    vpr_dim_discount(&o, a, 0, b, 400, &st, &r, &p, &stat, &h);
    CHECK("dimension: no normal samples -> anomalous, 0", st == VPR_DS_NO_NORMAL && r == 0);
    vpr_dim_discount(&o, a, 400, b, 0, &st, &r, &p, &stat, &h);
    CHECK("dimension: no buggy samples -> unused", st == VPR_DS_NONE);
    for (int i = 0; i < 400; i++) a[i] = b[i] = 7;
    vpr_dim_discount(&o, a, 400, b, 400, &st, &r, &p, &stat, &h);
    CHECK("dimension: one value everywhere -> DefaultDiscount", st == VPR_DS_UNDEFINED && r == 0.8);
}

static void test_hist_ratio(void)
{
    unsigned h, c;
    size_t n[2] = {0, 1}, b[3] = {3, 0, SIZE_MAX};
    /* pairs: (0,3) h (0,0) - (0,abs) h (1,3) h (1,0) - (1,abs) h -> 4/6 */
    double r = vpr_hist_ratio(n, 2, b, 3, -1, 0.1, &h, &c);
    CHECK("hist-discounter (higher in normal): r = h / c", h == 4 && c == 6 && fabs(r - 4.0 / 6) < 1e-12);
    size_t n1[1] = {5}, b1[2] = {0, 9};
    r = vpr_hist_ratio(n1, 1, b1, 2, -1, 0.6, &h, &c);
    CHECK("hist-discounter: below ValidDiscount -> 0", h == 1 && c == 2 && r == 0);
    size_t na[1] = {SIZE_MAX}, ba[1] = {SIZE_MAX};
    r = vpr_hist_ratio(na, 1, ba, 1, -1, 0.1, &h, &c);
    CHECK("hist-discounter: absent on both sides -> no comparison", c == 0 && r == 0);
    /* rank similarity, window 3: (0,3) h (0,0) h (0,abs) - (1,3) h (1,0) h (1,abs) - */
    r = vpr_hist_ratio(n, 2, b, 3, 3, 0.1, &h, &c);
    CHECK("hist-discounter (window 3): similar ranks count", h == 4 && c == 6 && fabs(r - 4.0 / 6) < 1e-12);
    size_t n2[2] = {0, 10}, b2[2] = {4, 2};
    r = vpr_hist_ratio(n2, 2, b2, 2, 3, 0.1, &h, &c);
    CHECK("hist-discounter (window 3): 4 places apart is not similar", h == 1 && c == 4 && fabs(r - 0.25) < 1e-12);
    r = vpr_hist_ratio(n2, 2, b2, 2, 0, 0.1, &h, &c);
    CHECK("hist-discounter (window 0): only equal ranks", h == 0 && c == 4 && r == 0);

    /* --hist-rule share: costs and run lengths in seconds, 1500 ticks/s */
    double tn[1] = {0.52}, tb[1] = {2.66};
    double kn[1] = {0.129}, kb[1] = {2.226};   /* a quarter of the run -> 84% */
    r = vpr_hist_share_ratio(kn, tn, 1, kb, tb, 1, 1500, 0.05, 0.1, &h, &c);
    double want = 1 - (2.226 - 0.129 * 2.66 / 0.52) / 2.226;
    CHECK("hist share: a grown share keeps what the normal share does not explain",
          h == 0 && c == 1 && fabs(r - want) < 1e-12);
    double sn[1] = {0.1}, sb[1] = {0.5};       /* the same fifth of each run */
    double un[1] = {0.5}, ub[1] = {2.5};
    r = vpr_hist_share_ratio(sn, un, 1, sb, ub, 1, 1500, 0.05, 0.1, &h, &c);
    CHECK("hist share: the same share is normal (1)", h == 1 && c == 1 && r == 1);
    double zn[1] = {0}, zb[1] = {2.0 / 1500}, one[1] = {1};   /* 0 ticks -> 2 */
    r = vpr_hist_share_ratio(zn, one, 1, zb, one, 1, 1500, 0.05, 0.1, &h, &c);
    CHECK("hist share: 2 ticks where there were none is noise (P 0.25)", h == 1 && r == 1);
    double bn[1] = {0}, bb[1] = {200.0 / 1500};                /* 0 ticks -> 200 */
    r = vpr_hist_share_ratio(bn, one, 1, bb, one, 1, 1500, 0.05, 0.1, &h, &c);
    CHECK("hist share: new in the buggy run, well sampled -> 0", h == 0 && r == 0);
    double gone[1] = {0};
    r = vpr_hist_share_ratio(sn, un, 1, gone, ub, 1, 1500, 0.05, 0.1, &h, &c);
    CHECK("hist share: gone from the buggy run is normal", h == 1 && c == 1 && r == 1);
    r = vpr_hist_share_ratio(gone, un, 1, gone, ub, 1, 1500, 0.05, 0.1, &h, &c);
    CHECK("hist share: absent on both sides -> no comparison", c == 0 && r == 0);
    double kn2[2] = {0.129, 0.1}, tn2[2] = {0.52, 0.5};       /* two pairs: mean */
    r = vpr_hist_share_ratio(kn2, tn2, 2, kb, tb, 1, 1500, 0.05, 0.6, &h, &c);
    CHECK("hist share: below ValidDiscount -> 0", c == 2 && h == 0 && r == 0);
}

static void test_patterns(void)
{
    struct vpr_opts o = {.default_discount = 0.8, .pattern_rules = VPR_PATTERN_PAPER};
    struct vpr_var v[2];
    memset(v, 0, sizeof v);
    struct vpr_model m;
    memset(&m, 0, sizeof m);
    m.o = &o;
    m.v = v;
    m.n_v = 2;
    size_t vars[1] = {0};
    struct vpr_func f = {.disc = VPR_DISC_VARIABLE, .var = 0, .vars = vars, .n_vars = 1,
                         .guard_of = -1, .producer_of = -1, .state_of = -1, .size_of = -1, .link_of = -1};
    v[0].tags = VPF_TAG_LOOP | VPF_TAG_COND;
    v[0].st[VPR_DIM_PROC] = VPR_DS_DIFFERS;
    f.dim = VPR_DIM_PROC;
    CHECK("pattern rule 1: loop/cond + processing cost -> missing constraint",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_MISSING));
    v[0].tags = VPF_TAG_LOOP;
    v[0].st[VPR_DIM_DELTA] = VPR_DS_DIFFERS;
    f.dim = VPR_DIM_DELTA;
    CHECK("pattern rule 2: loop + delta -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    v[0].tags = VPF_TAG_COND;
    v[0].st[VPR_DIM_VALUE] = VPR_DS_DIFFERS;
    f.dim = VPR_DIM_VALUE;
    CHECK("pattern rule 3: cond + value -> wrong constraint",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_WRONG));
    v[0].tags = VPF_TAG_LOOP | VPF_TAG_COND;
    v[0].st[VPR_DIM_VALUE] = VPR_DS_DIFFERS;
    CHECK("pattern rules in order: loop+cond on values is rule 2",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    v[0].tags = 0;
    v[0].kind = VPF_KIND_PTR;
    v[0].st[VPR_DIM_PROC] = VPR_DS_SAME;
    f.dim = VPR_DIM_PROC;
    f.r = 0.8;
    CHECK("pattern rule 4: top function, pointers only, default -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 1), VPR_PAT_SCALABILITY));
    CHECK("pattern rule 4 only for the most costly function",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_NONE));
    v[0].kind = VPF_KIND_SINT;
    CHECK("pattern rule 4 not with basic-type variables",
          !strcmp(vpr_infer_pattern(&m, &f, 1), VPR_PAT_NONE));
}

/* The artifact's rules: tags on the deciding variable whatever its test
 * said, scalability when the values look normal or only the buggy run has them. */
static void test_patterns_artifact(void)
{
    struct vpr_opts o = {.default_discount = 0.8, .pattern_rules = VPR_PATTERN_ARTIFACT};
    struct vpr_var v[1];
    memset(v, 0, sizeof v);
    struct vpr_model m;
    memset(&m, 0, sizeof m);
    m.o = &o;
    m.v = v;
    m.n_v = 1;
    size_t vars[1] = {0};
    struct vpr_func f = {.disc = VPR_DISC_VARIABLE, .var = 0, .vars = vars, .n_vars = 1,
                         .guard_of = -1, .producer_of = -1, .state_of = -1, .size_of = -1, .link_of = -1};
    v[0].tags = VPF_TAG_COND;
    v[0].r = 0;
    v[0].st[VPR_DIM_PROC] = VPR_DS_DIFFERS;
    f.dim = VPR_DIM_PROC;
    CHECK("artifact patterns: cond + anomalous processing cost -> missing constraint",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_MISSING));
    v[0].r = 0.8;
    v[0].st[VPR_DIM_PROC] = VPR_DS_SAME;
    CHECK("artifact patterns: normal processing cost -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    f.dim = VPR_DIM_VALUE;
    v[0].st[VPR_DIM_VALUE] = VPR_DS_SAME;
    CHECK("artifact patterns: cond on values that look normal (DefaultDiscount) -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    v[0].r = 0.5;
    CHECK("artifact patterns: cond on values, even if not rejected -> wrong constraint",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_WRONG));
    v[0].tags = VPF_TAG_LOOP | VPF_TAG_COND;
    CHECK("artifact patterns: loop on values -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    v[0].tags = 0;
    v[0].r = 0.3;
    v[0].st[VPR_DIM_VALUE] = VPR_DS_DIFFERS;
    CHECK("artifact patterns: untagged anomalous variable -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    /* an untagged variable whose values stay within the normal range is
     * no larger data: the function's changed call rate says how it chose */
    o.arcs = 1;
    f.arc.to = 1;
    f.arc.dir = 1;
    v[0].n[VPR_BUGGY][VPR_DIM_VALUE] = 100;
    v[0].n_outside[VPR_DIM_VALUE] = 3;
    CHECK("artifact patterns: untagged, within the normal range, more calls -> missing",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_MISSING));
    f.arc.dir = -1;
    CHECK("artifact patterns: untagged, within the normal range, fewer calls -> wrong",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_WRONG));
    v[0].n_outside[VPR_DIM_VALUE] = 80;
    v[0].lo[VPR_DIM_VALUE] = 80, v[0].hi[VPR_DIM_VALUE] = 206;
    v[0].blo[VPR_DIM_VALUE] = 150, v[0].bhi[VPR_DIM_VALUE] = 900;
    CHECK("artifact patterns: untagged, mostly beyond the normal range -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    /* outside the normal range but smaller (shorter steps per tick: each
     * takes longer): no larger data either (mdev13498's rec->key deltas) */
    v[0].blo[VPR_DIM_VALUE] = 7, v[0].bhi[VPR_DIM_VALUE] = 59;
    f.arc.dir = 1;
    CHECK("artifact patterns: untagged, beyond the normal range but smaller, more calls -> missing",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_MISSING));
    v[0].blo[VPR_DIM_VALUE] = -900, v[0].bhi[VPR_DIM_VALUE] = -150;
    CHECK("artifact patterns: untagged, larger in magnitude (negative) -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    f.arc.dir = -1;
    v[0].n_outside[VPR_DIM_VALUE] = 3;
    f.arc.to = -1;
    CHECK("artifact patterns: untagged, within the normal range, no changed calls -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    o.arcs = 0;
    v[0].r = 0;
    v[0].st[VPR_DIM_VALUE] = VPR_DS_NO_NORMAL;
    CHECK("artifact patterns: buggy-only variable -> scalability",
          !strcmp(vpr_infer_pattern(&m, &f, 0), VPR_PAT_SCALABILITY));
    /* no variable decided: rule 4's Scalability for a costly function,
     * none for one without cost; the paper's rules keep none */
    struct vpr_func h = {.disc = VPR_DISC_HIST, .var = -1, .guard_of = -1, .producer_of = -1, .state_of = -1, .size_of = -1, .link_of = -1};
    h.raw[VPR_BUGGY] = 0.5;
    CHECK("artifact patterns: costly, decided by rank history -> scalability",
          !strcmp(vpr_infer_pattern(&m, &h, 0), VPR_PAT_SCALABILITY));
    h.r = 1;
    CHECK("artifact patterns: costly but entirely normal (discount 1) -> none",
          !strcmp(vpr_infer_pattern(&m, &h, 0), VPR_PAT_NONE));
    h.r = 0;
    h.raw[VPR_BUGGY] = 0;
    CHECK("artifact patterns: no cost, no variable -> none",
          !strcmp(vpr_infer_pattern(&m, &h, 0), VPR_PAT_NONE));
    h.raw[VPR_BUGGY] = 0.5;
    o.pattern_rules = VPR_PATTERN_PAPER;
    CHECK("paper patterns: no variable -> none",
          !strcmp(vpr_infer_pattern(&m, &h, 0), VPR_PAT_NONE));
    o.pattern_rules = VPR_PATTERN_ARTIFACT;
    /* ranked for another function's evidence (--guards, --producers) with no
     * anomalous variable of its own: that evidence's pattern */
    struct vpr_func two[2] = {f, h};
    m.f = two;
    m.n_f = 2;
    v[0].tags = VPF_TAG_LOOP;
    v[0].r = 0;
    v[0].st[VPR_DIM_VALUE] = VPR_DS_DIFFERS;
    two[0].dim = VPR_DIM_VALUE;
    two[1].r = 1;
    two[1].producer_of = 0;
    CHECK("link patterns: a producer takes its reader's (loop on values -> scalability)",
          !strcmp(vpr_infer_pattern(&m, &two[1], 0), VPR_PAT_SCALABILITY) &&
          vpr_pattern_link(&m, &two[1]) == 0);
    two[1].producer_of = -1;
    two[1].guard_of = 0;
    CHECK("link patterns: a predicate of changed calls -> wrong constraint",
          !strcmp(vpr_infer_pattern(&m, &two[1], 0), VPR_PAT_WRONG));
    two[1].guard_of = -1;
    CHECK("link patterns: no link, no pattern of another's",
          vpr_pattern_link(&m, &two[1]) == -1 &&
          !strcmp(vpr_infer_pattern(&m, &two[1], 0), VPR_PAT_NONE));
    two[1] = two[0];
    two[1].producer_of = 0;
    v[0].tags = VPF_TAG_COND;
    CHECK("link patterns: its own anomalous variable tells first",
          vpr_pattern_link(&m, &two[1]) == -1 &&
          !strcmp(vpr_infer_pattern(&m, &two[1], 0), VPR_PAT_WRONG));
    /* --inside-yields: 3 of its 100 buggy values outside the normal range
     * is a shift, not other values: the placement's evidence tells */
    o.inside_yields = 1;
    CHECK("link patterns: own variable mostly inside the normal range yields (--inside-yields)",
          vpr_pattern_link(&m, &two[1]) == 0);
    v[0].n_outside[VPR_DIM_VALUE] = 80;
    CHECK("link patterns: own variable mostly outside the normal range still tells",
          vpr_pattern_link(&m, &two[1]) == -1);
    o.inside_yields = 0;
    m.f = NULL;
    m.n_f = 0;
}

static void test_hist_assign(void)
{
    struct vpr_sym syms[2] = {{0x1000, 0x1010, "a", 1, 0}, {0x1010, 0x1020, "b", 1, 0}};
    struct vpr_symtab t = {.syms = syms, .n = 2};
    uint32_t hist[8] = {1, 2, 0, 3, 4, 0, 0, 5};
    struct vpf_gmon g = {.lowpc = 0x5000, .highpc = 0x5020, .hist_size = 8,
                         .prof_rate = 100, .hist = hist, .has_hist = 1};
    double ticks[2] = {0, 0};
    double total = vpr_hist_assign(&g, 0x4000, &t, ticks);
    CHECK("hist assign: bins to symbols after removing the bias",
          total == 15 && ticks[0] == 6 && ticks[1] == 9);
    /* a ends at 0x1008, b starts at 0x1010 (a PLT or padding between them):
     * gprof's table stretches a over the gap, the ranking's does not */
    syms[0].hi = 0x1008;
    ticks[0] = ticks[1] = 0;
    total = vpr_hist_assign(&g, 0x4000, &t, ticks);
    CHECK("hist assign: gprof stretches a symbol to the next one",
          total == 15 && ticks[0] == 6 && ticks[1] == 9);
    t.exact = 1;
    ticks[0] = ticks[1] = 0;
    total = vpr_hist_assign(&g, 0x4000, &t, ticks);
    CHECK("hist assign: exact extents leave the gap's bins to no function",
          total == 15 && ticks[0] == 3 && ticks[1] == 9);
}

/* Nearest-rank percentiles of the latency report: the value at position
 * ceil(q n) of the sorted durations, never interpolated. */
static void test_lat_pct(void)
{
    double v[1000];
    fill(v, 1000, 1, 1);                                /* 1..1000 */
    CHECK("latency pct: p50 of 1..1000 is 500", vpr_lat_pct(v, 1000, 0.5) == 500);
    CHECK("latency pct: p99 990, p99.9 999, p100 1000",
          vpr_lat_pct(v, 1000, 0.99) == 990 && vpr_lat_pct(v, 1000, 0.999) == 999 &&
          vpr_lat_pct(v, 1000, 1.0) == 1000);
    CHECK("latency pct: one value is every percentile",
          vpr_lat_pct(v, 1, 0.5) == 1 && vpr_lat_pct(v, 1, 0.999) == 1);
    CHECK("latency pct: three values: p50 is the 2nd, p99 the 3rd",
          vpr_lat_pct(v, 3, 0.5) == 2 && vpr_lat_pct(v, 3, 0.99) == 3);
    CHECK("latency pct: empty -> NaN", isnan(vpr_lat_pct(v, 0, 0.5)));
    struct vpr_ldist d;
    memset(&d, 0, sizeof d);
    d.v[1] = v;
    d.n[1] = 10;
    struct vpr_lstats st = vpr_lat_stats(&d, 1);
    CHECK("latency stats: 1..10 -> p50 5, p99 10, max 10",
          st.p50 == 5 && st.p99 == 10 && st.p999 == 10 && st.max == 10);
}

/* crti's _init has size 0 and is followed by the PLT: the ranking's table
 * ends it with .init, gprof's stretches it over the PLT (so gprof charges
 * the stubs' time to it). This test binary itself has both. */
static void test_sized_labels(void)
{
    struct vpr_symtab a, b;
    char err[256];
    if (vpr_symtab_load("/proc/self/exe", &a, err, sizeof err) < 0 ||
        vpr_symtab_load_gprof("/proc/self/exe", &b, err, sizeof err) < 0) {
        CHECK("symbols: this binary loads", 0);
        return;
    }
    const struct vpr_sym *ia = NULL, *ib = NULL;
    for (size_t i = 0; i < a.n; i++) if (!strcmp(a.syms[i].name, "_init")) ia = &a.syms[i];
    for (size_t i = 0; i < b.n; i++) if (!strcmp(b.syms[i].name, "_init")) ib = &b.syms[i];
    CHECK("symbols: _init ends with its section (under 64 bytes), gprof's goes on",
          ia && ib && ia->lo == ib->lo && ia->hi - ia->lo < 64 && ib->hi > ia->hi && a.exact && !b.exact);
    vpr_symtab_free(&a);
    vpr_symtab_free(&b);
}

static void test_source_names(void)
{
    static const struct { const char *sym; size_t len; } c[] = {
        {"scan_table.constprop.0", 10}, {"f.isra.0", 1}, {"f.part.0", 1}, {"f.cold", 1},
        {"f.constprop.0.isra.0", 1}, {"f.part.0.cold", 1}, {"f.lto_priv.0", 1},
        {"main", 4}, {"f.123", 5}, {"f.cool", 6}, {".cold", 5}, {"f.", 2}, {"f..cold", 7},
        {"_ZN3Foo3barEv.cold", 13}};
    int good = 1;
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        if (vpr_sym_source_len(c[i].sym) != c[i].len) {
            fprintf(stderr, "%s: %zu, want %zu\n", c[i].sym, vpr_sym_source_len(c[i].sym), c[i].len);
            good = 0;
        }
    CHECK("symbols: gcc's clone and split suffixes give the source name, nothing else does",
          good);
}

static void test_system_path(void)
{
    CHECK("system path: gcc's C++ header through ..",
          vpf_system_path("/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/"
                          "bits/vector.tcc"));
    CHECK("system path: /usr/include", vpf_system_path("/usr/include/stdio.h"));
    CHECK("system path: not the program's", !vpf_system_path("/work/app/src/main.c") &&
          !vpf_system_path("/usr/src/app/../../work/x.c") && !vpf_system_path("src/a.h") &&
          !vpf_system_path(NULL));
    CHECK("system path: .. above the root stays at the root",
          vpf_system_path("/../usr/include/x.h") && !vpf_system_path("/usr/include/../../home/x.h"));
}

int main(void)
{
    test_source_names();
    test_sized_labels();
    test_lat_pct();
    test_hellinger();
    test_reservoir();
    test_dim_discount();
    test_hist_ratio();
    test_patterns();
    test_system_path();
    test_patterns_artifact();
    test_hist_assign();
    return fails != 0;
}
