/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * zonenav - the NPC path planner of a survival game's zone server. Players
 * roam a grid zone and build barricades, which crumble at the end of every
 * raid wave; NPCs walk between points of interest on paths the Navigator
 * caches per NPC. A* runs from the goal towards the NPC and the path is traced
 * downhill over the exact costs in a fixed direction order: a plan is a pure
 * function of the map, the NPC's cell and its goal. Every map change bumps the
 * grid's epoch. Blocking only raises costs, so a cached path is still the one
 * A* would return if no step ahead got blocked and no cell was opened since.
 *
 * The bug: Navigator::ensure_path() drops the cached path on every epoch
 * change; the "still clear ahead" test is missing. A barricade every 50 ticks
 * (normal) costs a few replans; one every tick (buggy) makes every walking NPC
 * run a full A* search on every tick.
 */
#include "../common/corpus.h"
#include <vector>

static const int kDx[8] = {1, 0, -1, 0, 1, -1, -1, 1};   // E S W N, then the diagonals
static const int kDy[8] = {0, 1, 0, -1, 1, 1, -1, -1};

enum : uint8_t { T_WALL, T_ROAD, T_GRASS, T_MUD };
static const uint32_t kWeight[4] = {0, 10, 12, 25};      // cost of entering a cell, per 10 of distance

static uint32_t step_cost(int d, uint32_t weight) { return (d < 4 ? 10u : 14u) * weight / 10; }

class ZoneGrid {
public:
    ZoneGrid(int w, int h) : w_(w), h_(h), terrain_v_((size_t)w * h, T_GRASS), blocked_v_((size_t)w * h, 0) {}
    int width() const { return w_; }
    int cells() const { return w_ * h_; }
    uint8_t terrain(int c) const { return terrain_[c]; }
    uint32_t weight(int c) const { return kWeight[terrain_[c]]; }
    uint32_t epoch() const { return epoch_; }
    uint32_t last_open_epoch() const { return last_open_; }
    void set_terrain(int c, uint8_t t) { terrain_[c] = t, blocked_[c] = t == T_WALL; }
    /* The neighbour of C in direction D, or -1: off the map, blocked, or a
     * diagonal that would cut the corner of a blocked cell. */
    int step(int c, int d) const {
        int x = c % w_ + kDx[d], y = c / w_ + kDy[d], n = y * w_ + x;
        if (x < 0 || y < 0 || x >= w_ || y >= h_ || blocked_[n])
            return -1;
        return d >= 4 && (blocked_[c / w_ * w_ + x] || blocked_[y * w_ + c % w_]) ? -1 : n;
    }
    void build_barricade(int c) { blocked_[c] = 1, standing_.push_back(c), epoch_++; }
    /* The end of a wave: the barricades crumble. Opened cells can make paths
     * cheaper than the cached ones, so the epoch of the last opening is kept. */
    void clear_barricades() {
        for (int c : standing_)
            blocked_[c] = 0;
        standing_.clear(), last_open_ = ++epoch_;
    }

private:
    int w_, h_;
    std::vector<uint8_t> terrain_v_, blocked_v_;
    uint8_t *terrain_ = terrain_v_.data(), *blocked_ = blocked_v_.data();   // blocked: wall or barricade
    std::vector<int> standing_;
    uint32_t epoch_ = 1, last_open_ = 1;
};

/* key: f in the high half, ~g in the low one: lowest f first, then the deeper node. */
struct OpenEntry { uint64_t key; uint32_t g; int cell; };

