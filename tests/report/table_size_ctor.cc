// The C++ shape of tests/report/table_size.c (tests/report/t_sizers.sh):
// the bucket count is a constructor's member initializer, and the size is
// the choice of the function that constructs the table (make_table's 64),
// so that function - not the constructor - is the sizer. Argument: the
// number of keys.
#include <cstdio>
#include <cstdlib>
#include <vector>

struct Ent { unsigned key; Ent *next; };

class Table {
public:
    // out of line, as a constructor with more to do would be: its caller
    // is found through the call arc (an inlined one has none, and is named)
    __attribute__((noinline)) explicit Table(unsigned n) : nbuckets_(n), b_(n, nullptr) {}
    __attribute__((noinline)) void insert(Ent *e)
    {
        unsigned i = mix(e->key) & (nbuckets_ - 1);
        e->next = b_[i];
        b_[i] = e;
        count_++;
    }
    __attribute__((noinline)) Ent *lookup(unsigned key) const
    {
        Ent *e = b_[mix(key) & (nbuckets_ - 1)];
        while (e && !key_eq(e, key))
            e = e->next;
        return e;
    }
private:
    static unsigned mix(unsigned k) { return k * 2654435761u; }
    __attribute__((noinline)) static bool key_eq(const Ent *e, unsigned key) { return e->key == key; }
    unsigned nbuckets_;
    std::vector<Ent *> b_;
    long count_ = 0;
};

__attribute__((noinline)) Table *make_table() { return new Table(64); }

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 64;
    Table *t = make_table();
    std::vector<Ent> ents(n);
    for (unsigned i = 0; i < n; i++) {
        ents[i].key = i * 7 + 1;
        t->insert(&ents[i]);
    }
    long found = 0;
    for (unsigned r = 0; r < 600; r++)
        for (unsigned i = 0; i < n; i++)
            found += t->lookup(i * 7 + 1) != nullptr;
    std::printf("%ld\n", found);
    delete t;
    return 0;
}
