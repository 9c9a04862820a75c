/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * arena2d - the rigid-body step of a top-down 2D arena game. The level has
 * moving bodies (crates, and debris that does not collide with other debris)
 * and a few static pillars. Every step the engine rebuilds a uniform grid
 * broad phase from scratch (bodies are inserted into each cell their bounding
 * box covers), collects the candidate pairs of every cell, keeps those whose
 * boxes overlap, whose layers interact and whose shared cell is the one that
 * owns the pair (so a pair that straddles cells is reported once), sorts them
 * (the solver's order must not depend on the grid, or replays diverge), runs
 * the circle-circle narrow phase and a sequential-impulse contact solver, and
 * integrates.
 *
 * The bug: World::collide() sizes the cells to fit the largest body, and
 * counts the static pillars too. The grid already inserts a body into every
 * cell it covers, so a big static body needs no room of its own; sized for
 * it, the cells grow with the level's largest pillar. Small pillars (normal:
 * --pillar-radius 2) cost little; a level with large ones (buggy:
 * --pillar-radius 28) leaves 36 cells of some 45 bodies each, and the grid
 * hands every pair of them to the box test.
 */
#include "../common/corpus.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

static constexpr float kStep = 1.0f / 60.0f;
static constexpr int kSolverIterations = 6;
static constexpr float kRestitution = 0.4f;
static constexpr float kMinCell = 0.5f;
static constexpr long kMaxCells = 1L << 20;     /* memory guard for a degenerate fit */

enum Layer : uint32_t { kCrate = 1, kDebris = 2, kPillar = 4 };

struct Vec2 { float x, y; };

struct Aabb {
    Vec2 lo, hi;
    bool overlaps(const Aabb &o) const
    {
        return lo.x <= o.hi.x && o.lo.x <= hi.x && lo.y <= o.hi.y && o.lo.y <= hi.y;
    }
};

struct Body {
    Vec2 pos, vel;
    float radius, inv_mass;     /* inv_mass 0: static */
    uint32_t layer, mask;       /* collides with bodies whose layer is in mask */
    Aabb box;                   /* refreshed after every integration */
    bool is_static() const { return inv_mass == 0.0f; }
};

/* A candidate pair, always with a < b so the solver order is canonical. */
struct BodyPair {
    uint32_t a, b;
    bool operator<(const BodyPair &o) const { return a != o.a ? a < o.a : b < o.b; }
};

struct Contact {
    uint32_t a, b;
    Vec2 normal;                /* from a to b */
    float depth, impulse;       /* impulse: accumulated over the solver's iterations */
};

static Aabb bounds_of(const Vec2 &p, float r) { return Aabb{{p.x - r, p.y - r}, {p.x + r, p.y + r}}; }

static Aabb merge(const Aabb &a, const Aabb &b)
{
    return Aabb{{fminf(a.lo.x, b.lo.x), fminf(a.lo.y, b.lo.y)},
                {fmaxf(a.hi.x, b.hi.x), fmaxf(a.hi.y, b.hi.y)}};
}

/* Layer masks, and static bodies never need to touch each other. */
class CollisionFilter {
public:
    bool accept(const Body &a, const Body &b) const
    {
        if (!a.box.overlaps(b.box))
            return false;
        if (!(a.mask & b.layer) || !(b.mask & a.layer))
            return false;
        return !(a.is_static() && b.is_static());
    }
};

/* Cells are square; coordinates outside the fitted bounds clamp to the edge
 * cells, so visit_cells() and owner_cell() always agree. The cells are one flat
 * array filled by a counting sort (count, prefix sums, place), so a rebuild
 * allocates nothing once the arrays have grown. */
class UniformGrid {
public:
    void reset(const Aabb &bounds, float cell_size)
    {
        origin_ = bounds.lo;
        cell_size_ = cell_size;
        nx_ = static_cast<int>((bounds.hi.x - bounds.lo.x) / cell_size) + 1;
        ny_ = static_cast<int>((bounds.hi.y - bounds.lo.y) / cell_size) + 1;
        start_.assign(static_cast<size_t>(nx_) * static_cast<size_t>(ny_), 0);
        items_.clear();
    }

    /* Every box is passed twice: once counted, once placed. */
    void count(const Aabb &box) { visit_cells(box, UINT32_MAX); }
    void place_all_counted()
    {
        uint32_t sum = 0, *first = start_.data();
        for (size_t c = 0, cells = start_.size(); c < cells; c++) {
            uint32_t n = first[c];      /* a cell's count becomes its first item */
            first[c] = sum;
            sum += n;
        }
        items_.resize(sum);
        fill_ = start_;
    }
    void place(uint32_t id, const Aabb &box) { visit_cells(box, id); }

