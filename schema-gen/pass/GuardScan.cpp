// GuardScan.cpp - see GuardScan.h.
//
// At pipeline start (every -O level) a condition on a call's result is the
// call itself (`br i1 %call`, a `_Bool` function) or a comparison of it
// with anything (`icmp ne i32 %call, 0`, `icmp sge i64 %n, %call`), through
// casts and `xor ..., true` (`!`). The calls it guards are those in the
// blocks dominated by a successor that only the branch reaches: the `then`
// block of an `if`, the code after an early `return`; each call is named
// with its nearest such predicate. A branch that leaves a loop is the
// loop's condition (C++'s `it != end`), not a decision: skipped.
#include "GuardScan.h"
#include "DebugNames.h"
#include "WriteScan.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"

#include <algorithm>
#include <string>

extern "C" {
#include "../schema_table.h"
}

using namespace llvm;

namespace vprof {
namespace {

const Value *stripCastsAndNot(const Value *V) {
  for (;;) {
    if (auto *C = dyn_cast<CastInst>(V)) {
      V = C->getOperand(0);
      continue;
    }
    auto *B = dyn_cast<BinaryOperator>(V);
    if (B && B->getOpcode() == Instruction::Xor && isa<ConstantInt>(B->getOperand(1))) {
      V = B->getOperand(0);
      continue;
    }
    return V;
  }
}

// The program function whose return value V is, or null.
const Function *returnedBy(const Value *V) {
  auto *Call = dyn_cast<CallBase>(stripCastsAndNot(V));
  const Function *F = Call ? Call->getCalledFunction() : nullptr;
  if (!F || F->isIntrinsic() || F->getName().empty())
    return nullptr;
  return F;
}

// The predicate a branch condition compares, or null.
const Function *predicate(const Value *Cond) {
  const Value *V = stripCastsAndNot(Cond);
  if (const Function *F = returnedBy(V))
    return F;
  if (auto *Cmp = dyn_cast<CmpInst>(V)) {
    if (const Function *F = returnedBy(Cmp->getOperand(0)))
      return F;
    return returnedBy(Cmp->getOperand(1));
  }
  return nullptr;
}

// Can From reach To within one iteration of the loops around To? An edge
// back to the header of a loop that holds To starts the next iteration,
// where every block of the body is reachable again: not followed.
bool reachesInIteration(const BasicBlock *From, const BasicBlock *To, const LoopInfo &LI) {
  SmallPtrSet<const BasicBlock *, 32> Seen;
  SmallVector<const BasicBlock *, 32> Work{From};
  while (!Work.empty()) {
    const BasicBlock *B = Work.pop_back_val();
    if (B == To)
      return true;
    if (!Seen.insert(B).second)
      continue;
    for (const BasicBlock *S : successors(B)) {
      const Loop *L = LI.getLoopFor(S);
      if (L && L->getHeader() == S && L->contains(To))
        continue;
      Work.push_back(S);
    }
  }
  return false;
}

// A conditional branch that decides something: not a loop's own exit test.
const BranchInst *decidingBranch(const BasicBlock *P, const LoopInfo &LI) {
  auto *Br = P ? dyn_cast<BranchInst>(P->getTerminator()) : nullptr;
  if (!Br || !Br->isConditional())
    return nullptr;
  const Loop *L = LI.getLoopFor(P);
  return L && L->isLoopExiting(P) ? nullptr : Br;
}

// A block entered from several places (`if (e && fresh(e)) { ...; return
// e; }` then the miss path, reached when e is null or fresh() says no):
// a predecessor's branch on a predicate whose other edge can never come
// here in the same loop iteration vetoes the block - its answer decides
// whether the block runs, with other conditions (`continue` on a fresh
// entry: the next element comes back to the miss path, but that is
// another decision). The first such predecessor names it.
const Function *vetoedBy(const BasicBlock *N, const LoopInfo &LI) {
  for (const BasicBlock *P : predecessors(N)) {
    const BranchInst *Br = decidingBranch(P, LI);
    if (!Br)
      continue;
    const Function *F = predicate(Br->getCondition());
    if (!F)
      continue;
    const BasicBlock *Other = Br->getSuccessor(0) == N ? Br->getSuccessor(1) : Br->getSuccessor(0);
    if (Other != N && !reachesInIteration(Other, N, LI))
      return F;
  }
  return nullptr;
}

// The addresses a branch condition loads its state from: the loaded value
// itself (`if (c->dirty)`, `if (!valid_)`), or each loaded side of a
// comparison (`if (n_items > limit)`: the count and the limit are both
// state, and a wrong limit is as much the decision as a grown count),
// through casts and `!`. At most two; none for a predicate's answer.
SmallVector<const Value *, 2> stateLoads(const Value *Cond) {
  SmallVector<const Value *, 2> Addrs;
  if (predicate(Cond))
    return Addrs;
  const Value *V = stripCastsAndNot(Cond);
  if (auto *L = dyn_cast<LoadInst>(V))
    Addrs.push_back(L->getPointerOperand());
  else if (auto *Cmp = dyn_cast<CmpInst>(V))
    for (const Value *Op : Cmp->operands())
      if (auto *L = dyn_cast<LoadInst>(stripCastsAndNot(Op)))
        Addrs.push_back(L->getPointerOperand());
  return Addrs;
}


// The states that decide whether N runs, when N is entered from several
// places: `if (!s->used || s->gen != ag->gen) refill(s);` enters the
// refill block from both tests. It is a decision (not an if/else joining
// again) when one test's other edge can never come to N in this iteration
// (the last test of an `||` chain, the `return` path of an `&&`); then
// every test among N's predecessors that branches on loaded state names
// its state. Sets *Decided when N is such a decision, whatever it branches
// on (a predicate's veto decides too: its calls get a `@guard` line).
SmallVector<const Value *, 4> joinStates(const BasicBlock *N, const LoopInfo &LI, bool *Decided) {
  SmallVector<const Value *, 4> Addrs;
  *Decided = false;
  for (const BasicBlock *P : predecessors(N)) {
    const BranchInst *Br = decidingBranch(P, LI);
    if (!Br)
      continue;
    const BasicBlock *Other = Br->getSuccessor(0) == N ? Br->getSuccessor(1) : Br->getSuccessor(0);
    if (Other != N && !reachesInIteration(Other, N, LI))
      *Decided = true;
  }
  if (!*Decided)
    return Addrs;
  for (const BasicBlock *P : predecessors(N))
    if (const BranchInst *Br = decidingBranch(P, LI))
      for (const Value *A : stateLoads(Br->getCondition()))
        Addrs.push_back(A);
  return Addrs;
}

// The program function an instruction calls directly (not an intrinsic),
// or null.
const Function *programCallee(const Instruction &I) {
  auto *Call = dyn_cast<CallBase>(&I);
  const Function *X = Call ? Call->getCalledFunction() : nullptr;
  return X && !X->isIntrinsic() && !X->getName().empty() ? X : nullptr;
}

// F's name as the schema's lines name it, "" for a declaration or a
// function without debug information (no line of it is written).
std::string schemaName(const Function &F) {
  return F.isDeclaration() ? std::string() : functionName(F.getSubprogram());
}

} // namespace

const char *const StateGuardedKind = "vprof.stateguarded";

bool scanStateGuards(const Function &F, const char *File, const DominatorTree &DT,
                     const LoopInfo &LI, const VarResolver &R, vsg_table *T) {
  std::string Fn = schemaName(F);
  if (Fn.empty())
    return true;
  bool Ok = true;
  // A join's states, once: every block below it in the dominator tree asks
  // (each answer is a walk over the function's blocks per predecessor).
  struct Join { bool Decided; SmallVector<const Value *, 4> Addrs; };
  DenseMap<const BasicBlock *, Join> Joins;
  for (const BasicBlock &B : F) {
    // The nearest decision up the dominator tree (not a loop's own
    // condition): a block only one branch enters, or a join that a test
    // can keep from running. A decision on a predicate's answer is a
    // `@guard` instead.
    SmallVector<const Value *, 4> Addrs;
    for (const DomTreeNode *N = DT.getNode(&B); N; N = N->getIDom()) {
      const BasicBlock *P = N->getBlock()->getSinglePredecessor();
      if (!P) {
        auto It = Joins.find(N->getBlock());
        if (It == Joins.end()) {
          Join J;
          J.Addrs = joinStates(N->getBlock(), LI, &J.Decided);
          It = Joins.try_emplace(N->getBlock(), std::move(J)).first;
        }
        if (It->second.Decided) {
          Addrs = It->second.Addrs;
          break;
        }
        continue;
      }
      const BranchInst *Br = decidingBranch(P, LI);
      if (!Br)
        continue;
      Addrs = stateLoads(Br->getCondition());
      break;
    }
    if (Addrs.empty() || std::none_of(B.begin(), B.end(), [](const Instruction &I) {
          return programCallee(I) != nullptr;
        }))
      continue;
    // A local's value has no writer elsewhere to name: dropped.
    SmallVector<std::string, 4> States;
    for (const Value *A : Addrs) {
      std::string S = stateTarget(F, File, R, T, A, Ok);
      if (!S.empty() && std::find(States.begin(), States.end(), S) == States.end())
        States.push_back(S);
    }
    for (const Instruction &I : B) {
      const Function *X = programCallee(I);
      if (!X)
        continue;
      const DILocation *Loc = I.getDebugLoc().get();
      for (const std::string &S : States)
        if (Ok && vsg_table_add_from(T, File, Fn.c_str(), Loc ? Loc->getLine() : 0,
                                     X->getName().str().c_str(), S.c_str(), 2) < 0)
          Ok = false;
      // vprof-cc --calls=guarded counts it (CallCounts.cpp, the next pass):
      // the rate --state-writers tests, which inlining would take from gmon
      if (!States.empty())
        const_cast<Instruction &>(I).setMetadata(
            StateGuardedKind, MDNode::get(I.getContext(), {}));
    }
  }
  return Ok;
}

namespace {

// The nearest predicate that guards B: up the dominator tree, the first
// block entered only from a branch on a function's answer (or vetoed by
// one). Vetoes caches each join's answer: every block below it asks, and
// each answer is a walk over the function's blocks.
const Function *nearestPredicate(const BasicBlock &B, const DominatorTree &DT, const LoopInfo &LI,
                                 DenseMap<const BasicBlock *, const Function *> &Vetoes) {
  const Function *Pred = nullptr;
  for (const DomTreeNode *N = DT.getNode(&B); N && !Pred; N = N->getIDom()) {
    const BasicBlock *P = N->getBlock()->getSinglePredecessor();
    auto *Br = P ? dyn_cast<BranchInst>(P->getTerminator()) : nullptr;
    // A loop's own condition (`it != end`, `while (next(&it))`) runs
    // the loop body, it does not decide a call in it.
    const Loop *L = P ? LI.getLoopFor(P) : nullptr;
    if (Br && Br->isConditional() && !(L && L->isLoopExiting(P)))
      Pred = predicate(Br->getCondition());
    else if (!P) {
      auto It = Vetoes.find(N->getBlock());
      if (It == Vetoes.end())
        It = Vetoes.try_emplace(N->getBlock(), vetoedBy(N->getBlock(), LI)).first;
      Pred = It->second;
    }
  }
  return Pred;
}

} // namespace

const Function *guardingPredicate(const BasicBlock &B, const DominatorTree &DT,
                                  const LoopInfo &LI) {
  DenseMap<const BasicBlock *, const Function *> Vetoes;
  return nearestPredicate(B, DT, LI, Vetoes);
}

void forEachGuardedCall(const Function &F, const DominatorTree &DT, const LoopInfo &LI,
                        function_ref<void(const CallBase &, const Function &)> Fn) {
  DenseMap<const BasicBlock *, const Function *> Vetoes;
  for (const BasicBlock &B : F) {
    // One line per call at most, however many early returns precede it.
    const Function *Pred = nearestPredicate(B, DT, LI, Vetoes);
    if (!Pred)
      continue;
    for (const Instruction &I : B) {
      const Function *X = programCallee(I);
      if (X && X != Pred)
        Fn(cast<CallBase>(I), *Pred);
    }
  }
}

bool scanGuards(const Function &F, const char *File, const DominatorTree &DT,
                const LoopInfo &LI, vsg_table *T) {
  std::string Fn = schemaName(F);
  if (Fn.empty())
    return true;
  bool Ok = true;
  forEachGuardedCall(F, DT, LI, [&](const CallBase &Call, const Function &Pred) {
    const DILocation *L = Call.getDebugLoc().get();
    if (Ok && vsg_table_add_from(T, File, Fn.c_str(), L ? L->getLine() : 0,
                                 Call.getCalledFunction()->getName().str().c_str(),
                                 Pred.getName().str().c_str(), 1) < 0)
      Ok = false;
  });
  return Ok;
}

} // namespace vprof
