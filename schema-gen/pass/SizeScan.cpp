// SizeScan.cpp - see SizeScan.h.
//
// At pipeline start the code still keeps its locals in allocas: the mask
// of `size_t mask = ht->size - 1;` is a store into a local and a load from
// it, and so is the bucket number of `int b = h & mask; ... t[b]`. Both
// walks follow a local's stores and loads to get from the table's size to
// the address it indexes.
#include "SizeScan.h"
#include "DebugNames.h"
#include "WriteScan.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Instructions.h"

#include <string>
#include <vector>

extern "C" {
#include "../schema_table.h"
}

using namespace llvm;

namespace vprof {
namespace {

const unsigned MaxDepth = 6;

const AllocaInst *localOf(const Value *Ptr) {
  return dyn_cast<AllocaInst>(Ptr->stripPointerCasts());
}

// What a size or mask expression loads, through arithmetic and locals.
// Masky: the expression is shaped as a mask is (`n - 1`, `1 << n`, a
// function named for a mask or a size: `hashmask(n)`, `bucketMask(b)`), so
// the other operand of the `&` is the hash, not the size.
struct SizeWalk {
  SmallVector<const Value *, 2> Ptrs;
  bool Masky = false;
  SmallPtrSet<const Value *, 16> Seen;

  void walk(const Value *V, unsigned Depth) {
    if (Depth > MaxDepth || !Seen.insert(V).second)
      return;
    if (auto *C = dyn_cast<CastInst>(V))
      return walk(C->getOperand(0), Depth + 1);
    if (auto *L = dyn_cast<LoadInst>(V)) {
      if (const AllocaInst *A = localOf(L->getPointerOperand())) {
        for (const User *U : A->users())
          if (auto *S = dyn_cast<StoreInst>(U))
            if (localOf(S->getPointerOperand()) == A)
              walk(S->getValueOperand(), Depth + 1);
        return;
      }
      Ptrs.push_back(L->getPointerOperand());
      return;
    }
    if (auto *B = dyn_cast<BinaryOperator>(V)) {
      auto *K = dyn_cast<ConstantInt>(B->getOperand(1));
      switch (B->getOpcode()) {
      case Instruction::Sub:
        Masky |= K && K->isOne();
        break;
      case Instruction::Add:
        Masky |= K && K->isMinusOne();
        break;
      case Instruction::Shl:
        Masky = true;
        break;
      case Instruction::Mul:
      case Instruction::LShr:
      case Instruction::UDiv:
        break;
      default:
        return;
      }
      for (const Value *Op : B->operands())
        if (!isa<Constant>(Op))
          walk(Op, Depth + 1);
      return;
    }
    if (auto *Call = dyn_cast<CallBase>(V)) {
      const Function *X = Call->getCalledFunction();
      if (!X || X->isIntrinsic())
        return;
      std::string N = X->getName().lower();
      if (N.find("mask") == std::string::npos && N.find("size") == std::string::npos)
        return;
      Masky = true;
      for (const Value *A : Call->args())
        walk(A, Depth + 1);
    }
  }
};

// Does the address G (an element the index selects) get stored into, here?
bool storedInto(const Value *G, unsigned Depth) {
  if (Depth > 3)
    return false;
  for (const User *U : G->users()) {
    if (auto *S = dyn_cast<StoreInst>(U)) {
      if (S->getPointerOperand() == G)
        return true;
    } else if (isa<GetElementPtrInst>(U) || isa<CastInst>(U)) {
      if (storedInto(U, Depth + 1))
        return true;
    }
  }
  return false;
}

// Does V, a reduced value, index memory: an address's index (not its base),
// a returned index (`hash_to_index`), or a bucket number kept in memory
// (`hj->cur_bucket = h & mask`)? Slot: the element it selects is stored
// into here.
struct IndexUse {
  bool Found = false, Slot = false;
  SmallPtrSet<const Value *, 16> Seen;