    void find_pairs(const std::vector<Body> &bodies, const CollisionFilter &filter,
                    std::vector<BodyPair> &out, uint64_t &candidates) const
    {
        const uint32_t *first = start_.data(), *end = fill_.data();
        for (int c = 0; c < nx_ * ny_; c++)
            if (end[c] - first[c] >= 2)     /* most cells of a fine grid hold 0 or 1 */
                scan_cell(c, bodies.data(), filter, out, candidates);
    }

    int cell_count() const { return nx_ * ny_; }
    float cell_size() const { return cell_size_; }

private:
    int column(float x) const
    {
        int i = static_cast<int>((x - origin_.x) / cell_size_);
        return i < 0 ? 0 : i >= nx_ ? nx_ - 1 : i;
    }
    int row(float y) const
    {
        int i = static_cast<int>((y - origin_.y) / cell_size_);
        return i < 0 ? 0 : i >= ny_ ? ny_ - 1 : i;
    }

    /* Counts the box in (id UINT32_MAX) or places it into every cell it covers. */
    void visit_cells(const Aabb &box, uint32_t id)
    {
        int x0 = column(box.lo.x), x1 = column(box.hi.x);
        int y0 = row(box.lo.y), y1 = row(box.hi.y);
        for (int y = y0; y <= y1; y++)
            for (int x = x0; x <= x1; x++) {
                size_t c = static_cast<size_t>(y) * static_cast<size_t>(nx_) + static_cast<size_t>(x);
                if (id == UINT32_MAX)
                    start_[c]++;
                else
                    items_[fill_[c]++] = id;
            }
    }

    /* Two overlapping boxes share every cell their intersection covers; the
     * cell of the intersection's low corner owns the pair. */
    int owner_cell(const Aabb &a, const Aabb &b) const
    {
        return row(fmaxf(a.lo.y, b.lo.y)) * nx_ + column(fmaxf(a.lo.x, b.lo.x));
    }

    void scan_cell(int c, const Body *bodies, const CollisionFilter &filter,
                   std::vector<BodyPair> &out, uint64_t &candidates) const
    {
        const uint32_t *ids = items_.data() + start_[static_cast<size_t>(c)];
        size_t n = fill_[static_cast<size_t>(c)] - start_[static_cast<size_t>(c)];
        candidates += n * (n - (n > 0)) / 2;
        for (size_t i = 0; i + 1 < n; i++) {
            const Body &a = bodies[ids[i]];
            for (size_t j = i + 1; j < n; j++) {
                const Body &b = bodies[ids[j]];
                if (!filter.accept(a, b) || owner_cell(a.box, b.box) != c)
                    continue;
                uint32_t p = ids[i], q = ids[j];
                out.push_back(p < q ? BodyPair{p, q} : BodyPair{q, p});
            }
        }
    }

    Vec2 origin_{0, 0};
    float cell_size_ = 1;
    int nx_ = 0, ny_ = 0;
    std::vector<uint32_t> start_;   /* first item of each cell */
    std::vector<uint32_t> fill_;    /* one past each cell's last item, once placed */
    std::vector<uint32_t> items_;   /* body ids, cell by cell */
};

class BroadPhase {
public:
    /* Rebuilt from scratch every step (a counting pass is cheaper than
     * tracking which bodies changed cells): fit the grid to BOUNDS with
     * cells of CELL (coarsened only if the fit would need too many), insert
     * every body, collect the pairs. */
    void update(const std::vector<Body> &bodies, const Aabb &bounds, float cell,
                std::vector<BodyPair> &pairs)
    {
        float w = bounds.hi.x - bounds.lo.x, h = bounds.hi.y - bounds.lo.y;
        while ((w / cell + 1) * (h / cell + 1) > static_cast<float>(kMaxCells))
            cell *= 2.0f;
        grid_.reset(bounds, cell);
        for (const Body &b : bodies)
            grid_.count(b.box);
        grid_.place_all_counted();
        for (size_t i = 0; i < bodies.size(); i++)
            grid_.place(static_cast<uint32_t>(i), bodies[i].box);
        pairs.clear();
        grid_.find_pairs(bodies, filter_, pairs, candidates_);
    }

    uint64_t candidates() const { return candidates_; }
    const UniformGrid &grid() const { return grid_; }
private:
    UniformGrid grid_;
    CollisionFilter filter_;
    uint64_t candidates_ = 0;
};

/* Circle against circle: touching when the centres are closer than the radii. */
static bool collide_circles(const Body &a, const Body &b, Contact &c)
{
    float dx = b.pos.x - a.pos.x, dy = b.pos.y - a.pos.y;
    float reach = a.radius + b.radius, d2 = dx * dx + dy * dy;
    if (d2 >= reach * reach)
        return false;
    float d = sqrtf(d2);
    c.normal = d > 1e-6f ? Vec2{dx / d, dy / d} : Vec2{1.0f, 0.0f};
    c.depth = reach - d;
    c.impulse = 0.0f;
    return true;
}

