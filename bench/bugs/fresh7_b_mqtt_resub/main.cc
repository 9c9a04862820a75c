/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * fleetmq - the MQTT 3.1.1 broker of a vehicle fleet. Vehicles publish on
 * "fleet/<region>/<vehicle>/<kind>/<item>"; owners' phone apps hold persistent
 * sessions subscribed to their vehicles and their region's alerts; dashboards
 * watch status and alerts. Subscriptions live in a topic tree (a node per
 * level); a publish goes once to each matching session, at the highest QoS of
 * its matching subscriptions [MQTT-3.3.5-1]. Phones drop off now and then;
 * back, their library resumes the session and re-sends every SUBSCRIBE.
 *
 * The bug: TopicTree::subscribe() appends the subscriber to the filter's node
 * without looking for the session's existing subscription, which a SUBSCRIBE
 * of an identical filter must replace [MQTT-3.8.4-3]. Delivery folds the
 * duplicates, so nothing visible changes, but each resubscribe leaves one more
 * entry that every later matching publish walks: a few with rare drops
 * (normal: --reconnect-every 2000), dozens per subscriber with flaky phones
 * (buggy: --reconnect-every 10).
 */
#include "../common/corpus.h"

#include <cinttypes>
#include <deque>
#include <memory>
#include <string>
#include <vector>

constexpr uint32_t kRegions = 8, kVehicles = 800, kDashboards = 16;
constexpr int kMaxLevels = 8;
constexpr size_t kMaxLevelLen = 31;
constexpr size_t kMaxPacket = 256;
constexpr uint32_t kMaxQueued = 64;    // QoS 1 messages kept for an offline session
constexpr uint64_t kOfflineFor = 40;   // publishes a dropped phone stays away
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

/* A topic name or filter split at '/': pointers into the caller's bytes. */
struct Levels { const char *at[kMaxLevels]; uint8_t len[kMaxLevels]; int n = 0; };

/* False when the topic is deeper, or a level longer, than the broker allows. */
static bool split_levels(const char *s, size_t n, Levels &out)
{
    const char *end = s + n;
    out.n = 0;
    for (;;) {
        const char *slash = (const char *)memchr(s, '/', (size_t)(end - s));
        const char *stop = slash ? slash : end;
        if (out.n == kMaxLevels || (size_t)(stop - s) > kMaxLevelLen)
            return false;
        out.at[out.n] = s;
        out.len[out.n++] = (uint8_t)(stop - s);
        if (!slash)
            return true;
        s = slash + 1;
    }
}

