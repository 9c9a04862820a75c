// CallCounts.cpp - call counts that survive inlining (vprof-cc; every call
// with --calls, by default only the guarded ones: see below).
//
// gmon's arcs come from mcount, which only functions that stay functions
// call: once -O2 inlines a static function, its calls and the calls made
// from its body are no arcs any more, and a decision to call (a guard that
// stopped or started firing) is invisible exactly where users build. This
// pass runs at the start of the pipeline, before inlining, and gives every
// direct call of a function defined in the module a counter: a plain load,
// add and store of an i64 that stays in place when the call is inlined.
// Increments are not atomic (as gcov's default): concurrent calls of one
// site may lose a few counts, never corrupt anything else.
//
// Per module: `__vprof_calls_counts` ([N x i64]) and a constant text of N
// lines "caller\tcallee\n" (linkage names, in counter order), registered
// by a constructor with the runtime's vprof_calls_register (declared weak:
// an object linked without libvprof just never registers). The runtime
// writes the counts at exit (FORMATS.md "calls.<id>").
//
// By default (`--calls=guarded`) only the calls the report's guard test rates are
// counted: each call a predicate's answer decides (GuardScan's `@guard`
// lines), each call a global or member decides outside the holder's loops
// (`@guardstate`, which --state-writers rates; the schema pass marks them)
// and the calls of the functions that hold one, the rate's denominator. Those are the arcs inlining takes from `--guards`
// (`if (e && fresh(e)) return e; miss(...)` with everything inlined into
// the request loop); a guarded call is taken less often than its holder
// runs, so the counters cost a fraction of counting every call.
#include "CallCounts.h"
#include "GuardScan.h"

#include "DebugNames.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace llvm;

namespace {

bool skipCaller(const Function &F) {
  if (F.isDeclaration() || F.hasAvailableExternallyLinkage())
    return true;
  if (F.hasFnAttribute(Attribute::Naked) || F.hasFnAttribute("coroutine.presplit"))
    return true;
  return F.getName().startswith("__vprof");
}

// A call the inliner may remove: a direct call of a function whose body is
// in this module (calls of other modules' functions stay calls, and gmon
// counts them).
const Function *countedCallee(const CallBase &CB) {
  if (CB.isInlineAsm())
    return nullptr;
  const Function *G = CB.getCalledFunction();
  if (!G || G->isIntrinsic() || G->isDeclaration() || G->hasAvailableExternallyLinkage())
    return nullptr;
  if (CB.isMustTailCall())      // nothing may sit between it and its ret
    return nullptr;
  return G;
}

// Every call instruction of the functions that may hold counters.
void forEachCall(Module &M, function_ref<void(Function &, CallBase &)> Fn) {
  for (Function &F : M) {
    if (skipCaller(F))
      continue;
    for (BasicBlock &BB : F)
      for (Instruction &I : BB)
        if (auto *CB = dyn_cast<CallBase>(&I))
          Fn(F, *CB);
  }
}

// A guarded call: the same, and a call of another unit's function too
// (a real call, but gmon rates it per call of the symbol its holder was
// inlined into).
const Function *guardedCallee(const CallBase &CB) {
  if (CB.isInlineAsm() || CB.isMustTailCall())
    return nullptr;
  const Function *G = CB.getCalledFunction();
  return G && !G->isIntrinsic() && !G->getName().empty() ? G : nullptr;
}

// The guarded calls of M's functions (not the system headers') and the
// calls of the functions that hold them.
SmallPtrSet<const CallBase *, 32> guardedSites(Module &M) {
  SmallPtrSet<const CallBase *, 32> Sites;
  if (!vprof::unitSelected(M))       // the schema's units: its guards are the report's
    return Sites;
  SmallPtrSet<const Function *, 32> Holders;
  for (Function &F : M) {
    // a system header's decisions are the library's, and its container
    // operations are everywhere: not counted
    if (skipCaller(F) || !F.getSubprogram() || vprof::inSystemHeader(F))
      continue;
    DominatorTree DT(F);
    LoopInfo LI(DT);
    vprof::forEachGuardedCall(F, DT, LI, [&](const CallBase &CB, const Function &) {
      if (guardedCallee(CB)) {
        Sites.insert(&CB);
        Holders.insert(&F);
      }
    });
    // the calls a global or member decides (the schema pass marked them),
    // outside the holder's loops: inside one the state is often the loop's
    // data bound (`i < n_index && !less(&a[j], &b[i])` in a merge: 700 M
    // counted calls, 1.23x the demo's CPU time), and the rate per call of
    // the holder mixes in the trip count anyway
    for (BasicBlock &BB : F)
      for (Instruction &I : BB)
        if (auto *CB = dyn_cast<CallBase>(&I))
          if (CB->getMetadata(vprof::StateGuardedKind) && !LI.getLoopFor(&BB) &&
              guardedCallee(*CB)) {
            Sites.insert(CB);
            Holders.insert(&F);
          }
  }
  forEachCall(M, [&](Function &, CallBase &CB) {
    const Function *G = countedCallee(CB);
    if (G && Holders.count(G))
      Sites.insert(&CB);
  });
  return Sites;
}

} // namespace

