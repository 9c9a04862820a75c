// DebugNames.h - source names of IR values, from the debug-info metadata
// clang attaches (dbg.declare, DIGlobalVariable, DICompositeType members).
// Part of the thin C++ side of the schema pass: it only answers "which source
// variable does this address denote, and what is it called".
#ifndef VPROF_DEBUGNAMES_H
#define VPROF_DEBUGNAMES_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Operator.h"

#include <string>

namespace vprof {

class StructKeys;

// One source variable, or one member access on a variable (`s.len`, `p->len`).
struct VarRef {
  std::string Function; // "#global" for file-scope variables
  std::string Name;
  std::string Type;
  unsigned Line = 0;
  bool Global = false;
  const llvm::DIType *DIT = nullptr;
  // For a member access: "struct T.f" (empty when T has no name) and the
  // member's byte offset in T, for the `@field` line.
  std::string FieldKey;
  unsigned FieldOffset = 0;
  // A function-local variable's storage (its alloca), for --keep-vars;
  // null for globals. For `s.f` it is s's, for `p->f` p's.
  const llvm::Value *Addr = nullptr;
};

// Typedefs, qualifiers and member wrappers removed.
const llvm::DIType *stripType(const llvm::DIType *T);
// Bitcasts and address-space casts removed (not all-zero GEPs, which
// select a struct's first member).
const llvm::Value *stripCasts(const llvm::Value *V);
// Every cast instruction removed (sext, zext, trunc, bitcast...): the value
// an index, a count or a stored answer was computed from.
const llvm::Value *stripValueCasts(const llvm::Value *V);
// A user of a local's alloca that only marks its lifetime (llvm.lifetime.*
// at -O1 and up, directly or through a bitcast of the address): neither a
// read nor a write of the variable.
bool marksLifetime(const llvm::User *U);
// The local variable (its alloca) whose load V is, through value casts;
// null when V is no such load.
const llvm::AllocaInst *loadedLocal(const llvm::Value *V);
// Whether Each holds for every store into local A, and A is stored into at
// least once and otherwise only loaded (lifetime markers aside): a local
// whose address escapes may be written by anything.
bool everyStoreTo(const llvm::AllocaInst *A,
                  llvm::function_ref<bool(const llvm::StoreInst &)> Each);
// The struct/class/union T denotes after stripType, or null.
const llvm::DICompositeType *asStruct(const llvm::DIType *T);

// Source spelling of a debug-info type: C's ("unsigned int", "struct buf *")
// or C++'s ("const std::string &", "Router *": scoped, typedef names kept,
// no class keyword).
std::string typeName(const llvm::DIType *T, unsigned Depth = 0);
// True for types whose value vprof can record (integers, floats, enums,
// pointers), after typedefs and qualifiers.
bool isScalar(const llvm::DIType *T);
// The schema's `function` field for a subprogram: linkage name if any (C++),
// else the source name.
std::string functionName(const llvm::DISubprogram *SP);
// The variable a global denotes, if it has debug info.
bool globalRef(const llvm::GlobalVariable &GV, VarRef &Out);
// The unit has debug info and its main source is one VPROF_COMPONENT
// selects (every unit when unset): only those get schema lines.
bool unitSelected(const llvm::Module &M);
// F is defined in the system's headers (vpf_system_path: /usr/include,
// gcc's C++ headers, /usr/local/include): libstdc++'s containers, glibc's
// inline wrappers - code the program's author neither sees nor changes.
bool inSystemHeader(const llvm::Function &F);

// Resolves addresses inside one function to source variables.
class VarResolver {
public:
  VarResolver(const llvm::Function &F, const StructKeys &Keys);
  // Ptr is the address of a variable (alloca or global with debug info).
  bool variable(const llvm::Value *Ptr, VarRef &Out) const;
  // Ptr is the address of a variable or of one member of a struct variable
  // (`s.f`) or of the struct a pointer variable points to (`p->f`); for
  // `p->f`, *Base receives p (the pointer is read too).
  bool address(const llvm::Value *Ptr, VarRef &Out, VarRef *Base) const;
  // The debug type (stripped of typedefs and qualifiers) of the object at
  // Addr, found from the variables it is reached from: a variable, `*p`,
  // `a[i]`, `s.f`, `f()->` (a callee's return type); null if unknown.
  const llvm::DIType *objectType(const llvm::Value *Addr, unsigned Depth = 0) const;
  // Like objectType, for the object that the first Upto indices of GEP
  // select (Upto = 1: the object GEP's base points to, indexed).
  const llvm::DIType *objectTypeIn(const llvm::GEPOperator *GEP, unsigned Upto,
                                   unsigned Depth = 0) const;
  const StructKeys &keys() const { return Keys; }

private:
  bool member(const llvm::GEPOperator *GEP, VarRef &Out, VarRef *Base) const;
  const StructKeys &Keys;
  const llvm::DataLayout &DL;
  llvm::DenseMap<const llvm::Value *, const llvm::DILocalVariable *> Locals;
};

} // namespace vprof
#endif
