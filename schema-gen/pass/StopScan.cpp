// StopScan.cpp - see StopScan.h.
//
// At pipeline start the test is an icmp of two loads: the limit's, from a
// member or a global (a GEP with constant indices, or the global itself),
// and the value held against it - a local whose alloca the loop stores
// into. That local is a counter or a cursor when one of its stores inside
// the loop computes from its own value (adds to it, doubles it); then the
// loop walks data and its bound is how much there is. A `break` out of a block with
// locals leaves through clang's cleanup: the block stores a constant into
// the cleanup slot and jumps to a switch on it, whose case leaves the loop.
#include "StopScan.h"
#include "DebugNames.h"
#include "WriteScan.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Operator.h"

#include <string>

extern "C" {
#include "../schema_table.h"
}

using namespace llvm;

namespace vprof {
namespace {

// A load of one scalar of state: every index of the address is a constant
// (not an element an index selects: that is data, not a limit).
bool scalarState(const LoadInst *Ld) {
  const Value *P = stripCasts(Ld->getPointerOperand());
  for (unsigned D = 0; D < 8; D++) {
    auto *GEP = dyn_cast<GEPOperator>(P);
    if (!GEP)
      return isa<GlobalVariable>(P) || isa<Argument>(P) || isa<LoadInst>(P);
    for (const Use &Idx : GEP->indices())
      if (!isa<ConstantInt>(Idx.get()))
        return false;
    P = stripCasts(GEP->getPointerOperand());
  }
  return false;
}

// Is the value a counter or a cursor of L: a load of a local that L stores
// a value computed from its own into (`i++`, `pos += len`, `w *= 2`, `p++`)?
bool stepped(const Value *V, const Loop &L) {
  const AllocaInst *A = loadedLocal(V);
  if (!A)
    return false;
  for (const User *U : A->users()) {
    auto *St = dyn_cast<StoreInst>(U);
    if (!St || stripCasts(St->getPointerOperand()) != A || !L.contains(St))
      continue;
    const Value *X = stripValueCasts(St->getValueOperand());
    if (auto *B = dyn_cast<BinaryOperator>(X)) {
      for (const Value *Op : B->operands())
        if (loadedLocal(Op) == A)
          return true;
    } else if (auto *G = dyn_cast<GEPOperator>(X)) { // a pointer cursor: p++
      if (loadedLocal(G->getPointerOperand()) == A)
        return true;
    }
  }
  return false;
}

// Does control entering S leave L: S is outside it, or S picks an exit of
// clang's cleanup switch (`store K, slot; br` ... `switch (load slot)`,
// through the blocks that end the locals' lifetimes)?
bool leavesLoop(const BasicBlock *S, const Loop &L) {
  const Value *Slot = nullptr;
  const ConstantInt *K = nullptr;
  for (unsigned Hop = 0; Hop < 6; Hop++) {
    if (!L.contains(S))
      return true;
    for (const Instruction &I : *S)
      if (auto *St = dyn_cast<StoreInst>(&I))
        if (auto *C = dyn_cast<ConstantInt>(St->getValueOperand()))
          if (isa<AllocaInst>(stripCasts(St->getPointerOperand())))
            Slot = stripCasts(St->getPointerOperand()), K = C;
    const Instruction *Term = S->getTerminator();
    if (auto *Sw = dyn_cast<SwitchInst>(Term)) {
      auto *Ld = dyn_cast<LoadInst>(Sw->getCondition());
      if (!K || !Ld || stripCasts(Ld->getPointerOperand()) != Slot)
        return false;
      return !L.contains(Sw->findCaseValue(K)->getCaseSuccessor());
    }
    auto *Br = dyn_cast<BranchInst>(Term);
    if (!Br || Br->isConditional())
      return false;
    S = Br->getSuccessor(0);
  }
  return false;
}

} // namespace

bool scanStops(const Function &F, const char *File, const VarResolver &R, const LoopInfo &LI,
               vsg_table *T) {
  std::string Fn = F.isDeclaration() ? std::string() : functionName(F.getSubprogram());
  if (Fn.empty())
    return true;
  bool Ok = true;
  for (const Loop *L : LI.getLoopsInPreorder()) {
    for (const BasicBlock *B : L->blocks()) {
      if (LI.getLoopFor(B) != L)
        continue; // an inner loop's test: that loop's
      auto *Br = dyn_cast<BranchInst>(B->getTerminator());
      auto *Cmp = Br && Br->isConditional() ? dyn_cast<ICmpInst>(Br->getCondition()) : nullptr;
      if (!Cmp || Cmp->isEquality())
        continue; // a pointer or a key found is no limit reached
      if (leavesLoop(Br->getSuccessor(0), *L) == leavesLoop(Br->getSuccessor(1), *L))
        continue; // not a test that decides whether the loop goes on
      for (unsigned Side = 0; Side < 2; Side++) {
        auto *Lim = dyn_cast<LoadInst>(stripValueCasts(Cmp->getOperand(Side)));
        const Value *Other = Cmp->getOperand(1 - Side);
        if (!Lim || !scalarState(Lim) || isa<Constant>(stripValueCasts(Other)) ||
            stepped(Other, *L))
          continue;
        std::string S = stateTarget(F, File, R, T, Lim->getPointerOperand(), Ok);
        if (S.empty())
          continue;
        const DILocation *Loc = Cmp->getDebugLoc().get();
        if (vsg_table_add_from(T, File, Fn.c_str(), Loc ? Loc->getLine() : 0, "limit",
                               S.c_str(), 9) < 0)
          Ok = false;
      }
    }
  }
  return Ok;
}

} // namespace vprof
