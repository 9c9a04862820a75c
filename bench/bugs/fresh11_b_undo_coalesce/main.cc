/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * undoreplay - the edit-history engine of a text editor, replaying a recorded
 * session. The document is a piece table; typed characters are coalesced into
 * undo groups (a group ends at a new word, a pause, a cursor move or a cap).
 * When the user stops for longer than the idle time (vim's 'updatetime'), the
 * history closes the open group and takes a recovery checkpoint: the whole
 * document, checksummed in 4 KiB blocks as a recovery file stores it.
 *
 * The bug: UndoHistory::checkpoint() never asks whether the newest checkpoint
 * still describes the document. A session that pauses only after its edits
 * needs each checkpoint; a reading session (--dwell-ms above the idle time)
 * stops wherever the user goes, and copies and checksums the same text again.
 */
#include "../common/corpus.h"
#include <string>
#include <vector>

/* Adler-32 of one block; with n <= 5552 the sums cannot overflow before the final reduction. */
static uint32_t adler32_block(const char *p, size_t n) {
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++)
        a += (uint8_t)p[i], b += a;
    return (b % 65521) << 16 | (a % 65521);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
    const uint8_t *p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static bool is_word_char(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

class PieceTable {
public:
    explicit PieceTable(std::string original)
        : original_(std::move(original)), pieces_{{false, 0, original_.size()}}, length_(original_.size()) {}
    void insert(size_t pos, const std::string &text);
    std::string erase(size_t pos, size_t len);
    void materialize(std::string &out) const;
private:
    friend class PieceCursor;
    struct Piece { bool added; size_t start, len; };
    const std::string &buffer_of(const Piece &p) const { return p.added ? added_ : original_; }
    size_t locate(size_t pos, size_t *offset) const;
    size_t split_at(size_t pos);
    std::string original_, added_;   /* the file as loaded; everything typed since */
    std::vector<Piece> pieces_;
    size_t length_;
};

/* Index of the piece holding pos (pieces_.size() at the end) and the offset in it. */
size_t PieceTable::locate(size_t pos, size_t *offset) const {
    size_t i = 0;
    while (i < pieces_.size() && pos >= pieces_[i].len)
        pos -= pieces_[i++].len;
    *offset = pos;
    return i;
}

/* Makes pos a piece boundary; returns the index of the piece that starts there. */
size_t PieceTable::split_at(size_t pos) {
    size_t off, i = locate(pos, &off);
    if (off == 0)
        return i;
    Piece tail{pieces_[i].added, pieces_[i].start + off, pieces_[i].len - off};
    pieces_[i].len = off;
    pieces_.insert(pieces_.begin() + (long)i + 1, tail);
    return i + 1;
}

void PieceTable::insert(size_t pos, const std::string &text) {
    size_t idx = split_at(pos);
    Piece *prev = idx > 0 ? &pieces_[idx - 1] : nullptr;
    /* Typing right after the previous insert grows that piece instead of adding one. */
    if (prev && prev->added && prev->start + prev->len == added_.size())
        prev->len += text.size();
    else
        pieces_.insert(pieces_.begin() + (long)idx, Piece{true, added_.size(), text.size()});
    added_ += text;
    length_ += text.size();
}

/* Removes [pos, pos+len) and returns the removed text (the undo record keeps it). */
std::string PieceTable::erase(size_t pos, size_t len) {
    size_t first = split_at(pos), last = split_at(pos + len);
    std::string removed;
    for (size_t i = first; i < last; i++)
        removed.append(buffer_of(pieces_[i]), pieces_[i].start, pieces_[i].len);
    pieces_.erase(pieces_.begin() + (long)first, pieces_.begin() + (long)last);
    length_ -= len;
    return removed;
}

void PieceTable::materialize(std::string &out) const {
    out.clear();
    out.reserve(length_);
    for (const Piece &p : pieces_)
        out.append(buffer_of(p), p.start, p.len);
}

/* Walks the document a character at a time (cursor motions and search). */
class PieceCursor {
public:
    PieceCursor(const PieceTable &doc, size_t pos) : doc_(doc), pos_(pos) { load(doc.locate(pos, &off_)); }
    size_t pos() const { return pos_; }
    int peek() const { return off_ < len_ ? (uint8_t)run_[off_] : -1; }
    bool forward() {
        if (off_ >= len_)
            return false;
        if (pos_++, ++off_ == len_)
            load(piece_ + 1), off_ = 0;
        return true;
    }
private:
    void load(size_t piece) {
        piece_ = piece, run_ = nullptr, len_ = 0;
        if (piece < doc_.pieces_.size()) {
            const PieceTable::Piece &p = doc_.pieces_[piece];
            run_ = doc_.buffer_of(p).data() + p.start, len_ = p.len;
        }
    }
    const PieceTable &doc_;
    const char *run_;   /* the text of the current piece, len_ bytes */
    size_t piece_, off_, len_, pos_;
};

/* A recovery checkpoint: the document at change seq, and a sum over its blocks' Adler-32s. */
struct Checkpoint { uint64_t seq = 0; std::string text; uint32_t sum = 0; };

/* The last few checkpoints, in a ring whose slots (and buffers) are reused. */
class CheckpointStore {
public:
    static const size_t kKeep = 4, kBlock = 4096;
    const Checkpoint *newest() const { return taken ? &ring_[(taken - 1) % kKeep] : nullptr; }
    void capture(const PieceTable &doc, uint64_t seq);
    uint64_t taken = 0, bytes = 0;
private:
    void checksum_blocks(Checkpoint &cp);
    Checkpoint ring_[kKeep];
};

void CheckpointStore::checksum_blocks(Checkpoint &cp) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t at = 0; at < cp.text.size(); at += kBlock) {
        size_t n = cp.text.size() - at < kBlock ? cp.text.size() - at : kBlock;
        uint32_t c = adler32_block(cp.text.data() + at, n);
        h = fnv1a(h, &c, sizeof c);
    }
    cp.sum = (uint32_t)(h ^ (h >> 32));
    bytes += cp.text.size();
}

