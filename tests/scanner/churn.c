/* churn.c - 1000 short threads, 8 at a time, each calling tfunc() (2 ms):
 * more threads than registry slots (512), so slots must be recycled after
 * threads exit, while the scanner may be reading their stacks. Prints
 * "func tfunc ADDR". */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) void tfunc(void)
{
    struct timespec ts = { 0, 2000000 };
    nanosleep(&ts, NULL);
}

static void *body(void *arg)
{
    (void)arg;
    tfunc();
    return NULL;
}

int main(void)
{
    printf("func tfunc %lx\n", (unsigned long)(uintptr_t)tfunc);
    for (int round = 0; round < 125; round++) {
        pthread_t th[8];
        for (int i = 0; i < 8; i++)
            pthread_create(&th[i], NULL, body, NULL);
        for (int i = 0; i < 8; i++)
            pthread_join(th[i], NULL);
    }
    return 0;
}
