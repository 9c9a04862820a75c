// KeepVars.cpp - see KeepVars.h.
#include "KeepVars.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"

#include <cstdlib>
#include <cstring>

using namespace llvm;

namespace vprof {
namespace {

// Marks our asm calls, so the late pass finds them; the inliner copies it.
constexpr const char *KeepTag = "vprof.keep";

// The constraint that holds a value of type T without moving it to another
// register file, or null when T cannot be kept (aggregates, x87 long
// double, vectors, integers wider than a register).
const char *constraintFor(const Type *T) {
  if (T->isPointerTy() || (T->isIntegerTy() && T->getIntegerBitWidth() <= 64))
    return "r";
  if (T->isFloatTy() || T->isDoubleTy())
    return "x"; // an SSE register: where x86-64 computes floats and doubles
  return nullptr;
}

bool isFakeUse(const Instruction &I) {
  return isa<CallInst>(I) && I.getMetadata(KeepTag);
}

bool skipFunction(const Function &F) {
  if (F.hasFnAttribute(Attribute::OptimizeNone) || F.hasFnAttribute(Attribute::Naked) ||
      F.hasFnAttribute("coroutine.presplit"))
    return true;
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB)
      if (auto *CI = dyn_cast<CallInst>(&I))
        if (CI->isMustTailCall())
          return true;
  return false;
}

// Reads Var and hands the value to an empty asm, before Before.
void insertFakeUse(AllocaInst *Var, Instruction *Before) {
  Type *T = Var->getAllocatedType();
  IRBuilder<> B(Before);
  B.SetCurrentDebugLocation(Before->getDebugLoc());
  LoadInst *V = B.CreateLoad(T, Var, Var->getName() + ".keep");
  auto *FT = FunctionType::get(B.getVoidTy(), {T}, false);
  InlineAsm *Asm = InlineAsm::get(FT, "", constraintFor(T), /*hasSideEffects=*/true);
  CallInst *C = B.CreateCall(FT, Asm, {V});
  C->addFnAttr(Attribute::NoUnwind);
  C->addFnAttr(Attribute::WillReturn);
  C->addFnAttr(Attribute::InaccessibleMemOnly);
  C->setMetadata(KeepTag, MDNode::get(C->getContext(), {}));
}

// The variables that can be kept: promotable allocas (the optimiser turns
// them into registers, which is where they get lost) of a keepable type.
SmallVector<AllocaInst *, 8> keepable(Function &F,
                                      const SmallPtrSetImpl<const AllocaInst *> &Vars) {
  SmallVector<AllocaInst *, 8> Out;
  for (Instruction &I : F.getEntryBlock())
    if (auto *AI = dyn_cast<AllocaInst>(&I))
      if (Vars.count(AI) && constraintFor(AI->getAllocatedType()) &&
          isAllocaPromotable(AI))
        Out.push_back(AI);
  return Out;
}

// Whether the loop calls a function (not an intrinsic such as memcpy).
// Only such loops get fake uses at their latches: a loop without calls is
// what the vectoriser and the unroller turn into straight-line or vector
// code, and a value kept every iteration forbids that (2.4x slower on the
// pg14b1 case's byte loops), while a loop that calls out is not vectorised
// and one kept register costs little next to the call.
bool callsOut(const Loop &L) {
  for (const BasicBlock *BB : L.blocks())
    for (const Instruction &I : *BB)
      if (auto *CB = dyn_cast<CallBase>(&I))
        if (!CB->isInlineAsm() && !isa<IntrinsicInst>(CB))
          return true;
  return false;
}

// Latches of the loops with calls that assign a variable of Keep.
void loopFakeUses(Function &F, ArrayRef<AllocaInst *> Keep) {
  DominatorTree DT(F);
  LoopInfo LI(DT);
  if (LI.empty())
    return;
  DenseMap<const AllocaInst *, SmallPtrSet<const BasicBlock *, 8>> StoredIn;
  for (AllocaInst *AI : Keep)
    for (const User *U : AI->users())
      if (auto *St = dyn_cast<StoreInst>(U))
        if (St->getPointerOperand() == AI)
          StoredIn[AI].insert(St->getParent());
  for (Loop *L : LI.getLoopsInPreorder()) {
    if (!callsOut(*L))
      continue;
    SmallVector<BasicBlock *, 2> Latches;
    L->getLoopLatches(Latches);
    for (AllocaInst *AI : Keep) {
      bool Assigned = false;
      for (const BasicBlock *BB : StoredIn[AI])
        Assigned = Assigned || L->contains(BB);
      if (!Assigned)
        continue;
      for (BasicBlock *Latch : Latches)
        insertFakeUse(AI, Latch->getTerminator());
    }
  }
}

// Fake uses that keep nothing: a constant needs no register (DWARF gives
// the variable as a constant value), and a second use of the same value in
// one block only repeats the first.
bool dropUselessFakeUses(BasicBlock &BB) {
  bool Changed = false;
  SmallPtrSet<const Value *, 8> Seen;
  for (Instruction &I : make_early_inc_range(BB)) {
    if (!isFakeUse(I))
      continue;
    const Value *V = cast<CallInst>(I).getArgOperand(0);
    if (isa<Constant>(V) || !Seen.insert(V).second) {
      I.eraseFromParent();
      Changed = true;
    }
  }
  return Changed;
}

// Fake uses between a call and the ret after it move above the call.
bool hoistAboveTailCall(BasicBlock &BB) {
  auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator());
  if (!Ret)
    return false;
  SmallVector<Instruction *, 8> Fakes;
  Instruction *I = Ret->getPrevNode();
  while (I && (isFakeUse(*I) || isa<DbgInfoIntrinsic>(I))) {
    if (isFakeUse(*I))
      Fakes.push_back(I);
    I = I->getPrevNode();
  }
  auto *Call = dyn_cast_or_null<CallInst>(I);
  if (Fakes.empty() || !Call || Call->isInlineAsm() || isa<IntrinsicInst>(Call))
    return false;
  for (Instruction *FU : Fakes) {
    // A variable holding the call's result is only the return value now.
    if (cast<CallInst>(FU)->getArgOperand(0) == Call)
      FU->eraseFromParent();
    else
      FU->moveBefore(Call);
  }
  return true;
}

} // namespace