/* '+' must fill a whole level, '#' a whole level and the last one. */
static bool filter_is_valid(const Levels &f)
{
    for (int i = 0; i < f.n; i++) {
        bool wild = memchr(f.at[i], '+', f.len[i]) || memchr(f.at[i], '#', f.len[i]);
        if (wild && (f.len[i] != 1 || (f.at[i][0] == '#' && i + 1 != f.n)))
            return false;
    }
    return true;
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

struct Subscriber { uint32_t session; uint8_t qos; };

/* One level of the tree. The wildcard children are kept aside because every
 * match looks for them; the others are a list of siblings. */
struct TopicNode {
    char level[kMaxLevelLen + 1];
    uint8_t level_len = 0;
    TopicNode *plus = nullptr, *hash = nullptr, *children = nullptr, *next = nullptr;
    std::vector<Subscriber> subs;
};

/* The sessions one publish matched: each once, with the highest QoS of its
 * matching subscriptions [MQTT-3.3.5-1]. A stamp per session (the publish's
 * sequence number) tells a repeat without clearing anything between publishes. */
class MatchSet {
public:
    explicit MatchSet(size_t n) : stamp_(new uint32_t[n]()), qos_(new uint8_t[n]()), order_(new uint32_t[n]) {}
    ~MatchSet() { delete[] stamp_, delete[] qos_, delete[] order_; }
    MatchSet(const MatchSet &) = delete;
    MatchSet &operator=(const MatchSet &) = delete;
    void begin() { ++seq_, count_ = 0; }
    void add(uint32_t session, uint8_t qos);
    uint32_t count() const { return count_; }
    uint32_t session_at(uint32_t i) const { return order_[i]; }
    uint8_t qos_of(uint32_t session) const { return qos_[session]; }
    uint64_t offers = 0, folded = 0;

private:
    uint32_t *stamp_;
    uint8_t *qos_;
    uint32_t *order_, count_ = 0, seq_ = 0;
};

void MatchSet::add(uint32_t session, uint8_t qos)
{
    offers++;
    if (stamp_[session] == seq_) {  // overlapping subscriptions: keep the max QoS
        folded++;
        if (qos > qos_[session])
            qos_[session] = qos;
        return;
    }
    stamp_[session] = seq_;
    qos_[session] = qos;
    order_[count_++] = session;
}

class TopicTree {
public:
    void subscribe(const Levels &filter, uint32_t session, uint8_t qos);
    void match(const Levels &topic, MatchSet &out) const { match_from(&root_, topic, 0, out); }
    size_t entries = 0;

private:
    static TopicNode *find_child(const TopicNode *node, const char *level, size_t len);
    TopicNode *child_for(TopicNode *node, const char *level, size_t len);
    static void offer_all(const TopicNode *node, MatchSet &out);
    void match_from(const TopicNode *node, const Levels &topic, int i, MatchSet &out) const;
    TopicNode root_;
    std::vector<std::unique_ptr<TopicNode>> nodes_;  // owns every node but the root
};

TopicNode *TopicTree::find_child(const TopicNode *node, const char *level, size_t len)
{
    for (TopicNode *c = node->children; c; c = c->next)
        if (c->level_len == len && memcmp(c->level, level, len) == 0)
            return c;
    return nullptr;
}

/* The child for LEVEL, created if new. */
TopicNode *TopicTree::child_for(TopicNode *node, const char *level, size_t len)
{
    TopicNode **wild = len != 1 ? nullptr : *level == '+' ? &node->plus : *level == '#' ? &node->hash : nullptr;
    TopicNode *c = wild ? *wild : find_child(node, level, len);
    if (c)
        return c;
    nodes_.push_back(std::make_unique<TopicNode>());
    c = nodes_.back().get();
    memcpy(c->level, level, len);
    c->level_len = (uint8_t)len;
    if (wild)
        return *wild = c;
    c->next = node->children;
    return node->children = c;
}

void TopicTree::subscribe(const Levels &filter, uint32_t session, uint8_t qos)
{
    TopicNode *node = &root_;
    for (int i = 0; i < filter.n; i++)
        node = child_for(node, filter.at[i], filter.len[i]);
#ifdef VPROF_CASE_FIX
    Subscriber *s = node->subs.data(), *end = s + node->subs.size();
    for (; s != end; s++)
        if (s->session == session) {  // an identical filter replaces the subscription
            s->qos = qos;
            return;
        }
    node->subs.push_back({session, qos});
#else
    node->subs.push_back({session, qos});  /* FIX: first replace the session's existing subscription of this filter */
#endif
    entries++;
}

void TopicTree::offer_all(const TopicNode *node, MatchSet &out)
{
    const Subscriber *s = node->subs.data(), *end = s + node->subs.size();
    for (; s != end; s++)
        out.add(s->session, s->qos);
}

/* "a/#" also matches "a" itself, hence the '#' child is offered before the
 * end-of-topic test. */
void TopicTree::match_from(const TopicNode *node, const Levels &topic, int i, MatchSet &out) const
{
    if (node->hash)
        offer_all(node->hash, out);
    if (i == topic.n) {
        offer_all(node, out);
        return;
    }
    if (const TopicNode *exact = find_child(node, topic.at[i], topic.len[i]))
        match_from(exact, topic, i + 1, out);
    if (node->plus)
        match_from(node->plus, topic, i + 1, out);
}

/* PUBLISH: fixed header (remaining length in 7-bit groups), topic, packet id
 * for QoS 1, payload. */
static size_t encode_publish(uint8_t *b, const char *topic, size_t tlen, const uint8_t *payload,
                             size_t n, uint8_t qos, uint16_t packet_id)
{
    size_t k = 0, rest = 2 + tlen + (qos ? 2 : 0) + n;
    b[k++] = (uint8_t)(0x30 | qos << 1);
    for (; rest >= 128; rest /= 128)
        b[k++] = (uint8_t)(rest % 128 | 0x80);
    b[k++] = (uint8_t)rest;
    b[k++] = (uint8_t)(tlen >> 8), b[k++] = (uint8_t)tlen;
    memcpy(b + k, topic, tlen);
    k += tlen;
    if (qos)
        b[k++] = (uint8_t)(packet_id >> 8), b[k++] = (uint8_t)packet_id;
    memcpy(b + k, payload, n);
    return k + n;
}

struct FilterReq { std::string filter; uint8_t qos; };

struct Session {
    bool online = true;
    uint16_t next_packet_id = 1;       // of the PUBLISH packets sent at QoS 1
    std::vector<uint8_t> backlog;      // QoS 1 packets kept while offline
    uint32_t backlog_msgs = 0;
    uint64_t wire_digest = kFnvBasis;  // stands for the socket: what was written to it
};

class Broker {
public:
    explicit Broker(size_t sessions) : sessions_(sessions), matches_(sessions) {}
    void on_subscribe(uint32_t sid, uint16_t packet_id, const std::vector<FilterReq> &reqs);
    void on_publish(const char *topic, size_t tlen, const uint8_t *payload, size_t n, uint8_t qos);
    void disconnect(uint32_t sid) { sessions_[sid].online = false; }
    void reconnect(uint32_t sid);
    uint64_t digest() const;
    const TopicTree &tree() const { return tree_; }
    const MatchSet &matches() const { return matches_; }
    uint64_t delivered[2] = {0, 0}, queued = 0, dropped_offline = 0, dropped_full = 0;
    uint64_t publishes = 0, subscribes = 0, bad_filters = 0, reconnects = 0;

private:
    void deliver(Session &s, const char *topic, size_t tlen, const uint8_t *payload, size_t n, uint8_t qos);
    static void write(Session &s, const uint8_t *pkt, size_t n) { s.wire_digest = fnv1a(s.wire_digest, pkt, n); }
    std::vector<Session> sessions_;
    TopicTree tree_;
    MatchSet matches_;
    Levels levels_;
};

/* SUBSCRIBE (already parsed): SUBACK grants each valid filter at most QoS 1
 * (this broker has no QoS 2) and refuses the others with 0x80. */
void Broker::on_subscribe(uint32_t sid, uint16_t packet_id, const std::vector<FilterReq> &reqs)
{
    if (reqs.empty() || reqs.size() > 100)
        return;  // a protocol violation [MQTT-3.8.3-3] or over this broker's limit: disconnect
    uint8_t suback[kMaxPacket] = {0x90, 0, (uint8_t)(packet_id >> 8), (uint8_t)packet_id};
    size_t k = 4;
    subscribes++;
    for (const FilterReq &r : reqs) {
        uint8_t qos = r.qos > 1 ? 1 : r.qos;
        if (!split_levels(r.filter.data(), r.filter.size(), levels_) || !filter_is_valid(levels_)) {
            bad_filters++;
            suback[k++] = 0x80;
            continue;
        }
        tree_.subscribe(levels_, sid, qos);
        suback[k++] = qos;
    }
    suback[1] = (uint8_t)(k - 2);
    write(sessions_[sid], suback, k);
}

void Broker::deliver(Session &s, const char *topic, size_t tlen, const uint8_t *payload, size_t n, uint8_t qos)
{
    if (!s.online && (qos == 0 || s.backlog_msgs == kMaxQueued)) {
        qos ? dropped_full++ : dropped_offline++;
        return;
    }
    uint8_t pkt[kMaxPacket];
    size_t len = encode_publish(pkt, topic, tlen, payload, n, qos, qos ? s.next_packet_id++ : 0);
    if (s.next_packet_id == 0)
        s.next_packet_id = 1;
    delivered[qos]++;
    if (s.online) {
        write(s, pkt, len);
        return;
    }
    s.backlog.insert(s.backlog.end(), pkt, pkt + len);
    s.backlog_msgs++;
    queued++;
}

void Broker::on_publish(const char *topic, size_t tlen, const uint8_t *payload, size_t n, uint8_t qos)
{
    publishes++;
    if (tlen + n + 16 > kMaxPacket || !split_levels(topic, tlen, levels_))
        return;  // malformed: a real broker closes the publisher's connection
    matches_.begin();
    tree_.match(levels_, matches_);
    for (uint32_t i = 0; i < matches_.count(); i++) {
        uint32_t sid = matches_.session_at(i);
        uint8_t granted = matches_.qos_of(sid) < qos ? matches_.qos_of(sid) : qos;
        deliver(sessions_[sid], topic, tlen, payload, n, granted);
    }
}

/* The session is resumed: what was kept for it goes out first. */
void Broker::reconnect(uint32_t sid)
{
    Session &s = sessions_[sid];
    reconnects++;
    s.online = true;
    write(s, s.backlog.data(), s.backlog.size());
    s.backlog.clear();
    s.backlog_msgs = 0;
}

uint64_t Broker::digest() const
{
    uint64_t h = kFnvBasis;
    for (const Session &s : sessions_)
        h = fnv1a(h, (const uint8_t *)&s.wire_digest, sizeof s.wire_digest);
    return h;
}

struct Client {
    std::vector<FilterReq> filters;  // what the library re-sends after a reconnect
    uint16_t next_packet_id = 1;
    uint64_t back_at = 0;            // offline until then (0: online)
};

/* FMT takes the vehicle's region and number. */
static std::string vehicle_path(const char *fmt, uint32_t vehicle)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, vehicle % kRegions, vehicle);
    return buf;
}

