// Written for the vprof bug corpus by a helper that had not seen the
// profiler (2026-11-28); not modelled on a real issue. The fix is the
// VPROF_CASE_FIX variant; the line marked FIX is the bug.
//
// sesskv - a log-structured key-value store holding the sessions of a web
// front end: a memtable, sorted tables (4 KiB checksummed blocks, a block
// index and a Bloom filter each), size-tiered compaction: a flush makes a
// sorted run, four runs of a tier are merged into one of the next tier.
//
// The bug: Store::get searches every run (newest first) and keeps the
// version with the highest sequence number, instead of stopping at the
// first run that has the key, which holds the newest version. An active
// session, refreshed every round, has a version in nearly every run: reads
// that follow the activity (buggy) read a block per run where one would do.
extern "C" {
#include "../common/corpus.h"
}
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

enum : uint8_t { kTypeDeletion = 0, kTypeValue = 1 };
const size_t kBlockSize = 4096, kTableEntries = 512, kFlushEntries = 512, kMergeWidth = 4;

static struct {
    uint64_t writes, flushes, compactions, filter_checks, filter_negatives, block_reads;
} g_stats;

struct Entry { std::string key, value; uint64_t seq; uint8_t type; };

// ------------------------------- encoding (xxHash32-style block checksum)
#define ROTL(x, r) ((x) << (r) | (x) >> (32 - (r)))
static uint32_t block_checksum(const uint8_t *p, size_t n)
{
    const uint32_t P1 = 2654435761u, P2 = 2246822519u;
    uint32_t v[4] = {P1 + P2, P2, 0, 0u - P1}, w[4], h = (uint32_t)n;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        memcpy(w, p + i, 16);
        for (int l = 0; l < 4; l++)
            v[l] = ROTL(v[l] + w[l] * P2, 13) * P1;
    }
    for (int l = 0; l < 4; l++)
        h += ROTL(v[l], 1 + 6 * l);
    for (; i < n; i++)
        h = ROTL(h + p[i] * 374761393u, 11) * P1;
    return (h ^ (h >> 15)) * 3266489917u;
}

static uint32_t key_hash(const char *p, size_t n)
{
    uint32_t h = 0xbc9f1d34u ^ (uint32_t)(n * 0xc6a4a793u);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 0x01000193u;
    h = (h ^ (h >> 16)) * 0x85ebca6bu;
    h = (h ^ (h >> 13)) * 0xc2b2ae35u;
    return h ^ (h >> 16);
}

static int compare_key(const uint8_t *a, size_t an, const std::string &b)
{
    size_t n = an < b.size() ? an : b.size();
    int c = memcmp(a, b.data(), n);
    return c ? c : (an < b.size() ? -1 : an > b.size() ? 1 : 0);
}

// An entry is: key length (1 byte), value length (1 byte), tag (seq << 8 |
// type, 8 bytes), key, value. Decodes the entry at P into OUT; returns the
// next entry.
static const uint8_t *decode_entry(const uint8_t *p, Entry *out)
{
    uint64_t tag;
    memcpy(&tag, p + 2, 8);
    out->key.assign((const char *)p + 10, p[0]);
    out->value.assign((const char *)p + 10 + p[0], p[1]);
    out->seq = tag >> 8;
    out->type = (uint8_t)(tag & 0xff);
    return p + 10 + p[0] + p[1];
}

