// StructKeys.h - names struct members by type ("struct ht.nbuckets"), the key
// that joins a member read in one function (`t->nbuckets` in lookup) with
// the stores into it elsewhere (`ht->nbuckets = n` in resize), whose
// variables have other names (FORMATS.md §1, `@field` and `@writes`).
// Part of the thin C++ side of the schema pass.
#ifndef VPROF_STRUCTKEYS_H
#define VPROF_STRUCTKEYS_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Module.h"

#include <string>

namespace vprof {

class StructKeys {
public:
  explicit StructKeys(const llvm::Module &M);

  // "struct T" ("union T", "class T") for a struct-like debug type, T
  // qualified with its C++ scopes, or the typedef name of an anonymous
  // struct; empty when it has no name at all.
  std::string key(const llvm::DICompositeType *CT) const;

  // The debug type clang emitted for IR struct ST, found by name (clang
  // names IR structs `struct.T`, `class.ns::T`, with `.N` and `.base`
  // suffixes); null when the unit has none or several candidates.
  const llvm::DICompositeType *fromIR(const llvm::StructType *ST) const;

  // Does debug type CT describe IR struct ST (same name, or ST unnamed and
  // of CT's size)? Guards a debug type found through casts.
  bool matches(const llvm::DICompositeType *CT, const llvm::StructType *ST) const;

  // The non-bit-field data member of CT at byte Off, or null. Named only:
  // the member a key can name; else also an anonymous member or a C++ base
  // class at Off, whose type is the object found there (for walking
  // nested accesses).
  static const llvm::DIDerivedType *memberAt(const llvm::DICompositeType *CT,
                                             uint64_t Off, bool Named);

  const llvm::DataLayout &layout() const { return DL; }

private:
  std::string scoped(const llvm::DICompositeType *CT, bool TemplateArgs) const;
  const llvm::DataLayout &DL;
  llvm::DenseMap<const llvm::DICompositeType *, std::string> TypedefName;
  llvm::StringMap<llvm::SmallVector<const llvm::DICompositeType *, 1>> ByName;
};

} // namespace vprof
#endif
