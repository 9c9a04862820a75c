// Written for the vprof bug corpus by a helper that had not seen the
// profiler (2026-11-28); not modelled on a real issue. The fix is the
// VPROF_CASE_FIX variant; the line marked FIX is the bug.
//
// lobbyd - the ranking part of a game lobby server. A PlayerStore keeps the
// players (handle, rating, win/loss record, presence); observers are told
// about every change together with a mask of the fields that changed. The
// Leaderboard is such an observer: it memoizes the players sorted by rating
// (order_, rank_of_) and drops the memo when a change can move a player, so
// that the next rank query re-sorts.
//
// The workload is a tournament: after each round the match results arrive
// in bulk (ratings move), then clients look at their rank cards and the top
// page until the next round ends. With presence tracking on, every client
// session also sends a heartbeat (last-seen time, online/away status) every
// --heartbeat-every queries.
//
// The bug: Leaderboard::on_player_changed drops the memo for every change,
// including the presence-only ones, which cannot move anybody in a ranking
// by rating. Without presence (normal) the board is re-sorted once a round;
// with it (buggy) once every few dozen queries.
extern "C" {
#include "../common/corpus.h"
}
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

enum : unsigned {
    kFieldRating   = 1u << 0,
    kFieldRecord   = 1u << 1,
    kFieldPresence = 1u << 2,
    kFieldStatus   = 1u << 3,
};

enum Status : uint8_t { kOffline = 0, kOnline = 1, kAway = 2, kInGame = 3 };

struct Player {
    uint32_t id;
    std::string handle;
    int64_t rating;
    uint32_t wins, losses;
    uint64_t last_seen;     // lobby clock, in ticks
    uint8_t region;
    uint8_t status;
};

class PlayerObserver {
public:
    virtual ~PlayerObserver() = default;
    virtual void on_player_changed(const Player &p, int64_t old_rating, unsigned fields) = 0;
};

class PlayerStore {
public:
    uint32_t add(const std::string &handle, uint8_t region, int64_t rating)
    {
        uint32_t id = (uint32_t)players_.size();
        players_.push_back(Player{id, handle, rating, 0, 0, 0, region, kOffline});
        by_handle_.emplace(handle, id);
        return id;
    }
    const Player &get(uint32_t id) const { return players_[id]; }
    size_t size() const { return players_.size(); }
    uint32_t find(const std::string &handle) const
    {
        auto it = by_handle_.find(handle);
        return it == by_handle_.end() ? UINT32_MAX : it->second;
    }
    void subscribe(PlayerObserver *o) { observers_.push_back(o); }

    // Elo-like integer update: the upset pays more.
    void record_match(uint32_t winner, uint32_t loser)
    {
        Player &w = players_[winner], &l = players_[loser];
        int64_t old_w = w.rating, old_l = l.rating;
        int64_t delta = 16 + (l.rating - w.rating) / 25;
        delta = std::clamp<int64_t>(delta, 1, 31);
        w.rating += delta;
        w.wins++;
        l.rating -= delta;
        l.losses++;
        notify(w, old_w, kFieldRating | kFieldRecord);
        notify(l, old_l, kFieldRating | kFieldRecord);
    }

    void heartbeat(uint32_t id, uint64_t now, uint8_t status)
    {
        Player &p = players_[id];
        unsigned fields = kFieldPresence;
        p.last_seen = now;
        if (p.status != status) {
            p.status = status;
            fields |= kFieldStatus;
        }
        notify(p, p.rating, fields);
    }

private:
    void notify(const Player &p, int64_t old_rating, unsigned fields)
    {
        for (PlayerObserver *o : observers_)
            o->on_player_changed(p, old_rating, fields);
    }

    std::vector<Player> players_;
    std::unordered_map<std::string, uint32_t> by_handle_;
    std::vector<PlayerObserver *> observers_;
};

// Players ordered by rating (higher first), ties by id: a total order, so
// every re-sort gives the same board.
class Leaderboard : public PlayerObserver {
public:
    explicit Leaderboard(const PlayerStore &store) : store_(store) {}

    void on_player_changed(const Player &p, int64_t old_rating, unsigned fields) override;

