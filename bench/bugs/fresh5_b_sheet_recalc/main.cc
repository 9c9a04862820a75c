/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * ledgercalc - the recalculation engine of a spreadsheet of multi-currency
 * expense ledgers. Ledger sheets: A amounts, B = A at the currency's rate
 * (Rates sheet), C a fee, D the running balance (D[k] = D[k-1] + B[k] - C[k]);
 * a Summary sheet has each ledger's closing balance, fees and turnover.
 * Formulas compile to RPN; their references make a dependency graph. An edit
 * marks every cell downstream of it dirty (an epoch stamp) and queues it;
 * recalc() sorts the queue by level and evaluates it. Each day a bank feed
 * settles pending entries and now and then revises an exchange rate.
 *
 * The bug: mark_dependents_dirty() never looks at the epoch stamp, so a cell
 * is queued once per path from the edited cell. A running balance of R rows
 * fed by a rate has ~R^2 such paths: short ledgers (normal: --ledger-rows 10)
 * hardly notice, long ones (buggy: 500) make the evaluator run each balance
 * and each SUM hundreds of times per revision.
 */
#include "../common/corpus.h"
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

typedef uint32_t CellId;
static const CellId kNoCell = UINT32_MAX;
static const int kEvalStack = 32;

enum OpCode : uint8_t { OP_NUM, OP_REF, OP_SUMRANGE, OP_ADD, OP_SUB, OP_MUL, OP_GT, OP_CALL };
enum Func : uint8_t { FN_ROUND, FN_IF, FN_ABS, FN_SUM, N_FUNC };
static const char *const kFuncNames[N_FUNC] = {"ROUND", "IF", "ABS", "SUM"};
static const int kFuncArgs[N_FUNC] = {2, 3, 1, 1};
static const double kPow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

/* One RPN instruction; OP_REF reads cell arg, OP_SUMRANGE range_cells_[arg, arg+len). */
struct Op { OpCode code; uint8_t fn; uint32_t arg, len; double num; };

/* Plain data: the formula and the dependents live in the workbook's pools. */
struct Cell {
    double value;
    uint32_t code_at, code_len;     /* code_len 0: an input */
    uint32_t deps_at, deps_len;     /* the formula cells that read this one */
    uint32_t level;                 /* 0 for inputs; 1 + the highest level it reads */
    uint32_t dirty_epoch;           /* the recalculation this cell is queued for */
};

/* A sheet's cells are first .. first + cols * rows, column by column. */
struct Sheet { int cols, rows; CellId first; };

class Workbook {
public:
    uint64_t edits = 0, evaluations = 0, recalcs = 0;

    int add_sheet(const std::string &name, int cols, int rows)
    {
        sheets_.push_back(Sheet{cols, rows, (CellId)cells_.size()});
        cells_.resize(cells_.size() + (size_t)cols * rows, Cell{});
        return sheet_index_[name] = (int)sheets_.size() - 1;
    }
    CellId cell_at(int sheet, int col, int row) const
    {
        const Sheet &s = sheets_[sheet];
        bool inside = col >= 0 && row >= 0 && col < s.cols && row < s.rows;
        return inside ? s.first + (CellId)col * s.rows + (CellId)row : kNoCell;
    }
    int find_sheet(const std::string &name) const
    {
        auto it = sheet_index_.find(name);
        return it == sheet_index_.end() ? -1 : it->second;
    }
    double value(CellId id) const { return cells_[id].value; }
    void enter(int sheet, int col, int row, const char *text);
    void freeze();
    void set_value(CellId id, double v);
    void recalc();

private:
    friend class FormulaCompiler;
    std::vector<Cell> cells_;
    std::vector<Op> code_;
    std::vector<CellId> range_cells_, deps_;
    std::vector<std::pair<CellId, CellId>> edges_;  /* (cell read, formula), until freeze() */
    std::vector<Sheet> sheets_;
    std::unordered_map<std::string, int> sheet_index_;
    std::vector<CellId> dirty_, run_order_;
    CellId *queue_ = nullptr;                       /* dirty_.data(): ndirty_ used of queue_cap_ */
    size_t ndirty_ = 0, queue_cap_ = 0;
    Cell *cell_ = nullptr;                          /* the pools, once frozen */
    const Op *op_ = nullptr;
    const CellId *dep_ = nullptr, *range_ = nullptr;
    std::vector<uint32_t> level_count_;
    uint32_t epoch_ = 1;

