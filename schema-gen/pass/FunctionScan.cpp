// FunctionScan.cpp - see FunctionScan.h.
//
// The pass runs at the start of the pipeline, on the IR as clang emits it:
// every named variable lives in an alloca described by dbg.declare, every
// read is a load from it and every assignment a store to it, at all
// optimisation levels. So "a variable used in expression E" is "a load,
// reached from E through value-computing instructions, from a variable's
// address", and "the loop assigns v" is "a store to v's address inside it".
#include "FunctionScan.h"
#include "DebugNames.h"
#include "StructKeys.h"
#include "GuardScan.h"
#include "ItemScan.h"
#include "PredicateScan.h"
#include "RangeScan.h"
#include "SizeScan.h"
#include "StopScan.h"
#include "WriteScan.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

#include <vector>

extern "C" {
#include "../schema_table.h"
#include "vprof_format.h"
}

using namespace llvm;

namespace vprof {
namespace {

// Bounds the walk over one expression: conditions are small, but a PHI web
// or a huge generated expression must not make the compile slow.
constexpr unsigned MaxWalk = 512;

class Scanner {
public:
  Scanner(const Function &F, const char *File, const StructKeys &Keys, vsg_table *T,
          SmallPtrSetImpl<const AllocaInst *> *Keep)
      : F(F), File(File), T(T), Keep(Keep), R(F, Keys) {}

  bool run() {
    for (const BasicBlock &BB : F)
      for (const Instruction &I : BB) {
        visit(I);
        uses(I);
      }
    DominatorTree DT(const_cast<Function &>(F));
    LoopInfo LI(DT);
    for (const Loop *L : LI.getLoopsInPreorder())
      loopVars(*L);
    blocks(LI);
    if (!scanWrites(F, File, R, T))
      Ok = false;
    if (!scanGuards(F, File, DT, LI, T))
      Ok = false;
    if (!scanStateGuards(F, File, DT, LI, R, T))
      Ok = false;
    if (!scanSizes(F, File, R, T))
      Ok = false;
    if (!scanItems(F, File, R, DT, LI, T))
      Ok = false;
    if (!scanRanges(F, File, R, LI, T))
      Ok = false;
    if (!scanPredicate(F, File, LI, T))
      Ok = false;
    if (!scanStops(F, File, R, LI, T))
      Ok = false;
    return Ok;
  }

private:
  void add(const VarRef &V, unsigned Tags) {
    if (vsg_table_add_var(T, File, V.Function.c_str(), V.Line, V.Name.c_str(),
                          V.Type.c_str(), Tags | (V.Global ? VPF_TAG_GLOBAL : 0)) < 0)
      Ok = false;
    // Every local recorded (p too for `p->f`: vprof-meta reads f through p).
    if (Keep && V.Addr)
      if (auto *AI = dyn_cast<AllocaInst>(V.Addr))
        Keep->insert(AI);
    // Which struct member a member variable is, to join it with the
    // functions that write that member (`@writes`).
    if (!V.FieldKey.empty() &&
        vsg_table_add_field(T, File, V.Function.c_str(), V.Name.c_str(),
                            V.FieldKey.c_str(), V.FieldOffset) < 0)
      Ok = false;
  }

  void visit(const Instruction &I) {
    if (auto *BI = dyn_cast<BranchInst>(&I)) {
      if (BI->isConditional())
        walk(BI->getCondition(), VPF_TAG_COND, nullptr);
    } else if (auto *SI = dyn_cast<SwitchInst>(&I)) {
      walk(SI->getCondition(), VPF_TAG_COND, nullptr);
    } else if (auto *Sel = dyn_cast<SelectInst>(&I)) {
      walk(Sel->getCondition(), VPF_TAG_COND, nullptr);
    } else if (auto *CB = dyn_cast<CallBase>(&I)) {
      if (!isSourceCall(*CB))
        return;
      for (const Use &A : CB->args()) {
        VarRef V;
        // `f(&x)` hands x itself to the callee: record x when it is a
        // scalar whose value can be read.
        if (R.variable(A.get(), V) && isScalar(V.DIT))
          add(V, VPF_TAG_ARGS);
        else
          walk(A.get(), VPF_TAG_ARGS, nullptr);
      }
    }
  }

