/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 * docview - the live page view of a word processor. After each keystroke
 * the word at the caret is spell-checked and the view refreshed: the pages
 * are rebuilt (pagination needs every paragraph's height, so every paragraph
 * is laid out: shaped into glyphs, broken into lines) and the caret's page
 * painted. The layout engine caches each paragraph's layout with the revision
 * and width it was made for, so a keystroke costs one paragraph's layout.
 * The bug: LayoutEngine::layout_paragraph() fills that cache but never
 * consults it, so every refresh reshapes and rebreaks every paragraph. A
 * short note (normal: --paragraphs 2) hardly notices; a long document
 * (buggy: --paragraphs 70) reshapes some 70 paragraphs per keystroke.
 */
#include "../common/corpus.h"
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

/* Glyph metrics are in 1/64 px (26.6 fixed point, as font rasterizers use). */
struct Style { int font_px; bool bold; };
struct Glyph { uint16_t id; int16_t advance; bool break_after; };
struct Line { uint32_t first, count; int32_t width; };
struct ParagraphLayout { std::vector<Glyph> glyphs; std::vector<Line> lines; int32_t line_height = 0; };
struct Paragraph { uint32_t id; uint64_t revision; Style style; std::string text; };

static const char *const kWords[] = {
    "the", "layout", "of", "a", "paragraph", "is", "shaped", "fine", "flow", "into", "lines", "which", "fill", "pages",
    "office", "figure", "table", "and", "report", "quarterly", "revenue", "first", "final", "draft", "review", "with",
    "field", "notes", "for", "team"};

/* ------------------------------------------------------------------ font */
class FontFace {
public:
    /* Synthetic metrics in 1/64 px at 16 px; class-based kerning as in an
     * OpenType GPOS pair adjustment (a class per character, a class table). */
    explicit FontFace(uint64_t seed)
    {
        rng_t r;
        rng_seed(&r, seed);
        for (int c = 0; c < 128; c++) {
            int base = c == ' ' ? 16 : (c >= 'A' && c <= 'Z') ? 40 : 28;
            advance_[0][c] = static_cast<int16_t>((base + static_cast<int>(rng_below(&r, 12))) * 16);
            advance_[1][c] = static_cast<int16_t>(advance_[0][c] + 48);
            kern_class_[c] = static_cast<uint8_t>(rng_below(&r, kClasses));
        }
        for (int a = 0; a < kClasses; a++)
            for (int b = 0; b < kClasses; b++)
                kern_[a][b] = static_cast<int16_t>(rng_below(&r, 3) ? 0 : (static_cast<int>(rng_below(&r, 9)) - 6) * 16);
    }
    int advance(char c, bool bold) const { return advance_[bold][c & 127]; }
    int kerning(char left, char right) const { return kern_[kern_class_[left & 127]][kern_class_[right & 127]]; }
    uint16_t glyph_id(char c, bool bold) const { return static_cast<uint16_t>((c & 127) | (bold ? 128 : 0)); }
    static constexpr uint16_t kLigatureFi = 300, kLigatureFl = 301;
private:
    static constexpr int kClasses = 12;
    int16_t advance_[2][128];
    uint8_t kern_class_[128];
    int16_t kern_[kClasses][kClasses];
};

/* ----------------------------------------------------- shaping, breaking */
class TextShaper {
public:
    explicit TextShaper(const FontFace &face) : face_(face) {}
    /* One glyph per character, except the fi/fl ligatures; the advance of
     * each glyph includes the kerning against the character after it. */
    std::vector<Glyph> shape(const std::string &text, const Style &style)
    {
        std::vector<Glyph> out(text.size());
        Glyph *dst = out.data();
        const char *t = text.data();
        size_t n = text.size(), k = 0;
        for (size_t i = 0; i < n; i++, k++) {
            char c = t[i], next = i + 1 < n ? t[i + 1] : ' ';
            Glyph g{face_.glyph_id(c, style.bold), 0, c == ' ' || c == '-'};
            int adv = face_.advance(c, style.bold);
            if (c == 'f' && (next == 'i' || next == 'l')) {
                g.id = next == 'i' ? FontFace::kLigatureFi : FontFace::kLigatureFl;
                adv += face_.advance(next, style.bold) - 4 * 16;
                next = ++i + 1 < n ? t[i + 1] : ' ';
            }
            adv += face_.kerning(c, next);
            g.advance = static_cast<int16_t>(adv * style.font_px / 16);
            dst[k] = g;
        }
        out.resize(k);
        glyphs_shaped_ += k;
        return out;
    }

