// router.h - a request router (t_cxx_router.sh fixture).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

struct Route {
    std::string prefix;
    int handler;
    bool accepts(std::string_view path) const;     // route.cc
};

class Router {
public:
    explicit Router(std::size_t max_scan) : max_scan_(max_scan) {}
    void add(std::string prefix, int handler);
    int match(std::string_view path) const;

private:
    std::vector<Route> routes_;
    std::size_t max_scan_;     // how many routes match() may try
};