void CheckpointStore::capture(const PieceTable &doc, uint64_t seq) {
    Checkpoint &cp = ring_[taken % kKeep];
    cp.seq = seq;
    doc.materialize(cp.text);
    checksum_blocks(cp);
    taken++;   /* only now is it the newest */
}

struct EditOp { bool insert; size_t pos; std::string text; };
struct UndoGroup { std::vector<EditOp> ops; size_t cursor_before = 0, cursor_after = 0; };
typedef std::vector<UndoGroup> GroupStack;

class UndoHistory {
public:
    static const uint64_t kCoalesceMs = 1000, kMaxGroupChars = 80;   /* a longer gap, a longer run: new group */
    void record(const EditOp &op, size_t cursor_before, size_t cursor_after, uint64_t now_ms);
    void seal();
    bool undo(PieceTable &doc, size_t *cursor) { return travel(undo_stack, redo_stack, true, doc, cursor); }
    bool redo(PieceTable &doc, size_t *cursor) { return travel(redo_stack, undo_stack, false, doc, cursor); }
    bool checkpoint(const PieceTable &doc);
    uint64_t digest() const;
    GroupStack undo_stack, redo_stack;
    uint64_t changes = 0, sealed = 0;   /* changes: every edit, undo and redo */
    CheckpointStore checkpoints;
private:
    bool extends_open_group(const EditOp &op, uint64_t now_ms) const;
    bool travel(GroupStack &from, GroupStack &to, bool backwards, PieceTable &doc, size_t *cursor);
    UndoGroup open_;
    uint64_t last_edit_ms_ = 0;
};

/* The coalescing rule: typing, adjacent, quick, capped, and no new word after a space. */
bool UndoHistory::extends_open_group(const EditOp &op, uint64_t now_ms) const {
    if (open_.ops.empty() || now_ms - last_edit_ms_ >= kCoalesceMs)
        return false;
    const EditOp &last = open_.ops.back();
    if (!last.insert || !op.insert || last.text.size() + op.text.size() > kMaxGroupChars)
        return false;
    bool new_word = is_word_char(op.text[0]) && !is_word_char(last.text.back());
    return op.pos == last.pos + last.text.size() && !new_word;
}

void UndoHistory::record(const EditOp &op, size_t cursor_before, size_t cursor_after, uint64_t now_ms) {
    if (!extends_open_group(op, now_ms)) {
        seal();
        open_.cursor_before = cursor_before;
        open_.ops.push_back(op);
    } else {
        open_.ops.back().text += op.text;   /* the typed run grows */
    }
    open_.cursor_after = cursor_after;
    last_edit_ms_ = now_ms;
    redo_stack.clear();   /* a new edit forks the history: the redo branch is gone */
    changes++;
}

void UndoHistory::seal() {
    if (open_.ops.empty())
        return;
    undo_stack.push_back(std::move(open_));
    open_ = UndoGroup();
    sealed++;
}

/* Undo (backwards) or redo: replays the newest group of one stack and moves it to the other. */
bool UndoHistory::travel(GroupStack &from, GroupStack &to, bool backwards, PieceTable &doc, size_t *cursor) {
    seal();
    if (from.empty())
        return false;
    UndoGroup g = std::move(from.back());
    from.pop_back();
    for (size_t k = 0; k < g.ops.size(); k++) {
        const EditOp &op = g.ops[backwards ? g.ops.size() - 1 - k : k];
        if (op.insert != backwards)
            doc.insert(op.pos, op.text);
        else
            doc.erase(op.pos, op.text.size());
    }
    *cursor = backwards ? g.cursor_before : g.cursor_after;
    to.push_back(std::move(g));
    changes++;
    return true;
}