/* Phones: two vehicles and a region's alerts. Dashboards: one filter is invalid. */
static std::vector<Client> make_clients(uint32_t apps, rng_t *rng)
{
    std::vector<Client> clients(apps + kDashboards);
    for (uint32_t i = 0; i < apps; i++) {
        uint32_t a = (uint32_t)rng_below(rng, kVehicles), b = (uint32_t)rng_below(rng, kVehicles);
        clients[i].filters = {{vehicle_path("fleet/r%u/v%04u/#", a), 1}, {vehicle_path("fleet/r%u/v%04u/#", b), 1},
                              {vehicle_path("fleet/r%u/+/alerts/#", a), 1}};
    }
    for (uint32_t d = 0; d < kDashboards; d++)
        clients[apps + d].filters = {{vehicle_path("fleet/r%u/+/status", d), 0}, {"fleet/+/+/alerts/#", 1},
                                     {"fleet/+/+/alerts/#/ack", 1}};
    return clients;
}

/* Every vehicle's topics: six sensors, its status, three alerts. */
constexpr uint32_t kTopicsPerVehicle = 10;
static std::vector<std::string> vehicle_topics()
{
    static const char *const items[kTopicsPerVehicle] = {
        "telemetry/speed", "telemetry/battery", "telemetry/gps", "telemetry/tyres", "telemetry/cabin",
        "telemetry/motor", "status/online", "alerts/crash", "alerts/theft", "alerts/overheat"};
    std::vector<std::string> topics;
    for (uint32_t v = 0; v < kVehicles; v++)
        for (const char *item : items)
            topics.push_back(vehicle_path("fleet/r%u/v%04u/", v) + item);
    return topics;
}

