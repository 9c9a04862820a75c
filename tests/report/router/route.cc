// route.cc - matching of one route (t_cxx_router.sh fixture); a unit of
// its own, so that Router::match calls it.
#include "router.h"

bool Route::accepts(std::string_view path) const
{
    return path.substr(0, prefix.size()) == prefix;
}