bool keepVarsEnabled() {
  const char *V = std::getenv("VPROF_KEEP_VARS");
  if (!V || !*V || !std::strcmp(V, "0"))
    return false;
  if (!std::strcmp(V, "1"))
    return true;
  report_fatal_error(Twine("vprof-schema: VPROF_KEEP_VARS='") + V +
                     "' is neither 1 (keep schema variables) nor 0", false);
}

bool keepVars(Function &F, const SmallPtrSetImpl<const AllocaInst *> &Vars) {
  if (Vars.empty() || skipFunction(F))
    return false;
  SmallVector<AllocaInst *, 8> Keep = keepable(F, Vars);
  if (Keep.empty())
    return false;
  // The exits first: loopFakeUses builds its own loop info and the new
  // instructions add no blocks.
  SmallVector<Instruction *, 4> Exits;
  for (BasicBlock &BB : F)
    if (isa<ReturnInst>(BB.getTerminator()) || isa<ResumeInst>(BB.getTerminator()))
      Exits.push_back(BB.getTerminator());
  for (Instruction *X : Exits)
    for (AllocaInst *AI : Keep)
      insertFakeUse(AI, X);
  loopFakeUses(F, Keep);
  return true;
}

bool tidyFakeUses(Function &F) {
  bool Changed = false;
  for (BasicBlock &BB : F) {
    Changed |= dropUselessFakeUses(BB);
    Changed |= hoistAboveTailCall(BB);
  }
  return Changed;
}

} // namespace vprof
