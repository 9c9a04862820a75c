// A ranking whose time is all in std::sort's internals (libstdc++'s
// templates, defined in the system's headers): tests/report/t_library_last.sh.
// refresh() re-sorts the whole table on every query; the buggy run queries
// 20 times as often. The fix is in refresh() (sort only when something
// changed), never in the library.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

static std::vector<unsigned> table;
static volatile unsigned long sink;

__attribute__((noinline)) void refresh()
{
    std::sort(table.begin(), table.end(), [](unsigned a, unsigned b) {
        return (a * 2654435761u) < (b * 2654435761u);
    });
}

__attribute__((noinline)) unsigned query(unsigned k)
{
    refresh();
    return table[k % table.size()];
}

int main(int argc, char **argv)
{
    int queries = argc > 1 ? atoi(argv[1]) : 20;
    for (unsigned i = 0; i < 20000; i++) table.push_back(i * 7919u);
    for (int q = 0; q < queries; q++) {
        std::reverse(table.begin(), table.end());
        sink += query((unsigned)q);
    }
    printf("%d\n", sink > 0);
    return 0;
}
