/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * tickd - the timer subsystem of a request/response service, simulated
 * in-process: an event loop on a virtual 1 ms tick delivers what the peers
 * sent (connects, request bytes in the chunks the clients wrote, acks), then
 * runs the timers of a hashed timer wheel. A connection holds an idle timer,
 * pushed out on every read, and a retransmission timer with backoff.
 *
 * The bug: Server::reset_idle_timer() arms the new idle deadline without
 * cancelling the pending one. Handlers ignore timers a connection no longer
 * holds, so nothing visible changes, but every read leaves an orphan in the
 * wheel, visited once per revolution (79 times in 40 s) and then fired for
 * nothing: one per request when clients write a request in one piece
 * (normal: --chunk-bytes 65536), one per 512 bytes when they flush that
 * often (buggy: --chunk-bytes 512).
 */
#include "../common/corpus.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

static const uint32_t kWheelSlots = 512;     /* one tick (1 ms) each */
static const uint32_t kNil = UINT32_MAX;
static const uint32_t kMagic = 0x544b4431;   /* "TKD1" */
static const size_t kHeaderBytes = 16;       /* magic, key, body length, request number */
static const uint32_t kMaxRetries = 6;

enum TimerKind : uint8_t { TIMER_IDLE, TIMER_RETRANSMIT };

/* (seq << 32) | (pool index + 1); 0 is "no timer". A handle goes stale when
 * its entry is freed (the entry's seq moves on). */
typedef uint64_t TimerHandle;

struct TimerEntry {
    uint64_t conn_id;
    uint32_t rounds;        /* revolutions left before it is due */
    uint32_t prev, next;    /* the slot's list (pool indices); next links the free list too */
    uint32_t slot, seq;
    uint8_t kind;
};

struct DueTimer { TimerHandle handle; uint64_t conn_id; uint8_t kind; };

static uint64_t mix64(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
}

/* FNV-1a over a request body: the service's per-byte work. */
static uint64_t body_hash(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    while (n--)
        h = (h ^ *p++) * 0x100000001b3ull;
    return h;
}

static uint32_t load_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ------------------------------------------------------------ the wheel */
class TimerWheel {
public:
    TimerWheel() : heads_(kWheelSlots, kNil) {}
    size_t live() const { return live_; }

    /* The entry goes to the head of its slot, so a walk of the current tick's
     * slot already under way does not see it: its first visit is at a tick
     * after NOW, and (deadline - now - 1) / slots revolutions later it is due. */
    TimerHandle schedule(uint64_t now, uint64_t deadline, uint64_t conn_id, uint8_t kind) {
        deadline = std::max(deadline, now + 1);
        uint32_t i = free_ != kNil ? free_ : (uint32_t)pool_.size();
        if (i == pool_.size())
            pool_.push_back(TimerEntry{});
        else
            free_ = pool_[i].next;
        TimerEntry &e = pool_[i];
        e.conn_id = conn_id, e.kind = kind;
        e.rounds = (uint32_t)((deadline - now - 1) / kWheelSlots);
        e.slot = (uint32_t)(deadline % kWheelSlots);
        e.prev = kNil, e.next = heads_[e.slot];
        if (e.next != kNil)
            pool_[e.next].prev = i;
        heads_[e.slot] = i;
        scheduled++;
        peak_live = std::max(peak_live, ++live_);
        return (uint64_t)e.seq << 32 | (i + 1);
    }

    bool cancel(TimerHandle h) {
        uint32_t i = (uint32_t)h - 1;
        if (h == 0 || i >= pool_.size() || pool_[i].seq != (uint32_t)(h >> 32))
            return false;
        remove(i);
        cancelled++;
        return true;
    }

    /* The per-tick work: walk this tick's slot, count down the entries that
     * are rounds away, take out the ones due. They are fired after the walk,
     * so a handler may cancel or schedule timers freely. */
    void collect_due(uint64_t now, std::vector<DueTimer> &due) {
        due.clear();
        TimerEntry *pool = pool_.data();   /* the pool does not grow during the walk */
        for (uint32_t i = heads_[now % kWheelSlots]; i != kNil;) {
            TimerEntry &e = pool[i];
            uint32_t next = e.next;
            visits++;
            if (e.rounds > 0) {
                e.rounds--;
            } else {
                due.push_back(DueTimer{(uint64_t)e.seq << 32 | (i + 1), e.conn_id, e.kind});
                remove(i);
            }
            i = next;
        }
    }

    uint64_t scheduled = 0, cancelled = 0, visits = 0;
    size_t peak_live = 0;

private:
    /* Unlinks entry I from its slot and frees it; its handle goes stale. */
    void remove(uint32_t i) {
        TimerEntry *pool = pool_.data(), &e = pool[i];
        if (e.prev != kNil)
            pool[e.prev].next = e.next;
        else
            heads_[e.slot] = e.next;
        if (e.next != kNil)
            pool[e.next].prev = e.prev;
        e.seq++;
        e.next = free_, free_ = i;
        live_--;
    }

