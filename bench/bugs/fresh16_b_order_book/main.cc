/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * matchd - the matching engine of one instrument: a price-time book (a
 * std::map of price levels per side, each a FIFO of order ids; the orders in
 * a pool), takers filling against the best levels with partial fills, and
 * lazy cancels as in many engines: the order leaves the pool at once, its id
 * stays in the FIFO as a tombstone for whoever walks the queue to skip, and a
 * level compacts its FIFO once more than half of it is tombstones. On a
 * timer the market-data publisher sends a full market-by-order snapshot (FIX
 * 35=W: the recovery feed late joiners start from), which walks every FIFO.
 *
 * The bug: PriceLevel::should_compact() compares the tombstones with the
 * length of the queue they are part of, so it never fires. When makers seldom
 * move their quotes (normal: --reprice-pct 1) there is little to compact; when
 * they cancel and requote most updates (buggy: --reprice-pct 60) the FIFOs
 * fill up with tombstones, and every snapshot resolves each of them again.
 */
#include "../common/corpus.h"
#include <charconv>
#include <cstdint>
#include <map>
#include <vector>

using OrderId = uint64_t;
using Price = int64_t;
using Qty = int64_t;
enum class Side : uint8_t { Buy, Sell };

constexpr int kPoolBits = 20;             /* exchange order id = sequence << 20 | pool slot */
constexpr uint32_t kNoOwner = ~0u;        /* takers: nobody to tell about later fills */
constexpr uint32_t kMinTombstones = 8;    /* below this, compacting costs more than it saves */
constexpr Price kFairAnchor = 10000;      /* ticks */
constexpr uint64_t kQuoteRange = 40;      /* makers quote up to this many ticks off fair */
constexpr size_t kPacketBytes = 1400;     /* one datagram of the snapshot feed */

struct Order { OrderId id; Price price; Qty remaining; Side side; uint32_t owner; };
struct Trade { OrderId maker, taker; uint32_t maker_owner; Price price; Qty qty; bool maker_done; };