/* The user is idle: close the typing run and bring the recovery checkpoint up to date.
 * Returns whether a new checkpoint was taken (the recovery file must be rewritten). */
bool UndoHistory::checkpoint(const PieceTable &doc) {
    seal();
#ifdef VPROF_CASE_FIX
    const Checkpoint *newest = checkpoints.newest();
    if (newest && newest->seq == changes)
        return false;   /* nothing changed since the newest checkpoint: it is still valid */
#else
    /* FIX: return when checkpoints.newest()->seq == changes (the newest checkpoint is still valid) */
#endif
    checkpoints.capture(doc, changes);
    return true;
}

uint64_t UndoHistory::digest() const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const GroupStack *stack : {&undo_stack, &redo_stack})
        for (const UndoGroup &g : *stack) {
            for (const EditOp &op : g.ops) {
                uint64_t head[2] = {op.insert, op.pos};
                h = fnv1a(fnv1a(h, head, sizeof head), op.text.data(), op.text.size());
            }
            h = fnv1a(h, &g.cursor_after, sizeof g.cursor_after);
        }
    return h;
}

enum CmdKind { C_TYPE, C_KILL, C_DOWN, C_FIND, C_UNDO, C_REDO };
struct Command { CmdKind kind; int count; char ch; std::string word; uint32_t pause_ms; };

class Editor {
public:
    Editor(std::string text, uint64_t idle_ms) : doc(std::move(text)), idle_ms_(idle_ms) {}
    void replay(const std::vector<Command> &script);
    PieceTable doc;
    UndoHistory history;
    size_t cursor = 0;
    uint64_t idle_ticks = 0, recovery_writes = 0;
private:
    void execute(const Command &cmd);
    void type_char(char c);
    void move_down(int n);
    void kill_line();
    void find_next(const std::string &word);
    void advance_clock(uint32_t pause_ms);
    void on_idle();
    uint64_t now_ms_ = 0, idle_ms_;
};

void Editor::type_char(char c) {
    std::string text(1, c);
    doc.insert(cursor, text);
    history.record(EditOp{true, cursor, text}, cursor, cursor + 1, now_ms_);
    cursor++;
}

/* Page down: to the start of the line n lines below. */
void Editor::move_down(int n) {
    PieceCursor c(doc, cursor);
    for (int i = 0; i < n && c.peek() >= 0; i++)
        while (c.forward() && c.peek() >= 0 && c.peek() != '\n') {}
    c.forward();
    cursor = c.pos();
}

/* Ctrl+K: deletes from the cursor to the end of the line (the newline stays). */
void Editor::kill_line() {
    PieceCursor c(doc, cursor);
    while (c.peek() >= 0 && c.peek() != '\n')
        c.forward();
    if (c.pos() == cursor)
        return;
    history.record(EditOp{false, cursor, doc.erase(cursor, c.pos() - cursor)}, cursor, cursor, now_ms_);
}

/* Find next: the next match after the cursor, wrapping around once. */
void Editor::find_next(const std::string &word) {
    for (size_t from : {cursor + 1, (size_t)0}) {   /* a start past the end finds nothing */
        for (PieceCursor c(doc, from); c.peek() >= 0; c.forward()) {
            PieceCursor m = c;
            size_t k = 0;
            while (k < word.size() && m.peek() == (uint8_t)word[k])
                m.forward(), k++;
            if (k == word.size()) { cursor = c.pos(); return; }
        }
    }
}

void Editor::execute(const Command &cmd) {
    switch (cmd.kind) {
    case C_TYPE: type_char(cmd.ch); break;
    case C_DOWN: history.seal(); move_down(cmd.count); break;   /* a cursor move ends the typing run */
    case C_KILL: kill_line(); break;
    case C_FIND: history.seal(); find_next(cmd.word); break;
    case C_UNDO: history.undo(doc, &cursor); break;
    case C_REDO: history.redo(doc, &cursor); break;
    }
}

/* The idle timer: the editor's recovery work runs once per pause of idle_ms or more. */
void Editor::on_idle() {
    idle_ticks++;
    if (history.checkpoint(doc))
        recovery_writes++;
}

void Editor::advance_clock(uint32_t pause_ms) {
    if (pause_ms >= idle_ms_)
        on_idle();
    now_ms_ += pause_ms;
}

void Editor::replay(const std::vector<Command> &script) {
    for (const Command &cmd : script) {
        execute(cmd);
        advance_clock(cmd.pause_ms);
        CASE_PROGRESS("command");
    }
}

