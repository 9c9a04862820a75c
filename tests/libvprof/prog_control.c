/* moncontrol(3) and profil(3) under vprof.
 *   prog_control mon     moncontrol(0) around off_part(), on for on_part()
 *   prog_control profil  (built without -pg) profil() over its own text;
 *                        exits 0 iff the buffer counted ticks, and the
 *                        counting stops after profil(NULL, ...). */
#include <stdio.h>
#include <string.h>
#include <sys/gmon.h>

void moncontrol(int mode);   /* not declared by every glibc <sys/gmon.h> */
#include <time.h>
#include <unistd.h>

extern char __executable_start, etext;
static volatile long sink;

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void off_part(double ms)
{
    double end = cpu_ms() + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 1000; i++)
            sink += i;
}

__attribute__((noinline)) void on_part(double ms)
{
    double end = cpu_ms() + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 1000; i++)
            sink += i;
}

static unsigned short buf[1 << 16];

static unsigned long total(void)
{
    unsigned long t = 0;
    for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i++)
        t += buf[i];
    return t;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "mon")) {
        moncontrol(0);
        off_part(300);
        moncontrol(1);
        on_part(300);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "profil")) {
        size_t text = (size_t)(&etext - &__executable_start);
        /* scale so that the whole text fits the buffer */
        unsigned scale = (unsigned)((double)sizeof buf / text * 65536 / 2);
        if (scale > 65536)
            scale = 65536;
        if (profil(buf, sizeof buf, (size_t)&__executable_start, scale) != 0)
            return 2;
        on_part(300);
        profil(NULL, 0, 0, 0);
        unsigned long t1 = total();
        off_part(200);
        unsigned long t2 = total();
        printf("profil ticks %lu, after stop %lu\n", t1, t2 - t1);
        return t1 > 0 && t2 == t1 ? 0 : 1;
    }
    return 2;
}