/* A binary heap; an improved node is pushed again, its stale copy skipped when popped. */
class OpenList {
public:
    explicit OpenList(int cells) : store_(8 * (size_t)cells + 1) {}   // a push per neighbour at most
    void clear() { n_ = 0; }
    bool empty() const { return n_ == 0; }
    void push(uint32_t f, uint32_t g, int cell) {
        heap_[n_] = OpenEntry{(uint64_t)f << 32 | ~g, g, cell};
        sift_up(n_++);
    }
    OpenEntry pop() {
        OpenEntry top = heap_[0];
        heap_[0] = heap_[--n_];
        if (n_)
            sift_down(0);
        return top;
    }
private:
    void sift_up(size_t i) {
        OpenEntry e = heap_[i];
        for (size_t p; i > 0 && e.key < heap_[p = (i - 1) / 2].key; i = p)
            heap_[i] = heap_[p];
        heap_[i] = e;
    }
    void sift_down(size_t i) {
        OpenEntry e = heap_[i];
        for (size_t c; (c = 2 * i + 1) < n_; i = c) {
            if (c + 1 < n_ && heap_[c + 1].key < heap_[c].key)
                c++;
            if (heap_[c].key >= e.key)
                break;
            heap_[i] = heap_[c];
        }
        heap_[i] = e;
    }
    std::vector<OpenEntry> store_;
    OpenEntry* heap_ = store_.data();
    size_t n_ = 0;
};

class GridAStar {
public:
    explicit GridAStar(const ZoneGrid& grid) : grid_(grid), store_(3 * (size_t)grid.cells(), 0), open_(grid.cells()) {}
    long search(int start, int goal, std::vector<int>* path);
    unsigned long long expansions() const { return expansions_; }
private:
    uint32_t heuristic(int c, int target) const;
    void relax(int cell, uint32_t g, int target);
    void expand(int cell, int target);
    void trace_downhill(int start, int goal, std::vector<int>* path) const;
    const ZoneGrid& grid_;
    std::vector<uint32_t> store_;
    uint32_t* g_ = store_.data();                   // cost from the cell to the goal
    uint32_t* seen_ = g_ + grid_.cells();           // seen_/closed_: the run that wrote them
    uint32_t* closed_ = seen_ + grid_.cells();
    uint32_t run_ = 0;
    OpenList open_;
    unsigned long long expansions_ = 0;
};

/* Octile distance at the cheapest weight: admissible and consistent. */
uint32_t GridAStar::heuristic(int c, int target) const {
    int w = grid_.width(), dx = c % w - target % w, dy = c / w - target / w;
    uint32_t ax = (uint32_t)(dx < 0 ? -dx : dx), ay = (uint32_t)(dy < 0 ? -dy : dy);
    return ax > ay ? 10 * ax + 4 * ay : 10 * ay + 4 * ax;
}

void GridAStar::relax(int cell, uint32_t g, int target) {
    if (seen_[cell] == run_ && g_[cell] <= g)
        return;
    seen_[cell] = run_, g_[cell] = g;
    open_.push(g + heuristic(cell, target), g, cell);
}

/* The search runs backwards: an NPC walking from N into CELL pays CELL's weight. */
void GridAStar::expand(int cell, int target) {
    expansions_++;
    uint32_t base = g_[cell], w = grid_.weight(cell);
    for (int d = 0; d < 8; d++) {
        int n = grid_.step(cell, d);
        if (n >= 0 && closed_[n] != run_)
            relax(n, base + step_cost(d, w), target);
    }
}

/* From START, step to the first neighbour (in direction order) on a cheapest
 * path: all of them are closed with their exact cost. */
void GridAStar::trace_downhill(int start, int goal, std::vector<int>* path) const {
    path->push_back(start);
    for (int c = start, n = -1; c != goal; path->push_back(c = n))
        for (int d = 0; d < 8; d++)
            if ((n = grid_.step(c, d)) >= 0 && closed_[n] == run_ && g_[n] + step_cost(d, grid_.weight(n)) == g_[c])
                break;
}

/* The cheapest path START..GOAL and its cost, or -1. Having reached START the
 * search goes on while an open node has f <= that cost, so that the exact
 * cost is known on every cell of every cheapest path. */
long GridAStar::search(int start, int goal, std::vector<int>* path) {
    run_++, open_.clear(), path->clear();
    relax(goal, 0, start);
    long best = -1;
    while (!open_.empty()) {
        OpenEntry e = open_.pop();
        if (closed_[e.cell] == run_ || e.g != g_[e.cell])
            continue;   // a stale copy
        if (best >= 0 && (long)(e.key >> 32) > best)
            break;
        closed_[e.cell] = run_;
        if (e.cell == start)
            best = e.g;
        expand(e.cell, start);
    }
    if (best >= 0)
        trace_downhill(start, goal, path);
    return best;
}