    void mark_dependents_dirty(CellId changed);
    double evaluate(const Cell &c) const;
    double sum_range(uint32_t at, uint32_t len) const;
};

/* --------------------------------------------------------- formula compiler */
/* Precedence climbing over '>' < '+' '-' < '*', numbers, references "[Sheet!]A1",
 * calls and SUM(range); emits into the code pool, collects the cells read. */
class FormulaCompiler {
public:
    FormulaCompiler(Workbook &wb, int sheet, const char *text, std::vector<CellId> &reads)
        : wb_(wb), sheet_(sheet), text_(text), p_(text), reads_(reads) {}
    void compile() { binary(1), expect('\0'); }

private:
    Workbook &wb_;
    int sheet_, depth_ = 0;
    const char *text_, *p_;
    std::vector<CellId> &reads_;

    [[noreturn]] void fail(const char *why)
    {
        fprintf(stderr, "formula '=%s': %s at offset %d\n", text_, why, (int)(p_ - text_)), exit(1);
    }
    void expect(char c) { *p_ == c ? (void)p_++ : fail("syntax error"); }
    /* depth: what the instruction does to the height of the evaluation stack */
    void emit(OpCode code, int depth, uint32_t arg = 0, uint32_t len = 0, double num = 0, int fn = 0)
    {
        wb_.code_.push_back(Op{code, (uint8_t)fn, arg, len, num});
        if ((depth_ += depth) > kEvalStack)
            fail("expression too deep");
    }
    static int precedence(char c) { return c == '>' ? 1 : c == '+' || c == '-' ? 2 : c == '*' ? 3 : 0; }
    void binary(int min_prec)
    {
        primary();
        for (int prec; (prec = precedence(*p_)) >= min_prec;) {
            char c = *p_++;
            binary(prec + 1);
            emit(c == '>' ? OP_GT : c == '+' ? OP_ADD : c == '-' ? OP_SUB : OP_MUL, -1);
        }
    }
    /* "[Sheet!]COL ROW"; '$' anchors only matter when a formula is copied. */
    CellId cell_ref(int *sheet, int *col, int *row)
    {
        const char *bang = p_;
        while (isalnum((unsigned char)*bang))
            bang++;
        if (*bang == '!' && (*sheet = wb_.find_sheet(std::string(p_, bang))) < 0)
            fail("unknown sheet");
        p_ = *bang == '!' ? bang + 1 : p_;
        *col = 0, *row = 0;
        for (p_ += *p_ == '$'; *p_ >= 'A' && *p_ <= 'Z'; p_++)
            *col = *col * 26 + (*p_ - 'A' + 1);
        for (p_ += *p_ == '$'; *p_ >= '0' && *p_ <= '9'; p_++)
            *row = *row * 10 + (*p_ - '0');
        CellId id = wb_.cell_at(*sheet, --*col, --*row);
        if (id == kNoCell)
            fail("bad reference");
        reads_.push_back(id);
        return id;
    }
    void call(int fn)
    {
        expect('(');
        if (fn == FN_SUM) {                     /* SUM(range): one instruction */
            int sheet = sheet_, c0, r0, c1, r1;
            cell_ref(&sheet, &c0, &r0);
            expect(':');
            cell_ref(&sheet, &c1, &r1);
            uint32_t at = (uint32_t)wb_.range_cells_.size();
            for (int col = c0; col <= c1; col++)
                for (int row = r0; row <= r1; row++)
                    wb_.range_cells_.push_back(wb_.cell_at(sheet, col, row));
            reads_.insert(reads_.end(), wb_.range_cells_.begin() + at, wb_.range_cells_.end());
            emit(OP_SUMRANGE, 1, at, (uint32_t)wb_.range_cells_.size() - at);
            return expect(')');
        }
        for (int argc = 1; argc <= kFuncArgs[fn]; argc++) {
            binary(1);
            expect(argc < kFuncArgs[fn] ? ',' : ')');
        }
        emit(OP_CALL, 1 - kFuncArgs[fn], 0, 0, 0, fn);
    }
    void primary()
    {
        if (isdigit((unsigned char)*p_) || *p_ == '.') {
            char *end;
            double v = strtod(p_, &end);
            return p_ = end, emit(OP_NUM, 1, 0, 0, v);
        }
        for (int fn = 0; fn < N_FUNC; fn++) {
            size_t n = strlen(kFuncNames[fn]);
            if (strncmp(p_, kFuncNames[fn], n) == 0 && p_[n] == '(')
                return p_ += n, call(fn);
        }
        int sheet = sheet_, col, row;
        emit(OP_REF, 1, cell_ref(&sheet, &col, &row));
    }
};