  // `@uses`: the globals this function reads, writes or takes the address
  // of, so the report attributes a global only to its users (a global is
  // readable at every PC, so "sampled here" says nothing).
  void uses(const Instruction &I) {
    if (isa<DbgInfoIntrinsic>(I))
      return;
    for (const Use &Op : I.operands()) {
      const Value *V = Op.get()->stripPointerCasts();
      if (auto *CE = dyn_cast<ConstantExpr>(V)) // &g.field, &g[3]
        V = CE->getOperand(0)->stripPointerCasts();
      auto *GV = dyn_cast<GlobalVariable>(V);
      if (!GV || !GlobalsSeen.insert(GV).second)
        continue;
      VarRef G;
      if (GV->isDeclaration()) {
        // extern, defined in another unit: no debug info here; its symbol
        // is its source name in C (a C++ mangled name simply never matches)
        G.Name = GV->getName().str();
        if (G.Name.empty() || G.Name.find('.') != std::string::npos)
          continue;
      } else if (!globalRef(*GV, G) || !G.Global) {
        continue;
      }
      if (FnName.empty())
        FnName = functionName(F.getSubprogram());
      if (vsg_table_add_use(T, File, FnName.c_str(), G.Name.c_str()) < 0)
        Ok = false;
    }
  }

  // Calls the programmer wrote: everything but the debug and lifetime
  // intrinsics clang adds (memcpy/memset/memmove stay: they are source calls).
  static bool isSourceCall(const CallBase &CB) {
    if (isa<DbgInfoIntrinsic>(CB))
      return false;
    if (isa<IntrinsicInst>(CB))
      return isa<MemIntrinsic>(CB);
    return true;
  }

  // Records (with Tags) or collects (into Out) every variable read in the
  // expression computing Root.
  void walk(const Value *Root, unsigned Tags, std::vector<VarRef> *Out) {
    SmallPtrSet<const Value *, 32> Seen;
    SmallVector<const Value *, 16> Work{Root};
    unsigned Budget = MaxWalk;
    while (!Work.empty() && Budget-- > 0) {
      const Value *V = Work.pop_back_val();
      if (!Seen.insert(V).second)
        continue;
      if (auto *Ld = dyn_cast<LoadInst>(V)) {
        VarRef Var, Base;
        Base.Name.clear();
        if (R.address(Ld->getPointerOperand(), Var, &Base)) {
          note(Var, Tags, Out);
          if (!Base.Name.empty())   // `p->len` reads p too
            note(Base, Tags, Out);
        } else {
          Work.push_back(Ld->getPointerOperand());
        }
        continue;
      }
      if (auto *CB = dyn_cast<CallBase>(V)) {
        // `while (!more(avail))`: the call's arguments are part of the
        // condition (paper §2: available_mem is cond|args).
        if (isSourceCall(*CB))
          for (const Use &A : CB->args())
            Work.push_back(A.get());
        continue;
      }
      if (auto *Phi = dyn_cast<PHINode>(V)) {
        // `a && b` ends in a PHI of `false` and b; which one flows in is
        // decided by the branch on a, so that branch's condition is part of
        // the value too.
        for (const BasicBlock *In : Phi->blocks())
          if (auto *BI = dyn_cast<BranchInst>(In->getTerminator()))
            if (BI->isConditional())
              Work.push_back(BI->getCondition());
      }
      if (isa<BinaryOperator>(V) || isa<CmpInst>(V) || isa<CastInst>(V) ||
          isa<SelectInst>(V) || isa<PHINode>(V) || isa<GetElementPtrInst>(V) ||
          isa<UnaryOperator>(V) || isa<ExtractValueInst>(V) || isa<FreezeInst>(V))
        for (const Use &Op : cast<User>(V)->operands())
          Work.push_back(Op.get());
    }
  }

