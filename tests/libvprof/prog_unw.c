/* A program that unwinds its own stack with libunwind, over and over (as
 * glog and crash reporters do), while vprof unwinds it on every tick.
 * libunwind blocks signals around its locks; if vprof let its ticks in,
 * a tick inside such a section would wait forever on the lock. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdio.h>
#include <time.h>

static volatile long frames;

__attribute__((noinline)) static void walk(void)
{
    unw_context_t uc;
    unw_cursor_t c;
    unw_getcontext(&uc);
    unw_init_local(&c, &uc);
    while (unw_step(&c) > 0)
        frames++;
}

__attribute__((noinline)) static void deeper(int n)
{
    if (n)
        deeper(n - 1);
    else
        walk();
}

int main(void)
{
    clock_t end = clock() + CLOCKS_PER_SEC / 2;    /* 0.5 s of CPU */
    long n = 0;
    while (clock() < end) {
        deeper(8);
        n++;
    }
    printf("walks %ld frames %ld\n", n, frames);
    return n > 0 ? 0 : 1;
}