/* ------------------------------------------------------------ the workbook */
/* Typing into a cell while loading: "=..." is compiled, anything else is a number.
 * The file lists cells in calculation order (as a saved calc chain does), so a
 * formula's level follows from the cells it reads; a cell read twice is one edge. */
void Workbook::enter(int sheet, int col, int row, const char *text)
{
    CellId id = cell_at(sheet, col, row);
    if (text[0] != '=') {
        cells_[id].value = strtod(text, nullptr);
        return;
    }
    if (cells_[id].deps_len)
        fprintf(stderr, "cell %u is read by a formula listed before it\n", id), exit(1);
    std::vector<CellId> reads;
    uint32_t at = (uint32_t)code_.size(), level = 1;
    FormulaCompiler(*this, sheet, text + 1, reads).compile();
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    for (CellId r : reads) {
        level = std::max(level, cells_[r].level + 1);
        cells_[r].deps_len++;                   /* counted now, laid out by freeze() */
        edges_.emplace_back(r, id);
    }
    Cell &c = cells_[id];
    c.code_at = at, c.code_len = (uint32_t)code_.size() - at, c.level = level;
}

/* After loading: the dependents array grouped by the cell read, and every
 * formula queued for the first recalculation. */
void Workbook::freeze()
{
    uint32_t at = 0, top = 0;
    for (Cell &c : cells_)
        c.deps_at = at, at += c.deps_len, c.deps_len = 0, top = std::max(top, c.level);
    deps_.resize(edges_.size());
    for (const auto &e : edges_)
        deps_[cells_[e.first].deps_at + cells_[e.first].deps_len++] = e.second;
    edges_.clear();
    level_count_.assign(top + 2, 0);
    dirty_.resize(queue_cap_ = cells_.size()), queue_ = dirty_.data();
    cell_ = cells_.data(), op_ = code_.data(), dep_ = deps_.data(), range_ = range_cells_.data();
    for (CellId id = 0; id < cells_.size(); id++)
        if (cells_[id].code_len)
            queue_[ndirty_++] = id;
}

/* The feed writes inputs only; a formula cell would lose its formula. */
void Workbook::set_value(CellId id, double v)
{
    if (cells_[id].code_len)
        fprintf(stderr, "cell %u holds a formula\n", id), exit(1);
    cells_[id].value = v;
    edits++;
    mark_dependents_dirty(id);
}

/* Queues every cell downstream of `changed` for the next recalculation. The
 * queue is the recalculation's whole work list; the epoch stamp is what keeps
 * a cell on it once however many paths lead there. */
void Workbook::mark_dependents_dirty(CellId changed)
{
    const Cell &src = cell_[changed];
    for (const CellId *dep = dep_ + src.deps_at, *end = dep + src.deps_len; dep != end; dep++) {
        Cell &c = cell_[*dep];
#ifdef VPROF_CASE_FIX
        if (c.dirty_epoch == epoch_)
            continue;
#else
        /* FIX: skip a cell already queued for this recalculation (c.dirty_epoch == epoch_) */
#endif
        c.dirty_epoch = epoch_;
        if (ndirty_ == queue_cap_)                  /* the queue grows by doubling */
            dirty_.resize(queue_cap_ = 2 * ndirty_), queue_ = dirty_.data();
        queue_[ndirty_++] = *dep;
        mark_dependents_dirty(*dep);
    }
}

double Workbook::sum_range(uint32_t at, uint32_t len) const
{
    double sum = 0;
    for (const CellId *id = range_ + at, *end = id + len; id != end; id++)
        sum += cell_[*id].value;
    return sum;
}

/* ROUND(x, digits): half away from zero, 0 to 9 digits (whole cents are 2). */
static double round_to(double x, double digits)
{
    double scale = kPow10[digits < 0 ? 0 : digits > 9 ? 9 : (int)digits];
    return (double)(int64_t)(x * scale + (x < 0 ? -0.5 : 0.5)) / scale;
}