PreservedAnalyses vprof::CallCountsPass::run(Module &M, ModuleAnalysisManager &) {
  if (M.getGlobalVariable("__vprof_calls_counts", true))
    return PreservedAnalyses::all();            // a pipeline that runs twice (LTO)
  std::map<std::pair<const Function *, const Function *>, unsigned> Index;
  std::vector<std::pair<CallBase *, unsigned>> Sites;
  std::string Names;
  SmallPtrSet<const CallBase *, 32> Only;
  if (GuardedOnly)
    Only = guardedSites(M);
  forEachCall(M, [&](Function &F, CallBase &CB) {
    const Function *G = GuardedOnly ? (Only.count(&CB) ? CB.getCalledFunction() : nullptr)
                                    : countedCallee(CB);
    if (!G)
      return;
    auto Key = std::make_pair(static_cast<const Function *>(&F), G);
    auto It = Index.find(Key);
    if (It == Index.end()) {
      It = Index.emplace(Key, static_cast<unsigned>(Index.size())).first;
      Names += F.getName().str() + "\t" + G->getName().str() + "\n";
    }
    Sites.emplace_back(&CB, It->second);
  });
  if (Sites.empty())
    return PreservedAnalyses::all();

  LLVMContext &C = M.getContext();
  Type *I64 = Type::getInt64Ty(C);
  auto *ArrTy = ArrayType::get(I64, Index.size());
  auto *Counts = new GlobalVariable(M, ArrTy, false, GlobalValue::InternalLinkage,
                                    ConstantAggregateZero::get(ArrTy), "__vprof_calls_counts");
  // A type-based alias class of their own: no program access aliases a
  // counter, so in a loop without calls the optimiser can keep the count
  // in a register and store it once (the counters would otherwise pin
  // memory traffic into hot loops of inlined accessors).
  MDBuilder MDB(C);
  MDNode *Root = MDB.createTBAARoot("vprof call counters");
  MDNode *Scalar = MDB.createTBAAScalarTypeNode("vprof counter", Root);
  MDNode *Tag = MDB.createTBAAStructTagNode(Scalar, Scalar, 0);
  for (auto &S : Sites) {
    IRBuilder<> B(S.first);
    Value *P = B.CreateConstInBoundsGEP2_64(ArrTy, Counts, 0, S.second);
    LoadInst *V = B.CreateLoad(I64, P);
    V->setMetadata(LLVMContext::MD_tbaa, Tag);
    StoreInst *St = B.CreateStore(B.CreateAdd(V, ConstantInt::get(I64, 1)), P);
    St->setMetadata(LLVMContext::MD_tbaa, Tag);
  }

  // The constructor: if (vprof_calls_register) vprof_calls_register(counts, n, names)
  Constant *Text = ConstantDataArray::getString(C, Names, true);
  auto *NamesGV = new GlobalVariable(M, Text->getType(), true, GlobalValue::PrivateLinkage,
                                     Text, "__vprof_calls_names");
  Type *I8P = Type::getInt8PtrTy(C);
  auto *RegTy = FunctionType::get(Type::getVoidTy(C), {I8P, I64, I8P}, false);
  Function *Reg = M.getFunction("vprof_calls_register");
  if (!Reg)
    Reg = Function::Create(RegTy, GlobalValue::ExternalWeakLinkage, "vprof_calls_register", M);
  auto *Ctor = Function::Create(FunctionType::get(Type::getVoidTy(C), false),
                                GlobalValue::InternalLinkage, "__vprof_calls_ctor", M);
  BasicBlock *Entry = BasicBlock::Create(C, "entry", Ctor);
  BasicBlock *Call = BasicBlock::Create(C, "register", Ctor);
  BasicBlock *Done = BasicBlock::Create(C, "done", Ctor);
  IRBuilder<> B(Entry);
  B.CreateCondBr(B.CreateIsNotNull(Reg), Call, Done);
  B.SetInsertPoint(Call);
  B.CreateCall(RegTy, Reg,
               {B.CreatePointerCast(Counts, I8P), ConstantInt::get(I64, Index.size()),
                B.CreatePointerCast(NamesGV, I8P)});
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  B.CreateRetVoid();
  appendToGlobalCtors(M, Ctor, 0);
  return PreservedAnalyses::none();
}
