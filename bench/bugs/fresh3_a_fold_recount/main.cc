// Written for the vprof bug corpus by a helper that had not seen the
// profiler (2026-11-28); not modelled on a real issue. The fix is the
// VPROF_CASE_FIX variant; the line marked FIX is the bug.
//
// foldc - the middle end of a small compiler. A module of functions in SSA
// form (basic blocks of instructions whose operands are earlier values) goes
// through a pass pipeline: constant folding (FoldPass), dead-code
// elimination (DcePass) and lowering (LowerPass: linear-scan register
// allocation and encoding into a code checksum). Every instruction keeps a
// use count. Folding an instruction into a constant drops its uses of its
// operands; an operand left without uses and without side effects is
// erased, which drops its own operands' uses in turn.
//
// The bug: FoldPass::replaceWithConstant() brings the use counts up to date
// by recounting the whole function (Function::recomputeUseCounts) after
// every fold, instead of releasing the folded instruction's two operands.
// A fold then costs as much as the function is long, and the pass is
// quadratic in the function size: a module of many small functions (normal:
// 4,000 x 50 instructions) compiles quickly, the same 200,000 instructions
// in a few big functions (buggy: 40 x 5,000, as code generators and
// unrolled table initialisers emit them) do not.
extern "C" {
#include "../common/corpus.h"
}
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

// ------------------------------------------------------------------- IR
enum Op : uint8_t { kParam, kConst, kAdd, kSub, kMul, kXor, kAnd, kShl, kLoad, kStore, kCall, kRet };

struct Inst {
    Op op;
    uint8_t nops;
    bool dead;
    int32_t ops[2];
    int32_t uses;
    uint64_t imm;

    bool pure() const { return op == kConst || (op >= kAdd && op <= kLoad); }
    bool foldable() const { return op >= kAdd && op <= kShl; }
};

class BasicBlock {
public:
    void append(int32_t id) { ids_.push_back(id); }
    const int32_t *begin() const { return ids_.data(); }
    size_t size() const { return ids_.size(); }
    void accumulateUses(Inst *values) const;

private:
    std::vector<int32_t> ids_;
};

// Adds the block's uses of values to their counts (erased instructions have
// no operands left).
void BasicBlock::accumulateUses(Inst *values) const
{
    const int32_t *p = ids_.data(), *end = p + ids_.size();
    for (; p != end; ++p) {
        const Inst &in = values[*p];
        for (int k = 0; k < in.nops; k++)
            values[in.ops[k]].uses++;
    }
}

class Function {
public:
    explicit Function(std::string name) : name_(std::move(name)) {}
    const std::string &name() const { return name_; }
    void startBlock() { blocks_.emplace_back(); }
    int32_t append(Op op, int32_t a, int32_t b, uint64_t imm)
    {
        insts_.push_back(Inst{op, (uint8_t)((a >= 0) + (b >= 0)), false, {a, b}, 0, imm});
        blocks_.back().append((int32_t)insts_.size() - 1);
        return (int32_t)insts_.size() - 1;
    }
    Inst &inst(int32_t id) { return insts_[(size_t)id]; }
    Inst *values() { return insts_.data(); }
    int32_t size() const { return (int32_t)insts_.size(); }
    size_t numBlocks() const { return blocks_.size(); }
    const BasicBlock &block(size_t i) const { return blocks_[i]; }

    void recomputeUseCounts();
    void dropUse(int32_t id);
    void eraseIfUnused(int32_t id);
    uint64_t erased = 0;

private:
    void erase(int32_t id);
    std::string name_;
    std::vector<Inst> insts_;
    std::vector<BasicBlock> blocks_;
};

// Every use count from scratch: one walk over the whole function.
void Function::recomputeUseCounts()
{
    Inst *v = insts_.data();
    size_t n = insts_.size(), nb = blocks_.size();
    for (size_t i = 0; i < n; i++)
        v[i].uses = 0;
    const BasicBlock *bb = blocks_.data();
    for (size_t b = 0; b < nb; b++)
        bb[b].accumulateUses(v);
}

void Function::erase(int32_t id)
{
    Inst &in = insts_[(size_t)id];
    int32_t ops[2] = {in.ops[0], in.ops[1]};
    int n = in.nops;
    in.dead = true;
    in.nops = 0;
    erased++;
    for (int k = 0; k < n; k++)
        dropUse(ops[k]);
}

// One use of ID fewer; a pure value left unused goes, and with it its uses.
void Function::dropUse(int32_t id)
{
    Inst &in = insts_[(size_t)id];
    if (--in.uses == 0 && !in.dead && in.pure())
        erase(id);
}

