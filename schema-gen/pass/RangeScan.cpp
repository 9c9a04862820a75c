// RangeScan.cpp - see RangeScan.h.
//
// At pipeline start a loop variable lives in an alloca: stored once before
// the loop (`c = d->lo`) and again inside it (`c++`), loaded by the exit
// test (`icmp slt (load c), (load d->hi)`). The range's ends are the states
// those two loads read, named as `@writes` names a store.
#include "RangeScan.h"
#include "DebugNames.h"
#include "WriteScan.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Instructions.h"

#include <string>

extern "C" {
#include "../schema_table.h"
}

using namespace llvm;

namespace vprof {
namespace {

// "struct T" of "struct T.f", "g" of "g.f"; "" for a state with no member.
std::string owner(const std::string &S) {
  size_t Dot = S.rfind('.');
  return Dot == std::string::npos ? "" : S.substr(0, Dot);
}

// The state the loop variable held in A starts from: the value of its one
// store outside L, when that is a load of a member or a global.
std::string startState(const Function &F, const char *File, const VarResolver &R, vsg_table *T,
                       const AllocaInst *A, const Loop &L, bool &Ok) {
  std::string S;
  for (const User *U : A->users()) {
    auto *St = dyn_cast<StoreInst>(U);
    if (!St || St->getPointerOperand()->stripPointerCasts() != A || L.contains(St))
      continue;
    auto *Ld = dyn_cast<LoadInst>(stripValueCasts(St->getValueOperand()));
    std::string One = Ld ? stateTarget(F, File, R, T, Ld->getPointerOperand(), Ok) : "";
    if (One.empty() || (!S.empty() && S != One))
      return ""; // started from a constant, a local, or from two places
    S = One;
  }
  return S;
}

} // namespace

bool scanRanges(const Function &F, const char *File, const VarResolver &R, const LoopInfo &LI,
                vsg_table *T) {
  std::string Fn = F.isDeclaration() ? std::string() : functionName(F.getSubprogram());
  if (Fn.empty())
    return true;
  bool Ok = true;
  for (const Loop *L : LI.getLoopsInPreorder()) {
    SmallVector<BasicBlock *, 4> Exiting;
    L->getExitingBlocks(Exiting);
    for (const BasicBlock *B : Exiting) {
      auto *Br = dyn_cast<BranchInst>(B->getTerminator());
      auto *Cmp = Br && Br->isConditional() ? dyn_cast<ICmpInst>(Br->getCondition()) : nullptr;
      if (!Cmp)
        continue;
      for (unsigned Side = 0; Side < 2; Side++) {
        auto *Var = dyn_cast<LoadInst>(stripValueCasts(Cmp->getOperand(Side)));
        auto *End = dyn_cast<LoadInst>(stripValueCasts(Cmp->getOperand(1 - Side)));
        auto *A = Var ? dyn_cast<AllocaInst>(Var->getPointerOperand()->stripPointerCasts())
                      : nullptr;
        if (!A || !End)
          continue;
        std::string Hi = stateTarget(F, File, R, T, End->getPointerOperand(), Ok);
        std::string Lo = Hi.empty() ? "" : startState(F, File, R, T, A, *L, Ok);
        if (Lo.empty() || Lo == Hi || owner(Lo).empty() || owner(Lo) != owner(Hi))
          continue;
        const DILocation *Loc = Cmp->getDebugLoc().get();
        unsigned Line = Loc ? Loc->getLine() : 0;
        if (vsg_table_add_from(T, File, Fn.c_str(), Line, "lo", Lo.c_str(), 7) < 0 ||
            vsg_table_add_from(T, File, Fn.c_str(), Line, "hi", Hi.c_str(), 7) < 0)
          Ok = false;
      }
    }
  }
  return Ok;
}

} // namespace vprof
