/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * castd - the host side of a screen-sharing session, three threads. Capture
 * (main) composes the desktop, finds the 16x16 blocks that changed and picks
 * the frame type: a keyframe (every block coded alone, so a viewer can start
 * there) when the key interval has passed or most of the screen changed, else
 * a delta frame (changed blocks against the last frame). The encoder codes
 * losslessly (LOCO-I's median predictor or the delta, Rice codes); the viewer
 * decodes and checks each frame's hash. Timestamps are capture clock ticks,
 * --timebase per second (1000: the compositor's ms clock; 90000: RTP).
 * The bug: GopPolicy::keyframe_due() compares the ticks since the last
 * keyframe with the key interval in ms: right on the ms clock (normal); on
 * the 90 kHz clock (buggy) 20 s become 222 ms, every seventh frame a keyframe.
 */
#include "../common/corpus.h"

#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

constexpr int kWidth = 320, kHeight = 192, kBlock = 16;
constexpr int kBlocksX = kWidth / kBlock, kBlocksY = kHeight / kBlock, kBlocks = kBlocksX * kBlocksY;
constexpr int kBlockPixels = kBlock * kBlock;
constexpr uint32_t kRiceEscape = 12;   // a unary prefix this long carries the raw byte
constexpr size_t kPlaneBytes = size_t(kWidth) * kHeight;
constexpr size_t kMaxPacketBytes = kBlocks * (5 + kBlockPixels * (kRiceEscape + 8)) / 8 + 8;

// 8-bit luma, kWidth x kHeight; hot loops take data() once (no per-pixel calls)
using Plane = std::vector<uint8_t>;

enum BlockMode : uint32_t { MODE_SKIP = 0, MODE_DELTA = 1, MODE_INTRA = 2 };

struct CapturedFrame {
    int64_t pts = 0;              // capture clock ticks
    bool keyframe = false, end = false;
    Plane pixels;
    std::vector<uint8_t> dirty;   // per block: changed since the last frame
    uint64_t hash = 0;            // of pixels, for the viewer's check
};

struct Packet {
    int64_t pts = 0;
    bool end = false;
    uint64_t source_hash = 0;
    std::vector<uint8_t> bits;
};

// A bounded queue between two pipeline stages; push blocks while it is full.
template <typename T> class StageQueue {
public:
    explicit StageQueue(size_t cap) : cap_(cap) {}
    void push(T item) {
        std::unique_lock<std::mutex> lk(mu_);
        not_full_.wait(lk, [&] { return items_.size() < cap_; });
        items_.push_back(std::move(item));
        not_empty_.notify_one();
    }
    T pop() {
        std::unique_lock<std::mutex> lk(mu_);
        not_empty_.wait(lk, [&] { return !items_.empty(); });
        T item = std::move(items_.front());
        items_.pop_front();
        not_full_.notify_one();
        return item;
    }
private:
    size_t cap_;
    std::mutex mu_;
    std::condition_variable not_full_, not_empty_;
    std::deque<T> items_;
};

static uint64_t frame_hash(const Plane &p) {
    const uint8_t *px = p.data();
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < kPlaneBytes; i++)
        h = (h ^ px[i]) * 0x100000001b3ull;
    return h;
}

/* ------------------------------------------------------------ bit I/O */
// Writes into a buffer sized for the worst case (every value escaped).
class BitWriter {
public:
    explicit BitWriter(uint8_t *out) : out_(out) {}
    void put(uint32_t value, int nbits) {
        acc_ = acc_ << nbits | value;
        for (nacc_ += nbits; nacc_ >= 8;)
            nacc_ -= 8, out_[len_++] = uint8_t(acc_ >> nacc_);
    }
    // Rice codes of N values with parameter K: the quotient in unary, K low bits.
    void put_rice_run(const uint8_t *vals, int n, int k) {
        uint64_t acc = acc_;
        int nacc = nacc_;
        size_t len = len_;
        for (int i = 0; i < n; i++) {
            uint32_t v = vals[i], q = v >> k, code;
            int code_bits;
            if (q < kRiceEscape)
                code = ((1u << q) - 1) << (k + 1) | (v & ((1u << k) - 1)), code_bits = int(q) + 1 + k;
            else
                code = ((1u << kRiceEscape) - 1) << 8 | v, code_bits = int(kRiceEscape) + 8;
            acc = acc << code_bits | code;
            for (nacc += code_bits; nacc >= 8;)
                nacc -= 8, out_[len++] = uint8_t(acc >> nacc);
        }
        acc_ = acc, nacc_ = nacc, len_ = len;
    }
    size_t flush() {
        if (nacc_)
            put(0, 8 - nacc_);
        return len_;
    }
private:
    uint8_t *out_;
    size_t len_ = 0;
    uint64_t acc_ = 0;
    int nacc_ = 0;
};

class BitReader {
public:
    BitReader(const uint8_t *in, size_t len) : in_(in), limit_(len * 8) {}
    uint32_t get(int nbits) {
        uint32_t v = 0;
        for (int i = 0; i < nbits; i++, pos_++)
            v = v << 1 | (pos_ < limit_ ? (in_[pos_ >> 3] >> (7 - (pos_ & 7))) & 1 : 0);
        return v;
    }
    void get_rice_run(uint8_t *vals, int n, int k) {
        const uint8_t *d = in_;
        size_t pos = pos_, limit = limit_;
        for (int i = 0; i < n; i++) {
            uint32_t q = 0, v = 0;
            while (q < kRiceEscape && pos < limit && (d[pos >> 3] >> (7 - (pos & 7)) & 1))
                q++, pos++;
            int raw = q == kRiceEscape ? 8 : k;
            pos += q < kRiceEscape;   // the terminating zero
            for (int b = 0; b < raw; b++, pos++)
                v = v << 1 | (pos < limit ? (d[pos >> 3] >> (7 - (pos & 7))) & 1 : 0);
            vals[i] = uint8_t(q == kRiceEscape ? v : q << k | v);
        }
        pos_ = pos;
    }
private:
    const uint8_t *in_;
    size_t limit_, pos_ = 0;
};

/* ------------------------------------------------------- block coding */
// A block's residuals, Rice coded with the parameter that fits their mean.
static void put_residuals(BitWriter &bw, const uint8_t *res) {
    uint32_t sum = 0;
    int k = 0;
    for (int i = 0; i < kBlockPixels; i++)
        sum += res[i];
    while (k < 7 && (uint32_t(kBlockPixels) << k) < sum)
        k++;
    bw.put(uint32_t(k), 3);
    bw.put_rice_run(res, kBlockPixels, k);
}

static size_t block_origin(int bx, int by) {
    return size_t(by) * kBlock * kWidth + size_t(bx) * kBlock;
}

// LOCO-I's median edge detector, within the block so that blocks decode alone.
static int med_predict(const uint8_t *row, const uint8_t *up, int x, int y) {
    int a = x ? row[x - 1] : (y ? up[x] : 128);
    int b = y ? up[x] : a;
    int c = (x && y) ? up[x - 1] : b;
    int lo = a < b ? a : b, hi = a < b ? b : a;
    return c >= hi ? lo : c <= lo ? hi : a + b - c;
}

static void encode_intra_block(const uint8_t *img, int bx, int by, BitWriter &bw) {
    uint8_t res[kBlockPixels];
    const uint8_t *base = img + block_origin(bx, by);
    for (int y = 0; y < kBlock; y++) {
        const uint8_t *row = base + y * kWidth, *up = row - kWidth;
        for (int x = 0; x < kBlock; x++) {
            int8_t s = int8_t(uint8_t(row[x] - med_predict(row, up, x, y)));
            res[y * kBlock + x] = uint8_t(uint8_t(s * 2) ^ uint8_t(s >> 7));   // zigzag
        }
    }
    put_residuals(bw, res);
}

static void decode_intra_block(BitReader &br, uint8_t *img, int bx, int by) {
    uint8_t res[kBlockPixels];
    br.get_rice_run(res, kBlockPixels, int(br.get(3)));
    uint8_t *base = img + block_origin(bx, by);
    for (int y = 0; y < kBlock; y++) {
        uint8_t *row = base + y * kWidth, *up = row - kWidth;
        for (int x = 0; x < kBlock; x++) {
            uint8_t v = res[y * kBlock + x];
            row[x] = uint8_t(med_predict(row, up, x, y) + ((v >> 1) ^ -(v & 1)));
        }
    }
}

static void encode_delta_block(const uint8_t *cur, const uint8_t *ref, int bx, int by, BitWriter &bw) {
    uint8_t res[kBlockPixels];
    for (int j = 0; j < kBlockPixels; j++) {
        size_t i = block_origin(bx, by) + size_t(j / kBlock) * kWidth + j % kBlock;
        int8_t s = int8_t(uint8_t(cur[i] - ref[i]));
        res[j] = uint8_t(uint8_t(s * 2) ^ uint8_t(s >> 7));
    }
    put_residuals(bw, res);
}

static void decode_delta_block(BitReader &br, uint8_t *img, int bx, int by) {
    uint8_t res[kBlockPixels];
    br.get_rice_run(res, kBlockPixels, int(br.get(3)));
    for (int j = 0; j < kBlockPixels; j++)
        img[block_origin(bx, by) + size_t(j / kBlock) * kWidth + j % kBlock] +=
            uint8_t((res[j] >> 1) ^ -(res[j] & 1));
}

/* ------------------------------------------- encoder and viewer threads */
class ScreenEncoder {
public:
    uint64_t keyframes = 0, intra_blocks = 0, delta_blocks = 0, bytes = 0;
    Packet encode(const CapturedFrame &f) {
        Packet pkt;
        pkt.pts = f.pts, pkt.source_hash = f.hash;
        pkt.bits.resize(kMaxPacketBytes);
        BitWriter bw(pkt.bits.data());
        bw.put(f.keyframe, 1);
        for (int b = 0; b < kBlocks; b++) {
            uint32_t mode = f.keyframe ? MODE_INTRA : f.dirty.data()[b] ? MODE_DELTA : MODE_SKIP;
            bw.put(mode, 2);
            if (mode == MODE_INTRA)
                encode_intra_block(f.pixels.data(), b % kBlocksX, b / kBlocksX, bw), intra_blocks++;
            else if (mode == MODE_DELTA)
                encode_delta_block(f.pixels.data(), ref_.data(), b % kBlocksX, b / kBlocksX, bw), delta_blocks++;
        }
        pkt.bits.resize(bw.flush());
        keyframes += f.keyframe, bytes += pkt.bits.size();
        ref_ = f.pixels;
        return pkt;
    }
private:
    Plane ref_ = Plane(kPlaneBytes);   // lossless: the viewer holds the same
};

struct Viewer {
    Plane screen = Plane(kPlaneBytes);   // what the viewer sees
    uint64_t frames = 0, mismatches = 0, digest = 0;
    void present(const Packet &pkt) {
        BitReader br(pkt.bits.data(), pkt.bits.size());
        br.get(1);   // the keyframe flag: this viewer joined at the first frame
        for (int b = 0; b < kBlocks; b++) {
            uint32_t mode = br.get(2);
            if (mode == MODE_INTRA)
                decode_intra_block(br, screen.data(), b % kBlocksX, b / kBlocksX);
            else if (mode == MODE_DELTA)
                decode_delta_block(br, screen.data(), b % kBlocksX, b / kBlocksX);
        }
        uint64_t h = frame_hash(screen);
        mismatches += h != pkt.source_hash;
        digest = (digest ^ h ^ uint64_t(pkt.pts)) * 0x100000001b3ull;
        frames++;
    }
};

/* ---------------------------------------------------- capture: desktop */
static void fill_rect(uint8_t *out, int x, int y, int w, int h, uint8_t shade) {
    for (int r = y; r < y + h && r < kHeight; r++)   // clipped at the right edge
        memset(out + size_t(r) * kWidth + x, shade, size_t((x + w < kWidth ? x + w : kWidth) - x));
}

// A 5x7 cell font whose glyph bits come from the character code.
static void draw_text(uint8_t *out, int x, int y, const std::string &s, uint8_t ink) {
    const char *text = s.data();
    for (size_t i = 0, n = s.size(); i < n && x + 6 <= kWidth; i++, x += 6) {
        uint64_t bits = text[i] == ' ' ? 0 : (uint64_t(uint8_t(text[i])) * 0x9e3779b97f4a7c15ull) >> 29;
        for (int r = 0; r < 7 && bits; r++)
            for (int c = 0; c < 5; c++)
                if (bits >> (r * 5 + c) & 1)
                    out[size_t(y + r) * kWidth + x + c] = ink;
    }
}

// A simulated desktop: wallpaper, a terminal someone types into, an editor
// and the mouse pointer; a workspace switch redraws it all.
class Desktop {
public:
    explicit Desktop(uint64_t seed) { rng_seed(&rng_, seed); }
    void advance(int frame, int switch_every);
    void render(Plane &frame) const;
private:
    rng_t rng_;
    std::deque<std::string> term_ = std::deque<std::string>(12);
    std::string prompt_;
    int pointer_x_ = 0, pointer_y_ = 0, workspace_ = 0;
};

void Desktop::advance(int frame, int switch_every) {
    static const char *const kWords[] = {"GET", "/api/v2/items", "200", "ok", "ms", "cache",
                                         "miss", "worker", "3", "retry", "ls", "-la", "make"};
    workspace_ += frame && frame % switch_every == 0;
    if (rng_below(&rng_, 3) == 0)
        prompt_ += char('a' + rng_below(&rng_, 26));
    if (prompt_.size() >= 24) {   // enter: the command and its output scroll the terminal
        term_.push_back("$ " + prompt_);
        for (uint64_t n = 1 + rng_below(&rng_, 5); n--;) {
            std::string line;
            while (line.size() < 26)
                line = line + kWords[rng_below(&rng_, sizeof kWords / sizeof *kWords)] + " ";
            term_.push_back(line);
        }
        while (term_.size() > 12)
            term_.pop_front();
        prompt_.clear();
    }
    pointer_x_ = 160 + int(140 * std::sin(frame * 0.031));   // the user's mouse wanders
    pointer_y_ = 96 + int(80 * std::sin(frame * 0.047 + 1.0));
}

void Desktop::render(Plane &frame) const {
    uint8_t *out = frame.data();
    int tint = workspace_ * 37 % 64, shift = workspace_ % 3 * 24;
    for (int y = 0; y < kHeight; y++)   // the wallpaper: a diagonal gradient
        for (int x = 0; x < kWidth; x++)
            out[size_t(y) * kWidth + x] = uint8_t(((x * 3 + y * 5) >> 3) + tint);
    fill_rect(out, 0, 0, kWidth, 12, 40);   // the panel
    fill_rect(out, 8 + shift, 20, 204, 124, 20);   // the terminal and its title bar
    fill_rect(out, 8 + shift, 20, 204, 10, 90);
    int row = 0;
    for (const std::string &line : term_)
        draw_text(out, 10 + shift, 32 + 9 * row++, line, 200);
    draw_text(out, 10 + shift, 32 + 9 * row, "$ " + prompt_, 250);
    fill_rect(out, 180 - shift, 70, 130, 110, 235);   // the editor
    for (int l = 0; l < 11; l++)
        draw_text(out, 184 - shift, 76 + 9 * l, "int frame_" + std::to_string(l + workspace_) + ";", 30);
    for (int r = 0; r < 14 && pointer_y_ + r < kHeight; r++)   // the pointer, on top
        for (int c = 0; c <= r / 2 && pointer_x_ + c < kWidth; c++)
            out[size_t(pointer_y_ + r) * kWidth + pointer_x_ + c] = (c == r / 2) ? 0 : 255;
}

// Marks the blocks that differ from the previous frame; returns how many.
static int mark_dirty_blocks(const uint8_t *cur, const uint8_t *prev, uint8_t *dirty) {
    int n = 0;
    for (int b = 0; b < kBlocks; b++) {
        size_t o = block_origin(b % kBlocksX, b / kBlocksX);
        bool changed = false;
        for (int y = 0; y < kBlock && !changed; y++)
            changed = memcmp(cur + o + size_t(y) * kWidth, prev + o + size_t(y) * kWidth, kBlock) != 0;
        dirty[b] = changed, n += changed;
    }
    return n;
}

/* ---------------------------------------------------------- GOP policy */
class GopPolicy {
public:
    GopPolicy(int64_t keyint_ms, int64_t timebase, int scenecut_pct)
        : keyint_ms_(keyint_ms), timebase_(timebase), scenecut_pct_(scenecut_pct) {}
    // Whether the key interval has passed since the last keyframe.
    bool keyframe_due(int64_t pts) const {
        if (last_key_pts_ < 0)
            return true;
#ifdef VPROF_CASE_FIX
        return pts - last_key_pts_ >= keyint_ms_ * timebase_ / 1000;
#else
        return pts - last_key_pts_ >= keyint_ms_;   /* FIX: pts are timebase_ ticks: compare with keyint_ms_ * timebase_ / 1000 */
#endif
    }
    bool is_scene_cut(int dirty_blocks) const { return dirty_blocks * 100 >= kBlocks * scenecut_pct_; }
    void on_keyframe(int64_t pts) { last_key_pts_ = pts; }
private:
    int64_t keyint_ms_;   // the longest a joining viewer waits for a keyframe
    int64_t timebase_;    // capture clock ticks per second
    int scenecut_pct_;    // changed blocks (%) that make a frame a keyframe anyway
    int64_t last_key_pts_ = -1;
};

/* ---------------------------------------------------------------- main */
static void run_encoder(StageQueue<CapturedFrame> &in, StageQueue<Packet> &out, ScreenEncoder &enc) {
    for (CapturedFrame f = in.pop(); !f.end; f = in.pop())
        out.push(enc.encode(f));
    out.push(Packet{0, true, 0, {}});   // tells the viewer the session is over
}

static void run_viewer(StageQueue<Packet> &in, Viewer &viewer) {
    for (Packet p = in.pop(); !p.end; p = in.pop()) {
        viewer.present(p);
        CASE_PROGRESS("frame");
    }
}

int main(int argc, char **argv) {
    opt_t opts[] = {
        {"frames", "frames captured", 1000, 1, 1000000, 0},
        {"fps", "capture rate", 30, 1, 240, 0},
        {"timebase", "capture clock ticks per second (1000: ms, 90000: RTP)", 1000, 1, 1000000, 0},
        {"keyint-ms", "longest interval between keyframes (ms)", 20000, 1, 3600000, 0},
        {"scenecut-pct", "changed blocks (%) that force a keyframe", 60, 1, 100, 0},
        {"switch-every", "frames between workspace switches", 450, 1, 1 << 30, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int frames = int(opts[0].value), fps = int(opts[1].value), switch_every = int(opts[5].value);
    int64_t timebase = opts[2].value;
    GopPolicy policy(opts[3].value, timebase, int(opts[4].value));
    Desktop desktop(uint64_t(opts[6].value));

    StageQueue<CapturedFrame> to_encoder(4);
    StageQueue<Packet> to_viewer(4);
    ScreenEncoder encoder;
    Viewer viewer;
    std::thread encoder_thread(run_encoder, std::ref(to_encoder), std::ref(to_viewer), std::ref(encoder));
    std::thread viewer_thread(run_viewer, std::ref(to_viewer), std::ref(viewer));

    Plane prev(kPlaneBytes);
    for (int i = 0; i < frames; i++) {   // the capture thread
        CapturedFrame f;
        f.pixels.resize(kPlaneBytes);
        f.dirty.resize(kBlocks);
        desktop.advance(i, switch_every);
        desktop.render(f.pixels);
        bool cut = policy.is_scene_cut(mark_dirty_blocks(f.pixels.data(), prev.data(), f.dirty.data()));
        f.pts = int64_t(i) * timebase / fps;
        f.keyframe = policy.keyframe_due(f.pts) || cut;
        if (f.keyframe)
            policy.on_keyframe(f.pts);
        f.hash = frame_hash(f.pixels);
        prev = f.pixels;
        to_encoder.push(std::move(f));
    }
    to_encoder.push(CapturedFrame{0, false, true, {}, {}, 0});   // the session ends
    encoder_thread.join();
    viewer_thread.join();

    printf("%llu frames shown, %llu mismatched, last screen %016llx, digest %016llx\n",
           (unsigned long long)viewer.frames, (unsigned long long)viewer.mismatches,
           (unsigned long long)frame_hash(prev), (unsigned long long)viewer.digest);
    fprintf(stderr, "keyframes=%llu intra_blocks=%llu delta_blocks=%llu bytes=%llu\n",
            (unsigned long long)encoder.keyframes, (unsigned long long)encoder.intra_blocks,
            (unsigned long long)encoder.delta_blocks, (unsigned long long)encoder.bytes);
    return 0;
}