/* One sequential-impulse iteration on one contact (no friction): cancel the
 * approach speed along the normal, with restitution and a position bias. */
static void solve_contact(std::vector<Body> &bodies, Contact &c)
{
    Body &a = bodies[c.a], &b = bodies[c.b];
    float wsum = a.inv_mass + b.inv_mass;
    float rvx = b.vel.x - a.vel.x, rvy = b.vel.y - a.vel.y;
    float vn = rvx * c.normal.x + rvy * c.normal.y;
    float bias = 0.2f / kStep * fmaxf(c.depth - 0.01f, 0.0f);
    float target = vn < 0.0f ? -kRestitution * vn : 0.0f;
    float lambda = (target + bias - vn) / wsum;
    float total = fmaxf(c.impulse + lambda, 0.0f);  /* contacts only push */
    lambda = total - c.impulse;
    c.impulse = total;
    a.vel.x -= lambda * a.inv_mass * c.normal.x, a.vel.y -= lambda * a.inv_mass * c.normal.y;
    b.vel.x += lambda * b.inv_mass * c.normal.x, b.vel.y += lambda * b.inv_mass * c.normal.y;
}

class World {
public:
    World(std::vector<Body> bodies, float arena) : bodies_(std::move(bodies)), arena_(arena)
    {
        for (Body &b : bodies_)
            b.box = bounds_of(b.pos, b.radius);
    }

    void step()
    {
        collide();
        for (int it = 0; it < kSolverIterations; it++)
            for (Contact &c : contacts_)
                solve_contact(bodies_, c);
        integrate();
    }

    const std::vector<Body> &bodies() const { return bodies_; }
    const std::vector<Contact> &contacts() const { return contacts_; }
    const BroadPhase &broad() const { return broad_; }
    uint64_t pairs_total() const { return pairs_total_; }
private:
    /* Fits the broad phase to the scene (the bounds of every box, cells
     * twice as wide as the largest radius: a body then covers at most 2x2
     * cells, and a cell holds a handful of bodies), collects its pairs in a
     * canonical order, and keeps those that touch. */
    void collide()
    {
        Aabb bounds = bodies_[0].box;
        float largest = 0.0f;
        for (const Body &b : bodies_) {
            bounds = merge(bounds, b.box);
#ifdef VPROF_CASE_FIX
            if (!b.is_static())
                largest = fmaxf(largest, b.radius);
#else
            largest = fmaxf(largest, b.radius);     /* FIX: size the cells from the moving bodies; a static one just covers more cells */
#endif
        }
        broad_.update(bodies_, bounds, fmaxf(2.0f * largest, kMinCell), pairs_);
        std::sort(pairs_.begin(), pairs_.end());
        pairs_total_ += pairs_.size();
        contacts_.clear();
        for (const BodyPair &p : pairs_) {
            Contact c{p.a, p.b, {0, 0}, 0, 0};
            if (collide_circles(bodies_[p.a], bodies_[p.b], c))
                contacts_.push_back(c);
        }
    }

    /* Walls bounce; static bodies never move. */
    void integrate()
    {
        for (Body &b : bodies_) {
            if (b.is_static())
                continue;
            b.pos.x += b.vel.x * kStep, b.pos.y += b.vel.y * kStep;
            if ((b.pos.x < b.radius && b.vel.x < 0) || (b.pos.x > arena_ - b.radius && b.vel.x > 0))
                b.vel.x = -b.vel.x;
            if ((b.pos.y < b.radius && b.vel.y < 0) || (b.pos.y > arena_ - b.radius && b.vel.y > 0))
                b.vel.y = -b.vel.y;
            b.box = bounds_of(b.pos, b.radius);
        }
    }

    std::vector<Body> bodies_;
    float arena_;
    BroadPhase broad_;
    std::vector<BodyPair> pairs_;
    std::vector<Contact> contacts_;
    uint64_t pairs_total_ = 0;
};

struct LevelSpec {
    int bodies, pillars;
    float arena, pillar_radius;
    uint64_t seed;
};

static float uniform(rng_t &r, float lo, float hi)
{
    return lo + (hi - lo) * static_cast<float>(rng_below(&r, 1u << 20)) / static_cast<float>(1u << 20);
}

