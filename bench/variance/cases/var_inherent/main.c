/* A report server whose requests take time in proportion to the report
 * they ask for: inherent variance (VProfiler, EuroSys '17, §3.2.1: "some
 * variance arises because invocations may perform more work and manipulate
 * more data ... such variance is not an indication of a mitigable
 * pathology").
 *
 * The main thread serves a request every --think-us: it parses the query
 * (parse_query, constant work), then renders the report, 1..--max-rows
 * rows (render_report calls format_row once per row, about 1.5 µs each).
 * The row count is the request's work, passed to vprof_req_work.
 *
 * The "bug": render_report() has no page size. With small reports (normal)
 * the latency spread is modest; when clients ask for ten times larger
 * reports (buggy) the mean and the variance of the latency grow tenfold,
 * and all of that variance is the report size: vprof-report --variance
 * labels render_report/format_row inherent, so the fix is a constraint
 * (pagination), not a code pathology. The request API (vprof.h) is
 * declared weak, so the program also links without libvprof (gcc -pg). */
#include "../../../bugs/common/corpus.h"
#include <time.h>

#define ROW_ROUNDS  1100            /* formatting rounds per row: ~1.5 µs */

void vprof_req_start(uint64_t id) __attribute__((weak));
void vprof_req_end(uint64_t id) __attribute__((weak));
void vprof_req_work(uint64_t id, uint64_t units) __attribute__((weak));

static volatile uint64_t sink;
static uint64_t rows_rendered;

static uint64_t parse_query(uint64_t id, char *buf, size_t len)
{
    snprintf(buf, len, "report?id=%llu&format=text", (unsigned long long)id);
    uint64_t h = 0;
    for (int k = 0; k < 2000; k++)
        for (const char *p = buf; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001b3ull + (uint64_t)k;
    return h;
}

static uint64_t format_row(uint64_t seed, long row)
{
    uint64_t h = seed ^ (uint64_t)row;
    for (int k = 0; k < ROW_ROUNDS; k++) h = (h ^ (uint64_t)k) * 0x9e3779b97f4a7c15ull;
    rows_rendered++;
    return h;
}

static uint64_t render_report(uint64_t seed, long rows)
{
    uint64_t h = seed;
    for (long i = 0; i < rows; i++)     /* FIX: render at most PAGE_ROWS rows per response and let the client page through the rest */
        h += format_row(h, i);
    return h;
}

static uint64_t serve_requests(long n, long think_us, long max_rows, rng_t *r)
{
    uint64_t h = 0;
    char query[64];
    struct timespec think = {think_us / 1000000, (think_us % 1000000) * 1000};
    for (long i = 0; i < n; i++) {
        uint64_t id = (uint64_t)i + 1;
        long rows = 1 + (long)rng_below(r, (uint64_t)max_rows);
        if (vprof_req_start) vprof_req_start(id);
        if (vprof_req_work) vprof_req_work(id, (uint64_t)rows);
        uint64_t q = parse_query(id, query, sizeof query);
        h += render_report(q, rows);
        if (vprof_req_end) vprof_req_end(id);
        nanosleep(&think, NULL);
    }
    return h;
}

int main(int argc, char **argv)
{
    opt_t o[] = {
        {"requests", "requests served", 200, 1, 1000000, 0},
        {"think-us", "pause between two requests, µs", 5000, 0, 1000000, 0},
        {"max-rows", "largest report asked for, rows", 200, 1, 1000000, 0},
    };
    opts_parse(argc, argv, o, NOPTS(o));
    rng_t r;
    rng_seed(&r, 7);
    sink = serve_requests(opt_get(o, NOPTS(o), "requests"), opt_get(o, NOPTS(o), "think-us"),
                          opt_get(o, NOPTS(o), "max-rows"), &r);
    printf("requests %ld, rows %llu\n", opt_get(o, NOPTS(o), "requests"),
           (unsigned long long)rows_rendered);
    return 0;
}
