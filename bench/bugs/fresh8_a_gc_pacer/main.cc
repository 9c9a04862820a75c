/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * sessiond - a session-tracking service whose handlers run on an embedded
 * scripting runtime. Every value (string, cons cell, record) lives on the
 * runtime's heap, reclaimed by a stop-the-world mark-sweep collector (gray
 * stack, then a sweep of the list of all objects) that the interpreter polls
 * at safepoints (between requests). A cycle starts when the bytes allocated
 * since the last one exceed the pacer's allowance: as with GOGC, growth_pct
 * percent of the live heap, never less than a minimum, so that marking costs
 * the same per allocated byte whatever the size of the live heap. The global
 * session table holds key, hits, bytes and the last four request lines.
 *
 * The bug: GcPacer::next_allowance() scales the allowance by the number of
 * live objects where it means the live bytes. While the live heap is below
 * the minimum allowance (256 KB; normal: --sessions 350, ~207 KB live) the
 * minimum wins either way; with a bigger session table (buggy: --sessions
 * 4500, ~2.7 MB live in ~45,000 objects) the allowance stays at the minimum,
 * so every 256 KB of request garbage costs a full mark of the whole table.
 */
#include "../common/corpus.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>

/* ----------------------------------------------------------- object model */
enum class Kind : uint8_t { Str, Cell, Rec };

struct Obj {
    Obj     *next_all;          /* the heap's list of every object */
    uint32_t bytes;             /* what the object costs the heap */
    Kind     kind;
    bool     marked;            /* black or gray in the current cycle */
};

/* A value is a fixnum or a reference (ref != nullptr). */
struct Value { Obj *ref = nullptr; int64_t num = 0; };

struct Str : Obj {
    uint32_t len;
    uint64_t hash;              /* FNV-1a, computed once at creation */
    char       *chars() { return reinterpret_cast<char *>(this + 1); }
    const char *chars() const { return reinterpret_cast<const char *>(this + 1); }
};

struct Cell : Obj { Value car, cdr; };

struct Rec : Obj {
    uint32_t nfields;
    Value   *fields() { return reinterpret_cast<Value *>(this + 1); }
};

/* What a sweep counted: the pacer's input. */
struct SweepStats {
    size_t objects_live = 0, bytes_live = 0;
    size_t objects_freed = 0, bytes_freed = 0;
};

/* ------------------------------------------------------------- the pacer */
struct GcPacer {
    size_t   min_allowance;     /* bytes: the floor for small heaps */
    unsigned growth_pct;        /* percent of the live heap (GOGC) */
    size_t next_allowance(const SweepStats &st) const;
};

/* How many bytes the mutator may allocate before the next cycle: growth_pct
 * percent of what survived this one, so a cycle's marking (proportional to
 * the live heap) is paid for by a proportional amount of allocation. */
size_t GcPacer::next_allowance(const SweepStats &st) const
{
#ifdef VPROF_CASE_FIX
    size_t proportional = st.bytes_live / 100 * growth_pct;
#else
    size_t proportional = st.objects_live / 100 * growth_pct; /* FIX: pace on st.bytes_live, the live heap in bytes */
#endif
    return std::max(min_allowance, proportional);
}

/* -------------------------------------------------------------- the heap */
class Heap {
public:
    /* The heap lives as long as the process: no destructor walks it. */
    explicit Heap(GcPacer pacer) : pacer_(pacer), allowance_(pacer.next_allowance(SweepStats{})) {}
    Str  *new_str(const char *s, size_t len);
    Cell *new_cell(Value car, Value cdr);
    Rec  *new_rec(uint32_t nfields);
    void  set_root(Value *slot) { root_ = slot; }
    void  safepoint();

    uint64_t cycles = 0, traced = 0, bytes_allocated = 0;
    size_t   live_bytes = 0, last_allowance = 0;

private:
    void *raw_alloc(size_t bytes, Kind kind);
    void  collect();
    void  mark_value(Value v);
    void  trace_object(Obj *o);
    void  propagate();
    SweepStats sweep();