void Function::eraseIfUnused(int32_t id)
{
    Inst &in = insts_[(size_t)id];
    if (in.uses == 0 && !in.dead && in.pure())
        erase(id);
}

using Module = std::vector<std::unique_ptr<Function>>;

// --------------------------------------------------------------- passes
class Pass {
public:
    virtual ~Pass() = default;
    virtual void runOnFunction(Function &fn) = 0;
};

class FoldPass : public Pass {
public:
    void runOnFunction(Function &fn) override;
    uint64_t folds = 0;

private:
    static uint64_t evaluate(Op op, uint64_t a, uint64_t b);
    void visitBlock(Function &fn, const BasicBlock &bb);
    bool visitInst(Function &fn, int32_t id);
    void replaceWithConstant(Function &fn, int32_t id, uint64_t value);
};

uint64_t FoldPass::evaluate(Op op, uint64_t a, uint64_t b)
{
    switch (op) {
    case kAdd: return a + b;
    case kSub: return a - b;
    case kMul: return a * b;
    case kXor: return a ^ b;
    case kAnd: return a & b;
    default:   return a << (b & 63);
    }
}

void FoldPass::runOnFunction(Function &fn)
{
    fn.recomputeUseCounts();
    for (size_t b = 0; b < fn.numBlocks(); b++)
        visitBlock(fn, fn.block(b));
}

void FoldPass::visitBlock(Function &fn, const BasicBlock &bb)
{
    const int32_t *ids = bb.begin();
    size_t n = bb.size();
    for (size_t i = 0; i < n; i++)
        folds += visitInst(fn, ids[i]);
}

// Folds when both operands are constant, or for a multiply/and by zero.
bool FoldPass::visitInst(Function &fn, int32_t id)
{
    const Inst &in = fn.inst(id);
    if (in.dead || !in.foldable())
        return false;
    const Inst &a = fn.inst(in.ops[0]), &b = fn.inst(in.ops[1]);
    uint64_t value;
    if (a.op == kConst && b.op == kConst)
        value = evaluate(in.op, a.imm, b.imm);
    else if ((in.op == kMul || in.op == kAnd) &&
             ((a.op == kConst && a.imm == 0) || (b.op == kConst && b.imm == 0)))
        value = 0;
    else
        return false;
    replaceWithConstant(fn, id, value);
    return true;
}

void FoldPass::replaceWithConstant(Function &fn, int32_t id, uint64_t value)
{
    Inst &in = fn.inst(id);
    int32_t ops[2] = {in.ops[0], in.ops[1]};
    int n = in.nops;
    in.op = kConst;
    in.imm = value;
    in.nops = 0;
#ifdef VPROF_CASE_FIX
    for (int k = 0; k < n; k++)
        fn.dropUse(ops[k]);
#else
    fn.recomputeUseCounts(); // FIX: release just the folded instruction's operands (fn.dropUse(ops[k])) instead of recounting the whole function
    for (int k = 0; k < n; k++)
        fn.eraseIfUnused(ops[k]);
#endif
}

// Erases what nothing uses, last to first (use counts are current).
class DcePass : public Pass {
public:
    void runOnFunction(Function &fn) override
    {
        for (int32_t id = fn.size() - 1; id >= 0; id--)
            fn.eraseIfUnused(id);
    }
};

// Linear-scan register allocation over the instruction order (the value whose
// last use is furthest spills), then each instruction encoded into a checksum.
class LowerPass : public Pass {
public:
    static const int kRegs = 6;
    void runOnFunction(Function &fn) override;
    uint64_t checksum = 1469598103934665603ull, emitted = 0, spills = 0;

private:
    int allocate(int32_t id, const int32_t *last);
    void emit(uint64_t word) { checksum = (checksum ^ word) * 0x100000001b3ull; }
    std::vector<int32_t> last_use_, reg_of_;
    int32_t owner_[kRegs];
};

int LowerPass::allocate(int32_t id, const int32_t *last)
{
    int victim = 0;
    for (int r = 0; r < kRegs; r++) {
        if (owner_[r] < 0) {
            owner_[r] = id;
            return r;
        }
        if (last[owner_[r]] > last[owner_[victim]])
            victim = r;
    }
    reg_of_[(size_t)owner_[victim]] = -1;           // lives in its spill slot now
    spills++;
    owner_[victim] = id;
    return victim;
}