/* Runs a formula's RPN over the current values of the cells it reads. */
double Workbook::evaluate(const Cell &c) const
{
    double st[kEvalStack], *a;
    int sp = 0;
    for (const Op *op = op_ + c.code_at, *end = op + c.code_len; op != end; op++) {
        switch (op->code) {
        case OP_NUM:      st[sp++] = op->num; break;
        case OP_REF:      st[sp++] = cell_[op->arg].value; break;
        case OP_SUMRANGE: st[sp++] = sum_range(op->arg, op->len); break;
        case OP_ADD:      sp--, st[sp - 1] += st[sp]; break;
        case OP_SUB:      sp--, st[sp - 1] -= st[sp]; break;
        case OP_MUL:      sp--, st[sp - 1] *= st[sp]; break;
        case OP_GT:       sp--, st[sp - 1] = st[sp - 1] > st[sp]; break;
        case OP_CALL:                           /* a: the arguments, then the result */
            a = st + (sp -= kFuncArgs[op->fn] - 1) - 1;
            a[0] = op->fn == FN_ROUND ? round_to(a[0], a[1])
                 : op->fn == FN_IF ? (a[0] != 0 ? a[1] : a[2]) : std::fabs(a[0]);
            break;
        }
    }
    return sp == 1 ? st[0] : NAN;
}

/* Sorts the dirty list by level (a counting sort) and evaluates it in that
 * order, so every cell a formula reads is final before the formula runs. */
void Workbook::recalc()
{
    Cell *cells = cell_;
    const CellId *dirty = queue_;
    uint32_t *count = level_count_.data();
    std::fill(level_count_.begin(), level_count_.end(), 0);
    for (size_t i = 0; i < ndirty_; i++)
        count[cells[dirty[i]].level + 1]++;
    for (size_t l = 1; l < level_count_.size(); l++)
        count[l] += count[l - 1];
    if (run_order_.size() < ndirty_)
        run_order_.resize(ndirty_);
    CellId *order = run_order_.data();
    for (size_t i = 0; i < ndirty_; i++)
        order[count[cells[dirty[i]].level]++] = dirty[i];
    for (size_t i = 0; i < ndirty_; i++)
        cells[order[i]].value = evaluate(cells[order[i]]);
    evaluations += ndirty_;
    ndirty_ = 0;
    epoch_++, recalcs++;
}

/* ------------------------------------------------------- load, feed, report */
/* Sheet 0 is Rates, ledger l is sheet 1 + l, then comes the Summary. */
struct Layout {
    int ledgers, rows, currencies, summary;         /* Summary row l: closing, fees, turnover */
};

/* L00001, L00002, ... */
static std::string ledger_name(int l) { return "L" + std::to_string(100000 + l + 1).substr(1); }

/* Rates!B1..B{currencies} hold the exchange rates; the fee is 1.5% above
 * 250 and 1.20 below. */
static void load_workbook(Workbook &wb, Layout &lay, rng_t *r)
{
    char text[128];
    int rates = wb.add_sheet("Rates", 2, lay.currencies);      /* column A: the currency names */
    for (int c = 0; c < lay.currencies; c++) {
        snprintf(text, sizeof text, "%.5f", 0.5 + (double)rng_below(r, 150000) / 100000);
        wb.enter(rates, 1, c, text);
    }
    for (int l = 0; l < lay.ledgers; l++) {
        int s = wb.add_sheet(ledger_name(l), 4, lay.rows), ccy = l % lay.currencies + 1;
        for (int k = 1; k <= lay.rows; k++) {
            snprintf(text, sizeof text, "%.2f", (double)rng_below(r, 90000) / 100 - 100);
            wb.enter(s, 0, k - 1, text);
            snprintf(text, sizeof text, "=ROUND(A%d*Rates!$B$%d,2)", k, ccy);
            wb.enter(s, 1, k - 1, text);
            snprintf(text, sizeof text, "=IF(ABS(B%d)>250,ROUND(ABS(B%d)*0.015,2),1.2)", k, k);
            wb.enter(s, 2, k - 1, text);
            /* the balance opens at 0 and is kept in cents, so that it does not drift */
            snprintf(text, sizeof text, "=ROUND(%s%d+B%d-C%d,2)", k == 1 ? "" : "D", k - 1, k, k);
            wb.enter(s, 3, k - 1, text);
        }
    }
    lay.summary = wb.add_sheet("Summary", 3, lay.ledgers);
    const char *fmt[3] = {"=%s!D%d", "=SUM(%s!C1:C%d)", "=SUM(%s!B1:B%d)"};
    for (int l = 0; l < lay.ledgers; l++)
        for (int c = 0; c < 3; c++) {
            snprintf(text, sizeof text, fmt[c], ledger_name(l).c_str(), lay.rows);
            wb.enter(lay.summary, c, l, text);
        }
    wb.freeze();
    wb.recalc();
}

