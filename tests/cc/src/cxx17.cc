// Fixture for t_cxxstd.sh: C++17 that g++ 12 accepts without -std= and
// clang++-14 (default gnu++14) rejects.
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>

template <typename T>
static long weight(const T &x)
{
    if constexpr (std::is_integral_v<T>)
        return (long)x;
    else
        return (long)x.size();
}

static std::string_view first_word(std::string_view s)
{
    auto sp = s.find(' ');
    return sp == std::string_view::npos ? s : s.substr(0, sp);
}

int main()
{
    std::map<std::string, int> counts{{"alpha beta", 3}, {"gamma", 4}};
    long total = 0;
    for (const auto &[key, n] : counts)
        total += weight(first_word(key)) * weight(n);
    std::printf("%ld %d\n", total, __cplusplus >= 201703L);
    return 0;
}