  void walk(const Value *V, unsigned Depth) {
    if (Depth > MaxDepth || !Seen.insert(V).second)
      return;
    for (const User *U : V->users()) {
      if (isa<CastInst>(U)) {
        walk(U, Depth + 1);
      } else if (auto *G = dyn_cast<GetElementPtrInst>(U)) {
        if (G->getPointerOperand() == V)
          continue;
        Found = true;
        Slot |= storedInto(G, 0);
      } else if (isa<ReturnInst>(U)) {
        Found = true;
      } else if (auto *Call = dyn_cast<CallBase>(U)) {
        // a container's element: `b_[i]` is a call of operator[] (or at())
        // at pipeline start, which returns the element's reference
        const Function *X = Call->getCalledFunction();
        StringRef N = X ? X->getName() : StringRef();
        if (N.startswith("_ZN") && (N.contains("ixE") || N.contains("2atE"))) {
          Found = true;
          Slot |= storedInto(Call, 0);
        }
      } else if (auto *S = dyn_cast<StoreInst>(U)) {
        if (S->getValueOperand() != V)
          continue;
        const AllocaInst *A = localOf(S->getPointerOperand());
        if (!A) {
          Found = true;
          continue;
        }
        for (const User *AU : A->users())
          if (auto *L = dyn_cast<LoadInst>(AU))
            walk(L, Depth + 1);
      }
    }
  }
};

// Do two state names belong to one holder: members of one struct type
// (`struct jobqueue.head`, `struct jobqueue.cap`), or both globals?
bool sameHolder(const std::string &A, const std::string &B) {
  bool MA = A.rfind("struct ", 0) == 0 || A.rfind("class ", 0) == 0 || A.rfind("union ", 0) == 0;
  bool MB = B.rfind("struct ", 0) == 0 || B.rfind("class ", 0) == 0 || B.rfind("union ", 0) == 0;
  if (MA != MB)
    return false;
  if (!MA)
    return true;
  size_t DA = A.rfind('.'), DB = B.rfind('.');
  return DA != std::string::npos && DA == DB && A.compare(0, DA, B, 0, DB) == 0;
}

} // namespace

bool scanSizes(const Function &F, const char *File, const VarResolver &R, vsg_table *T) {
  if (F.isDeclaration())
    return true;
  std::string Fn = functionName(F.getSubprogram());
  if (Fn.empty())
    return true;
  bool Ok = true;
  for (const BasicBlock &B : F)
    for (const Instruction &I : B) {
      auto *Op = dyn_cast<BinaryOperator>(&I);
      if (!Op)
        continue;
      SizeWalk Size;
      const Value *Key = nullptr;       // what is reduced: the hash
      switch (Op->getOpcode()) {
      case Instruction::And:
        // the mask's side: shaped as a mask, reading state
        for (unsigned K = 0; K < 2; K++) {
          SizeWalk W;
          W.walk(Op->getOperand(K), 0);
          if (W.Masky && !W.Ptrs.empty()) {
            Size.Ptrs = W.Ptrs;
            Key = Op->getOperand(1 - K);
            break;
          }
        }
        break;
      case Instruction::URem:
      case Instruction::SRem:
        Size.walk(Op->getOperand(1), 0);
        Key = Op->getOperand(0);
        break;
      default:
        continue;
      }
      if (Size.Ptrs.empty())
        continue;
      std::vector<std::string> Sizes;
      for (const Value *P : Size.Ptrs) {
        std::string S = stateTarget(F, File, R, T, P, Ok);
        if (!S.empty())
          Sizes.push_back(S);
      }
      // A ring buffer's cursor (`q->ring[(q->head + q->count) % q->cap]`)
      // is the table's own state, not a key's hash: its index walks the
      // ring in order, and no chain grows with the entries.
      SizeWalk KeyWalk;
      KeyWalk.walk(Key, 0);
      bool Cursor = false;
      for (const Value *P : KeyWalk.Ptrs) {
        std::string K = stateTarget(F, File, R, T, P, Ok);
        for (const std::string &S : Sizes)
          Cursor |= !K.empty() && sameHolder(K, S);
      }
      if (Cursor || Sizes.empty())
        continue;
      IndexUse Use;
      Use.walk(Op, 0);
      if (!Use.Found)
        continue;
      const DILocation *Loc = I.getDebugLoc().get();
      for (const std::string &S : Sizes)
        if (Ok && vsg_table_add_from(T, File, Fn.c_str(), Loc ? Loc->getLine() : 0,
                                     Use.Slot ? "slot" : "index", S.c_str(), 3) < 0)
          Ok = false;
    }
  return Ok;
}

} // namespace vprof
