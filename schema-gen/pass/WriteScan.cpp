// WriteScan.cpp - see WriteScan.h.
//
// Like the rest of the pass it runs on the IR as clang emitted it (pipeline
// start, every -O level): each assignment is a store whose address is a
// global, a GEP selecting a struct member (`p->f`, `s.f`, `g.f`, `a[i].f`)
// or an array element, and nothing has been inlined or merged yet. The
// target is named by the innermost struct member the address selects, by
// type ("struct T.f"), except for a member of a global struct, named by the
// global ("g.f"), whose type joins it to the readers through a `@field`.
#include "WriteScan.h"
#include "DebugNames.h"
#include "StructKeys.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Path.h"
#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Operator.h"

#include <algorithm>
#include <string>

extern "C" {
#include "../schema_table.h"
}

using namespace llvm;

namespace vprof {
namespace {

// What a typed pointer points to; null for opaque pointers (then only the
// debug types can tell).
Type *pointeeIR(const Value *V) {
  Type *T = V->getType();
  if (!T->isPointerTy() || T->isOpaquePointerTy())
    return nullptr;
  return T->getNonOpaquePointerElementType();
}

// One struct step of a GEP: index I (I >= 1) selects field K of ST.
struct Step {
  unsigned I;
  StructType *ST;
  unsigned K;
};

// Dir + Name as one normalized path (Name when already absolute).
static std::string fullPath(llvm::StringRef Dir, llvm::StringRef Name) {
  llvm::SmallString<256> P(Name);
  if (!llvm::sys::path::is_absolute(P) && !Dir.empty()) {
    llvm::SmallString<256> Full(Dir);
    llvm::sys::path::append(Full, P);
    P = Full;
  }
  llvm::sys::path::remove_dots(P, true);
  return std::string(P.str());
}

class WriteScanner {
public:
  WriteScanner(const Function &F, const char *File, const VarResolver &R, vsg_table *T)
      : F(F), File(File), R(R), Keys(R.keys()), T(T) {}

  // The target of an access through Ptr (not a whole-object write).
  std::string named(const Value *Ptr, bool &OkOut) {
    std::string N = target(Ptr, false, 0);
    OkOut = OkOut && Ok;
    return N;
  }

  bool run() {
    for (const BasicBlock &BB : F)
      for (const Instruction &I : BB) {
        if (auto *St = dyn_cast<StoreInst>(&I)) {
          write(I, St->getPointerOperand(),
                St->getValueOperand()->getType()->isAggregateType(), St);
          returned(I, St);
        }
        else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I))
          write(I, RMW->getPointerOperand(), false, nullptr);
        else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I))
          write(I, CX->getPointerOperand(), false, nullptr);
        else if (auto *MI = dyn_cast<MemIntrinsic>(&I)) // memset, memcpy, memmove
          write(I, MI->getRawDest(), true, nullptr);
      }
    return Ok;
  }