/* One vehicle message: mostly QoS 0 telemetry, some QoS 1 status, rare alerts. */
static uint8_t make_message(rng_t *rng, uint64_t seq, uint32_t *topic, uint8_t *payload)
{
    uint32_t v = (uint32_t)rng_below(rng, kVehicles);
    uint64_t roll = rng_below(rng, 1000), value = rng_next(rng);
    *topic = v * kTopicsPerVehicle + (uint32_t)(roll < 900 ? roll % 6 : roll < 985 ? 6 : 7 + roll % 3);
    memcpy(payload, &seq, 8);
    memcpy(payload + 8, &value, 8);
    return roll < 900 ? 0 : 1;
}

/* Every --reconnect-every publishes one phone drops; kOfflineFor publishes
 * later it resumes its session and its library re-sends SUBSCRIBE. */
static void network_tick(Broker &broker, std::vector<Client> &clients, uint32_t apps, uint64_t seq,
                         long reconnect_every, rng_t *net, std::deque<uint32_t> &offline)
{
    while (!offline.empty() && clients[offline.front()].back_at <= seq) {  // dropped in order, back in order
        uint32_t i = offline.front();
        offline.pop_front();
        broker.reconnect(i);
        clients[i].back_at = 0;
        broker.on_subscribe(i, clients[i].next_packet_id++, clients[i].filters);
    }
    if (reconnect_every && seq % (uint64_t)reconnect_every == 0) {
        uint32_t i = (uint32_t)rng_below(net, apps);
        if (!clients[i].back_at) {
            clients[i].back_at = seq + kOfflineFor;
            broker.disconnect(i);
            offline.push_back(i);
        }
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"apps", "phone apps with a persistent session", 400, 1, 100000, 0},
        {"publishes", "vehicle messages published", 360000, 1, 100000000, 0},
        {"reconnect-every", "publishes between two phone drops (0: none)", 2000, 0, 100000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    uint32_t apps = (uint32_t)opt_get(opts, NOPTS(opts), "apps");
    uint64_t publishes = (uint64_t)opt_get(opts, NOPTS(opts), "publishes");
    long reconnect_every = opt_get(opts, NOPTS(opts), "reconnect-every");

    rng_t traffic, net;
    rng_seed(&traffic, 0x7e1e3e7e5ULL);
    rng_seed(&net, 0x5eed0f10ULL);  // separate, so drops do not change the traffic

    std::vector<Client> clients = make_clients(apps, &traffic);
    Broker broker(clients.size());
    for (uint32_t i = 0; i < clients.size(); i++)
        broker.on_subscribe(i, clients[i].next_packet_id++, clients[i].filters);

    std::deque<uint32_t> offline;
    const std::vector<std::string> topics = vehicle_topics();
    uint8_t payload[16];
    for (uint64_t seq = 1; seq <= publishes; seq++) {
        uint32_t t;
        network_tick(broker, clients, apps, seq, reconnect_every, &net, offline);
        uint8_t qos = make_message(&traffic, seq, &t, payload);
        broker.on_publish(topics[t].data(), topics[t].size(), payload, sizeof payload, qos);
        CASE_PROGRESS("publish");
    }
    printf("publishes=%" PRIu64 " delivered_qos0=%" PRIu64 " delivered_qos1=%" PRIu64 " queued=%" PRIu64
           " dropped_offline=%" PRIu64 " dropped_full=%" PRIu64 " digest=%016" PRIx64 "\n", broker.publishes,
           broker.delivered[0], broker.delivered[1], broker.queued, broker.dropped_offline,
           broker.dropped_full, broker.digest());
    fprintf(stderr, "reconnects=%" PRIu64 " subscribes=%" PRIu64 " bad_filters=%" PRIu64 " tree_entries=%zu "
            "match_offers=%" PRIu64 " folded=%" PRIu64 "\n", broker.reconnects, broker.subscribes, broker.bad_filters,
            broker.tree().entries, broker.matches().offers, broker.matches().folded);
    return 0;
}
