// A hot function whose demangled name is longer than a line (t_long_names.sh):
// template arguments of nested standard containers, as C++ programs have.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

template <class A, class B, class C> struct Holder {
    A a;
    B b;
    C c;
};

typedef std::map<std::string, std::vector<std::pair<std::string, std::map<int, std::string>>>> Big;

template <class T, class U, class V>
__attribute__((noinline)) long walk(const Holder<T, U, V> &h, long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += (i * 31) ^ h.c;
    return s;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    Holder<Big, std::vector<Big>, long> h{};
    h.c = 7;
    long s = 0;
    for (int r = 0; r < 200; r++)
        s += walk(h, n);
    printf("%ld\n", s);
    return 0;
}