/* Pillars on a regular lattice; moving bodies anywhere clear of them. */
static std::vector<Body> build_level(const LevelSpec &spec)
{
    std::vector<Body> out;
    int side = static_cast<int>(ceilf(sqrtf(static_cast<float>(spec.pillars))));
    for (int i = 0; i < spec.pillars; i++) {
        float gap = spec.arena / static_cast<float>(side);
        Vec2 at{gap * (static_cast<float>(i % side) + 0.5f), gap * (static_cast<float>(i / side) + 0.5f)};
        out.push_back(Body{at, {0, 0}, spec.pillar_radius, 0.0f, kPillar, kCrate | kDebris, {}});
    }
    rng_t r;
    rng_seed(&r, spec.seed);
    while (static_cast<int>(out.size()) < spec.pillars + spec.bodies) {
        float radius = uniform(r, 0.4f, 1.5f);
        Vec2 at{uniform(r, radius, spec.arena - radius), uniform(r, radius, spec.arena - radius)};
        bool clear = true;
        for (int p = 0; p < spec.pillars && clear; p++) {
            float dx = at.x - out[p].pos.x, dy = at.y - out[p].pos.y;
            clear = sqrtf(dx * dx + dy * dy) > out[p].radius + radius;
        }
        if (!clear)
            continue;
        bool debris = rng_below(&r, 10) < 3;
        Vec2 vel{uniform(r, -6.0f, 6.0f), uniform(r, -6.0f, 6.0f)};
        float inv_mass = 1.0f / (radius * radius);
        out.push_back(Body{at, vel, radius, inv_mass, debris ? kDebris : kCrate,
                           debris ? (kCrate | kPillar) : (kCrate | kDebris | kPillar), {}});
    }
    return out;
}

/* The replay digest: every step's contact pairs, then the final state
 * quantised to a thousandth of a unit. */
class Replay {
public:
    void record_step(const std::vector<Contact> &contacts)
    {
        for (const Contact &c : contacts)
            mix((static_cast<uint64_t>(c.a) << 32) | c.b);
        contacts_ += contacts.size();
    }
    void record_final(const std::vector<Body> &bodies)
    {
        for (const Body &b : bodies) {
            mix(static_cast<uint64_t>(llroundf(b.pos.x * 1000.0f)));
            mix(static_cast<uint64_t>(llroundf(b.pos.y * 1000.0f)));
            energy_ += 0.5 * b.radius * b.radius * (b.vel.x * b.vel.x + b.vel.y * b.vel.y);
        }
    }
    uint64_t digest() const { return digest_; }
    uint64_t contacts() const { return contacts_; }
    double energy() const { return energy_; }
private:
    void mix(uint64_t v) { digest_ = (digest_ ^ v) * 0x100000001b3ull; }
    uint64_t digest_ = 0xcbf29ce484222325ull, contacts_ = 0;
    double energy_ = 0;
};

class Simulation {
public:
    Simulation(const LevelSpec &spec, int steps) : world_(build_level(spec), spec.arena), steps_(steps) {}

    void run()
    {
        for (int s = 0; s < steps_; s++) {
            world_.step();
            replay_.record_step(world_.contacts());
            CASE_PROGRESS("step");
        }
        replay_.record_final(world_.bodies());
    }

    const World &world() const { return world_; }
    const Replay &replay() const { return replay_; }
private:
    World world_;
    int steps_;
    Replay replay_;
};

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"bodies", "moving bodies (crates and debris)", 1600, 2, 1000000, 0},
        {"pillars", "static pillars, on a lattice", 4, 0, 10000, 0},
        {"pillar-radius", "radius of every pillar", 2, 1, 1000, 0},
        {"arena", "side of the square arena", 300, 20, 100000, 0},
        {"steps", "simulation steps (1/60 s each)", 360, 1, 1000000, 0},
        {"seed", "level seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    auto opt = [&](const char *name) { return opt_get(opts, NOPTS(opts), name); };
    LevelSpec spec{static_cast<int>(opt("bodies")), static_cast<int>(opt("pillars")),
                   static_cast<float>(opt("arena")), static_cast<float>(opt("pillar-radius")),
                   static_cast<uint64_t>(opt("seed"))};
    int steps = static_cast<int>(opt("steps"));
    Simulation sim(spec, steps);
    sim.run();

    const Replay &rp = sim.replay();
    printf("bodies=%d steps=%d contacts=%llu energy=%.3f digest=%016llx\n",
           spec.bodies + spec.pillars, steps, static_cast<unsigned long long>(rp.contacts()),
           rp.energy(), static_cast<unsigned long long>(rp.digest()));
    const World &w = sim.world();
    fprintf(stderr, "candidates=%llu pairs=%llu cells=%d cell_size=%.2f\n",
            static_cast<unsigned long long>(w.broad().candidates()),
            static_cast<unsigned long long>(w.pairs_total()), w.broad().grid().cell_count(),
            static_cast<double>(w.broad().grid().cell_size()));
    return 0;
}
