// A JVM's string-intern table under an XML-parsing application, modelled on
// HotSpot's StringTable, a chained hash table whose bucket count was fixed
// at VM start-up (-XX:StringTableSize, default 1009 until Java 7u40, then
// 60013; JDK-6962930 made it configurable).
//
// The VM creates its tables in Threads::create_vm(); String.intern() hashes
// the characters (java_lang_String::hash_code), walks the bucket comparing
// with java_lang_String::equals, and adds the string when it is new. The
// application parses documents and interns every element name, attribute
// name and attribute value, as parsers configured for interning do.
//
// The bug: StringTable::create_table() sizes the table once, with 1009
// buckets, whatever the application interns. Documents with 800 distinct
// names and values (normal) fit; documents with 12,000 distinct values
// (buggy: generated ids) make every intern walk a chain of about 24. gprof
// blames equals and the lookup; the table creation at VM start-up is the
// root cause (the fix: Java 7u40's default of 60013). C++17 templates.
extern "C" {
#include "../common/corpus.h"
}
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using jchar = uint16_t;

// A java.lang.String: UTF-16 characters and a cached hash.
struct oopDesc {
    std::vector<jchar> value;
    int32_t hash = 0;
};
using oop = oopDesc *;

struct java_lang_String {
    static int32_t hash_code(const jchar *s, int len)
    {
        int32_t h = 0;
        for (int i = 0; i < len; i++)
            h = 31 * h + (int32_t)s[i];
        return h;
    }
    static bool equals(oop str, const jchar *chars, int len)
    {
        if ((int)str->value.size() != len)
            return false;
        for (int i = 0; i < len; i++)
            if (str->value[(size_t)i] != chars[i])
                return false;
        return true;
    }
};

template <class T>
struct HashtableEntry {
    unsigned int _hash;
    T _literal;
    HashtableEntry *_next;
    // HotSpot's accessors (inline functions there; calls at -fno-inline).
    unsigned int hash() const { return _hash; }
    T literal() const { return _literal; }
    HashtableEntry *next() const { return _next; }
};

// HotSpot's Hashtable<T, F>: a fixed array of buckets, chained entries.
template <class T, int MemFlags>
class Hashtable {
public:
    explicit Hashtable(int table_size) : _buckets((size_t)table_size, nullptr), _table_size(table_size) {}
    int table_size() const { return _table_size; }
    int hash_to_index(unsigned int hash) const { return (int)(hash % (unsigned)_table_size); }
    HashtableEntry<T> *bucket(int i) const { return _buckets[(size_t)i]; }
    void add_entry(int index, unsigned int hash, T literal)
    {
        _pool.push_back(std::make_unique<HashtableEntry<T>>(HashtableEntry<T>{hash, literal, _buckets[(size_t)index]}));
        _buckets[(size_t)index] = _pool.back().get();
        _number_of_entries++;
    }
    int number_of_entries() const { return _number_of_entries; }

private:
    std::vector<HashtableEntry<T> *> _buckets;
    std::vector<std::unique_ptr<HashtableEntry<T>>> _pool;
    int _table_size;
    int _number_of_entries = 0;
};

// -XX:StringTableSize: the flag's value, parsed before the VM starts (0 =
// not given on the command line: the VM's default).
static long StringTableSize_flag = 0;

class StringTable : public Hashtable<oop, 1> {
public:
    static void create_table();
    static oop intern(const jchar *name, int len);
    static StringTable *the_table() { return _the_table; }
    static uint64_t n_equals;

private:
    explicit StringTable(int size) : Hashtable<oop, 1>(size) {}
    oop lookup(int index, const jchar *name, int len, unsigned int hash);
    static StringTable *_the_table;
};

StringTable *StringTable::_the_table = nullptr;
uint64_t StringTable::n_equals = 0;

void StringTable::create_table()
{
#ifdef VPROF_CASE_FIX
    int size = StringTableSize_flag ? (int)StringTableSize_flag : 60013;
#else
    int size = StringTableSize_flag ? (int)StringTableSize_flag : 1009; /* FIX: default 60013 (Java 7u40) */
#endif
    _the_table = new StringTable(size);
}

oop StringTable::lookup(int index, const jchar *name, int len, unsigned int hash)
{
    for (HashtableEntry<oop> *e = bucket(index); e; e = e->next()) {
        if (e->hash() == hash) {
            n_equals++;
            if (java_lang_String::equals(e->literal(), name, len))
                return e->literal();
        }
    }
    return nullptr;
}

oop StringTable::intern(const jchar *name, int len)
{
    unsigned int hash = (unsigned int)java_lang_String::hash_code(name, len);
    StringTable *t = the_table();
    int index = t->hash_to_index(hash);
    if (oop found = t->lookup(index, name, len, hash))
        return found;
    oop s = new oopDesc{std::vector<jchar>(name, name + len), (int32_t)hash};
    t->add_entry(index, hash, s);
    return s;
}

// ---------------------------------------------------------------- the VM
struct Threads {
    static void create_vm()
    {
        StringTable::create_table();        // universe_init -> StringTable
    }
};

// ---------------------------------------------------- the application
// A SAX-style parser that interns names and values (String.intern()).
class XmlParser {
public:
    explicit XmlParser(uint64_t seed, long distinct) : _distinct(distinct) { rng_seed(&_rng, seed); }

    uint64_t parse_document(int elements)
    {
        uint64_t h = 0;
        for (int e = 0; e < elements; e++) {
            h = h * 31 + identity(intern_token("item", rng_below(&_rng, 40)));
            h = h * 31 + identity(intern_token("id", rng_below(&_rng, (uint64_t)_distinct)));
            h = h * 31 + identity(intern_token("ref", rng_below(&_rng, (uint64_t)_distinct)));
        }
        return h;
    }

private:
    oop intern_token(std::string_view prefix, uint64_t n)
    {
        jchar buf[48];
        int len = 0;
        for (char c : prefix)
            buf[len++] = (jchar)c;
        char num[24];
        int k = snprintf(num, sizeof num, "-%llu", (unsigned long long)n);
        for (int i = 0; i < k; i++)
            buf[len++] = (jchar)num[i];
        return StringTable::intern(buf, len);
    }
    // The application keys its maps by the interned string's identity.
    static uint64_t identity(oop s) { return (uint64_t)(uint32_t)s->hash; }

    rng_t _rng;
    long _distinct;
};

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "documents", "documents parsed",                        400, 1, 10000000, 0 },
        { "elements",  "elements per document",                   500, 1, 10000000, 0 },
        { "distinct",  "distinct id values over all documents",   800, 1, 100000000, 0 },
        { "string-table-size", "-XX:StringTableSize (0: the default)", 0, 0, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    StringTableSize_flag = opt_get(opts, NOPTS(opts), "string-table-size");
    Threads::create_vm();
    long distinct = opt_get(opts, NOPTS(opts), "distinct");
    XmlParser parser(7040, distinct);
    uint64_t h = 0;
    long docs = opt_get(opts, NOPTS(opts), "documents");
    for (long d = 0; d < docs; d++)
        h ^= parser.parse_document((int)opt_get(opts, NOPTS(opts), "elements"));
    printf("%ld documents: %d interned strings, result %016llx\n", docs,
           StringTable::the_table()->number_of_entries(), (unsigned long long)h);
    fprintf(stderr, "buckets %d, equals calls %llu\n", StringTable::the_table()->table_size(),
            (unsigned long long)StringTable::n_equals);
    return 0;
}