    GcPacer            pacer_;
    size_t             allowance_;
    size_t             since_gc_ = 0;   /* bytes allocated since the last cycle */
    Obj               *all_ = nullptr;
    Value             *root_ = nullptr;     /* the interpreter's globals */
    Obj              **gray_ = nullptr;     /* the mark stack */
    size_t             ngray_ = 0, gray_cap_ = 0;
};

void *Heap::raw_alloc(size_t bytes, Kind kind)
{
    void *mem = malloc(bytes);
    if (!mem)
        perror("malloc"), exit(1);
    Obj *o = static_cast<Obj *>(mem);
    o->next_all = all_;
    o->bytes = static_cast<uint32_t>(bytes);
    o->kind = kind;
    o->marked = false;
    all_ = o;
    since_gc_ += bytes;
    bytes_allocated += bytes;
    return mem;
}

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ static_cast<unsigned char>(s[i])) * 1099511628211ULL;
    return h;
}

Str *Heap::new_str(const char *s, size_t len)
{
    Str *str = static_cast<Str *>(raw_alloc(sizeof(Str) + len, Kind::Str));
    str->len = static_cast<uint32_t>(len);
    memcpy(str->chars(), s, len);
    str->hash = fnv1a(s, len);
    return str;
}

Cell *Heap::new_cell(Value car, Value cdr)
{
    Cell *c = static_cast<Cell *>(raw_alloc(sizeof(Cell), Kind::Cell));
    c->car = car;
    c->cdr = cdr;
    return c;
}

Rec *Heap::new_rec(uint32_t nfields)
{
    Rec *r = static_cast<Rec *>(raw_alloc(sizeof(Rec) + nfields * sizeof(Value), Kind::Rec));
    r->nfields = nfields;
    for (uint32_t i = 0; i < nfields; i++)
        r->fields()[i] = Value();
    return r;
}

/* Shades a reachable object gray: marked, waiting on the stack for its
 * references to be traced. */
void Heap::mark_value(Value v)
{
    if (!v.ref || v.ref->marked)
        return;
    v.ref->marked = true;
    if (ngray_ == gray_cap_) {
        gray_cap_ = gray_cap_ ? gray_cap_ * 2 : 4096;
        gray_ = static_cast<Obj **>(realloc(gray_, gray_cap_ * sizeof *gray_));
        if (!gray_)
            perror("realloc"), exit(1);
    }
    gray_[ngray_++] = v.ref;
}

void Heap::trace_object(Obj *o)
{
    traced++;
    switch (o->kind) {
    case Kind::Str:             /* no references */
        break;
    case Kind::Cell:
        mark_value(static_cast<Cell *>(o)->car);
        mark_value(static_cast<Cell *>(o)->cdr);
        break;
    case Kind::Rec:
        for (uint32_t i = 0; i < static_cast<Rec *>(o)->nfields; i++)
            mark_value(static_cast<Rec *>(o)->fields()[i]);
        break;
    }
}

/* Traces gray objects until none is left: everything reachable is black. */
void Heap::propagate()
{
    while (ngray_ > 0)
        trace_object(gray_[--ngray_]);
}

/* Frees what the mark left white and clears the survivors' marks. */
SweepStats Heap::sweep()
{
    SweepStats st;
    Obj **link = &all_;
    while (Obj *o = *link) {
        if (o->marked) {
            o->marked = false;
            st.objects_live++;
            st.bytes_live += o->bytes;
            link = &o->next_all;
        } else {
            *link = o->next_all;
            st.objects_freed++;
            st.bytes_freed += o->bytes;
            free(o);
        }
    }
    return st;
}

void Heap::collect()
{
    cycles++;
    if (root_)
        mark_value(*root_);
    propagate();
    SweepStats st = sweep();
    live_bytes = st.bytes_live;
    allowance_ = pacer_.next_allowance(st);
    last_allowance = allowance_;
    since_gc_ = 0;
}

/* The interpreter calls this between requests: no unrooted temporaries. */
void Heap::safepoint()
{
    if (since_gc_ >= allowance_)
        collect();
}

/* --------------------------------------------------------- session store */
enum { F_KEY, F_HITS, F_BYTES, F_RECENT, SESSION_FIELDS };
static const int kRecentKept = 4;

