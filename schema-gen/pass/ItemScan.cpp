// ItemScan.cpp - see ItemScan.h.
//
// At pipeline start a container's member function is a call whose first
// argument is the container's address: `node->subs.push_back(s)` passes
// the address of member `subs` (a GEP), `g_queue.push(x)` the global's.
// The callee's mangled name says which function it is; only std::'s
// containers are read (`_ZNSt...`, `_ZNKSt...`), so a program's own method
// that happens to be called insert() or size() is no container's.
#include "ItemScan.h"
#include "DebugNames.h"
#include "GuardScan.h"
#include "WriteScan.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Operator.h"

#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"

#include <string>

extern "C" {
#include "../schema_table.h"
}

using namespace llvm;

namespace vprof {
namespace {

enum class Use { None, Walk, Add };

// The Itanium ABI spells a member function's name as its length and the
// name, closed by the `E` of the nested name: `9push_backE`, `4sizeEv`.
Use useOf(StringRef N) {
  // a string's characters are its value, not items someone added
  if ((!N.startswith("_ZNSt") && !N.startswith("_ZNKSt")) || N.contains("basic_string"))
    return Use::None;
  static const char *const Adds[] = {"9push_backE", "12emplace_backE", "10push_frontE",
                                     "13emplace_frontE", "4pushE", "7emplaceE", "6insertE"};
  static const char *const Walks[] = {"5beginEv", "3endEv", "4sizeEv", "4dataEv",
                                      "6cbeginEv", "4cendEv"};
  for (const char *A : Adds)
    if (N.contains(A))
      return Use::Add;
  for (const char *W : Walks)
    if (N.contains(W))
      return Use::Walk;
  return Use::None;
}

// One step back through a local clang keeps an address in at pipeline
// start (a range-for's `__range = &node->subs` reference, `auto &v =
// t->items`): the value stored into the local, when it is stored once; V
// itself otherwise.
const Value *storedOnce(const Value *V) {
  auto *L = dyn_cast<LoadInst>(V->stripPointerCasts());
  auto *A = L ? dyn_cast<AllocaInst>(L->getPointerOperand()->stripPointerCasts()) : nullptr;
  if (!A)
    return V;
  const StoreInst *Only = nullptr;
  for (const User *U : A->users())
    if (auto *S = dyn_cast<StoreInst>(U)) {
      if (S->getPointerOperand()->stripPointerCasts() != A || Only)
        return V;
      Only = S;
    }
  return Only ? Only->getValueOperand() : V;
}

// An element of an array a member or a global holds: through the constant
// member steps of a struct element (`seg->index[i].rel_offset`), the GEP
// that selects element i with an index that is not a constant. Holder is
// the address the container is named by: a member array's or a global
// array's own (`p->slots[i]`, `g_tab[i]`), or the member or global that
// holds the pointer (`p->index[i]`, `queue_[i]`: its load's address).
bool elementOf(const Value *Addr, const Value *&Holder, const Value *&Index) {
  const Value *V = Addr->stripPointerCasts();
  for (unsigned Depth = 0; Depth < 8; Depth++) {
    auto *G = dyn_cast<GEPOperator>(V);
    if (!G)
      return false;
    const Value *Var = nullptr;
    for (const llvm::Use &Idx : G->indices())
      if (!isa<Constant>(Idx.get())) {
        Var = Idx.get();
        break;
      }
    if (!Var) { // a member of the element: its element is further up
      V = G->getPointerOperand()->stripPointerCasts();
      continue;
    }
    const Value *Base = G->getPointerOperand()->stripPointerCasts();
    Index = Var;
    if (G->getNumIndices() > 1) { // `a[i]` of an array-typed member or global
      Holder = Base;
      return true;
    }
    if (auto *L = dyn_cast<LoadInst>(Base)) { // `p->index[i]`: a pointer held in a member
      Holder = L->getPointerOperand();
      // through a local that holds it (`const CellId *dirty = queue_;`,
      // `const int *l = g_log;`)
      if (isa<AllocaInst>(Holder->stripPointerCasts())) {
        const Value *Back = storedOnce(L)->stripPointerCasts();
        if (auto *BL = dyn_cast<LoadInst>(Back))
          Holder = BL->getPointerOperand();
        else if (isa<GEPOperator>(Back) || isa<GlobalVariable>(Back))
          Holder = Back;
      }
      return true;
    }
    if (isa<GEPOperator>(Base)) { // `(p->slots + 0)[i]`: a member array decayed
      Holder = Base;
      return true;
    }
    return false;
  }
  return false;
}

// Does F increment the state named S (`n++`, `p->n += 1`, `p->n = p->n + 1`):
// a store of an addition into it?
bool increments(const Function &F, const char *File, const VarResolver &R, vsg_table *T,
                const std::string &S, bool &Ok) {
  for (const BasicBlock &B : F)
    for (const Instruction &I : B) {
      auto *St = dyn_cast<StoreInst>(&I);
      auto *Add = St ? dyn_cast<BinaryOperator>(stripValueCasts(St->getValueOperand())) : nullptr;
      if (Add && Add->getOpcode() == Instruction::Add &&
          stateTarget(F, File, R, T, St->getPointerOperand(), Ok) == S)
        return true;
    }
  return false;
}

// A raw array's add or walk at I: `seg->index[seg->nindex++] = e` - a store
// into an element whose index is a count held in a member or a global that
// F increments (an append) - or, in a loop, a load of an element
// (`for (i = 0; i < ndirty_; i++) run(queue_[i])`, a binary search over
// `seg->index[mid]`). The container is named as @writes names the member
// or global that holds it; "" when I is neither.
std::string rawArrayUse(const Instruction &I, const Function &F, const char *File,
                        const VarResolver &R, const LoopInfo &LI, vsg_table *T, Use &U,
                        bool &Ok) {
  const Value *Addr = nullptr;
  if (auto *St = dyn_cast<StoreInst>(&I))
    Addr = St->getPointerOperand(), U = Use::Add;
  else if (auto *MI = dyn_cast<MemIntrinsic>(&I))
    Addr = MI->getRawDest(), U = Use::Add;
  else if (auto *Ld = dyn_cast<LoadInst>(&I))
    Addr = Ld->getPointerOperand(), U = Use::Walk;
  const Value *Holder = nullptr, *Index = nullptr;
  if (!Addr || !elementOf(Addr, Holder, Index))
    return "";
  if (U == Use::Walk && !LI.getLoopFor(I.getParent()))
    return "";
  if (U == Use::Add) {
    auto *Count = dyn_cast<LoadInst>(stripValueCasts(Index));
    std::string C = Count ? stateTarget(F, File, R, T, Count->getPointerOperand(), Ok) : "";
    if (C.empty() || !increments(F, File, R, T, C, Ok))
      return "";
  }
  return stateTarget(F, File, R, T, Holder, Ok);
}

// One `@items` line - `add` and `walk` for a std:: container, `append` and
// `scan` for an array (Raw) - and for an add made only when a predicate's
// answer says so (`if (index_entry_due(seg, cfg)) seg->index[seg->nindex++] =
// ...`), an `@addguard` line naming the predicate: an index filled too
// sparsely, a queue fed too eagerly, is that answer's doing.
bool record(const Instruction &I, const char *File, const std::string &Fn,
            const DominatorTree &DT, const LoopInfo &LI, Use U, bool Raw, const std::string &S,
            vsg_table *T) {
  const DILocation *Loc = I.getDebugLoc().get();
  unsigned Line = Loc ? Loc->getLine() : 0;
  const char *Word = U == Use::Add ? (Raw ? "append" : "add") : (Raw ? "scan" : "walk");
  if (vsg_table_add_from(T, File, Fn.c_str(), Line, Word, S.c_str(), 4) < 0)
    return false;
  if (U != Use::Add)
    return true;
  const Function *P = guardingPredicate(*I.getParent(), DT, LI);
  return !P || vsg_table_add_from(T, File, Fn.c_str(), Line, S.c_str(),
                                  P->getName().str().c_str(), 6) >= 0;
}

} // namespace

bool scanItems(const Function &F, const char *File, const VarResolver &R,
               const DominatorTree &DT, const LoopInfo &LI, vsg_table *T) {
  if (F.isDeclaration() || inSystemHeader(F)) // std::queue's own push_back
    return true;
  std::string Fn = functionName(F.getSubprogram());
  if (Fn.empty())
    return true;
  bool Ok = true;
  bool HasLoop = !LI.empty();
  for (const BasicBlock &B : F)
    for (const Instruction &I : B) {
      Use RU = Use::None;
      std::string RS = rawArrayUse(I, F, File, R, LI, T, RU, Ok);
      if (!RS.empty() && !record(I, File, Fn, DT, LI, RU, true, RS, T))
        Ok = false;
      auto *Call = dyn_cast<CallBase>(&I);
      if (!Call || Call->arg_size() == 0)
        continue;
      const Function *X = Call->getCalledFunction();
      if (!X)
        continue;
      Use U = useOf(X->getName());
      if (U == Use::None || (U == Use::Walk && !HasLoop))
        continue;
      const Value *This = Call->getArgOperand(0);
      std::string S = stateTarget(F, File, R, T, This, Ok);
      for (unsigned Depth = 0; S.empty() && Depth < 4; Depth++) {
        const Value *Back = storedOnce(This);
        if (Back == This)
          break;
        S = stateTarget(F, File, R, T, This = Back, Ok);
      }
      if (!S.empty() && !record(I, File, Fn, DT, LI, U, false, S, T))
        Ok = false;
    }
  return Ok;
}

} // namespace vprof