struct CachedPath {
    std::vector<int> cells;   // cells[next] is where the NPC stands
    size_t next = 0;
    int goal = -1;
    uint32_t epoch = 0;       // the grid epoch the path was last known good at
};

struct Npc {
    int cell, goal = -1, idle = 0;
    rng_t rng;
    CachedPath path;
    uint32_t arrivals = 0, stranded = 0, sightings = 0;
    uint64_t walked = 0;      // cost of the steps taken
};

class Navigator {
public:
    explicit Navigator(const ZoneGrid& grid) : grid_(grid), astar_(grid) {}
    bool ensure_path(Npc& npc);
    void report() const {
        fprintf(stderr, "path_reuses=%llu replans=%llu unreachable=%llu expansions=%llu\n",
                reuses_, replans_, unreachable_, astar_.expansions());
    }
private:
    bool replan(Npc& npc);
    bool path_still_clear(const CachedPath& p) const;
    const ZoneGrid& grid_;
    GridAStar astar_;
    unsigned long long reuses_ = 0, replans_ = 0, unreachable_ = 0;
};

/* Every step still ahead of the NPC can still be taken (no cell or corner blocked). */
bool Navigator::path_still_clear(const CachedPath& p) const {
    int w = grid_.width();
    for (size_t i = p.next; i + 1 < p.cells.size(); i++) {
        int a = p.cells[i], b = p.cells[i + 1], d = 0;
        while (d < 7 && a + kDx[d] + kDy[d] * w != b)
            d++;
        if (grid_.step(a, d) != b)
            return false;
    }
    return true;
}

/* Called each tick an NPC walks: plans only when the cached path can't be used. */
bool Navigator::ensure_path(Npc& npc) {
    CachedPath& p = npc.path;
    if (p.goal == npc.goal && p.next + 1 < p.cells.size()) {
#ifdef VPROF_CASE_FIX
        bool usable = p.epoch == grid_.epoch() || (p.epoch >= grid_.last_open_epoch() && path_still_clear(p));
#else
        bool usable = p.epoch == grid_.epoch();   /* FIX: or nothing opened since and path_still_clear(p) */
#endif
        if (usable) {
            p.epoch = grid_.epoch(), reuses_++;
            return true;
        }
    }
    bool found = replan(npc);
    (found ? replans_ : unreachable_)++;
    return found;
}

/* Plans from where the NPC stands; false when its goal is walled off. */
bool Navigator::replan(Npc& npc) {
    CachedPath& p = npc.path;
    long cost = astar_.search(npc.cell, npc.goal, &p.cells);
    p.next = 0, p.epoch = grid_.epoch(), p.goal = cost < 0 ? -1 : npc.goal;
    return cost >= 0;
}

/* Bresenham over the terrain: walls block sight, barricades are waist high. */
static bool line_of_sight(const ZoneGrid& g, int a, int b) {
    int w = g.width(), x = a % w, y = a / w, bx = b % w, by = b / w;
    int dx = bx > x ? bx - x : x - bx, dy = by > y ? by - y : y - by;
    int sx = bx > x ? 1 : -1, sy = by > y ? 1 : -1, err = dx - dy;
    while (x != bx || y != by) {
        if (g.terrain(y * w + x) == T_WALL)
            return false;
        int e2 = 2 * err;
        if (e2 > -dy)
            err -= dy, x += sx;
        if (e2 < dx)
            err += dx, y += sy;
    }
    return true;
}