struct Service {
    Heap    *heap;
    Value    table;             /* Rec: open-addressed slots of sessions */
    uint32_t mask;
    uint64_t digest = 0, requests = 0, tokens = 0, repeats = 0;
};

static Str *make_key(Heap &h, uint32_t id)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "sess:%08u", id);
    return h.new_str(buf, static_cast<size_t>(n));
}

static Str *make_request_line(Heap &h, rng_t *rng)
{
    static const char *const kVerbs[] = {"GET", "GET", "GET", "POST", "PUT"};
    static const char *const kPaths[] = {"item", "cart", "search", "user", "feed"};
    char buf[96];
    int n = snprintf(buf, sizeof buf, "%s /%s/%u?ref=%u&page=%u",
                     kVerbs[rng_below(rng, 5)], kPaths[rng_below(rng, 5)],
                     static_cast<unsigned>(rng_below(rng, 500)),
                     static_cast<unsigned>(rng_below(rng, 40)),
                     static_cast<unsigned>(rng_below(rng, 8)));
    return h.new_str(buf, static_cast<size_t>(n));
}

static bool str_equal(const Str *a, const Str *b)
{
    return a->hash == b->hash && a->len == b->len &&
           memcmp(a->chars(), b->chars(), a->len) == 0;
}

/* Whether needle occurs in haystack (request lines are short: naive scan). */
static bool str_contains(const Str *haystack, const Str *needle)
{
    if (needle->len > haystack->len)
        return false;
    for (uint32_t i = 0; i + needle->len <= haystack->len; i++)
        if (memcmp(haystack->chars() + i, needle->chars(), needle->len) == 0)
            return true;
    return false;
}

static bool is_separator(char c)
{
    return c == ' ' || c == '/' || c == '?' || c == '&' || c == '=';
}

/* Splits a request line into a list of token strings (newest first). */
static Value tokenize(Heap &h, Str *line, Service &svc)
{
    Value list;
    const char *s = line->chars();
    uint32_t i = 0;
    while (i < line->len) {
        while (i < line->len && is_separator(s[i]))
            i++;
        uint32_t start = i;
        while (i < line->len && !is_separator(s[i]))
            i++;
        if (i > start) {
            list.ref = h.new_cell(Value{h.new_str(s + start, i - start), 0}, list);
            svc.tokens++;
        }
    }
    return list;
}

static Rec *session_slot_find(Service &svc, Str *key, uint32_t *slot_out)
{
    Rec *table = static_cast<Rec *>(svc.table.ref);
    uint32_t slot = static_cast<uint32_t>(key->hash) & svc.mask;
    for (;;) {
        Value v = table->fields()[slot];
        if (!v.ref) {
            *slot_out = slot;
            return nullptr;
        }
        Rec *sess = static_cast<Rec *>(v.ref);
        if (str_equal(static_cast<Str *>(sess->fields()[F_KEY].ref), key))
            return sess;
        slot = (slot + 1) & svc.mask;
    }
}

static Rec *session_get(Service &svc, Str *key)
{
    uint32_t slot;
    Rec *sess = session_slot_find(svc, key, &slot);
    if (sess)
        return sess;
    sess = svc.heap->new_rec(SESSION_FIELDS);
    sess->fields()[F_KEY].ref = key;
    static_cast<Rec *>(svc.table.ref)->fields()[slot].ref = sess;
    return sess;
}

/* Pushes the request line onto the session's history, keeping kRecentKept. */
static void session_record(Service &svc, Rec *sess, Str *line)
{
    Value *recent = &sess->fields()[F_RECENT];
    recent->ref = svc.heap->new_cell(Value{line, 0}, *recent);
    Cell *c = static_cast<Cell *>(recent->ref);
    for (int kept = 1; kept < kRecentKept && c->cdr.ref; kept++)
        c = static_cast<Cell *>(c->cdr.ref);
    c->cdr = Value();           /* the older entries become garbage */
    sess->fields()[F_HITS].num++;
    sess->fields()[F_BYTES].num += line->len;
}

/* The answer: a digest of the session's counters and of which tokens of
 * this request its recent requests already contained. */