/* One day of the bank feed: pending entries (a ledger's last rows) settle at
 * their final amount; on revision days one currency's rate moves by up to 1%.
 * The amounts are whole cents, as the bank sends them. */
static void apply_feed(Workbook &wb, const Layout &lay, rng_t *r, long day, long settle,
                       int pending, long fx_every)
{
    for (long i = 0; i < settle; i++) {
        int l = (int)rng_below(r, (uint64_t)lay.ledgers);
        int row = lay.rows - 1 - (int)rng_below(r, (uint64_t)std::min(pending, lay.rows));
        wb.set_value(wb.cell_at(1 + l, 0, row), (double)rng_below(r, 90000) / 100 - 100);
    }
    if (day % fx_every == 0) {
        CellId rate = wb.cell_at(0, 1, (int)(day / fx_every % lay.currencies));
        double moved = wb.value(rate) * (1 + ((double)rng_below(r, 2001) - 1000) / 100000);
        wb.set_value(rate, std::round(moved * 100000) / 100000);
    }
}

/* The day's report: the Summary sheet as CSV, folded into an FNV-1a digest. */
static uint64_t report(Workbook &wb, const Layout &lay, uint64_t digest, double totals[3])
{
    char line[128];
    for (int l = 0; l < lay.ledgers; l++) {
        double v[3];
        for (int c = 0; c < 3; c++)
            totals[c] += v[c] = wb.value(wb.cell_at(lay.summary, c, l));
        snprintf(line, sizeof line, "%s,%.2f,%.2f,%.2f\n", ledger_name(l).c_str(), v[0], v[1], v[2]);
        for (const char *s = line; *s; s++)
            digest = (digest ^ (uint8_t)*s) * 1099511628211ULL;
    }
    return digest;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"entries", "ledger rows in the workbook", 12000, 1, 10000000, 0},
        {"ledger-rows", "rows per ledger (the entries are split into ledgers)", 10, 1, 100000, 0},
        {"currencies", "currencies the ledgers are kept in", 8, 1, 1000, 0},
        {"days", "days of feed", 60, 1, 100000, 0},
        {"settle", "pending entries settled per day", 100, 0, 1000000, 0},
        {"pending", "trailing rows of a ledger that are still pending", 4, 1, 1000, 0},
        {"fx-every", "days between exchange-rate revisions", 5, 1, 100000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    Layout lay = {(int)std::max(1L, opts[0].value / opts[1].value), (int)opts[1].value,
                  (int)opts[2].value, 0};
    long days = opts[3].value, settle = opts[4].value, pending = opts[5].value, fx_every = opts[6].value;
    rng_t r;
    rng_seed(&r, (uint64_t)opts[7].value);
    Workbook wb;
    load_workbook(wb, lay, &r);
    uint64_t digest = 14695981039346656037ULL;
    double totals[3] = {0, 0, 0};
    for (long day = 1; day <= days; day++) {
        apply_feed(wb, lay, &r, day, settle, (int)pending, fx_every);
        wb.recalc();
        digest = report(wb, lay, digest, totals);
        CASE_PROGRESS("day");
    }
    printf("%d ledgers x %d rows, %ld days: closing %.2f, fees %.2f, turnover %.2f, digest %016llx\n",
           lay.ledgers, lay.rows, days, totals[0], totals[1], totals[2], (unsigned long long)digest);
    fprintf(stderr, "edits=%llu recalcs=%llu evaluations=%llu\n", (unsigned long long)wb.edits,
            (unsigned long long)wb.recalcs, (unsigned long long)wb.evaluations);
    return 0;
}
