// CallCounts.cpp - call counts that survive inlining (vprof-cc --calls).
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
#include "CallCounts.h"

#include "llvm/IR/Constants.h"
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

} // namespace

PreservedAnalyses vprof::CallCountsPass::run(Module &M, ModuleAnalysisManager &) {
  if (M.getGlobalVariable("__vprof_calls_counts", true))
    return PreservedAnalyses::all();            // a pipeline that runs twice (LTO)
  std::map<std::pair<const Function *, const Function *>, unsigned> Index;
  std::vector<std::pair<CallBase *, unsigned>> Sites;
  std::string Names;
  for (Function &F : M) {
    if (skipCaller(F))
      continue;
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        auto *CB = dyn_cast<CallBase>(&I);
        const Function *G = CB ? countedCallee(*CB) : nullptr;
        if (!G)
          continue;
        auto Key = std::make_pair(static_cast<const Function *>(&F), G);
        auto It = Index.find(Key);
        if (It == Index.end()) {
          It = Index.emplace(Key, static_cast<unsigned>(Index.size())).first;
          Names += F.getName().str() + "\t" + G->getName().str() + "\n";
        }
        Sites.emplace_back(CB, It->second);
      }
  }
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
