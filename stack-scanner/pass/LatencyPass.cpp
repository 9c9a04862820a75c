// LatencyPass.cpp - LLVM 14 pass plugin (build/lib/vprof-latency.so) that
// gives every defined function the LDB-style frame record the stack scanner
// polls. The record layout and the exact entry/exit sequence are specified
// in stack-scanner/rt/lat_abi.h; this file only emits that sequence.
//
// Use: clang-14 -fpass-plugin=build/lib/vprof-latency.so ... and link
// build/lib/libvprof-latency.a (or libvprof.so, which contains it).
// The pass runs at the end of the optimisation pipeline (after inlining), so
// only calls that survive inlining are instrumented, as in LDB, whose
// instrumentation lives in the backend prologue/epilogue.
//
// Functions are skipped when they are declarations, naked, coroutines before
// splitting, carry the `disable_sanitizer_instrumentation` attribute, or
// their name starts with "__vprof" (runtime helpers).
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <vector>

using namespace llvm;

namespace {

struct Abi {
  StructType *TlsTy;    // { i8*, i64 }  prefix of struct vl_tls
  StructType *FrameTy;  // { i64, i8*, i8*, i8* }  struct vl_frame
  GlobalVariable *Tls;
  FunctionCallee Slow;
  Function *RetAddr;
};

Abi getAbi(Module &M) {
  LLVMContext &C = M.getContext();
  Type *I8P = Type::getInt8PtrTy(C);
  Type *I64 = Type::getInt64Ty(C);
  Abi A;
  A.TlsTy = StructType::get(C, {I8P, I64});
  A.FrameTy = StructType::get(C, {I64, I8P, I8P, I8P});
  A.Tls = M.getGlobalVariable("__vprof_lat_tls");
  if (!A.Tls) {
    A.Tls = new GlobalVariable(M, A.TlsTy, false, GlobalValue::ExternalLinkage,
                               nullptr, "__vprof_lat_tls", nullptr,
                               GlobalValue::InitialExecTLSModel);
  }
  A.Slow = M.getOrInsertFunction("__vprof_lat_enter_slow", I8P, I8P, I8P);
  // preserve_most: the runtime's assembly trampoline saves the argument
  // registers, so the rarely taken call does not force the fast path to
  // keep its values in callee-saved registers.
  if (auto *SF = dyn_cast<Function>(A.Slow.getCallee()))
    SF->setCallingConv(CallingConv::PreserveMost);
  A.RetAddr = Intrinsic::getDeclaration(&M, Intrinsic::returnaddress);
  return A;
}

bool skip(const Function &F) {
  if (F.isDeclaration() || F.hasAvailableExternallyLinkage())
    return true;
  if (F.hasFnAttribute(Attribute::Naked) ||
      F.hasFnAttribute(Attribute::DisableSanitizerInstrumentation) ||
      F.hasFnAttribute("coroutine.presplit"))
    return true;
  return F.getName().startswith("__vprof");
}

bool returnsTwice(const CallBase &CB) {
  if (CB.hasFnAttr(Attribute::ReturnsTwice))
    return true;
  const Function *Callee = CB.getCalledFunction();
  return Callee && Callee->hasFnAttribute(Attribute::ReturnsTwice);
}

// Pointer into struct vl_tls / struct vl_frame fields.
Value *field(IRBuilder<> &B, StructType *Ty, Value *Base, unsigned I) {
  return B.CreateStructGEP(Ty, Base, I);
}

void storeTop(IRBuilder<> &B, const Abi &A, Value *V) {
  StoreInst *S = B.CreateAlignedStore(V, field(B, A.TlsTy, A.Tls, 0), Align(8));
  // Release: the record's fields are visible before the record is linked.
  S->setAtomic(AtomicOrdering::Release);
  // Keep the compiler from moving later stack writes above the unlink
  // (x86-64 keeps store order in hardware).
  B.CreateFence(AtomicOrdering::SequentiallyConsistent, SyncScope::SingleThread);
}

bool instrument(Function &F, const Abi &A) {
  LLVMContext &C = F.getContext();
  Type *I8P = Type::getInt8PtrTy(C);

  // Collect the places to patch before the CFG changes.
  std::vector<Instruction *> Exits, Resets;
  for (BasicBlock &BB : F) {
    if (BB.isLandingPad())
      Resets.push_back(BB.getLandingPadInst());
    for (Instruction &I : BB) {
      if (isa<ReturnInst>(I) || isa<ResumeInst>(I))
        Exits.push_back(&I);
      else if (auto *CB = dyn_cast<CallInst>(&I)) {
        if (CB->isMustTailCall())
          Exits.push_back(CB);
        else if (returnsTwice(*CB))
          Resets.push_back(CB);
      } else if (auto *IB = dyn_cast<InvokeInst>(&I)) {
        if (returnsTwice(*IB))
          return false;  // an invoke of setjmp: too odd to patch safely
      }
    }
    if (isa<CatchSwitchInst>(BB.getFirstNonPHI()) ||
        isa<FuncletPadInst>(BB.getFirstNonPHI()))
      return false;     // Windows EH funclets: not supported
  }

  BasicBlock &Entry = F.getEntryBlock();
  IRBuilder<> B(&Entry, Entry.begin());
  AllocaInst *Rec = B.CreateAlloca(A.FrameTy, nullptr, "vprof.lat.rec");
  Rec->setAlignment(Align(16));

  // Code goes after the entry block's static allocas.
  BasicBlock::iterator IP = Entry.begin();
  while (isa<AllocaInst>(&*IP))
    ++IP;
  B.SetInsertPoint(&Entry, IP);

  Value *GenP = field(B, A.TlsTy, A.Tls, 1);
  Value *Gen = B.CreateAdd(B.CreateAlignedLoad(B.getInt64Ty(), GenP, Align(8)),
                           B.getInt64(1));
  B.CreateAlignedStore(Gen, GenP, Align(8));
  B.CreateAlignedStore(Gen, field(B, A.FrameTy, Rec, 0), Align(16));
  Value *RecP = B.CreateBitCast(Rec, I8P);
  Value *Top = B.CreateAlignedLoad(I8P, field(B, A.TlsTy, A.Tls, 0), Align(8));
  Value *Bad = B.CreateICmpULE(B.CreatePtrToInt(Top, B.getInt64Ty()),
                               B.CreatePtrToInt(RecP, B.getInt64Ty()));

  MDBuilder MDB(C);
  Instruction *Term = SplitBlockAndInsertIfThen(
      Bad, &*B.GetInsertPoint(), false, MDB.createBranchWeights(1, 1 << 20));
  BasicBlock *SlowBB = Term->getParent();
  BasicBlock *Cont = Term->getSuccessor(0);
  B.SetInsertPoint(Term);
  CallInst *Fixed = B.CreateCall(A.Slow, {RecP, Top});
  Fixed->setCallingConv(CallingConv::PreserveMost);

  B.SetInsertPoint(Cont, Cont->begin());
  PHINode *Prev = B.CreatePHI(I8P, 2, "vprof.lat.prev");
  Prev->addIncoming(Top, cast<Instruction>(Bad)->getParent());
  Prev->addIncoming(Fixed, SlowBB);
  B.CreateAlignedStore(Prev, field(B, A.FrameTy, Rec, 1), Align(8));
  B.CreateAlignedStore(B.CreateBitCast(&F, I8P), field(B, A.FrameTy, Rec, 2), Align(16));
  B.CreateAlignedStore(B.CreateCall(A.RetAddr, {B.getInt32(0)}),
                       field(B, A.FrameTy, Rec, 3), Align(8));
  storeTop(B, A, RecP);

  for (Instruction *I : Exits) {
    B.SetInsertPoint(I);
    storeTop(B, A, Prev);
  }
  for (Instruction *I : Resets) {
    B.SetInsertPoint(I->getNextNode());
    storeTop(B, A, RecP);
  }
  return true;
}

// The record makes every instrumented function read and write memory (TLS
// and its frame); attributes inferred earlier that say otherwise must go, or
// later passes (or LTO) could drop or merge calls.
void dropMemoryAttrs(Function &F) {
  for (Attribute::AttrKind K :
       {Attribute::ReadNone, Attribute::ReadOnly, Attribute::WriteOnly,
        Attribute::ArgMemOnly, Attribute::InaccessibleMemOnly,
        Attribute::InaccessibleMemOrArgMemOnly, Attribute::NoSync}) {
    F.removeFnAttr(K);
    for (User *U : F.users())
      if (auto *CB = dyn_cast<CallBase>(U))
        if (CB->getCalledOperand() == &F)
          CB->removeFnAttr(K);
  }
}

struct LatencyPass : PassInfoMixin<LatencyPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    std::vector<Function *> Todo;
    for (Function &F : M)
      if (!skip(F))
        Todo.push_back(&F);
    if (Todo.empty())
      return PreservedAnalyses::all();
    Abi A = getAbi(M);
    bool Changed = false;
    for (Function *F : Todo)
      if (instrument(*F, A)) {
        dropMemoryAttrs(*F);
        Changed = true;
      }
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "vprof-latency", "1", [](PassBuilder &PB) {
            PB.registerOptimizerLastEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  MPM.addPass(LatencyPass());
                });
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM,
                   ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name != "vprof-latency")
                    return false;
                  MPM.addPass(LatencyPass());
                  return true;
                });
          }};
}