    uint32_t rank(uint32_t id)
    {
        ensure_ranked();
        return rank_of_[id] + 1;
    }
    uint32_t at(size_t pos)
    {
        ensure_ranked();
        return order_[pos];
    }
    size_t size() const { return store_.size(); }
    uint64_t rebuilds() const { return rebuilds_; }
    uint64_t notifications() const { return notifications_; }
    uint64_t presence_only() const { return presence_only_; }

private:
    bool rank_before(uint32_t a, uint32_t b) const
    {
        const Player &pa = store_.get(a), &pb = store_.get(b);
        if (pa.rating != pb.rating)
            return pa.rating > pb.rating;
        return pa.id < pb.id;
    }
    void ensure_ranked()
    {
        if (!valid_)
            rebuild();
    }
    void rebuild()
    {
        size_t n = store_.size();
        order_.resize(n);
        rank_of_.resize(n);
        for (size_t i = 0; i < n; i++)
            order_[i] = (uint32_t)i;
        std::sort(order_.begin(), order_.end(),
                  [this](uint32_t a, uint32_t b) { return rank_before(a, b); });
        for (size_t r = 0; r < n; r++)
            rank_of_[order_[r]] = (uint32_t)r;
        valid_ = true;
        rebuilds_++;
    }

    const PlayerStore &store_;
    std::vector<uint32_t> order_;
    std::vector<uint32_t> rank_of_;
    bool valid_ = false;
    uint64_t rebuilds_ = 0, notifications_ = 0, presence_only_ = 0;
};

// Decides whether a change to a player can move the ranking.
void Leaderboard::on_player_changed(const Player &p, int64_t old_rating, unsigned fields)
{
    notifications_++;
    if (!(fields & kFieldRating) && p.rating == old_rating)
        presence_only_++;
#ifdef VPROF_CASE_FIX
    if (fields & kFieldRating)
        valid_ = false;
#else
    valid_ = false; /* FIX: only a rating change moves a player: invalidate when (fields & kFieldRating), not on presence/status updates */
#endif
}

// ------------------------------------------------------------- the lobby
static const char *const kStatusName[] = {"offline", "online", "away", "in-game"};
static const char *const kRegion[] = {"eu-west", "eu-north", "us-east", "us-west",
                                      "ap-south", "ap-east", "sa-east", "af-south"};

class Lobby {
public:
    Lobby(long players, long heartbeat_every, uint64_t seed)
        : board_(store_), heartbeat_every_(heartbeat_every)
    {
        rng_seed(&rng_, seed);
        store_.subscribe(&board_);
        char buf[32];
        for (long i = 0; i < players; i++) {
            snprintf(buf, sizeof buf, "player_%05ld_%c%c", i,
                     'a' + (int)rng_below(&rng_, 26), 'a' + (int)rng_below(&rng_, 26));
            store_.add(buf, (uint8_t)rng_below(&rng_, 8), 1200 + (int64_t)rng_below(&rng_, 600));
            handles_.push_back(buf);
        }
    }

    // Results of one round: every player in a pairing, random winners.
    void play_round()
    {
        size_t n = store_.size();
        std::vector<uint32_t> seats(n);
        for (size_t i = 0; i < n; i++)
            seats[i] = (uint32_t)i;
        for (size_t i = n - 1; i > 0; i--)
            std::swap(seats[i], seats[rng_below(&rng_, i + 1)]);
        for (size_t i = 0; i + 1 < n; i += 2) {
            uint32_t a = seats[i], b = seats[i + 1];
            if (rng_below(&rng_, 2))
                std::swap(a, b);
            store_.record_match(a, b);
        }
    }

    // A client looks itself up by handle and gets its rank card: its rank
    // and the players around it; one query in eight asks for the top page.
    void serve_query()
    {
        const std::string &h = handles_[rng_below(&rng_, handles_.size())];
        uint32_t id = store_.find(h);
        out_.clear();
        if (rng_below(&rng_, 8) == 0) {
            append("{\"page\":\"top\",\"rows\":[");
            for (size_t r = 0; r < 25 && r < board_.size(); r++)
                render_row(board_.at(r), r + 1);
        } else {
            uint32_t me = board_.rank(id);
            size_t lo = me > 5 ? me - 5 : 1, hi = std::min<size_t>(board_.size(), lo + 10);
            append("{\"page\":\"card\",\"me\":");
            append_num(me);
            append(",\"rows\":[");
            for (size_t r = lo; r <= hi; r++)
                render_row(board_.at(r - 1), r);
        }
        append("]}");
        digest_ = fnv1a(digest_, out_);
        queries_++;
        tick_++;
        if (heartbeat_every_ && queries_ % (uint64_t)heartbeat_every_ == 0)
            presence_tick();
    }

