/* perf_script.c - see perf_script.h. */
#include "perf_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The time token "SECS.FRAC:" (digits, a dot, digits, a colon), after a
 * space: the anchor of an event line. */
static char *time_token(char *l)
{
    for (char *p = strchr(l, ' '); p; p = strchr(p + 1, ' ')) {
        char *q = p + 1, *d = q;
        while (*d >= '0' && *d <= '9') d++;
        if (d == q || *d != '.') continue;
        char *f = d + 1, *e = f;
        while (*e >= '0' && *e <= '9') e++;
        if (e > f && *e == ':') return q;
    }
    return NULL;
}

int vpr_perf_head_parse(char *l, struct vpr_perf_head *e, int *has_pid)
{
    if (*l == '\t' || *l == '\n' || !*l) return 0;     /* a call-chain line, or none */
    while (*l == ' ') l++;                               /* perf right-aligns COMM */
    char *tp = time_token(l);
    if (!tp) return 0;
    char *te = tp;                               /* back over "[CPU]" if there */
    while (te > l && te[-1] == ' ') te--;
    e->cpu = 0;
    if (te > l && te[-1] == ']') {
        char *ob = te - 1;
        while (ob > l && ob[-1] != '[') ob--;
        if (ob == l || ob[-1] != '[') return 0;
        e->cpu = (unsigned)strtoul(ob, NULL, 10);
        te = ob - 1;
        while (te > l && te[-1] == ' ') te--;
    }
    char *q = te;                                /* the token before: TID or PID/TID */
    while (q > l && q[-1] != ' ') q--;
    if (q == l || q == te) return 0;
    char *slash = memchr(q, '/', (size_t)(te - q));
    char *end;
    if (slash) {
        e->pid = (int)strtol(q, &end, 10);
        e->tid = (uint32_t)strtoul(slash + 1, &end, 10);
        *has_pid = 1;
    } else {
        e->pid = -1;
        e->tid = (uint32_t)strtoul(q, &end, 10);
    }
    if (end != te) return 0;
    size_t cl = (size_t)(q - l);
    while (cl && l[cl - 1] == ' ') cl--;
    snprintf(e->comm, sizeof e->comm, "%.*s", (int)cl, l);
    char *dot;
    uint64_t secs = strtoull(tp, &dot, 10), frac = 0;
    int digits = 0;
    char *fp = dot + 1;
    for (; *fp >= '0' && *fp <= '9'; fp++, digits++) if (digits < 9) frac = frac * 10 + (uint64_t)(*fp - '0');
    for (; digits < 9; digits++) frac *= 10;
    e->t = secs * 1000000000ull + frac;
    char *nm = fp + 1;
    while (*nm == ' ') nm++;
    /* "[PERIOD] EVENT:" where EVENT may hold colons ("sched:sched_switch",
     * "cpu-clock:ppp"): up to the first ": " or the last colon of the line */
    char *colon = strstr(nm, ": ");
    if (!colon) {
        colon = strrchr(nm, ':');
        if (!colon) return 0;
    }
    snprintf(e->name, sizeof e->name, "%.*s", (int)(colon - nm), nm);
    e->fields = colon + 1;
    while (*e->fields == ' ') e->fields++;
    size_t fl = strlen(e->fields);
    while (fl && (e->fields[fl - 1] == '\n' || e->fields[fl - 1] == '\r')) e->fields[--fl] = 0;
    return 1;
}

int vpr_perf_frame_parse(const char *l, char *sym, size_t symlen, char *dso, size_t dsolen)
{
    if (*l != '\t' && *l != ' ') return 0;
    while (*l == ' ' || *l == '\t') l++;
    const char *a = l;
    while ((*l >= '0' && *l <= '9') || (*l >= 'a' && *l <= 'f')) l++;
    if (l == a || *l != ' ') return 0;
    while (*l == ' ') l++;
    const char *open = strrchr(l, '(');
    if (!open) return 0;
    size_t n = (size_t)(open - l);
    while (n && l[n - 1] == ' ') n--;
    const char *plus = NULL;             /* "sym+0x1a": the last "+0x" */
    for (const char *q = l; q + 2 < l + n; q++)
        if (q[0] == '+' && q[1] == '0' && q[2] == 'x') plus = q;
    if (plus) n = (size_t)(plus - l);
    snprintf(sym, symlen, "%.*s", (int)n, l);
    size_t dl = strcspn(open + 1, ")\n");
    snprintf(dso, dsolen, "%.*s", (int)dl, open + 1);
    return 1;
}
