// PredicateScan.cpp - see PredicateScan.h.
//
// On the IR as clang emits it (pipeline start): a function with several
// returns stores each answer into a `retval` alloca and returns one load
// of it, a C `bool` local lives in an alloca as a byte, `a && b` is a phi
// of i1 values. So a truth value is followed through casts, phis,
// selects, `!` (xor with true) and allocas whose every store is one.
#include "PredicateScan.h"
#include "DebugNames.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"

extern "C" {
#include "../schema_table.h"
}

using namespace llvm;

namespace vprof {
namespace {

constexpr unsigned MaxDepth = 8;

bool truthValue(const Value *V, unsigned Depth);

// Every store into local A is a truth value and A is only loaded otherwise
// (its address does not escape into a call or a pointer).
bool truthLocal(const AllocaInst *A, unsigned Depth) {
  return everyStoreTo(A, [&](const StoreInst &S) {
    return truthValue(S.getValueOperand(), Depth + 1);
  });
}

bool truthValue(const Value *V, unsigned Depth) {
  if (Depth > MaxDepth)
    return false;
  V = stripValueCasts(V);
  if (auto *C = dyn_cast<ConstantInt>(V))
    return C->isZero() || C->isOne();
  if (isa<CmpInst>(V))
    return true;
  if (auto *B = dyn_cast<BinaryOperator>(V)) {
    // `!x` on an i1, and `&`, `|`, `^` of truth values
    if (B->getOpcode() != Instruction::Xor && B->getOpcode() != Instruction::And &&
        B->getOpcode() != Instruction::Or)
      return false;
    return truthValue(B->getOperand(0), Depth + 1) && truthValue(B->getOperand(1), Depth + 1);
  }
  if (auto *S = dyn_cast<SelectInst>(V))
    return truthValue(S->getTrueValue(), Depth + 1) && truthValue(S->getFalseValue(), Depth + 1);
  if (auto *P = dyn_cast<PHINode>(V)) {
    for (const Value *In : P->incoming_values())
      if (In != P && !truthValue(In, Depth + 1))
        return false;
    return true;
  }
  if (const AllocaInst *A = loadedLocal(V))
    return truthLocal(A, Depth);
  return false;
}

// The profiling hooks clang may call at entry: they record, they decide nothing.
bool isHook(const Function &F) {
  StringRef N = F.getName();
  return N == "mcount" || N == "_mcount" || N == "__fentry__" ||
         N.startswith("__cyg_profile_func_");
}

// What changesNothing found for a function: looked into, or being looked
// into (a recursion: taken as changing something, the safe answer).
enum Verdict { Looking, Pure, Impure };

bool changesNothingIn(const Function &F, unsigned Depth,
                      DenseMap<const Function *, Verdict> &Seen);

// F changes no memory but its own locals' (Depth: how far into callees).
// Each callee is looked into once: one called twice is the same answer.
bool changesNothing(const Function &F, unsigned Depth, DenseMap<const Function *, Verdict> &Seen) {
  if (F.onlyReadsMemory() || isHook(F))
    return true;
  auto It = Seen.find(&F);
  if (It != Seen.end())
    return It->second == Pure;
  if (F.isDeclaration() || Depth > 4)
    return false;
  Seen[&F] = Looking;
  bool R = changesNothingIn(F, Depth, Seen);
  Seen[&F] = R ? Pure : Impure;
  return R;
}

bool changesNothingIn(const Function &F, unsigned Depth,
                      DenseMap<const Function *, Verdict> &Seen) {
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB) {
      if (auto *St = dyn_cast<StoreInst>(&I)) {
        if (!isa<AllocaInst>(stripCasts(St->getPointerOperand())))
          return false;
      } else if (isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I)) {
        return false;
      } else if (auto *MI = dyn_cast<MemIntrinsic>(&I)) {
        if (!isa<AllocaInst>(stripCasts(MI->getRawDest())))
          return false;
      } else if (auto *Call = dyn_cast<CallBase>(&I)) {
        if (isa<DbgInfoIntrinsic>(I) || Call->onlyReadsMemory())
          continue;
        if (auto *II = dyn_cast<IntrinsicInst>(&I))
          if (II->isAssumeLikeIntrinsic() || II->isLifetimeStartOrEnd())
            continue;
        const Function *Callee = Call->getCalledFunction();
        if (!Callee || !changesNothing(*Callee, Depth + 1, Seen))
          return false;
      }
    }
  return true;
}

} // namespace

bool scanPredicate(const Function &F, const char *File, const LoopInfo &LI, vsg_table *T) {
  if (!F.getReturnType()->isIntegerTy() || !F.getSubprogram() || !LI.empty())
    return true;
  bool Returns = false;
  for (const BasicBlock &BB : F)
    if (auto *R = dyn_cast<ReturnInst>(BB.getTerminator())) {
      if (!R->getReturnValue() || !truthValue(R->getReturnValue(), 0))
        return true;
      Returns = true;
    }
  DenseMap<const Function *, Verdict> Seen;
  if (!Returns || !changesNothing(F, 0, Seen))
    return true;
  std::string Fn = functionName(F.getSubprogram());
  return vsg_table_add_from(T, File, Fn.c_str(), F.getSubprogram()->getLine(), "truth",
                            "pure", 8) >= 0;
}

} // namespace vprof