static uint64_t respond(Service &svc, Rec *sess, Value tokens)
{
    uint64_t h = static_cast<uint64_t>(sess->fields()[F_HITS].num) * 31 +
                 static_cast<uint64_t>(sess->fields()[F_BYTES].num);
    Value past = static_cast<Cell *>(sess->fields()[F_RECENT].ref)->cdr;
    for (; past.ref; past = static_cast<Cell *>(past.ref)->cdr) {
        Str *old = static_cast<Str *>(static_cast<Cell *>(past.ref)->car.ref);
        for (Value t = tokens; t.ref; t = static_cast<Cell *>(t.ref)->cdr) {
            Str *tok = static_cast<Str *>(static_cast<Cell *>(t.ref)->car.ref);
            if (str_contains(old, tok)) {
                svc.repeats++;
                h = h * 1099511628211ULL + tok->hash;
            }
        }
        h ^= old->hash;
    }
    return h;
}

static void handle_request(Service &svc, uint32_t session_id, rng_t *rng)
{
    Heap &h = *svc.heap;
    Str *key = make_key(h, session_id);
    Str *line = make_request_line(h, rng);
    Value tokens = tokenize(h, line, svc);
    Rec *sess = session_get(svc, key);
    session_record(svc, sess, line);
    svc.digest = svc.digest * 0x100000001b3ULL ^ respond(svc, sess, tokens);
    svc.requests++;
    CASE_PROGRESS("request");
}

/* The session table is an open-addressed Rec at most half full. */
static void service_init(Service &svc, Heap &heap, uint32_t sessions)
{
    uint32_t cap = 1;
    while (cap < sessions * 2)
        cap <<= 1;
    svc.heap = &heap;
    svc.mask = cap - 1;
    svc.table.ref = heap.new_rec(cap);
    heap.set_root(&svc.table);
}

/* Every session starts with a full history, as after a warm restart from a
 * snapshot; the interpreter reaches a safepoint after each one. */
static void warm_sessions(Service &svc, uint32_t sessions, rng_t *rng)
{
    for (uint32_t id = 0; id < sessions; id++) {
        Rec *sess = session_get(svc, make_key(*svc.heap, id));
        for (int k = 0; k < kRecentKept; k++)
            session_record(svc, sess, make_request_line(*svc.heap, rng));
        svc.heap->safepoint();
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"sessions", "sessions in the table (the live heap)", 350, 1, 1000000, 0},
        {"requests", "requests served", 70000, 1, 100000000, 0},
        {"min-heap-kb", "minimum allocation between GC cycles", 256, 64, 1 << 20, 0},
        {"gc-percent", "allocation allowance in percent of the live heap", 100, 10, 1000, 0},
        {"seed", "workload seed", 7, 0, 1L << 30, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    uint32_t sessions = static_cast<uint32_t>(opt_get(opts, NOPTS(opts), "sessions"));
    long requests = opt_get(opts, NOPTS(opts), "requests");
    size_t min_heap = static_cast<size_t>(opt_get(opts, NOPTS(opts), "min-heap-kb")) * 1024;
    unsigned gc_pct = static_cast<unsigned>(opt_get(opts, NOPTS(opts), "gc-percent"));
    rng_t rng;
    rng_seed(&rng, static_cast<uint64_t>(opt_get(opts, NOPTS(opts), "seed")));
    Heap heap(GcPacer{min_heap, gc_pct});
    Service svc;
    service_init(svc, heap, sessions);
    warm_sessions(svc, sessions, &rng);

    for (long r = 0; r < requests; r++) {
        handle_request(svc, static_cast<uint32_t>(rng_below(&rng, sessions)), &rng);
        heap.safepoint();
    }
    printf("requests=%" PRIu64 " tokens=%" PRIu64 " repeats=%" PRIu64 " digest=%016" PRIx64 "\n",
           svc.requests, svc.tokens, svc.repeats, svc.digest);
    fprintf(stderr, "gc_cycles=%" PRIu64 " traced=%" PRIu64 " allocated_kb=%" PRIu64
            " live_kb=%zu allowance_kb=%zu\n", heap.cycles, heap.traced,
            heap.bytes_allocated / 1024, heap.live_bytes / 1024, heap.last_allowance / 1024);
    return 0;
}
