/* Fixture for t_pass.sh: every kind of variable the schema pass must find.
 * The expected schema lines are in t_pass.sh; keep line numbers stable. */
#include <string.h>

struct buf { int len; char *data; unsigned cap; };
unsigned long pool_free_frames = 3;          /* line 6: global, cond */
static int verbose;                          /* line 7: global, cond */
const char *banner = "x";                    /* line 8: global, none */

static int consume(struct buf *b, int n) { return b->len - n; }

int scan(struct buf *bp, int n)              /* line 12: bp, n */
{
    static int calls;                        /* line 14: local static */
    int total = 0;                           /* line 15 */
    calls++;
    for (int i = 0; i < n; i++) {            /* line 17: i loop|cond|args */
        if (bp->len > i && verbose)          /* bp->len cond */
            total += consume(bp, i);
    }
    struct buf local = *bp;                  /* line 21 */
    while (local.len > 0)                    /* local.len loop|cond */
        local.len -= 2;
    char *p = bp->data;                      /* line 24 */
    while (*p)
        p++;
    if (pool_free_frames < 2)
        total = -total;
    switch (n) { case 1: total++; break; default: break; }
    return total + (int)strlen(bp->data);    /* bp->data args */
}

int main(void)
{
    struct buf b = {5, "hello", 8};          /* line 35 */
    int unused_local = 7;                    /* line 36: never listed */
    (void)unused_local;
    return scan(&b, 3) > 100;
}

struct node { int key; struct node *next; };
int walk(struct node *head, int key)         /* line 42 */
{
    struct node *p = head;                   /* line 44: p loop|cond */
    int steps = 0;                           /* line 45: steps loop|cond */
    do {
        steps++;
    } while (steps < 3);
    for (; p != 0; p = p->next)
        if (p->key == key)                   /* p->key cond, key cond */
            return steps;
    return -1;
}