// The first of KEYS (sorted) that is >= KEY, or keys.size().
static size_t lower_bound_key(const std::vector<std::string> &keys, const std::string &key)
{
    size_t lo = 0, hi = keys.size();
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (keys[mid].compare(key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// -------------------------------------------------------------- tables
struct BlockHandle { uint32_t offset, size, sum; };

// An immutable sorted table: data blocks, their index (last key of each)
// and a Bloom filter of its keys (10 bits a key, 6 probes).
class Table {
public:
    Table(const std::vector<Entry> &sorted, size_t from, size_t to);
    bool may_contain(const std::string &key) const;
    bool get(const std::string &key, Entry *out) const;
    void append_all(std::vector<Entry> *out) const;
    const std::string &largest() const { return last_keys_.back(); }
private:
    void read_block(size_t i, std::vector<uint8_t> *buf) const;
    std::string file_;  // the table file
    std::vector<BlockHandle> index_;
    std::vector<std::string> last_keys_;  // the block index: last key of each block
    std::vector<uint8_t> bloom_;
    uint32_t bloom_bits_;
};

Table::Table(const std::vector<Entry> &sorted, size_t from, size_t to)
{
    bloom_bits_ = (uint32_t)((to - from) * 10 + 64);
    bloom_.assign((bloom_bits_ + 7) / 8, 0);
    std::string block;
    for (size_t i = from; i < to; i++) {
        const Entry &e = sorted[i];
        uint64_t tag = e.seq << 8 | e.type;
        block.append(1, (char)e.key.size()).append(1, (char)e.value.size());
        block.append((const char *)&tag, 8).append(e.key).append(e.value);
        uint32_t h = key_hash(e.key.data(), e.key.size()), delta = ROTL(h, 15);
        for (int k = 0; k < 6; k++, h += delta)
            bloom_[h % bloom_bits_ / 8] |= (uint8_t)(1u << (h % bloom_bits_ % 8));
        if (block.size() >= kBlockSize || i + 1 == to) {
            uint32_t sum = block_checksum((const uint8_t *)block.data(), block.size());
            index_.push_back(BlockHandle{(uint32_t)file_.size(), (uint32_t)block.size(), sum});
            last_keys_.push_back(e.key);
            file_.append(block);
            block.clear();
        }
    }
}

bool Table::may_contain(const std::string &key) const
{
    uint32_t h = key_hash(key.data(), key.size()), delta = ROTL(h, 15);
    g_stats.filter_checks++;
    for (int k = 0; k < 6; k++, h += delta)
        if (!(bloom_[h % bloom_bits_ / 8] & (1u << (h % bloom_bits_ % 8)))) {
            g_stats.filter_negatives++;
            return false;
        }
    return true;
}

// Reads block I of the table file (a pread in a real store) and verifies
// its checksum.
void Table::read_block(size_t i, std::vector<uint8_t> *buf) const
{
    const BlockHandle &h = index_[i];
    buf->resize(h.size);
    memcpy(buf->data(), file_.data() + h.offset, h.size);
    g_stats.block_reads++;
    if (block_checksum(buf->data(), h.size) != h.sum) {
        fprintf(stderr, "corrupt block %zu\n", i);
        exit(1);
    }
}

bool Table::get(const std::string &key, Entry *out) const
{
    size_t lo = lower_bound_key(last_keys_, key);  // the block that may hold KEY
    if (lo == index_.size())
        return false;
    std::vector<uint8_t> buf;
    read_block(lo, &buf);
    const uint8_t *p = buf.data(), *end = p + buf.size();
    while (p < end) {
        int c = compare_key(p + 10, p[0], key);
        if (c > 0)
            return false;
        if (c == 0) {
            decode_entry(p, out);
            return true;
        }
        p += 10 + p[0] + p[1];
    }
    return false;
}

void Table::append_all(std::vector<Entry> *out) const
{
    std::vector<uint8_t> buf;
    Entry e{};
    for (size_t b = 0; b < index_.size(); b++) {
        read_block(b, &buf);
        for (const uint8_t *p = buf.data(); p < buf.data() + buf.size(); out->push_back(e))
            p = decode_entry(p, &e);
    }
}

// --------------------------------------------------------------- store
// Merges two key-sorted runs; on equal keys the newer one wins.
static std::vector<Entry> merge_runs(const std::vector<Entry> &newer,
                                     const std::vector<Entry> &older)
{
    std::vector<Entry> out;
    size_t i = 0, j = 0;
    while (i < newer.size() || j < older.size()) {
        int c = i == newer.size() ? 1 : j == older.size() ? -1 : newer[i].key.compare(older[j].key);
        out.push_back(c <= 0 ? newer[i++] : older[j++]);
        j += c == 0;
    }
    return out;
}

// A sorted run: tables in key order, not overlapping. A flush makes a run of
// tier 0; four runs of tier t are merged into one of tier t + 1.
struct Run { std::vector<Table *> tables; std::vector<std::string> largest; int tier; };

class Store {
public:
    void write(const std::string &key, uint8_t type, const std::string &value);
    bool get(const std::string &key, std::string *value) const;
    size_t sources() const { return runs_.size(); }
    void flush();
private:
    void compact();
    void add_run(const std::vector<Entry> &sorted, int tier);
    const Table *table_in(size_t run, const std::string &key) const;
    uint64_t seq_ = 0;
    std::map<std::string, Entry> mem_;
    std::vector<Run> runs_;  // newest first
};

void Store::write(const std::string &key, uint8_t type, const std::string &value)
{
    mem_[key] = Entry{key, value, ++seq_, type};
    g_stats.writes++;
    if (mem_.size() >= kFlushEntries)
        flush();
}

void Store::add_run(const std::vector<Entry> &sorted, int tier)
{
    Run r{std::vector<Table *>(), std::vector<std::string>(), tier};
    for (size_t i = 0, n = sorted.size(); i < n; i += kTableEntries) {
        r.tables.push_back(new Table(sorted, i, i + kTableEntries < n ? i + kTableEntries : n));
        r.largest.push_back(r.tables.back()->largest());
    }
    runs_.insert(runs_.begin(), r);
}

void Store::flush()
{
    std::vector<Entry> sorted;
    for (std::map<std::string, Entry>::const_iterator it = mem_.begin(); it != mem_.end(); ++it)
        sorted.push_back(it->second);
    mem_.clear();
    add_run(sorted, 0);
    g_stats.flushes++;
    while (runs_.size() >= kMergeWidth && runs_[kMergeWidth - 1].tier == runs_[0].tier)
        compact();
}

// Merges the kMergeWidth newest runs (all of one tier) into one run of the
// next tier.
void Store::compact()
{
    std::vector<Entry> merged, kept;
    const int tier = runs_[0].tier;
    const bool oldest = runs_.size() == kMergeWidth;
    for (size_t r = 0; r < kMergeWidth; r++) {  // newest first
        std::vector<Entry> t;
        for (size_t i = 0; i < runs_[r].tables.size(); i++) {
            runs_[r].tables[i]->append_all(&t);
            delete runs_[r].tables[i];
        }
        merged = merge_runs(merged, t);
    }
    for (size_t i = 0; i < merged.size(); i++)  // in the oldest run tombstones hide nothing
        if (!oldest || merged[i].type != kTypeDeletion)
            kept.push_back(merged[i]);
    runs_.erase(runs_.begin(), runs_.begin() + kMergeWidth);
    add_run(kept, tier + 1);
    g_stats.compactions++;
}

// The table of run R that may hold KEY (runs are searched newest first).
const Table *Store::table_in(size_t run, const std::string &key) const
{
    size_t i = lower_bound_key(runs_[run].largest, key);
    return i < runs_[run].tables.size() ? runs_[run].tables[i] : nullptr;
}

bool Store::get(const std::string &key, std::string *value) const
{
    std::map<std::string, Entry>::const_iterator it = mem_.find(key);
    if (it != mem_.end()) {
        *value = it->second.value;
        return it->second.type == kTypeValue;
    }
    Entry best{}, e{};
    bool found = false;
#ifdef VPROF_CASE_FIX
    for (size_t s = 0; s < runs_.size() && !found; s++) {
#else
    for (size_t s = 0; s < runs_.size(); s++) { /* FIX: stop at the first run that has the key (&& !found): runs are newest first */
#endif
        const Table *t = table_in(s, key);
        if (!t || !t->may_contain(key) || !t->get(key, &e))
            continue;
        if (!found || e.seq > best.seq)
            best = e;
        found = true;
    }
    if (!found || best.type == kTypeDeletion)
        return false;
    *value = best.value;
    return true;
}

// ---------------------------------------------------------- workload
static std::string session_key(uint64_t id)
{
    char b[24];
    snprintf(b, sizeof b, "sess:%08llx", (unsigned long long)(id * 0x9E3779B1ull % 0xFFFFFFFBull));
    return b;
}

static std::string session_value(const std::string &key, long version, rng_t *r)
{
    char b[96];
    int n = snprintf(b, sizeof b, "{\"k\":\"%s\",\"v\":%ld,\"csrf\":\"", key.c_str(), version);
    for (int i = 8 + (int)rng_below(r, 24); i > 0; i--)
        b[n++] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng_below(r, 36)];
    return std::string(b, (size_t)n) + "\"}";
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"sessions", "sessions loaded", 16000, 1000, 10000000, 0},
        {"hot-every", "one session in N is active (refreshed every round)", 32, 2, 1000000, 0},
        {"rounds", "refresh rounds of the active sessions", 14, 1, 100000, 0},
        {"gets", "gets after the writes", 36000, 1, 100000000, 0},
        {"recent-pct", "% of gets that read an active session", 5, 0, 100, 0},
        {"seed", "workload seed", 31337, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    const uint64_t nsess = (uint64_t)opt_get(opts, NOPTS(opts), "sessions");
    const uint64_t every = (uint64_t)opt_get(opts, NOPTS(opts), "hot-every"), nhot = nsess / every;
    const long rounds = opt_get(opts, NOPTS(opts), "rounds");
    const long gets = opt_get(opts, NOPTS(opts), "gets");
    const uint64_t recent_pct = (uint64_t)opt_get(opts, NOPTS(opts), "recent-pct");
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));

    Store db;
    for (uint64_t i = 0; i < nsess; i++) {  // the load
        std::string k = session_key(i);
        db.write(k, kTypeValue, session_value(k, 0, &r));
    }
    for (long round = 1; round <= rounds; round++) {
        for (uint64_t h = 0; h < nhot; h++) {  // active sessions: refreshed or logged out
            std::string k = session_key(h * every);
            bool logout = (h + (uint64_t)round) % 16 == 0;
            db.write(k, logout ? kTypeDeletion : kTypeValue,
                     logout ? std::string() : session_value(k, round, &r));
        }
        for (uint64_t c = 0; c < nhot / 8; c++) {  // and a trickle of logins elsewhere
            std::string k = session_key(rng_below(&r, nsess));
            db.write(k, kTypeValue, session_value(k, round, &r));
        }
    }

    db.flush();  // the checkpoint at the end of the burst
    const uint64_t write_reads = g_stats.block_reads;
    uint64_t found = 0, digest = 1469598103934665603ull;
    std::string v;
    for (long g = 0; g < gets; g++) {
        uint64_t id = rng_below(&r, 100) < recent_pct ? rng_below(&r, nhot) * every
                                                       : rng_below(&r, nsess);
        bool hit = db.get(session_key(id), &v);
        found += hit;
        for (size_t i = 0; hit && i < v.size(); i++)
            digest = (digest ^ (uint8_t)v[i]) * 1099511628211ull;
        digest = (digest ^ id) * 1099511628211ull;
    }
    printf("%ld gets, %" PRIu64 " found, %" PRIu64 " missing, digest %016" PRIx64 "\n", gets, found,
           (uint64_t)gets - found, digest);
    fprintf(stderr, "%" PRIu64 " writes, %" PRIu64 " flushes, %" PRIu64 " compactions, %zu runs; "
            "gets: %" PRIu64 " filter checks (%" PRIu64 " negative), %" PRIu64 " block reads (%"
            PRIu64 " in compactions)\n", g_stats.writes, g_stats.flushes, g_stats.compactions,
            db.sources(), g_stats.filter_checks, g_stats.filter_negatives,
            g_stats.block_reads - write_reads, write_reads);
    return 0;
}