    uint64_t glyphs_shaped() const { return glyphs_shaped_; }
private:
    const FontFace &face_;
    uint64_t glyphs_shaped_ = 0;
};

class LineBreaker {
public:
    /* Greedy first-fit: words (glyphs up to a break opportunity) go on the
     * current line while they fit; a word wider than the column overflows
     * a line of its own. WIDTH is in 1/64 px. */
    std::vector<Line> break_lines(const std::vector<Glyph> &glyphs, int32_t width) const
    {
        std::vector<Line> lines;
        Line cur{0, 0, 0};
        const Glyph *g = glyphs.data();
        uint32_t i = 0, n = static_cast<uint32_t>(glyphs.size());
        while (i < n) {
            int32_t w = 0;
            uint32_t end = next_word(g, i, n, &w);
            if (cur.count && cur.width + w > width) {
                lines.push_back(cur);
                cur = Line{i, 0, 0};
            }
            cur.count += end - i, cur.width += w, i = end;
        }
        if (cur.count || lines.empty())
            lines.push_back(cur);
        return lines;
    }

private:
    /* The end of the word at I (after its break opportunity) and its width. */
    static uint32_t next_word(const Glyph *g, uint32_t i, uint32_t n, int32_t *width)
    {
        for (; i < n; i++) {
            *width += g[i].advance;
            if (g[i].break_after)
                return i + 1;
        }
        return n;
    }
};

/* ----------------------------------------------------------- layout cache */
class LayoutEngine {
public:
    explicit LayoutEngine(const FontFace &face) : shaper_(face) {}
    /* The layout of PARA at WIDTH px, cached per paragraph id with the revision
     * and width it was made for (a keystroke bumps one paragraph's revision). */
    const ParagraphLayout &layout_paragraph(const Paragraph &para, int32_t width)
    {
        CacheSlot &slot = cache_[para.id];
        lookups_++;
#ifdef VPROF_CASE_FIX
        if (slot.revision == para.revision && slot.width == width)
            return slot.layout;
#else
        /* FIX: return slot.layout when slot.revision and slot.width match */
#endif
        slot.layout.glyphs = shaper_.shape(para.text, para.style);
        slot.layout.lines = breaker_.break_lines(slot.layout.glyphs, width * 64);
        slot.layout.line_height = para.style.font_px * 5 / 4;
        slot.revision = para.revision, slot.width = width;
        relayouts_++;
        return slot.layout;
    }

    /* A paragraph joined into its predecessor is gone for good. */
    void forget(uint32_t id) { cache_.erase(id); }
    void print_stats() const
    {
        fprintf(stderr, "layout_lookups=%llu relayouts=%llu glyphs_shaped=%llu\n", (unsigned long long)lookups_,
                (unsigned long long)relayouts_, (unsigned long long)shaper_.glyphs_shaped());
    }

private:
    struct CacheSlot { uint64_t revision = ~0ull; int32_t width = -1; ParagraphLayout layout; };
    TextShaper shaper_;
    LineBreaker breaker_;
    std::unordered_map<uint32_t, CacheSlot> cache_;
    uint64_t lookups_ = 0, relayouts_ = 0;
};

/* ----------------------------------------------------- pages and the view */
struct PlacedLine { const ParagraphLayout *layout; uint32_t line; int page; int32_t y; };

