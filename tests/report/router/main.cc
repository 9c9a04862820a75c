// main.cc - serves the same requests in both runs (t_cxx_router.sh
// fixture): `app normal N` with a scan limit of 64 routes, `app buggy N`
// with none. One request in ten matches no route. C++17 throughout
// (structured bindings, if constexpr); built with no -std=.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "router.h"

struct Request {
    std::string path;
    int method;
};

template <typename T>
static unsigned long fold(const T &x)
{
    if constexpr (std::is_integral_v<T>) {
        return (unsigned long)x * 2654435761u;
    } else {
        unsigned long h = 0;
        for (char c : x) h = h * 31 + (unsigned char)c;
        return h;
    }
}

int main(int argc, char **argv)
{
    bool buggy = argc > 1 && argv[1][0] == 'b';
    int n = argc > 2 ? std::atoi(argv[2]) : 500000;
    Router router(buggy ? 1000000 : 64);
    for (int i = 0; i < 1500; i++)
        router.add("/api/v" + std::to_string(i) + "/", i);
    std::unordered_map<std::string, unsigned long> stats;
    unsigned long sum = 0;
    for (int k = 0; k < n; k++) {
        Request req{(k % 10 == 9 ? "/static/v" : "/api/v") + std::to_string(k % 40) + "/items",
                    k & 1};
        int h = router.match(req.path);
        auto [it, fresh] = stats.try_emplace(req.path, 0);
        it->second += fold(h) + fresh;
        sum += fold(req.path);
    }
    std::printf("%zu %lu\n", stats.size(), sum);
    return 0;
}
