// DebugNames.cpp - see DebugNames.h.
#include "DebugNames.h"
#include "StructKeys.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Operator.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

extern "C" {
#include "../component_filter.h"
#include "vprof_format.h"
}

using namespace llvm;

namespace vprof {

// Typedefs, qualifiers and member wrappers hide the type that decides how a
// value is read; strip them.
const DIType *stripType(const DIType *T) {
  for (unsigned I = 0; T && I < 32; I++) {
    auto *D = dyn_cast<DIDerivedType>(T);
    if (!D)
      break;
    switch (D->getTag()) {
    case dwarf::DW_TAG_typedef:
    case dwarf::DW_TAG_const_type:
    case dwarf::DW_TAG_volatile_type:
    case dwarf::DW_TAG_restrict_type:
    case dwarf::DW_TAG_atomic_type:
    case dwarf::DW_TAG_member:
      T = D->getBaseType();
      continue;
    default:
      return T;
    }
  }
  return T;
}

// A C++ type's scopes in front of its name, as the source spells it:
// `std::string`, `Router::Route`. Inline namespaces (libstdc++'s __cxx11)
// are left out, as the source leaves them out; C types have no scopes.
static std::string scoped(const DIScope *Scope, StringRef Name) {
  std::string Prefix;
  for (unsigned I = 0; Scope && I < 32; I++, Scope = Scope->getScope()) {
    if (auto *NS = dyn_cast<DINamespace>(Scope)) {
      if (NS->getExportSymbols())
        continue;
      Prefix = (NS->getName().empty() ? std::string("(anonymous namespace)")
                                      : NS->getName().str()) + "::" + Prefix;
    } else if (auto *CT = dyn_cast<DICompositeType>(Scope)) {
      if (CT->getName().empty())
        break;
      Prefix = CT->getName().str() + "::" + Prefix;
    } else {
      break; // a unit, a file, or a function (local types: the name alone)
    }
  }
  return Prefix + Name.str();
}

std::string typeName(const DIType *T, unsigned Depth) {
  if (!T)
    return "void";
  if (Depth > 12)
    return "...";
  if (auto *B = dyn_cast<DIBasicType>(T))
    return B->getName().str();
  if (auto *D = dyn_cast<DIDerivedType>(T)) {
    const DIType *Base = D->getBaseType();
    switch (D->getTag()) {
    case dwarf::DW_TAG_pointer_type: {
      if (Base && isa<DISubroutineType>(Base))
        return "function pointer";
      std::string S = typeName(Base, Depth + 1);
      return S + (!S.empty() && S.back() == '*' ? "*" : " *");
    }
    case dwarf::DW_TAG_reference_type:
      return typeName(Base, Depth + 1) + " &";
    case dwarf::DW_TAG_rvalue_reference_type:
      return typeName(Base, Depth + 1) + " &&";
    case dwarf::DW_TAG_const_type:
    case dwarf::DW_TAG_volatile_type: {
      const char *Q = D->getTag() == dwarf::DW_TAG_const_type ? "const" : "volatile";
      std::string S = typeName(Base, Depth + 1);
      // `char *const` reads right to left; `const char` left to right.
      if (!S.empty() && S.back() == '*')
        return S + Q;
      return std::string(Q) + " " + S;
    }
    case dwarf::DW_TAG_typedef: // std::string, not the class it names
      return scoped(D->getScope(), D->getName());
    case dwarf::DW_TAG_ptr_to_member_type:
      return "member pointer";
    default:
      return typeName(Base, Depth + 1);
    }
  }
  if (auto *C = dyn_cast<DICompositeType>(T)) {
    std::string Name = C->getName().empty() ? "<anonymous>" : C->getName().str();
    // C++ types (clang gives them an ODR identifier) are written as in C++:
    // scoped, without `struct`/`class`
    if (!C->getIdentifier().empty() && C->getTag() != dwarf::DW_TAG_array_type)
      return scoped(C->getScope(), Name);
    switch (C->getTag()) {
    case dwarf::DW_TAG_structure_type: return "struct " + Name;
    case dwarf::DW_TAG_union_type: return "union " + Name;
    case dwarf::DW_TAG_enumeration_type: return "enum " + Name;
    case dwarf::DW_TAG_class_type: return "class " + Name;
    case dwarf::DW_TAG_array_type: {
      std::string S = typeName(C->getBaseType(), Depth + 1);
      for (const DINode *E : C->getElements()) {
        auto *SR = dyn_cast_or_null<DISubrange>(E);
        auto *CI = SR ? SR->getCount().dyn_cast<ConstantInt *>() : nullptr;
        S += CI ? "[" + std::to_string(CI->getSExtValue()) + "]" : "[]";
      }
      return S;
    }
    default:
      return Name;
    }
  }
  if (isa<DISubroutineType>(T))
    return "function";
  return T->getName().empty() ? "?" : T->getName().str();
}

bool isScalar(const DIType *T) {
  T = stripType(T);
  if (!T)
    return false;
  if (isa<DIBasicType>(T))
    return true;
  if (auto *D = dyn_cast<DIDerivedType>(T))
    return D->getTag() == dwarf::DW_TAG_pointer_type;
  if (auto *C = dyn_cast<DICompositeType>(T))
    return C->getTag() == dwarf::DW_TAG_enumeration_type;
  return false;
}

std::string functionName(const DISubprogram *SP) {
  if (!SP->getLinkageName().empty())
    return SP->getLinkageName().str();
  return SP->getName().str();
}

// The subprogram a function-local static belongs to, or null at file scope.
static const DISubprogram *owningSubprogram(const DIScope *S) {
  for (unsigned I = 0; S && I < 64; I++) {
    if (auto *LS = dyn_cast<DILocalScope>(S))
      return LS->getSubprogram();
    if (isa<DICompileUnit>(S) || isa<DIFile>(S))
      return nullptr;
    S = S->getScope();
  }
  return nullptr;
}

bool globalRef(const GlobalVariable &GV, VarRef &Out) {
  SmallVector<DIGlobalVariableExpression *, 1> GVEs;
  GV.getDebugInfo(GVEs);
  for (DIGlobalVariableExpression *GVE : GVEs) {
    DIGlobalVariable *V = GVE->getVariable();
    if (!V || V->getName().empty())
      continue;
    const DISubprogram *SP = owningSubprogram(V->getScope());
    Out.Function = SP ? functionName(SP) : "#global";
    Out.Name = V->getName().str();
    Out.DIT = V->getType();
    Out.Type = typeName(Out.DIT);
    Out.Line = V->getLine();
    Out.Global = !SP;
    Out.Addr = nullptr;
    return true;
  }
  return false;
}

// Bitcasts and address-space casts only: Value::stripPointerCasts would also
// strip all-zero GEPs, which are accesses to a struct's first member.
const Value *stripValueCasts(const Value *V) {
  while (auto *C = dyn_cast<CastInst>(V))
    V = C->getOperand(0);
  return V;
}

bool marksLifetime(const User *U) {
  if (auto *II = dyn_cast<IntrinsicInst>(U))
    return II->isLifetimeStartOrEnd();
  if (!isa<BitCastInst>(U) || U->user_empty())
    return false;
  for (const User *W : U->users()) {
    auto *II = dyn_cast<IntrinsicInst>(W);
    if (!II || !II->isLifetimeStartOrEnd())
      return false;
  }
  return true;
}

const AllocaInst *loadedLocal(const Value *V) {
  auto *L = dyn_cast<LoadInst>(stripValueCasts(V));
  return L ? dyn_cast<AllocaInst>(stripCasts(L->getPointerOperand())) : nullptr;
}

bool everyStoreTo(const AllocaInst *A, function_ref<bool(const StoreInst &)> Each) {
  unsigned Stores = 0;
  for (const User *U : A->users()) {
    if (auto *St = dyn_cast<StoreInst>(U)) {
      if (St->getPointerOperand() != A || !Each(*St))
        return false;
      Stores++;
    } else if (!isa<LoadInst>(U) && !marksLifetime(U)) {
      return false;
    }
  }
  return Stores > 0;
}

const Value *stripCasts(const Value *V) {
  for (unsigned I = 0; I < 16; I++) {
    auto *Op = dyn_cast<Operator>(V);
    if (!Op || (Op->getOpcode() != Instruction::BitCast &&
                Op->getOpcode() != Instruction::AddrSpaceCast))
      break;
    V = Op->getOperand(0);
  }
  return V;
}

VarResolver::VarResolver(const Function &F, const StructKeys &Keys)
    : Keys(Keys), DL(Keys.layout()) {
  for (const Instruction &I : instructions(F)) {
    auto *DD = dyn_cast<DbgDeclareInst>(&I);
    if (!DD || !DD->getVariable() || !DD->getAddress())
      continue;
    const DILocalVariable *V = DD->getVariable();
    // Compiler-made variables have no source name; C++ `this` is
    // artificial too, but members are reached through it (`this->n`).
    if (V->getName().empty() || (V->isArtificial() && !V->isObjectPointer()))
      continue;
    Locals.try_emplace(stripCasts(DD->getAddress()), V);
  }
}

bool VarResolver::variable(const Value *Ptr, VarRef &Out) const {
  Ptr = stripCasts(Ptr);
  if (auto *GV = dyn_cast<GlobalVariable>(Ptr))
    return globalRef(*GV, Out);
  auto It = Locals.find(Ptr);
  if (It == Locals.end())
    return false;
  const DILocalVariable *V = It->second;
  const DISubprogram *SP = V->getScope() ? V->getScope()->getSubprogram() : nullptr;
  if (!SP)
    return false;
  Out.Function = functionName(SP);
  Out.Name = V->getName().str();
  Out.DIT = V->getType();
  Out.Type = typeName(Out.DIT);
  Out.Line = V->getLine();
  Out.Global = false;
  Out.Addr = Ptr;
  return true;
}

bool VarResolver::address(const Value *Ptr, VarRef &Out, VarRef *Base) const {
  Ptr = stripCasts(Ptr);
  if (variable(Ptr, Out))
    return true;
  if (auto *GEP = dyn_cast<GEPOperator>(Ptr))
    return member(GEP, Out, Base);
  return false;
}

// `s.f` is a GEP (0, k) on the struct variable's address; `p->f` the same
// GEP on the value loaded from the pointer variable. The member is found by
// byte offset, since IR field numbers do not follow the source (padding,
// bit-fields).
bool VarResolver::member(const GEPOperator *GEP, VarRef &Out, VarRef *Base) const {
  auto *ST = dyn_cast<StructType>(GEP->getSourceElementType());
  if (!ST || ST->isOpaque() || GEP->getNumIndices() != 2)
    return false;
  auto *I0 = dyn_cast<ConstantInt>(GEP->getOperand(1));
  auto *I1 = dyn_cast<ConstantInt>(GEP->getOperand(2));
  if (!I0 || !I0->isZero() || !I1 || I1->getZExtValue() >= ST->getNumElements())
    return false;
  const Value *B = stripCasts(GEP->getPointerOperand());
  VarRef BV;
  bool Arrow = false;
  if (!variable(B, BV)) {
    auto *LI = dyn_cast<LoadInst>(B);
    if (!LI || !variable(LI->getPointerOperand(), BV))
      return false;
    Arrow = true;
  }
  const DIType *T = stripType(BV.DIT);
  if (Arrow) {
    auto *PT = dyn_cast_or_null<DIDerivedType>(T);
    if (!PT || PT->getTag() != dwarf::DW_TAG_pointer_type)
      return false;
    T = stripType(PT->getBaseType());
  }
  auto *CT = dyn_cast_or_null<DICompositeType>(T);
  if (!CT || (CT->getTag() != dwarf::DW_TAG_structure_type &&
              CT->getTag() != dwarf::DW_TAG_class_type))
    return false;
  uint64_t Off = DL.getStructLayout(ST)->getElementOffset(I1->getZExtValue());
  for (const DINode *E : CT->getElements()) {
    auto *M = dyn_cast_or_null<DIDerivedType>(E);
    if (!M || M->getTag() != dwarf::DW_TAG_member || M->isBitField() ||
        M->isStaticMember() || M->getName().empty() ||
        M->getOffsetInBits() != Off * 8)
      continue;
    Out = BV;
    Out.Name = BV.Name + (Arrow ? "->" : ".") + M->getName().str();
    Out.DIT = M->getBaseType();
    Out.Type = typeName(Out.DIT);
    // Through a cast the debug type may be another struct's: no key then.
    std::string K = Keys.matches(CT, ST) ? Keys.key(CT) : "";
    Out.FieldKey = K.empty() ? K : K + "." + M->getName().str();
    Out.FieldOffset = unsigned(Off);
    if (Base && Arrow) // `p->f` also reads p; `s.f` does not read all of s
      *Base = BV;
    return true;
  }
  return false;
}

// The debug type of the object reached by stepping from a T object
// through the indices [1, Upto) of GEP (index 0 is pointer arithmetic
// and keeps the type): struct fields by byte offset, array elements.
static const DIType *descend(const DIType *T, const GEPOperator *GEP, unsigned Upto,
                             const StructKeys &Keys) {
  const DataLayout &DL = Keys.layout();
  Type *Ty = GEP->getSourceElementType();
  unsigned N = GEP->getNumIndices();
  for (unsigned I = 1; I < Upto && I < N && T; I++) {
    const Value *Idx = GEP->getOperand(I + 1);
    if (auto *ST = dyn_cast<StructType>(Ty)) {
      auto *CI = dyn_cast<ConstantInt>(Idx);
      auto *CT = asStruct(T);
      if (!CI || !CT || ST->isOpaque() || CI->getZExtValue() >= ST->getNumElements() ||
          !Keys.matches(CT, ST)) // a cast made the debug type another object's
        return nullptr;
      unsigned K = unsigned(CI->getZExtValue());
      const DIDerivedType *M =
          StructKeys::memberAt(CT, DL.getStructLayout(ST)->getElementOffset(K), false);
      if (!M)
        return nullptr;
      T = stripType(M->getBaseType());
      Ty = ST->getElementType(K);
    } else if (auto *AT = dyn_cast<ArrayType>(Ty)) {
      // One IR array level is one DWARF dimension; `int a[3][4]` is one
      // debug type with two subranges: give up on those.
      auto *CT = dyn_cast<DICompositeType>(T);
      if (!CT || CT->getTag() != dwarf::DW_TAG_array_type || CT->getElements().size() != 1)
        return nullptr;
      T = stripType(CT->getBaseType());
      Ty = AT->getElementType();
    } else {
      return nullptr;
    }
  }
  return T;
}

// What a pointer (or reference) type points to, stripped.
static const DIType *pointee(const DIType *T) {
  auto *PT = dyn_cast_or_null<DIDerivedType>(stripType(T));
  if (!PT || (PT->getTag() != dwarf::DW_TAG_pointer_type &&
              PT->getTag() != dwarf::DW_TAG_reference_type &&
              PT->getTag() != dwarf::DW_TAG_rvalue_reference_type))
    return nullptr;
  return stripType(PT->getBaseType());
}

const DIType *VarResolver::objectType(const Value *Addr, unsigned Depth) const {
  if (Depth > 8)
    return nullptr;
  Addr = stripCasts(Addr);
  VarRef V;
  if (variable(Addr, V))
    return stripType(V.DIT);
  if (auto *LI = dyn_cast<LoadInst>(Addr))
    return pointee(objectType(LI->getPointerOperand(), Depth + 1));
  if (auto *GEP = dyn_cast<GEPOperator>(Addr))
    return objectTypeIn(GEP, GEP->getNumIndices(), Depth);
  if (auto *CB = dyn_cast<CallBase>(Addr)) { // `table_of(x)->size = 0`
    const Function *Callee = CB->getCalledFunction();
    const DISubprogram *SP = Callee ? Callee->getSubprogram() : nullptr;
    const DISubroutineType *ST = SP ? SP->getType() : nullptr;
    if (ST && ST->getTypeArray().size() > 0)
      return pointee(ST->getTypeArray()[0]);
  }
  return nullptr;
}

const DIType *VarResolver::objectTypeIn(const GEPOperator *GEP, unsigned Upto,
                                        unsigned Depth) const {
  const DIType *T = objectType(GEP->getPointerOperand(), Depth + 1);
  return T ? descend(T, GEP, Upto, Keys) : nullptr;
}

bool unitSelected(const Module &M) {
  auto CUs = M.debug_compile_units();
  if (CUs.begin() == CUs.end())
    return false;
  const DICompileUnit *CU = *CUs.begin();
  return vsg_component_selected(std::getenv("VPROF_COMPONENT"), CU->getFilename().str().c_str(),
                                CU->getDirectory().str().c_str());
}

bool inSystemHeader(const Function &F) {
  const DISubprogram *SP = F.getSubprogram();
  const DIFile *File = SP ? SP->getFile() : nullptr;
  if (!File)
    return false;
  SmallString<256> Path(File->getFilename());
  if (!sys::path::is_absolute(Path)) {
    Path = File->getDirectory();
    sys::path::append(Path, File->getFilename());
  }
  return vpf_system_path(Path.c_str());
}

} // namespace vprof