class PageBuilder {
public:
    explicit PageBuilder(LayoutEngine &engine) : engine_(engine) {}
    /* Flows the lines of every paragraph down pages of PAGE_HEIGHT px;
     * FIRST_LINE gets the index of each paragraph's first placed line. */
    void build_pages(const std::vector<Paragraph> &paras, int32_t width, int32_t page_height,
                     std::vector<PlacedLine> &placed, std::vector<uint32_t> &first_line)
    {
        placed.clear(), first_line.clear();
        int32_t page = 0, y = 0;
        for (const Paragraph &p : paras) {
            const ParagraphLayout &lay = engine_.layout_paragraph(p, width);
            first_line.push_back(static_cast<uint32_t>(placed.size()));
            for (uint32_t l = 0; l < lay.lines.size(); l++) {
                if (y + lay.line_height > page_height)
                    page++, y = 0;
                placed.push_back(PlacedLine{&lay, l, page, y});
                y += lay.line_height;
            }
            y += lay.line_height / 2;  /* paragraph spacing */
        }
    }

private:
    LayoutEngine &engine_;
};

class DocumentView {
public:
    DocumentView(const FontFace &face, int32_t width) : engine_(face), pages_(engine_), width_(width) {}
    /* After every edit: rebuild the pages, paint the caret's page. */
    uint64_t refresh(const std::vector<Paragraph> &paras, size_t caret_para)
    {
        relayout(paras);
        refreshes_++;
        return paint_page(placed_[first_line_[caret_para]].page);
    }

    void resize(int32_t width) { width_ = width; }  /* the next refresh relays out everything */
    void forget_paragraph(uint32_t id) { engine_.forget(id); }
    int page_count() const { return page_count_; }
    size_t line_count() const { return placed_.size(); }
    void print_stats() const { fprintf(stderr, "refreshes=%llu ", (unsigned long long)refreshes_), engine_.print_stats(); }
private:
    void relayout(const std::vector<Paragraph> &paras)
    {
        pages_.build_pages(paras, width_, kPageHeight, placed_, first_line_);
        page_count_ = placed_.empty() ? 0 : placed_.back().page + 1;
    }
    /* Paints the lines of PAGE into a display list, summarised as a digest
     * of every glyph quad (glyph, x, y) the compositor would get. */
    uint64_t paint_page(int page) const
    {
        auto first = std::lower_bound(placed_.begin(), placed_.end(), page,
                                      [](const PlacedLine &pl, int pg) { return pl.page < pg; });
        uint64_t h = 0xcbf29ce484222325ull;
        for (auto it = first; it != placed_.end() && it->page == page; ++it)
            h = paint_line(*it, h);
        return h;
    }

    static uint64_t paint_line(const PlacedLine &pl, uint64_t h)
    {
        const Line &line = pl.layout->lines.data()[pl.line];
        const Glyph *glyphs = pl.layout->glyphs.data();
        for (uint32_t k = line.first, x = 0; k < line.first + line.count; x += glyphs[k++].advance)
            h = (h ^ (glyphs[k].id | static_cast<uint64_t>(x >> 6) << 16 | static_cast<uint64_t>(pl.y) << 40)) * 0x100000001b3ull;
        return h;
    }

    static constexpr int32_t kPageHeight = 900;
    LayoutEngine engine_;
    PageBuilder pages_;
    int32_t width_, page_count_ = 0;
    std::vector<PlacedLine> placed_;
    std::vector<uint32_t> first_line_;
    uint64_t refreshes_ = 0;
};

/* ------------------------------------------------------------ spelling */
/* As-you-type spelling: an unknown word at the caret gets a squiggle whose
 * suggestions are the dictionary's words within edit distance 2. */