    std::vector<uint32_t> heads_;
    std::vector<TimerEntry> pool_;
    uint32_t free_ = kNil;
    size_t live_ = 0;
};

/* ----------------------------------------------------------- the peers */
/* Clients connect, write requests in chunks and acknowledge responses after
 * a round trip (or lose the ack). */
class Server;
struct Client { rng_t rng; uint32_t requests_left, rtt_ms, next_request; };
struct Shape { uint32_t loss_permille, request_bytes, chunk_bytes, think_ms; };

class Network {
public:
    Network(uint64_t seed, Shape shape) : shape_(shape) { rng_seed(&rng_, seed ^ 0x6e6574ull); }
    bool idle() const { return events_.empty(); }
    void deliver_due(uint64_t now, Server &srv);

    void add_client(uint64_t at, uint32_t requests, uint32_t rtt_ms, uint64_t seed) {
        clients_.push_back(Client{rng_t{}, requests, rtt_ms, 0});
        rng_seed(&clients_.back().rng, seed);
        push(at, EV_CONNECT, clients_.size(), 0);
    }

    /* The server sent response SEQ; the client's cumulative ack comes back a
     * round trip later, unless the network drops it. */
    void send_response(uint64_t now, uint64_t conn_id, uint32_t seq) {
        if (rng_below(&rng_, 1000) >= shape_.loss_permille)
            push(now + clients_[conn_id - 1].rtt_ms, EV_ACK, conn_id, seq);
    }

private:
    enum { EV_CONNECT, EV_REQUEST, EV_ACK };
    struct Event {
        uint64_t at, order, conn_id;
        uint32_t kind, arg;
        bool operator>(const Event &o) const { return at != o.at ? at > o.at : order > o.order; }
    };

    void push(uint64_t at, uint32_t kind, uint64_t conn_id, uint32_t arg) {
        events_.push(Event{at, order_++, conn_id, kind, arg});
    }

    /* Header (magic, key, body length, request number) and a body drawn from
     * the client's generator: the same bytes whatever the chunking. */
    void build_request(Client &cl, uint64_t conn_id) {
        uint32_t body = shape_.request_bytes / 2 + (uint32_t)rng_below(&cl.rng, shape_.request_bytes);
        uint32_t hdr[4] = {kMagic, (uint32_t)rng_below(&cl.rng, 4096), body, cl.next_request++};
        msg_len_ = kHeaderBytes + body;
        if (msg_.size() < msg_len_ + 8)
            msg_.resize(msg_len_ + 8);      /* the fill below writes whole words */
        uint8_t *m = msg_.data();
        for (size_t k = 0; k < kHeaderBytes; k++)
            m[k] = (uint8_t)(hdr[k / 4] >> (8 * (k % 4)));
        uint64_t x = rng_next(&cl.rng) ^ conn_id;   /* the body: an LCG stream from here */
        for (size_t k = kHeaderBytes; k < msg_len_; k += 8) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t w = x ^ x >> 29;
            memcpy(m + k, &w, 8);
        }
    }

    void write_request(uint64_t now, uint64_t conn_id, Server &srv);

    Shape shape_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    std::vector<Client> clients_;   /* by conn id - 1 */
    std::vector<uint8_t> msg_;      /* the request being written: msg_len_ bytes */
    size_t msg_len_ = 0;
    rng_t rng_;
    uint64_t order_ = 0;
};

/* ------------------------------------------------------------ the server */
struct Conn {
    uint64_t id = 0;
    TimerHandle idle_timer = 0, rtx_timer = 0;
    uint32_t snd_nxt = 0, snd_una = 0;  /* responses sent / acknowledged (cumulative) */
    uint32_t rto_ms = 0, retries = 0, requests = 0;
    std::vector<uint8_t> rx;            /* read buffer: rx_len bytes of requests not yet whole */
    size_t rx_len = 0;
};

class Server {
public:
    Server(Network &net, uint32_t idle_ms, uint32_t rto_ms) : net_(net), idle_ms_(idle_ms), rto_ms_(rto_ms) {}
    bool busy() const { return wheel_.live() > 0 || !conns_.empty(); }

    void on_connect(uint64_t now, uint64_t id) {
        now_ = now;
        Conn &c = conns_[id];
        c.id = id, c.rto_ms = rto_ms_;
        reset_idle_timer(c);
    }