    // A batch of session heartbeats: last-seen time and online/away status.
    void presence_tick()
    {
        for (int k = 0; k < 16; k++) {
            uint32_t id = (uint32_t)rng_below(&rng_, store_.size());
            store_.heartbeat(id, tick_, (uint8_t)(1 + rng_below(&rng_, 3)));
        }
    }

    uint64_t digest() const { return digest_; }
    uint64_t queries() const { return queries_; }
    const Leaderboard &board() const { return board_; }

private:
    void append(const char *s) { out_ += s; }
    void append_num(uint64_t v)
    {
        char buf[24];
        out_.append(buf, (size_t)(put_int(buf, (int64_t)v) - buf));
    }
    // A hand-rolled JSON row writer (the lobby renders a few million rows).
    static char *put_str(char *o, const char *s)
    {
        while (*s)
            *o++ = *s++;
        return o;
    }
    static char *put_int(char *o, int64_t v)
    {
        char tmp[24];
        int n = 0;
        uint64_t u = v < 0 ? (uint64_t)-v : (uint64_t)v;
        do {
            tmp[n++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (v < 0)
            *o++ = '-';
        while (n)
            *o++ = tmp[--n];
        return o;
    }
    void render_row(uint32_t id, size_t rank)
    {
        const Player &p = store_.get(id);
        char row[192], *o = row;
        o = put_str(o, "{\"rank\":");
        o = put_int(o, (int64_t)rank);
        o = put_str(o, ",\"handle\":\"");
        o = put_str(o, p.handle.c_str());
        o = put_str(o, "\",\"rating\":");
        o = put_int(o, p.rating);
        o = put_str(o, ",\"w\":");
        o = put_int(o, p.wins);
        o = put_str(o, ",\"l\":");
        o = put_int(o, p.losses);
        o = put_str(o, ",\"region\":\"");
        o = put_str(o, kRegion[p.region]);
        o = put_str(o, "\",\"status\":\"");
        o = put_str(o, kStatusName[p.status]);
        o = put_str(o, "\"},");
        out_.append(row, (size_t)(o - row));
    }
    static uint64_t fnv1a(uint64_t h, const std::string &s)
    {
        if (!h)
            h = 1469598103934665603ULL;
        const unsigned char *c = (const unsigned char *)s.data();
        for (size_t i = 0, n = s.size(); i < n; i++)
            h = (h ^ c[i]) * 1099511628211ULL;
        return h;
    }

    PlayerStore store_;
    Leaderboard board_;
    std::vector<std::string> handles_;
    long heartbeat_every_;
    rng_t rng_;
    std::string out_;
    uint64_t digest_ = 0, queries_ = 0, tick_ = 0;
};

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"players", "registered players", 2000, 2, 1000000, 0},
        {"rounds", "tournament rounds", 5, 1, 100000, 0},
        {"queries", "rank queries per round", 11000, 0, 10000000, 0},
        {"heartbeat-every", "queries between presence heartbeat batches (0: no presence)", 0, 0,
         1000000, 0},
        {"seed", "workload seed", 2611, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long players = opt_get(opts, NOPTS(opts), "players");
    long rounds = opt_get(opts, NOPTS(opts), "rounds");
    long queries = opt_get(opts, NOPTS(opts), "queries");

    Lobby lobby(players, opt_get(opts, NOPTS(opts), "heartbeat-every"),
                (uint64_t)opt_get(opts, NOPTS(opts), "seed"));
    for (long r = 0; r < rounds; r++) {
        lobby.play_round();
        for (long q = 0; q < queries; q++)
            lobby.serve_query();
    }
    const Leaderboard &b = lobby.board();
    printf("%ld players, %ld rounds, %llu queries, digest %016llx\n", players, rounds,
           (unsigned long long)lobby.queries(), (unsigned long long)lobby.digest());
    fprintf(stderr, "board rebuilds %llu, notifications %llu (presence-only %llu)\n",
            (unsigned long long)b.rebuilds(), (unsigned long long)b.notifications(),
            (unsigned long long)b.presence_only());
    return 0;
}
