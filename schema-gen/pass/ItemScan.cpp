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
#include "WriteScan.h"

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

} // namespace

bool scanItems(const Function &F, const char *File, const VarResolver &R, bool HasLoop,
               vsg_table *T) {
  if (F.isDeclaration() || inSystemHeader(F)) // std::queue's own push_back
    return true;
  std::string Fn = functionName(F.getSubprogram());
  if (Fn.empty())
    return true;
  bool Ok = true;
  for (const BasicBlock &B : F)
    for (const Instruction &I : B) {
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
      if (S.empty())
        continue;
      const DILocation *Loc = I.getDebugLoc().get();
      if (vsg_table_add_from(T, File, Fn.c_str(), Loc ? Loc->getLine() : 0,
                             U == Use::Add ? "add" : "walk", S.c_str(), 4) < 0)
        Ok = false;
    }
  return Ok;
}

} // namespace vprof