  void note(const VarRef &V, unsigned Tags, std::vector<VarRef> *Out) {
    if (Out)
      Out->push_back(V);
    else
      add(V, Tags);
  }

  // Induction variables: read in the loop's exit condition and assigned in
  // the loop (`i` in `for (i = 0; i < n; i++)`, `p` in `p = p->next`).
  void loopVars(const Loop &L) {
    StringSet<> Assigned;
    for (const BasicBlock *BB : L.blocks())
      for (const Instruction &I : *BB)
        if (auto *St = dyn_cast<StoreInst>(&I)) {
          VarRef V;
          if (R.address(St->getPointerOperand(), V, nullptr))
            Assigned.insert(V.Function + "\n" + V.Name);
        }
    if (Assigned.empty())
      return;
    SmallVector<BasicBlock *, 4> Exiting;
    L.getExitingBlocks(Exiting);
    std::vector<VarRef> Used;
    for (const BasicBlock *BB : Exiting) {
      const Instruction *Term = BB->getTerminator();
      if (auto *BI = dyn_cast<BranchInst>(Term)) {
        if (BI->isConditional())
          walk(BI->getCondition(), 0, &Used);
      } else if (auto *SI = dyn_cast<SwitchInst>(Term)) {
        walk(SI->getCondition(), 0, &Used);
      }
    }
    for (const VarRef &V : Used)
      if (Assigned.count(V.Function + "\n" + V.Name))
        add(V, VPF_TAG_LOOP);
  }

  static const char *blockKind(const BasicBlock &BB, const LoopInfo &LI) {
    if (&BB == &BB.getParent()->getEntryBlock())
      return "entry";
    if (LI.isLoopHeader(&BB))
      return "loop_header";
    if (LI.getLoopFor(&BB))
      return "loop_body";
    bool Arm = false;
    for (const BasicBlock *P : predecessors(&BB)) {
      const Loop *PL = LI.getLoopFor(P);
      if (PL && !PL->contains(&BB))
        return "loop_exit";
      const Instruction *PT = P->getTerminator();
      if (isa<SwitchInst>(PT) ||
          (isa<BranchInst>(PT) && cast<BranchInst>(PT)->isConditional()))
        Arm = true;
    }
    const Instruction *Term = BB.getTerminator();
    if (Arm || isa_and_nonnull<SwitchInst>(Term) ||
        (isa_and_nonnull<BranchInst>(Term) && cast<BranchInst>(Term)->isConditional()))
      return "branch";
    return "plain";
  }

  void blocks(const LoopInfo &LI) {
    std::string Fn = functionName(F.getSubprogram());
    unsigned Id = 0;
    for (const BasicBlock &BB : F) {
      unsigned Lo = 0, Hi = 0;
      for (const Instruction &I : BB) {
        if (isa<DbgInfoIntrinsic>(I))
          continue;
        unsigned Ln = I.getDebugLoc() ? I.getDebugLoc().getLine() : 0;
        if (Ln == 0)
          continue;
        Lo = Lo && Lo < Ln ? Lo : Ln;
        Hi = Hi > Ln ? Hi : Ln;
      }
      if (vsg_table_add_block(T, File, Fn.c_str(), Id++, Lo, Hi,
                              blockKind(BB, LI)) < 0)
        Ok = false;
    }
  }

  const Function &F;
  const char *File;
  vsg_table *T;
  SmallPtrSetImpl<const AllocaInst *> *Keep;
  SmallPtrSet<const GlobalVariable *, 16> GlobalsSeen;
  std::string FnName;
  VarResolver R;
  bool Ok = true;
};

} // namespace

bool scanFunction(const Function &F, const char *File, const StructKeys &Keys,
                  vsg_table *T, SmallPtrSetImpl<const AllocaInst *> *Keep) {
  return Scanner(F, File, Keys, T, Keep).run();
}

} // namespace vprof