class NpcSystem {
public:
    NpcSystem(const ZoneGrid& grid, const std::vector<int>& waypoints)
        : grid_(grid), nav_(grid), waypoints_(waypoints), occupied_(grid.cells(), 0) {}
    void spawn(int count, uint64_t seed) {   // each NPC at a point of interest, with its own dice
        npcs_.resize((size_t)count);
        for (int i = 0; i < count; i++) {
            Npc& n = npcs_[i];
            rng_seed(&n.rng, seed * 131 + (uint64_t)i);
            n.cell = waypoints_[rng_below(&n.rng, waypoints_.size())];
            occupied_[n.cell]++;
        }
    }
    void update(const std::vector<int>& players) {
        for (Npc& n : npcs_)
            update_npc(n, players);
    }
    bool occupied(int c) const { return occupied_[c] != 0; }
    const std::vector<Npc>& npcs() const { return npcs_; }
    const Navigator& navigator() const { return nav_; }
private:
    void update_npc(Npc& npc, const std::vector<int>& players);
    void perceive(Npc& npc, const std::vector<int>& players);
    void follow_path(Npc& npc);
    const ZoneGrid& grid_;
    Navigator nav_;
    const std::vector<int>& waypoints_;
    std::vector<Npc> npcs_;
    std::vector<uint16_t> occupied_;   // NPCs per cell: no barricade goes up on them
};

/* The aggro check: players (their cells) within 20 cells in plain sight. */
void NpcSystem::perceive(Npc& npc, const std::vector<int>& players) {
    int w = grid_.width();
    for (int pc : players) {
        int dx = pc % w - npc.cell % w, dy = pc / w - npc.cell / w;
        if (dx * dx + dy * dy <= 400 && line_of_sight(grid_, npc.cell, pc))
            npc.sightings++;
    }
}

void NpcSystem::follow_path(Npc& npc) {
    if (!nav_.ensure_path(npc))   // walled off: another goal after a pause
        return (void)(npc.stranded++, npc.goal = -1, npc.idle = 4);
    CachedPath& p = npc.path;
    int from = p.cells[p.next], to = p.cells[++p.next], d = 0;
    while (d < 7 && from + kDx[d] + kDy[d] * grid_.width() != to)
        d++;
    npc.walked += step_cost(d, grid_.weight(to));
    occupied_[from]--, occupied_[to]++;
    npc.cell = to;
    if (to == npc.goal)   // at the point of interest: linger a few ticks
        npc.arrivals++, npc.goal = -1, npc.idle = 2 + (int)rng_below(&npc.rng, 6);
}

void NpcSystem::update_npc(Npc& npc, const std::vector<int>& players) {
    if (npc.idle > 0) {
        npc.idle--;
    } else {
        while (npc.goal < 0 || npc.goal == npc.cell)   // off to another point of interest
            npc.goal = waypoints_[rng_below(&npc.rng, waypoints_.size())];
        follow_path(npc);
    }
    perceive(npc, players);   // from where it stands now
}

/* Roads every 16 cells, mud patches, walled buildings with two doorways;
 * the points of interest on open ground. */
static std::vector<int> build_zone(ZoneGrid& g, rng_t* r, int n_waypoints) {
    int w = g.width(), h = g.cells() / w;
    for (int c = 0; c < w * h; c++)
        g.set_terrain(c, c % w % 16 == 8 || c / w % 16 == 8 ? T_ROAD : T_GRASS);
    for (int k = 0; k < w * h / 300; k++) {
        int x0 = (int)rng_below(r, w - 5), y0 = (int)rng_below(r, h - 5), side = 3 + (int)rng_below(r, 3);
        for (int y = y0; y < y0 + side; y++)
            for (int x = x0; x < x0 + side; x++)
                if (g.terrain(y * w + x) == T_GRASS)
                    g.set_terrain(y * w + x, T_MUD);
    }
    for (int k = 0; k < w * h / 250; k++) {
        int bw = 4 + (int)rng_below(r, 7), bh = 4 + (int)rng_below(r, 7);
        int top = (1 + (int)rng_below(r, h - bh - 2)) * w, bottom = top + (bh - 1) * w;
        int left = 1 + (int)rng_below(r, w - bw - 2), right = left + bw - 1;
        for (int x = left; x <= right; x++)
            g.set_terrain(top + x, T_WALL), g.set_terrain(bottom + x, T_WALL);
        for (int row = top; row <= bottom; row += w)
            g.set_terrain(row + left, T_WALL), g.set_terrain(row + right, T_WALL);
        g.set_terrain(top + left + 1 + (int)rng_below(r, bw - 2), T_GRASS);      // north door
        g.set_terrain(bottom + left + 1 + (int)rng_below(r, bw - 2), T_GRASS);   // south door
    }
    std::vector<int> waypoints;
    while ((int)waypoints.size() < n_waypoints) {
        int c = (int)rng_below(r, (uint64_t)g.cells());
        if (g.terrain(c) != T_WALL)
            waypoints.push_back(c);
    }
    return waypoints;
}