void LowerPass::runOnFunction(Function &fn)
{
    int32_t n = fn.size();
    last_use_.assign((size_t)n, -1);
    reg_of_.assign((size_t)n, -1);
    int32_t *last = last_use_.data(), *reg = reg_of_.data();
    const Inst *v = fn.values();
    for (int32_t id = 0; id < n; id++)
        for (int k = 0; k < v[id].nops; k++)
            last[v[id].ops[k]] = id;
    for (int r = 0; r < kRegs; r++)
        owner_[r] = -1;
    for (size_t b = 0; b < fn.numBlocks(); b++) {
        const int32_t *ids = fn.block(b).begin();
        size_t m = fn.block(b).size();
        emit(0xb10c0000u + b);
        for (size_t i = 0; i < m; i++) {
            int32_t id = ids[i];
            const Inst &in = v[id];
            if (in.dead)
                continue;
            uint64_t word = in.op;
            for (int k = 0; k < in.nops; k++) {
                int32_t o = in.ops[k];
                word = word * 67 + (uint64_t)(reg[o] >= 0 ? reg[o] : 100 + o % 97);
                if (last[o] == id && reg[o] >= 0)
                    owner_[reg[o]] = -1;
            }
            if (in.uses > 0)
                word = word * 67 + (uint64_t)(reg[id] = allocate(id, last));
            emit(word ^ (in.imm << 8));
            emitted++;
        }
    }
}

class PassManager {
public:
    void add(Pass *p) { passes_.push_back(p); }
    void run(Module &m)
    {
        for (auto &fn : m)
            for (Pass *p : passes_)
                p->runOnFunction(*fn);
    }

private:
    std::vector<Pass *> passes_;
};

// ------------------------------------------------------ the front end
// A function of N instructions: four parameters, then constants, loads,
// stores, calls and arithmetic on recent values, in blocks of 24.
static std::unique_ptr<Function> generate(const std::string &name, int n, rng_t *r)
{
    auto fn = std::make_unique<Function>(name);
    std::vector<int32_t> vals;
    fn->startBlock();
    for (int i = 0; i < 4; i++)
        vals.push_back(fn->append(kParam, -1, -1, (uint64_t)i));
    auto pick = [&]() { return vals[vals.size() - 1 - rng_below(r, vals.size() < 10 ? vals.size() : 10)]; };
    for (int i = 4; i < n - 1; i++) {
        if (i % 24 == 0)
            fn->startBlock();
        uint64_t u = rng_below(r, 100);
        if (u < 24)
            vals.push_back(fn->append(kConst, -1, -1, rng_below(r, 5) ? 1 + rng_below(r, 1000) : 0));
        else if (u < 32)
            vals.push_back(fn->append(kLoad, pick(), -1, 0));
        else if (u < 38)
            fn->append(kStore, pick(), pick(), 0);
        else if (u < 41)
            vals.push_back(fn->append(kCall, pick(), -1, rng_below(r, 50)));
        else
            vals.push_back(fn->append((Op)(kAdd + rng_below(r, 6)), pick(), pick(), 0));
    }
    fn->append(kRet, vals.back(), -1, 0);
    return fn;
}

class Compiler {
public:
    void compile(Module &m)
    {
        pm_.add(&fold_);
        pm_.add(&dce_);
        pm_.add(&lower_);
        pm_.run(m);
        uint64_t insts = 0, erased = 0;
        for (auto &fn : m) {
            insts += (uint64_t)fn->size();
            erased += fn->erased;
        }
        printf("%zu functions, %llu instructions: %llu folded, %llu erased, %llu emitted, "
               "%llu spills, code checksum %016llx\n", m.size(), (unsigned long long)insts,
               (unsigned long long)fold_.folds, (unsigned long long)erased,
               (unsigned long long)lower_.emitted, (unsigned long long)lower_.spills,
               (unsigned long long)lower_.checksum);
    }

private:
    PassManager pm_;
    FoldPass fold_;
    DcePass dce_;
    LowerPass lower_;
};

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"functions", "functions in the module", 4000, 1, 1000000, 0},
        {"insts", "instructions per function", 50, 8, 1000000, 0},
        {"seed", "generator seed", 1701, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long nfuncs = opt_get(opts, NOPTS(opts), "functions");
    int ninsts = (int)opt_get(opts, NOPTS(opts), "insts");
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));

    Module m;
    for (long f = 0; f < nfuncs; f++)
        m.push_back(generate("fn" + std::to_string(f), ninsts, &r));
    Compiler().compile(m);
    return 0;
}
