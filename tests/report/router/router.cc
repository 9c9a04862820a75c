// router.cc - the router (t_cxx_router.sh fixture). The planted slowdown:
// match() tries the routes in order, at most max_scan_ of them; the buggy
// configuration sets no useful limit, so a request that matches no route
// tries them all.
#include <utility>

#include "router.h"

void Router::add(std::string prefix, int handler)
{
    routes_.push_back(Route{std::move(prefix), handler});
}

int Router::match(std::string_view path) const
{
    for (std::size_t i = 0; i < routes_.size() && i < this->max_scan_; i++)
        if (routes_[i].accepts(path))
            return routes_[i].handler;
    return -1;
}