class SpellChecker {
public:
    explicit SpellChecker(int words)
    {
        static const char *const kSyllables[] = {"ta", "re", "mon", "li", "ser", "ca", "pro", "vi", "den", "to",
                                                 "la", "mi", "fe", "ri", "son", "an", "el", "or", "un", "is"};
        rng_t r;
        rng_seed(&r, 0xd1c7);
        words_.assign(kWords, kWords + NOPTS(kWords));
        for (int i = 0; i < words; i++) {
            std::string &w = words_.emplace_back();
            for (int k = 2 + static_cast<int>(rng_below(&r, 3)); k > 0; k--)
                w += kSyllables[rng_below(&r, NOPTS(kSyllables))];
        }
        std::sort(words_.begin(), words_.end());
        words_.erase(std::unique(words_.begin(), words_.end()), words_.end());
    }

    /* Checks the word around OFF in TEXT; returns a digest of the suggestions. */
    uint64_t check_word_at(const std::string &text, size_t off)
    {
        size_t b = text.find_last_of(' ', off ? off - 1 : 0), e = text.find_first_of(" .", off);
        b = off == 0 || b == std::string::npos ? 0 : b + 1;
        std::string word = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
        if (word.empty() || std::binary_search(words_.begin(), words_.end(), word))
            return 0;  /* known: no squiggle */
        misspelled_++;
        uint64_t h = 0;
        const std::string *dict = words_.data();
        for (size_t i = 0, n = words_.size(); i < n; i++)
            if (within_distance(word, dict[i], 2))
                h = (h ^ i) * 0x100000001b3ull, suggestions_++;
        return h;
    }

    void report(uint64_t digest) const
    {
        printf("misspelled=%llu suggestions=%llu spell_digest=%016llx\n", (unsigned long long)misspelled_,
               (unsigned long long)suggestions_, (unsigned long long)digest);
    }

private:
    /* Levenshtein distance of A and B <= LIMIT (two DP rows; stops when a
     * whole row exceeds the limit). */
    static bool within_distance(const std::string &a, const std::string &b, int limit)
    {
        int la = static_cast<int>(a.size()), lb = static_cast<int>(b.size());
        if (la - lb > limit || lb - la > limit || lb > 30)
            return false;
        const char *pa = a.data(), *pb = b.data();
        int rows[2][32], *prev = rows[0], *cur = rows[1];
        for (int j = 0; j <= lb; j++)
            prev[j] = j;
        for (int i = 1; i <= la; i++) {
            int row_min = cur[0] = i;
            for (int j = 1; j <= lb; j++) {
                int best = prev[j - 1] + (pa[i - 1] != pb[j - 1]);
                best = prev[j] + 1 < best ? prev[j] + 1 : best;
                cur[j] = best = cur[j - 1] + 1 < best ? cur[j - 1] + 1 : best;
                row_min = best < row_min ? best : row_min;
            }
            if (row_min > limit)
                return false;
            int *done = prev;  /* the new row becomes the previous one */
            prev = cur, cur = done;
        }
        return prev[lb] <= limit;
    }

    std::vector<std::string> words_;
    uint64_t misspelled_ = 0, suggestions_ = 0;
};

/* -------------------------------------------------------------- editing */
class EditorSession {
public:
    EditorSession(int paragraphs, const FontFace &face) : view_(face, 620), spell_(11000)
    {
        rng_seed(&rng_, 0x5eed0d0c);
        for (int i = 0; i < paragraphs; i++)  /* one in 20 is a heading */
            paras_.push_back(Paragraph{next_id_++, 0, rng_below(&rng_, 20) == 0 ? Style{24, true} : Style{14, false},
                                       random_sentence(6 + static_cast<int>(rng_below(&rng_, 16)))});
    }

    /* Replays EDITS keystrokes; half way, a sidebar opens and narrows the page. */
    void replay(int edits)
    {
        for (int e = 0; e < edits; e++) {
            if (e == edits / 2)
                view_.resize(540);
            on_keystroke();
            CASE_PROGRESS("keystroke");
        }
    }

