// Guarded counts leave the system's headers alone (t_calls.sh): main's call
// of keep() is guarded by want(); inside push_back, libstdc++'s
// _M_check_len guards its throw by max_size() - the library's decision,
// not counted.
#include <vector>

static bool want(int i) { return i % 3 == 0; }
static void keep(std::vector<int> &v, int i) { v.push_back(i); }

int main()
{
    std::vector<int> v;
    for (int i = 0; i < 1000; i++)
        if (want(i)) keep(v, i);
    return v.empty();
}
