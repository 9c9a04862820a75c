/* A stage that only calls the validator, run in the buggy run only: no
 * values of its own, no code time of its own, its whole cost is
 * validate()'s, whose values look the same in both runs. With
 * --dispatch-cap (default) it ranks just below validate(); without, its
 * share of the run "grew" from 0 and it ranks above. */
#include <stdio.h>

static volatile unsigned long sink;
static char doc[256];

static __attribute__((noinline)) int validate(const char *s, int n)
{
    int ok = 0;
    for (int i = 0; i < n; i++) ok += s[i] > ' ';
    for (int r = 0; r < 40; r++) sink += (unsigned long)(ok ^ r);
    return ok;
}

static __attribute__((noinline)) int stage_extra(void)
{
    return validate(doc, (int)sizeof doc) + 1;     /* not a sibling call: on the stack */
}

int main(int argc, char **argv)
{
    int extra = argc > 1;
    (void)argv;
    for (int i = 0; i < (int)sizeof doc; i++) doc[i] = (char)('a' + i % 26);
    for (long i = 0; i < 3000000; i++) {
        sink += (unsigned long)validate(doc, (int)sizeof doc);
        if (extra) sink += (unsigned long)stage_extra();
    }
    printf("%lu\n", sink & 0xff);
    return 0;
}
