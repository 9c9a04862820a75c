// Fixture: C++ the schema pass must survive (templates, lambdas, references,
// virtual calls, exceptions, range-for).
#include <stdexcept>
#include <utility>
#include <vector>

struct Base { virtual ~Base() {} virtual int cost(int n) const { return n; } };
struct Derived : Base { int extra = 3; int cost(int n) const override { return n + extra; } };

template <typename T> T clampsum(const std::vector<T> &v, T cap)
{
    T s{};
    for (const T &x : v)
        if (s + x < cap)
            s += x;
    return s;
}

int torture_cxx(int n, const Base &b)
{
    std::vector<int> v(n > 0 ? n : 1, 2);
    std::pair<int, int> range = std::make_pair(n - 1, n + 1);
    int lo = range.first, hi = range.second;
    int &ref = lo;
    auto f = [&](int k) { return k < hi ? b.cost(k) : ref; };
    int total = 0;
    try {
        for (int i = 0; i < n; i++)
            total += f(i);
        if (total < 0)
            throw std::runtime_error("negative");
    } catch (const std::exception &e) {
        total = -1;
    }
    return total + clampsum(v, 100);
}

int main() { Derived d; return torture_cxx(4, d) == 12345; }