    void report() const
    {
        printf("paragraphs=%zu lines=%zu pages=%d digest=%016llx\n", paras_.size(), view_.line_count(),
               view_.page_count(), (unsigned long long)digest_);
        spell_.report(spell_digest_);
        view_.print_stats();
        fprintf(stderr, "typed=%llu backspaces=%llu enters=%llu jumps=%llu\n", (unsigned long long)keys_[kType],
                (unsigned long long)keys_[kBackspace], (unsigned long long)keys_[kEnter], (unsigned long long)keys_[kJump]);
    }

private:
    enum Key { kType, kBackspace, kEnter, kJump };
    std::string random_sentence(int words)
    {
        std::string s = kWords[rng_below(&rng_, NOPTS(kWords))];
        while (--words > 0)
            s += std::string(" ") + kWords[rng_below(&rng_, NOPTS(kWords))];
        return s + ".";
    }

    /* The input handler: apply the key to the document, then bring the
     * squiggles and the view up to date before the next key is read. */
    void on_keystroke()
    {
        apply_key(next_key());
        spell_digest_ = (spell_digest_ ^ spell_.check_word_at(paras_[caret_para_].text, caret_off_)) * 0x100000001b3ull;
        digest_ = (digest_ ^ view_.refresh(paras_, caret_para_)) * 0x100000001b3ull;
    }

    /* Mostly typing at the caret; now and then a backspace, rarely an enter
     * (split the paragraph), sometimes a jump of the caret elsewhere. */
    Key next_key()
    {
        uint64_t roll = rng_below(&rng_, 1000);
        return roll < 850 ? kType : roll < 950 ? kBackspace : roll < 952 ? kEnter : kJump;
    }

    void apply_key(Key key)
    {
        static const char kKeys[] = "etaoinshrdlu etaoin fl fi cmwy";
        Paragraph &p = paras_[caret_para_];
        keys_[key]++;
        if (key == kType) {
            p.text.insert(caret_off_++, 1, kKeys[rng_below(&rng_, sizeof kKeys - 1)]);
            p.revision++;
        } else if (key == kBackspace) {
            backspace(p);
        } else if (key == kEnter) {
            Paragraph tail{next_id_++, 0, p.style, p.text.substr(caret_off_)};
            p.text.erase(caret_off_), p.revision++;
            paras_.insert(paras_.begin() + static_cast<long>(++caret_para_), tail);
            caret_off_ = 0;
        } else {
            caret_para_ = rng_below(&rng_, paras_.size());
            caret_off_ = rng_below(&rng_, paras_[caret_para_].text.size() + 1);
        }
    }

    void backspace(Paragraph &p)
    {
        if (caret_off_ > 0) {
            p.text.erase(--caret_off_, 1);
            p.revision++;
        } else if (caret_para_ > 0) {  /* join with the previous paragraph */
            Paragraph &prev = paras_[caret_para_ - 1];
            caret_off_ = prev.text.size();
            prev.text += p.text, prev.revision++;
            view_.forget_paragraph(p.id);
            paras_.erase(paras_.begin() + static_cast<long>(caret_para_--));
        }
    }

    rng_t rng_;
    std::vector<Paragraph> paras_;
    DocumentView view_;
    SpellChecker spell_;
    uint32_t next_id_ = 1;
    size_t caret_para_ = 0, caret_off_ = 0;
    uint64_t digest_ = 0, spell_digest_ = 0, keys_[4] = {0, 0, 0, 0};
};

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"paragraphs", "paragraphs in the document at the start", 2, 1, 100000, 0},
        {"edits", "keystrokes replayed (one view refresh each)", 1200, 1, 10000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    FontFace face(0xf0e7);
    EditorSession session(static_cast<int>(opt_get(opts, NOPTS(opts), "paragraphs")), face);
    session.replay(static_cast<int>(opt_get(opts, NOPTS(opts), "edits")));
    session.report();
    return 0;
}