struct Scenario { long ticks, npcs, players, map, build_every, wave_ticks, seed; };

class ZoneServer {
public:
    explicit ZoneServer(const Scenario& sc)
        : sc_(sc), grid_((int)sc.map, (int)sc.map), is_waypoint_(grid_.cells(), 0), npcs_(grid_, waypoints_) {
        rng_seed(&rng_, (uint64_t)sc.seed);
        waypoints_ = build_zone(grid_, &rng_, 40);
        npcs_.spawn((int)sc.npcs, (uint64_t)sc.seed);
        for (int c : waypoints_)
            is_waypoint_[c] = 1;
        for (long i = 0; i < sc.players; i++)
            players_.push_back(waypoints_[rng_below(&rng_, waypoints_.size())]);
    }
    void run() {
        for (long t = 1; t <= sc_.ticks; t++) {
            tick(t);
            CASE_PROGRESS("tick");
        }
    }
    void print_digest() const;
private:
    void tick(long t) {
        for (int& pc : players_) {   // players wander
            int n = grid_.step(pc, (int)rng_below(&rng_, 8));
            pc = n >= 0 ? n : pc;
        }
        npcs_.update(players_);
        if (t % sc_.build_every == 0) {   // a player puts a barricade up: not on an NPC or a point of interest
            int c = grid_.step(players_[(size_t)(t / sc_.build_every) % players_.size()], (int)rng_below(&rng_, 8));
            if (c >= 0 && !npcs_.occupied(c) && !is_waypoint_[c])
                grid_.build_barricade(c), built_++;
        }
        if (t % sc_.wave_ticks == 0)
            grid_.clear_barricades();
    }
    Scenario sc_;
    rng_t rng_;
    ZoneGrid grid_;
    std::vector<int> waypoints_;
    std::vector<uint8_t> is_waypoint_;
    NpcSystem npcs_;
    std::vector<int> players_;   // the cell each player stands on
    unsigned long long built_ = 0;
};

/* Where every NPC ended, what it walked and what is left of its path. */
void ZoneServer::print_digest() const {
    unsigned long long h = 14695981039346656037ull, walked = 0, ahead = 0, arrivals = 0, seen = 0;
    for (const Npc& n : npcs_.npcs()) {
        uint64_t left = n.goal >= 0 && n.path.goal == n.goal ? n.path.cells.size() - 1 - n.path.next : 0;
        walked += n.walked, ahead += left, arrivals += n.arrivals, seen += n.sightings;
        for (uint64_t v : {(uint64_t)n.cell, (uint64_t)(n.goal + 1), n.walked, left, (uint64_t)n.stranded})
            h = (h ^ v) * 1099511628211ull;
    }
    printf("%ld npcs, %ld ticks: %llu arrivals, walked %llu, %llu steps to go, %llu sightings, %llu barricades, "
           "digest %016llx\n", sc_.npcs, sc_.ticks, arrivals, walked, ahead, seen, built_, h);
    npcs_.navigator().report();
}

int main(int argc, char** argv) {
    opt_t opts[] = {   // in the order of Scenario's fields
        {"ticks", "server ticks to simulate", 500, 1, 10000000, 0},
        {"npcs", "NPCs in the zone", 20, 1, 4096, 0},
        {"players", "players roaming and building", 260, 1, 4096, 0},
        {"map", "zone width and height in cells", 64, 32, 1024, 0},
        {"build-every", "ticks between two barricades", 50, 1, 1 << 30, 0},
        {"wave-ticks", "ticks per raid wave (barricades crumble at its end)", 250, 1, 1 << 30, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    Scenario sc{opts[0].value, opts[1].value, opts[2].value, opts[3].value,
                opts[4].value, opts[5].value, opts[6].value};
    ZoneServer server(sc);
    server.run();
    server.print_digest();
    return 0;
}