    void on_read(uint64_t now, uint64_t id, const uint8_t *data, size_t len) {
        now_ = now;
        Conn *c = find_conn(id);
        if (!c)
            return;     /* the peer wrote to a connection we closed */
        reads++, bytes_in += len;
        reset_idle_timer(*c);
        if (c->rx.size() < c->rx_len + len)
            c->rx.resize(2 * (c->rx_len + len));
        uint8_t *buf = c->rx.data();
        memcpy(buf + c->rx_len, data, len);
        c->rx_len += len;
        while (c->rx_len >= kHeaderBytes) {
            size_t need = kHeaderBytes + load_u32(buf + 8);
            if (c->rx_len < need)
                break;
            if (!handle_request(*c, buf, need))
                return;     /* reset: c is gone */
            c->rx_len -= need;
            memmove(buf, buf + need, c->rx_len);
        }
    }

    void on_ack(uint64_t now, uint64_t id, uint32_t seq) {
        now_ = now;
        Conn *c = find_conn(id);
        if (!c || seq <= c->snd_una)
            return;     /* a duplicate, or an ack for a connection closed since */
        c->snd_una = seq;
        c->rto_ms = rto_ms_, c->retries = 0;
        if (c->snd_una == c->snd_nxt)
            wheel_.cancel(c->rtx_timer), c->rtx_timer = 0;  /* all acknowledged */
        else
            arm_retransmit(*c);
    }

    void run_timers(uint64_t now) {
        now_ = now;
        wheel_.collect_due(now, due_);
        for (const DueTimer &t : due_)
            on_timer_fired(t);
    }

    TimerWheel wheel_;
    uint64_t requests = 0, bytes_in = 0, reads = 0, retransmits = 0, idle_closes = 0,
             fired = 0, stale = 0, digest = 0;

private:
    Conn *find_conn(uint64_t id) {
        auto it = conns_.find(id);
        return it == conns_.end() ? nullptr : &it->second;
    }

    /* Any bytes from the peer push the idle deadline out to now + idle_ms. */
    void reset_idle_timer(Conn &c) {
#ifdef VPROF_CASE_FIX
        wheel_.cancel(c.idle_timer);
#else
        /* FIX: cancel the pending idle timer (wheel_.cancel(c.idle_timer)) before arming the new one */
#endif
        c.idle_timer = wheel_.schedule(now_, now_ + idle_ms_, c.id, TIMER_IDLE);
    }

    /* (Re)starts the retransmission timer for the oldest unacknowledged response. */
    void arm_retransmit(Conn &c) {
        wheel_.cancel(c.rtx_timer);
        c.rtx_timer = wheel_.schedule(now_, now_ + c.rto_ms, c.id, TIMER_RETRANSMIT);
    }

    /* A request folds its body's hash into its key's value; the response
     * carries the new value. A malformed request resets the connection (false). */
    bool handle_request(Conn &c, const uint8_t *msg, size_t len) {
        if (load_u32(msg) != kMagic) {
            close_conn(c, true);
            return false;
        }
        uint64_t &value = store_[load_u32(msg + 4)];
        value = value * 31 + body_hash(msg + kHeaderBytes, len - kHeaderBytes);
        requests++, c.requests++;
        digest = mix64(digest, c.id << 32 ^ (uint64_t)load_u32(msg + 12) << 20 ^ value);
        send_response(c);
        return true;
    }

    void send_response(Conn &c) {
        net_.send_response(now_, c.id, ++c.snd_nxt);
        if (!c.rtx_timer)
            arm_retransmit(c);
    }

    /* A timer the connection no longer holds (closed since, or collected in
     * the same tick as a cancel by an earlier handler) is ignored. */
    void on_timer_fired(const DueTimer &t) {
        fired++;
        Conn *c = find_conn(t.conn_id);
        TimerHandle *held = !c ? nullptr : t.kind == TIMER_IDLE ? &c->idle_timer : &c->rtx_timer;
        if (!held || *held != t.handle) {
            stale++;
            return;
        }
        *held = 0;
        if (t.kind == TIMER_IDLE)
            on_idle_timeout(*c);
        else
            on_retransmit_timeout(*c);
    }

    void on_idle_timeout(Conn &c) { idle_closes++, close_conn(c, false); }

    /* Resends the unacknowledged responses with a doubled timeout; gives up
     * on the peer after kMaxRetries. */
    void on_retransmit_timeout(Conn &c) {
        if (c.snd_una == c.snd_nxt)
            return;
        if (++c.retries > kMaxRetries) {
            close_conn(c, true);
            return;
        }
        retransmits++;
        net_.send_response(now_, c.id, c.snd_nxt);
        c.rto_ms = std::min(c.rto_ms * 2, 60000u);
        arm_retransmit(c);
    }

    void close_conn(Conn &c, bool reset) {
        wheel_.cancel(c.rtx_timer);
        wheel_.cancel(c.idle_timer);
        digest = mix64(digest, c.id << 40 ^ now_ << 8 ^ c.requests << 1 ^ (reset ? 1 : 0));
        conns_.erase(c.id);
    }

