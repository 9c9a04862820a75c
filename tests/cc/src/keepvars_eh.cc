// keepvars_eh.cc - C++ for --keep-vars (t_keepvars.sh): templates, a
// destructor run while an exception unwinds (landing pad + resume), catch.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

template <typename T> struct Box {
    T v;
    explicit Box(T x) : v(x) {}
    ~Box() { std::printf("~%d ", int(v)); }
};

template <typename T> T process(const std::vector<T> &xs, T lim)
{
    T total = 0;
    for (size_t i = 0; i < xs.size(); i++) {
        Box<T> b(xs[i]);
        if (b.v > lim)
            throw std::runtime_error("too big at " + std::to_string(i));
        total += b.v;
    }
    return total;
}

int main(int argc, char **)
{
    std::vector<int> v{1, 2, 3, 40, 5};
    int lim = argc > 1 ? 100 : 10;
    try {
        std::printf("%d\n", process(v, lim));
    } catch (const std::exception &e) {
        std::printf("caught %s\n", e.what());
    }
    std::vector<double> d{1.5, 2.5};
    std::printf("%.1f\n", process(d, 9.0));
    return 0;
}