static std::string identifier(rng_t *r, int names) {
    static const char *const kStems[] = {"count", "limit", "offset", "buffer", "value", "index", "state", "entry"};
    return std::string(kStems[rng_below(r, 8)]) + "_" + std::to_string(rng_below(r, (uint64_t)names));
}

/* The file being edited: C-like source, one statement per line. */
static std::string make_source(rng_t *r, long lines, int names) {
    static const char *const kOps[] = {" = ", " += ", " -= ", " <<= ", " ^= "};
    std::string s;
    for (long i = 0; i < lines; i++) {
        s.append(4 * (1 + rng_below(r, 3)), ' ');
        s += identifier(r, names) + kOps[rng_below(r, 5)] + identifier(r, names) + ";\n";
    }
    return s;
}

static Command key(CmdKind kind, uint32_t pause_ms, char ch = 0, int count = 0) {
    return Command{kind, count, ch, std::string(), pause_ms};
}

/* One visit: go somewhere (find or arrows), then either read there (dwell) or edit and think. */
static void add_visit(rng_t *r, std::vector<Command> *out, int names, long edit_pct, long dwell_ms) {
    bool edit = (long)rng_below(r, 100) < edit_pct;
    uint32_t dwell = (uint32_t)(dwell_ms * (75 + (long)rng_below(r, 51)) / 100);
    uint32_t keygap = 80 + (uint32_t)rng_below(r, 120);
    if (rng_below(r, 2))
        out->push_back(Command{C_FIND, 0, 0, identifier(r, names), keygap});
    else
        out->push_back(key(C_DOWN, keygap, 0, 1 + (int)rng_below(r, 40)));
    if (!edit) {
        out->back().pause_ms = dwell;
        return;
    }
    if (rng_below(r, 4) == 0)   /* replace the rest of the line */
        out->push_back(key(C_KILL, keygap));
    for (uint64_t w = 0, words = 1 + rng_below(r, 4); w < words; w++) {
        std::string word = identifier(r, names) + (rng_below(r, 3) ? " " : "; ");
        for (char ch : word)
            out->push_back(key(C_TYPE, 60 + (uint32_t)rng_below(r, 180), ch));
    }
    if (rng_below(r, 10) == 0) {
        out->push_back(key(C_UNDO, 300));
        if (rng_below(r, 2))
            out->push_back(key(C_REDO, 300));
    }
    out->back().pause_ms = 1200 + (uint32_t)rng_below(r, 2000);   /* thinking it over */
}

/* Loads the file, records the session, replays it and prints the digests. */
static void run_session(const opt_t *opts, int nopts) {
    const int names = 30;   /* numbers per stem: each identifier recurs every few dozen lines */
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, nopts, "seed"));
    Editor ed(make_source(&r, opt_get(opts, nopts, "lines"), names),
              (uint64_t)opt_get(opts, nopts, "idle-ms"));
    std::vector<Command> script;
    for (long v = 0, visits = opt_get(opts, nopts, "visits"); v < visits; v++)
        add_visit(&r, &script, names, opt_get(opts, nopts, "edit-pct"), opt_get(opts, nopts, "dwell-ms"));
    ed.replay(script);
    std::string text;
    ed.doc.materialize(text);
    const UndoHistory &h = ed.history;
    const Checkpoint *cp = h.checkpoints.newest();
    typedef unsigned long long ull;
    printf("document: %zu bytes, digest %016llx, cursor %zu\n", text.size(),
           (ull)fnv1a(0xcbf29ce484222325ull, text.data(), text.size()), ed.cursor);
    printf("history: %zu undo groups, %zu redo, %llu changes, digest %016llx\n", h.undo_stack.size(),
           h.redo_stack.size(), (ull)h.changes, (ull)h.digest());
    printf("newest checkpoint: change %llu, sum %08x\n", cp ? (ull)cp->seq : 0ull, cp ? cp->sum : 0u);
    fprintf(stderr, "commands=%zu groups_sealed=%llu idle_ticks=%llu recovery_writes=%llu checksummed_bytes=%llu\n",
            script.size(), (ull)h.sealed, (ull)ed.idle_ticks, (ull)ed.recovery_writes, (ull)h.checkpoints.bytes);
}

int main(int argc, char **argv) {
    opt_t opts[] = {
        {"visits", "places the user navigates to in the session", 4000, 1, 10000000, 0},
        {"edit-pct", "percent of visits that edit", 6, 0, 100, 0},
        {"dwell-ms", "how long the user stays at a place only read", 400, 0, 600000, 0},
        {"idle-ms", "idle time before the editor checkpoints", 1000, 1, 600000, 0},
        {"lines", "lines of the file being edited", 4000, 1, 1000000, 0},
        {"seed", "PRNG seed", 11, 0, 1L << 40, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    run_session(opts, NOPTS(opts));
    return 0;
}