    Network &net_;
    uint32_t idle_ms_, rto_ms_;
    uint64_t now_ = 0;
    std::unordered_map<uint64_t, Conn> conns_;
    std::unordered_map<uint32_t, uint64_t> store_;  /* the service's state: key -> value */
    std::vector<DueTimer> due_;
};

/* The client writes the request in chunks of chunk_bytes; each write reaches
 * the server as one read. */
void Network::write_request(uint64_t now, uint64_t conn_id, Server &srv) {
    Client &cl = clients_[conn_id - 1];
    build_request(cl, conn_id);
    for (size_t off = 0; off < msg_len_; off += shape_.chunk_bytes)
        srv.on_read(now, conn_id, msg_.data() + off, std::min<size_t>(shape_.chunk_bytes, msg_len_ - off));
    if (--cl.requests_left > 0)
        push(now + shape_.think_ms / 2 + rng_below(&cl.rng, shape_.think_ms), EV_REQUEST, conn_id, 0);
}

void Network::deliver_due(uint64_t now, Server &srv) {
    while (!events_.empty() && events_.top().at <= now) {
        Event ev = events_.top();
        events_.pop();
        if (ev.kind == EV_CONNECT) {
            srv.on_connect(now, ev.conn_id);
            if (clients_[ev.conn_id - 1].requests_left > 0)
                push(now + 1 + rng_below(&rng_, shape_.think_ms), EV_REQUEST, ev.conn_id, 0);
        } else if (ev.kind == EV_REQUEST) {
            write_request(now, ev.conn_id, srv);
        } else {
            srv.on_ack(now, ev.conn_id, ev.arg);
        }
    }
}

int main(int argc, char **argv) {
    opt_t opts[] = {
        {"conns", "client connections over the run", 450, 1, 1000000, 0},
        {"requests", "requests per connection", 18, 0, 100000, 0},
        {"request-bytes", "mean request body size", 12288, 16, 1 << 20, 0},
        {"chunk-bytes", "bytes per client write (one server read each)", 65536, 1, 1 << 24, 0},
        {"think-ms", "mean pause between a client's requests", 1000, 1, 1000000, 0},
        {"ramp-ms", "window over which the clients connect", 60000, 1, 100000000, 0},
        {"idle-ms", "idle timeout", 40000, 1, 100000000, 0},
        {"rto-ms", "initial retransmission timeout", 200, 1, 60000, 0},
        {"loss-permille", "acks dropped by the network, per thousand", 20, 0, 1000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    const int n = NOPTS(opts);
    opts_parse(argc, argv, opts, n);
    uint64_t seed = (uint64_t)opt_get(opts, n, "seed");
    long conns = opt_get(opts, n, "conns"), ramp = opt_get(opts, n, "ramp-ms");
    Shape shape = {(uint32_t)opt_get(opts, n, "loss-permille"), (uint32_t)opt_get(opts, n, "request-bytes"),
                   (uint32_t)opt_get(opts, n, "chunk-bytes"), (uint32_t)opt_get(opts, n, "think-ms")};
    Network net(seed, shape);
    Server srv(net, (uint32_t)opt_get(opts, n, "idle-ms"), (uint32_t)opt_get(opts, n, "rto-ms"));
    rng_t r;
    rng_seed(&r, seed);
    for (long i = 0; i < conns; i++)
        net.add_client(1 + rng_below(&r, (uint64_t)ramp), (uint32_t)opt_get(opts, n, "requests"),
                       (uint32_t)(2 + rng_below(&r, 80)), rng_next(&r));

    /* The event loop: one tick per virtual millisecond, I/O first, then timers. */
    uint64_t now = 0;
    while (!net.idle() || srv.busy()) {
        now++;
        net.deliver_due(now, srv);
        srv.run_timers(now);
        CASE_PROGRESS("tick");
    }

    printf("ticks=%llu conns=%ld requests=%llu bytes=%llu retransmits=%llu idle_closes=%llu digest=%016llx\n",
           (unsigned long long)now, conns, (unsigned long long)srv.requests, (unsigned long long)srv.bytes_in,
           (unsigned long long)srv.retransmits, (unsigned long long)srv.idle_closes, (unsigned long long)srv.digest);
    fprintf(stderr, "reads=%llu timers_scheduled=%llu cancelled=%llu fired=%llu stale_fired=%llu slot_visits=%llu "
            "peak_live_timers=%zu\n", (unsigned long long)srv.reads, (unsigned long long)srv.wheel_.scheduled,
            (unsigned long long)srv.wheel_.cancelled, (unsigned long long)srv.fired, (unsigned long long)srv.stale,
            (unsigned long long)srv.wheel_.visits, srv.wheel_.peak_live);
    return 0;
}
