/* forever.c - calls napper() (5 ms) until killed; t_scanner.sh kills it
 * with SIGKILL and checks that the committed events are in the file. */
#include <time.h>

__attribute__((noinline)) void napper(void)
{
    struct timespec ts = { 0, 5000000 };
    nanosleep(&ts, NULL);
}

int main(void)
{
    for (;;)
        napper();
}
