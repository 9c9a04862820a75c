/* chaos_plain.c - the uninstrumented half of chaos.c (built without the
 * latency plugin): a setjmp target and a signal-jump target in frames that
 * publish no record, so the chain must be repaired by the entry slow path
 * rather than by the pass's reset after setjmp. */
#include <setjmp.h>

static jmp_buf jb;
static sigjmp_buf sjb;
volatile int plain_jumpable;

int run_plain(void (*fn)(void))
{
    if (setjmp(jb) == 0) {
        fn();
        return 0;
    }
    return 1;
}

void jump_plain(void)
{
    longjmp(jb, 1);
}

int run_plain_sig(void (*fn)(void))
{
    if (sigsetjmp(sjb, 1) == 0) {
        plain_jumpable = 1;
        fn();
        plain_jumpable = 0;
        return 0;
    }
    plain_jumpable = 0;
    return 1;
}

void sigjump_plain(void)
{
    siglongjmp(sjb, 1);
}