static uint64_t mix64(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

class OrderPool {
public:
    OrderId add(Price price, Qty qty, Side side, uint32_t owner);
    void release(OrderId id);
    /* The live order with this id, or null once it is cancelled or filled. */
    const Order *resolve(OrderId id) const;
    Order &at(OrderId id) { return slots_[id & kSlotMask]; }
    size_t live() const { return slots_.size() - free_.size(); }

private:
    static constexpr OrderId kSlotMask = (1u << kPoolBits) - 1;
    std::vector<Order> slots_;
    std::vector<uint32_t> free_;
    uint64_t next_seq_ = 1;
};

OrderId OrderPool::add(Price price, Qty qty, Side side, uint32_t owner)
{
    uint32_t slot = (uint32_t)slots_.size();
    if (free_.empty())
        slots_.push_back(Order{});
    else
        slot = free_.back(), free_.pop_back();
    OrderId id = next_seq_++ << kPoolBits | slot;
    slots_[slot] = Order{id, price, qty, side, owner};
    return id;
}

void OrderPool::release(OrderId id)
{
    slots_[id & kSlotMask].id = 0;
    free_.push_back((uint32_t)(id & kSlotMask));
}

const Order *OrderPool::resolve(OrderId id) const
{
    const Order &o = slots_[id & kSlotMask];   /* ids in FIFOs name slots that exist */
    return o.id == id ? &o : nullptr;
}

/* The FIFO is read from HEAD; the consumed prefix goes when it compacts or empties. */
struct PriceLevel {
    Price price;
    std::vector<OrderId> fifo;    /* time priority from fifo[head]; may hold tombstones */
    size_t head = 0;
    Qty live_qty = 0;
    uint32_t live_count = 0, tombstones = 0;

    explicit PriceLevel(Price p) : price(p) {}
    size_t queued() const { return fifo.size() - head; }
    bool should_compact() const;
    uint64_t compact(const OrderPool &pool);
};

/* Compaction copies the live ids, so it pays only once the tombstones are
 * the larger part of the queue. */
bool PriceLevel::should_compact() const
{
    if (tombstones < kMinTombstones)
        return false;
#ifdef VPROF_CASE_FIX
    return 2 * (size_t)tombstones > queued();
#else
    return tombstones > queued(); /* FIX: more than half the queue is 2 * tombstones > queued(); the tombstones are part of the queue and never outnumber it */
#endif
}

/* Drops the tombstones, keeping the live ids in time priority. Returns the
 * number of ids examined. */
uint64_t PriceLevel::compact(const OrderPool &pool)
{
    std::vector<OrderId> kept;
    kept.reserve(live_count);
    for (size_t i = head; i < fifo.size(); i++)
        if (pool.resolve(fifo[i]))
            kept.push_back(fifo[i]);
    uint64_t examined = queued();
    fifo.swap(kept);
    head = 0, tombstones = 0;
    return examined;
}

/* Levels keyed so that begin() is the best price on either side. */
class BookSide {
public:
    explicit BookSide(bool bids) : bids_(bids) {}
    PriceLevel *best() { return levels_.empty() ? nullptr : &levels_.begin()->second; }
    PriceLevel &level_at(Price p) { return levels_.try_emplace(key(p), p).first->second; }
    PriceLevel &existing(Price p) { return levels_.find(key(p))->second; }
    void erase(Price p) { levels_.erase(key(p)); }
    /* Whether a taker with this limit may trade at this side's price P. */
    bool crosses(Price p, Price limit) const { return bids_ ? p >= limit : p <= limit; }
    const std::map<Price, PriceLevel> &levels() const { return levels_; }

private:
    Price key(Price p) const { return bids_ ? -p : p; }
    bool bids_;
    std::map<Price, PriceLevel> levels_;
};

class OrderBook {
public:
    OrderBook() : bids_(true), asks_(false) {}
    /* Matches what crosses, then rests the rest unless IOC; returns its id or 0. */
    OrderId submit(Side side, Price limit, Qty qty, bool ioc, uint32_t owner, std::vector<Trade> &trades);
    void cancel(OrderId id);
    BookSide &side_of(Side s) { return s == Side::Buy ? bids_ : asks_; }
    const OrderPool &pool() const { return pool_; }
    uint64_t cancels = 0, rejects = 0, tombstones_popped = 0, compactions = 0, compacted_ids = 0;

private:
    Qty fill_level(PriceLevel &lvl, OrderId taker, Qty qty, std::vector<Trade> &trades);
    OrderPool pool_;
    BookSide bids_, asks_;
};

/* Fills QTY against one level in time priority; returns what is left. */
Qty OrderBook::fill_level(PriceLevel &lvl, OrderId taker, Qty qty, std::vector<Trade> &trades)
{
    while (qty > 0 && lvl.queued() > 0) {
        OrderId id = lvl.fifo[lvl.head];
        if (!pool_.resolve(id)) {           /* a cancelled order reached the front */
            lvl.head++, lvl.tombstones--, tombstones_popped++;
            continue;
        }
        Order &o = pool_.at(id);
        Qty q = o.remaining < qty ? o.remaining : qty;
        o.remaining -= q, lvl.live_qty -= q, qty -= q;
        bool done = o.remaining == 0;
        trades.push_back(Trade{id, taker, o.owner, lvl.price, q, done});
        if (done) {
            pool_.release(id);
            lvl.head++, lvl.live_count--;
        }
    }
    return qty;
}

OrderId OrderBook::submit(Side side, Price limit, Qty qty, bool ioc, uint32_t owner, std::vector<Trade> &trades)
{
    BookSide &opp = side_of(side == Side::Buy ? Side::Sell : Side::Buy);
    OrderId taker = ioc ? 0 : pool_.add(limit, qty, side, owner);
    PriceLevel *lvl;
    while (qty > 0 && (lvl = opp.best()) != nullptr && opp.crosses(lvl->price, limit)) {
        qty = fill_level(*lvl, taker, qty, trades);
        if (lvl->live_count == 0)
            opp.erase(lvl->price);          /* its tombstones go with it */
    }
    if (qty == 0 || ioc) {
        if (taker)
            pool_.release(taker);
        return 0;
    }
    pool_.at(taker).remaining = qty;
    PriceLevel &rest = side_of(side).level_at(limit);
    rest.fifo.push_back(taker);
    rest.live_qty += qty, rest.live_count++;
    return taker;
}

/* The order leaves the pool at once; its id stays in the FIFO as a
 * tombstone until it is skipped at the front or compacted away. */
void OrderBook::cancel(OrderId id)
{
    const Order *o = pool_.resolve(id);
    if (!o) {                               /* already filled: too late to cancel */
        rejects++;
        return;
    }
    Price price = o->price;
    BookSide &side = side_of(o->side);
    PriceLevel &lvl = side.existing(price);
    lvl.live_qty -= o->remaining, lvl.live_count--;
    pool_.release(id);
    cancels++;
    if (lvl.live_count == 0) {
        side.erase(price);
        return;
    }
    lvl.tombstones++;
    if (lvl.should_compact())
        compactions++, compacted_ids += lvl.compact(pool_);
}

/* A FIX snapshot (35=W): tag=value fields, each ended by SOH, in datagrams. */
struct FixPacketWriter {
    char buf[kPacketBytes];
    size_t len = 0;
    uint64_t digest = 0, packets = 0;
    void field(const char *tag_eq, uint64_t value);
    void flush();
};

/* TAG_EQ is the field's "tag=". to_chars, not printf: no format to parse per field. */
void FixPacketWriter::field(const char *tag_eq, uint64_t value)
{
    char f[48];
    size_t t = strlen(tag_eq);
    memcpy(f, tag_eq, t);
    char *p = std::to_chars(f + t, f + 47, value).ptr;
    *p++ = '\x01';
    size_t n = (size_t)(p - f);
    if (len + n > kPacketBytes)
        flush();
    memcpy(buf + len, f, n);
    len += n;
}

/* Sends the datagram with its FIX CheckSum (byte sum mod 256): here, to the digest. */
void FixPacketWriter::flush()
{
    unsigned sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += (unsigned char)buf[i];
    digest = mix64(mix64(digest, len), sum % 256);
    len = 0, packets++;
}

class MarketDataPublisher {
public:
    void publish_snapshot(OrderBook &book);
    FixPacketWriter feed;
    uint64_t snapshots = 0, orders_sent = 0, ids_walked = 0;

private:
    void encode_level(const PriceLevel &lvl, uint32_t rank, const OrderPool &pool);
    void encode_order(const Order &o, uint32_t rank, uint32_t position);
};

/* One market-by-order entry: MDEntryType (bid 0, offer 1), OrderID, the level's
 * rank (MDPriceLevel), the place in its queue (MDEntryPositionNo), price, size. */
void MarketDataPublisher::encode_order(const Order &o, uint32_t rank, uint32_t position)
{
    feed.field("269=", o.side == Side::Buy ? 0 : 1);
    feed.field("37=", o.id);
    feed.field("1023=", rank);
    feed.field("290=", position);
    feed.field("270=", (uint64_t)o.price);
    feed.field("271=", (uint64_t)o.remaining);
    orders_sent++;
}

void MarketDataPublisher::encode_level(const PriceLevel &lvl, uint32_t rank, const OrderPool &pool)
{
    uint32_t position = 1;
    const OrderId *end = lvl.fifo.data() + lvl.fifo.size();
    for (const OrderId *id = lvl.fifo.data() + lvl.head; id != end; id++) {
        ids_walked++;
        if (const Order *o = pool.resolve(*id))
            encode_order(*o, rank, position++); /* tombstones send nothing */
    }
}

/* The full market-by-order image of the book, bids then asks. */
void MarketDataPublisher::publish_snapshot(OrderBook &book)
{
    feed.field("34=", snapshots);           /* header: MsgSeqNum */
    for (Side s : {Side::Buy, Side::Sell}) {
        uint32_t rank = 1;
        for (const auto &kv : book.side_of(s).levels())
            encode_level(kv.second, rank++, book.pool());
    }
    feed.flush();
    snapshots++;
}

/* The order gateway in front of the book; it keeps the trade tape. */
struct Exchange {
    OrderBook book;
    MarketDataPublisher md;
    std::vector<Trade> trades;              /* of the last order submitted */
    uint64_t trade_count = 0, volume = 0, trade_digest = 0;
    OrderId submit(Side side, Price limit, Qty qty, bool ioc, uint32_t owner);
};

OrderId Exchange::submit(Side side, Price limit, Qty qty, bool ioc, uint32_t owner)
{
    trades.clear();
    OrderId id = book.submit(side, limit, qty, ioc, owner, trades);
    for (const Trade &t : trades) {
        trade_count++, volume += (uint64_t)t.qty;
        trade_digest = mix64(trade_digest, t.maker ^ t.taker << 1 ^ (uint64_t)t.price << 44 ^ (uint64_t)t.qty);
    }
    return id;
}

/* Market makers hold one quote per slot (even slots bid, odd slots ask)
 * around a drifting fair value; takers send IOC orders through it. */
class Session {
public:
    Session(Exchange &ex, long slots, long reprice_pct, long take_pct, uint64_t seed)
        : ex_(ex), quotes_((size_t)slots), reprice_pct_(reprice_pct), take_pct_(take_pct) { rng_seed(&rng_, seed); }
    /* One trader action per tick; the snapshot timer fires every SNAPSHOT_EVERY ticks. */
    void run(long ticks, long snapshot_every);

private:
    void drift_fair();
    Price quote_price(Side side);
    void quote(uint32_t slot);
    void update_quote();
    void take();
    void apply_fills();
    Exchange &ex_;
    std::vector<OrderId> quotes_;           /* each slot's live quote, 0 if none */
    long reprice_pct_, take_pct_;
    rng_t rng_;
    Price fair_ = kFairAnchor;
};

/* A random walk, a tick now and then, pulled back towards the anchor. */
void Session::drift_fair()
{
    if (rng_below(&rng_, 40) == 0)
        fair_ += (long)rng_below(&rng_, 3) - 1 + (fair_ < kFairAnchor - 8) - (fair_ > kFairAnchor + 8);
}

/* Quotes cluster near the fair value and thin out away from it. */
Price Session::quote_price(Side side)
{
    Price a = (Price)rng_below(&rng_, kQuoteRange), b = (Price)rng_below(&rng_, kQuoteRange);
    Price off = 1 + (a < b ? a : b);
    return side == Side::Buy ? fair_ - off : fair_ + off;
}

void Session::quote(uint32_t slot)
{
    Side side = slot % 2 ? Side::Sell : Side::Buy;
    Qty qty = 100 * (1 + (Qty)rng_below(&rng_, 20));
    OrderId id = ex_.submit(side, quote_price(side), qty, false, slot);
    apply_fills();
    quotes_[slot] = id;
}

/* A maker refills an empty slot; a live quote stays, or (reprice_pct of the time)
 * moves to the fair value: that loses time priority, so it is a cancel and a new order. */
void Session::update_quote()
{
    uint32_t slot = (uint32_t)rng_below(&rng_, quotes_.size());
    if (quotes_[slot] != 0) {
        if ((long)rng_below(&rng_, 100) >= reprice_pct_)
            return;
        ex_.book.cancel(quotes_[slot]);
    }
    quote(slot);
}

void Session::take()
{
    Side side = rng_below(&rng_, 2) ? Side::Sell : Side::Buy;
    Price limit = side == Side::Buy ? fair_ + 4 : fair_ - 4;
    ex_.submit(side, limit, 100 * (1 + (Qty)rng_below(&rng_, 30)), true, kNoOwner);
    apply_fills();
}

/* Execution reports: a maker whose quote is filled may quote again. */
void Session::apply_fills()
{
    for (const Trade &t : ex_.trades)
        if (t.maker_done && t.maker_owner < quotes_.size() && quotes_[t.maker_owner] == t.maker)
            quotes_[t.maker_owner] = 0;
}

void Session::run(long ticks, long snapshot_every)
{
    for (long t = 1; t <= ticks; t++) {
        drift_fair();
        if ((long)rng_below(&rng_, 100) < take_pct_)
            take();
        else
            update_quote();
        if (t % snapshot_every == 0)
            ex_.md.publish_snapshot(ex_.book);  /* the recovery feed's timer */
        CASE_PROGRESS("tick");
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"ticks", "trader actions to simulate (one per tick)", 100000, 1000, 10000000, 0},
        {"slots", "market-maker quote slots", 600, 2, 1L << 16, 0},
        {"reprice-pct", "percent of quote updates that move the price (cancel and requote)", 1, 0, 100, 0},
        {"take-pct", "percent of actions that are taker IOC orders", 5, 0, 100, 0},
        {"snapshot-every", "ticks between full market-by-order snapshots", 100, 1, 1000000, 0},
        {"seed", "PRNG seed", 16, 0, 1L << 30, 0},
    };
    const int n = NOPTS(opts);
    opts_parse(argc, argv, opts, n);

    Exchange ex;
    Session session(ex, opt_get(opts, n, "slots"), opt_get(opts, n, "reprice-pct"), opt_get(opts, n, "take-pct"),
                    (uint64_t)opt_get(opts, n, "seed"));
    session.run(opt_get(opts, n, "ticks"), opt_get(opts, n, "snapshot-every"));

    using ull = unsigned long long;
    const MarketDataPublisher &md = ex.md;  /* result on stdout, work counters on stderr */
    const OrderBook &b = ex.book;
    printf("trades=%llu volume=%llu trade_digest=%016llx snapshots=%llu packets=%llu orders_sent=%llu "
           "feed_digest=%016llx resting=%zu\n", (ull)ex.trade_count, (ull)ex.volume, (ull)ex.trade_digest,
           (ull)md.snapshots, (ull)md.feed.packets, (ull)md.orders_sent, (ull)md.feed.digest, b.pool().live());
    fprintf(stderr, "cancels=%llu rejects=%llu tombstones_popped=%llu compactions=%llu compacted_ids=%llu "
            "ids_walked=%llu\n", (ull)b.cancels, (ull)b.rejects, (ull)b.tombstones_popped, (ull)b.compactions,
            (ull)b.compacted_ids, (ull)md.ids_walked);
    return 0;
}
