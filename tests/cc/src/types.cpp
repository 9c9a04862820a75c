// Fixture for t_pass.sh: how the schema spells C++ types. typedef names
// as the source writes them (std::string, not the basic_string class it
// names), scopes in front, no `class` keyword; inline namespaces left out.
#include <map>
#include <string>
#include <vector>
namespace app {
struct Route { std::string prefix; int h; };
enum class Kind { A, B };
class Table {
public:
    int scan(const std::string &key, std::vector<Route> *v, Kind k) const;
private:
    std::string *name_;
    size_t n_;
};
}
int app::Table::scan(const std::string &key, std::vector<Route> *v, Kind k) const
{
    int n = 0;
    for (size_t i = 0; i < v->size() && i < n_; i++)
        if ((*v)[i].prefix == key && k == Kind::A)
            n++;
    if (name_ && name_->size() > 3)
        n++;
    return n;
}
