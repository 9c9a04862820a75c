// exc.cpp - C++ exceptions thrown through instrumented frames, caught in an
// instrumented function (landing pad) and in an uninstrumented one
// (exc_plain.cpp); then quiet() sleeps 30 ms, as in chaos.c. Prints
// "quiet_start NS", "quiet_truth NS", "func quiet ADDR", "func main ADDR",
// "caught N".
#include <stdexcept>
#include <cstdint>
#include <cstdio>
#include <ctime>

int catch_plain(int n);
volatile long sink;

static uint64_t now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct Guard {              // a destructor: cleanup landing pads on the way
    ~Guard() { sink++; }
};

__attribute__((noinline)) void thrower(int n)
{
    Guard g;
    if (n == 0)
        throw std::runtime_error("x");
    thrower(n - 1);
    sink++;
}

__attribute__((noinline)) int catch_inst(int n)
{
    try {
        thrower(n);
    } catch (const std::runtime_error &) {
        return 1;
    }
    return 0;
}

__attribute__((noinline)) void quiet()
{
    timespec ts = { 0, 30000000 };
    nanosleep(&ts, nullptr);
}

int main()
{
    int caught = 0;
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < 200000000u) {      // 0.2 s of throwing
        caught += catch_inst(8);
        caught += catch_plain(8);
    }
    uint64_t q0 = now_ns();
    quiet();
    uint64_t q1 = now_ns();
    timespec settle = { 0, 2000000 };
    nanosleep(&settle, nullptr);
    std::printf("quiet_start %llu\nquiet_truth %llu\n", (unsigned long long)q0,
                (unsigned long long)(q1 - q0));
    std::printf("func quiet %lx\nfunc main %lx\ncaught %d\n", (unsigned long)(uintptr_t)quiet,
                (unsigned long)(uintptr_t)main, caught);
    return 0;
}