private:
  // `v = g(...)`: a local variable takes a program function's return value
  // (`@from`), so a reader of an anomalous v can be told where its value
  // was decided (a level, a page count computed by a helper). At pipeline
  // start the call's result is stored into v's alloca as it is.
  //
  // A choice between an answer and a constant (`budget = spinning ?
  // spin_budget(q) : 0`, `n = cached ? n0 : count(x)`) reaches the store
  // as a phi or select of the call and the constant: the call still
  // decides the value whenever it is made. Each call among the choices is
  // a producer; a choice of two variables or of a computed value is not
  // one (the value is no function's answer).
  void returned(const Instruction &I, const StoreInst *St) {
    VarRef Ref;
    if (!R.variable(stripCasts(St->getPointerOperand()), Ref) || Ref.Global ||
        !Ref.FieldKey.empty() || Ref.Name.empty())
      return;
    SmallVector<const Function *, 2> Callees;
    if (!producers(St->getValueOperand(), Callees, 0))
      return;
    const DILocation *L = I.getDebugLoc().get();
    for (const Function *Callee : Callees)
      if (vsg_table_add_from(T, File, Ref.Function.c_str(), L ? L->getLine() : 0,
                             Ref.Name.c_str(), Callee->getName().str().c_str(), 0) < 0)
        Ok = false;
  }

  // The functions whose answer V is: a call's, or each call's among the
  // choices of a phi or select whose other choices are constants. False
  // when any choice is something else. Depth-bounded: nested `?:` chains
  // are short, and phis of a loop can cycle.
  static bool producers(const Value *V, SmallVectorImpl<const Function *> &Out,
                        unsigned Depth) {
    V = stripValueCasts(V);
    if (auto *Call = dyn_cast<CallBase>(V)) {
      const Function *Callee = Call->getCalledFunction();
      if (!Callee || Callee->isIntrinsic() || Callee->getName().empty())
        return false;
      if (std::find(Out.begin(), Out.end(), Callee) == Out.end())
        Out.push_back(Callee);
      return true;
    }
    if (Depth >= 4)
      return false;
    SmallVector<const Value *, 4> Choices;
    if (auto *Sel = dyn_cast<SelectInst>(V)) {
      Choices.push_back(Sel->getTrueValue());
      Choices.push_back(Sel->getFalseValue());
    } else if (auto *Phi = dyn_cast<PHINode>(V)) {
      for (const Value *In : Phi->incoming_values())
        Choices.push_back(In);
    } else {
      return false;
    }
    size_t Before = Out.size();
    for (const Value *C : Choices)
      if (!isa<Constant>(C) && !producers(C, Out, Depth + 1))
        return false;
    return Out.size() > Before;
  }

  // The local V loads, when each of its stores is a function's answer
  // (`divisor = next_divisor(t); ... resize(t, divisor)`): those functions.
  static bool localProducers(const Value *V, SmallVectorImpl<const Function *> &Out) {
    const AllocaInst *A = loadedLocal(V);
    return A && everyStoreTo(A, [&](const StoreInst &S) {
             return producers(S.getValueOperand(), Out, 0);
           });
  }

  // The parameter of F whose value V is as passed in: the parameter itself
  // or a load of the alloca clang spills it to, never written again.
  static const Argument *parameter(const Value *V) {
    if (auto *Arg = dyn_cast<Argument>(stripValueCasts(V)))
      return Arg;
    const AllocaInst *A = loadedLocal(V);
    const Argument *Arg = nullptr;
    bool Once = A && everyStoreTo(A, [&](const StoreInst &S) {
                  return !Arg && (Arg = dyn_cast<Argument>(S.getValueOperand()));
                });
    return Once ? Arg : nullptr;
  }

  // The functions whose answers the callers in this unit pass as the
  // parameter Arg of F (`resize(t, next_divisor(t))`, or through a local
  // that holds the answer): the value a store of Arg writes is theirs.
  static void passedAnswers(const Function &F, const Argument &Arg,
                            SmallVectorImpl<const Function *> &Out) {
    for (const User *U : F.users()) {
      auto *Call = dyn_cast<CallBase>(U);
      if (!Call || Call->getCalledFunction() != &F || Arg.getArgNo() >= Call->arg_size())
        continue;
      const Value *V = Call->getArgOperand(Arg.getArgNo());
      SmallVector<const Function *, 2> Mine;
      if (producers(V, Mine, 0) || localProducers(V, Mine))
        for (const Function *P : Mine)
          if (P != &F && std::find(Out.begin(), Out.end(), P) == Out.end())
            Out.push_back(P);
    }
  }

  // St: the store, when it is one - a state that takes a function's answer
  // as it is (`allowance_ = pacer_.next_allowance(st)`, `g_limit =
  // compute_limit()`) gets a `@setfrom` line too, so a reader of the state
  // can be told which function decided its value (`@from` does the same
  // for locals). So does one that stores its parameter as passed, when a
  // caller in this unit passes a function's answer (`fz->divisor =
  // divisor` in the resize that `fz_rehash(fz, fz_next_divisor(fz))`
  // calls): the size was chosen where the answer was computed.
  void write(const Instruction &I, const Value *Ptr, bool Whole, const StoreInst *St) {
    std::string Target = target(Ptr, Whole, 0);
    if (Target.empty())
      return;
    // The function whose source holds the store: the location's own scope
    // (at pipeline start nothing is inlined, so it is F's subprogram).
    const DILocation *L = I.getDebugLoc().get();
    const DISubprogram *SP = L ? L->getScope()->getSubprogram() : nullptr;
    if (!SP)
      SP = F.getSubprogram();
    std::string Fn = functionName(SP);
    // The unit's own file is named as its variable lines name it (clang may
    // split a path outside the compilation directory differently for the
    // unit and for a location: "/tmp" + "src/x.c"); other files (headers)
    // as the location says.
    std::string Path = File;
    if (L && !L->getFilename().empty()) {
      const DISubprogram *FS = F.getSubprogram();
      const DICompileUnit *CU = FS ? FS->getUnit() : nullptr;
      bool Unit = CU && fullPath(L->getDirectory(), L->getFilename()) ==
                            fullPath(CU->getDirectory(), CU->getFilename());
      if (!Unit)
        Path = L->getFilename().str();
    }
    if (vsg_table_add_write(T, Path.c_str(), Fn.c_str(), L ? L->getLine() : 0,
                            Target.c_str()) < 0)
      Ok = false;
    SmallVector<const Function *, 2> Callees;
    if (!St || Whole)
      return;
    if (!producers(St->getValueOperand(), Callees, 0)) {
      Callees.clear();
      if (const Argument *Arg = parameter(St->getValueOperand()))
        passedAnswers(F, *Arg, Callees);
    }
    for (const Function *Callee : Callees)
      if (vsg_table_add_from(T, Path.c_str(), Fn.c_str(), L ? L->getLine() : 0, Target.c_str(),
                             Callee->getName().str().c_str(), 5) < 0)
        Ok = false;
  }

  // The file-scope global G's name as the schema knows it ("" if none): its
  // source name, or for an extern defined elsewhere (no debug info here)
  // its symbol, which is the source name in C.
  static std::string globalName(const GlobalVariable &G, VarRef *Out) {
    VarRef V;
    if (globalRef(G, V)) {
      if (!V.Global) // a function-local static: written by its function only
        return "";
      if (Out)
        *Out = V;
      return V.Name;
    }
    if (!G.isDeclaration())
      return "";
    std::string N = G.getName().str();
    return N.find('.') == std::string::npos ? N : "";
  }

  // The target written through address Ptr; Whole: the store writes the
  // whole object Ptr points to (memset, aggregate store).
  std::string target(const Value *Ptr, bool Whole, unsigned Depth) {
    if (Depth > 8)
      return "";
    const Value *P = stripCasts(Ptr);
    if (auto *G = dyn_cast<GlobalVariable>(P))
      return globalName(*G, nullptr);
    if (auto *GEP = dyn_cast<GEPOperator>(P))
      return member(GEP, Whole, Depth);
    if (!Whole || isa<AllocaInst>(P) || isa<Argument>(P))
      return ""; // a local, or a pointer to a scalar: not a named object
    // `memset(p, 0, sizeof *p)`, `*p = tmp`: the whole struct p points to.
    const DICompositeType *CT = asStruct(R.objectType(P));
    auto *ST = dyn_cast_or_null<StructType>(pointeeIR(P));
    if (ST && (!CT || !Keys.matches(CT, ST)))
      CT = Keys.fromIR(ST);
    return CT ? Keys.key(CT) : "";
  }

  std::string member(const GEPOperator *GEP, bool Whole, unsigned Depth) {
    SmallVector<Step, 4> Steps;
    Type *Ty = GEP->getSourceElementType();
    for (unsigned I = 1; I < GEP->getNumIndices(); I++) {
      const Value *Idx = GEP->getOperand(I + 1);
      if (auto *ST = dyn_cast<StructType>(Ty)) {
        auto *CI = dyn_cast<ConstantInt>(Idx);
        if (!CI || ST->isOpaque() || CI->getZExtValue() >= ST->getNumElements())
          return "";
        Steps.push_back({I, ST, unsigned(CI->getZExtValue())});
        Ty = ST->getElementType(unsigned(CI->getZExtValue()));
      } else if (auto *AT = dyn_cast<ArrayType>(Ty)) {
        Ty = AT->getElementType();
      } else {
        return "";
      }
    }
    // The innermost member a key can name wins.
    for (size_t S = Steps.size(); S-- > 0;) {
      std::string Tgt = step(GEP, Steps[S]);
      if (!Tgt.empty())
        return Tgt;
    }
    const Value *Base = stripCasts(GEP->getPointerOperand());
    if (auto *G = dyn_cast<GlobalVariable>(Base)) {
      if (Steps.empty())
        return globalName(*G, nullptr); // `g[i] = x`: an element of g
      // A member of a global struct the unit has no debug type for (an
      // extern): by byte offset, which the global's `@field` maps back.
      VarRef V;
      std::string N = globalName(*G, &V);
      const Step &First = Steps.front();
      if (N.empty() || V.DIT || First.I != 1 || !firstIndexZero(GEP))
        return "";
      uint64_t Off = Keys.layout().getStructLayout(First.ST)->getElementOffset(First.K);
      return N + "+" + std::to_string(Off);
    }
    // Part of the object the base address selects: `p->in.x` through an
    // anonymous struct is a write to `p->in`; `p->arr[i]` to `p->arr`.
    if (isa<GEPOperator>(Base))
      return target(Base, Steps.empty() && Whole, Depth + 1);
    if (Steps.empty() && Whole) // `memset(p + i, ...)`: the object p + i points to
      return target(Base, true, Depth + 1);
    return "";
  }

  static bool firstIndexZero(const GEPOperator *GEP) {
    auto *C = dyn_cast<ConstantInt>(GEP->getOperand(1));
    return C && C->isZero();
  }

  // The target for struct step S of GEP: "g.f" when it selects a member of
  // the global g itself, else "struct T.f"; "" when the member has no name
  // a key can use (bit-field, anonymous struct without a typedef).
  std::string step(const GEPOperator *GEP, const Step &S) {
    const DICompositeType *CT = asStruct(R.objectTypeIn(GEP, S.I));
    if (!CT || !Keys.matches(CT, S.ST))
      CT = Keys.fromIR(S.ST);
    if (!CT)
      return "";
    uint64_t Off = Keys.layout().getStructLayout(S.ST)->getElementOffset(S.K);
    const DIDerivedType *M = StructKeys::memberAt(CT, Off, true);
    if (!M || M->getTag() != dwarf::DW_TAG_member)
      return "";
    std::string Key = Keys.key(CT);
    std::string Field = Key.empty() ? "" : Key + "." + M->getName().str();
    if (S.I == 1 && firstIndexZero(GEP))
      if (auto *G = dyn_cast<GlobalVariable>(stripCasts(GEP->getPointerOperand()))) {
        std::string N = globalName(*G, nullptr);
        if (N.empty())
          return "";
        std::string Var = N + "." + M->getName().str();
        // The global's member joins the readers of its type through this.
        if (!Field.empty() &&
            vsg_table_add_field(T, File, "#global", Var.c_str(), Field.c_str(),
                                unsigned(Off)) < 0)
          Ok = false;
        return Var;
      }
    return Field;
  }

  const Function &F;
  const char *File;
  const VarResolver &R;
  const StructKeys &Keys;
  vsg_table *T;
  bool Ok = true;
};

} // namespace

bool scanWrites(const Function &F, const char *File, const VarResolver &R, vsg_table *T) {
  return WriteScanner(F, File, R, T).run();
}

std::string stateTarget(const Function &F, const char *File, const VarResolver &R, vsg_table *T,
                        const Value *Ptr, bool &Ok) {
  return WriteScanner(F, File, R, T).named(Ptr, Ok);
}

} // namespace vprof
