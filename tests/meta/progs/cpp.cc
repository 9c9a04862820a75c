// Test program for the vprof-meta oracle in C++: namespace global, method,
// template instances (DW_AT_name "twice<int>"), class member access.
#include <cstdio>
namespace app {
int counter = 2;
struct Acc {
    long total = 0;
    __attribute__((noinline)) long add(int v) { long t = total + v * counter; total = t; return t; }
};
template <typename T> __attribute__((noinline)) T twice(T x) { T y = x + x; return y; }
}
int main() {
    app::Acc a;
    for (int i = 0; i < 4; i++) a.add(i);
    double d = app::twice(1.5);
    int k = app::twice(3);
    std::printf("%ld %.1f %d\n", a.total, d, k);
    return 0;
}
