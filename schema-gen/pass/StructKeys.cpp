// StructKeys.cpp - see StructKeys.h.
#include "StructKeys.h"
#include "DebugNames.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/IR/DebugInfo.h"

#include <algorithm>

using namespace llvm;

namespace vprof {

static bool structTag(unsigned Tag) {
  return Tag == dwarf::DW_TAG_structure_type || Tag == dwarf::DW_TAG_class_type ||
         Tag == dwarf::DW_TAG_union_type;
}

const DICompositeType *asStruct(const DIType *T) {
  auto *CT = dyn_cast_or_null<DICompositeType>(stripType(T));
  return CT && structTag(CT->getTag()) ? CT : nullptr;
}

// `V<int>` -> `V`: IR struct names carry no template arguments.
static StringRef withoutTemplateArgs(StringRef N) {
  size_t Lt = N.find('<');
  return Lt == StringRef::npos ? N : N.take_front(Lt);
}

StructKeys::StructKeys(const Module &M) : DL(M.getDataLayout()) {
  DebugInfoFinder F;
  F.processModule(M);
  // Anonymous structs are known by the typedef that names them
  // (`typedef struct { ... } dict;`), as clang names their IR type.
  for (const DIType *T : F.types()) {
    auto *D = dyn_cast<DIDerivedType>(T);
    if (!D || D->getTag() != dwarf::DW_TAG_typedef || D->getName().empty())
      continue;
    const DIType *B = D->getBaseType();
    for (unsigned I = 0; I < 8; I++) { // `typedef const struct {...} t;`
      auto *Q = dyn_cast_or_null<DIDerivedType>(B);
      if (!Q || (Q->getTag() != dwarf::DW_TAG_const_type &&
                 Q->getTag() != dwarf::DW_TAG_volatile_type))
        break;
      B = Q->getBaseType();
    }
    auto *CT = dyn_cast_or_null<DICompositeType>(B);
    if (CT && structTag(CT->getTag()) && CT->getName().empty())
      TypedefName.try_emplace(CT, D->getName().str());
  }
  for (const DIType *T : F.types()) {
    auto *CT = dyn_cast<DICompositeType>(T);
    if (!CT || !structTag(CT->getTag()) || CT->isForwardDecl())
      continue;
    std::string Q = scoped(CT, false);
    if (Q.empty())
      continue;
    auto &V = ByName[Q];
    if (std::find(V.begin(), V.end(), CT) == V.end())
      V.push_back(CT);
  }
}

// T qualified with its namespaces and enclosing classes (`ns::Outer::T`),
// with or without template arguments; "" for an unnamed type.
std::string StructKeys::scoped(const DICompositeType *CT, bool TemplateArgs) const {
  std::string Name = CT->getName().str();
  if (Name.empty()) {
    auto It = TypedefName.find(CT);
    if (It == TypedefName.end())
      return "";
    Name = It->second;
  }
  if (!TemplateArgs)
    Name = withoutTemplateArgs(Name).str();
  const DIScope *S = CT->getScope();
  for (unsigned I = 0; S && I < 32; I++) {
    std::string Part;
    if (auto *NS = dyn_cast<DINamespace>(S))
      Part = NS->getName().empty() ? "(anonymous namespace)" : NS->getName().str();
    else if (auto *Outer = dyn_cast<DICompositeType>(S))
      Part = TemplateArgs ? Outer->getName().str()
                          : withoutTemplateArgs(Outer->getName()).str();
    else
      break; // file, compile unit, or a function (a local type)
    Name = Part + "::" + Name;
    S = S->getScope();
  }
  return Name;
}

std::string StructKeys::key(const DICompositeType *CT) const {
  std::string N = scoped(CT, true);
  if (N.empty())
    return "";
  switch (CT->getTag()) {
  case dwarf::DW_TAG_union_type: return "union " + N;
  case dwarf::DW_TAG_class_type: return "class " + N;
  default: return "struct " + N;
  }
}

// `struct.ns::T.base.12` -> `ns::T`; "" for literal (unnamed) structs.
static StringRef irName(const StructType *ST) {
  if (ST->isLiteral() || !ST->hasName())
    return "";
  StringRef N = ST->getName();
  for (StringRef P : {"struct.", "class.", "union."})
    if (N.startswith(P)) {
      N = N.drop_front(P.size());
      break;
    }
  for (unsigned I = 0; I < 8; I++) {
    size_t Dot = N.rfind('.');
    if (Dot == StringRef::npos)
      break;
    StringRef Tail = N.drop_front(Dot + 1);
    if (Tail != "base" && (Tail.empty() || Tail.find_first_not_of("0123456789") != StringRef::npos))
      break;
    N = N.take_front(Dot);
  }
  return N;
}

bool StructKeys::matches(const DICompositeType *CT, const StructType *ST) const {
  StringRef N = irName(ST);
  if (N.empty()) // literal struct: nothing to compare but the size
    return !ST->isOpaque() && CT->getSizeInBits() == DL.getTypeAllocSizeInBits(const_cast<StructType *>(ST));
  if (CT->getName().empty() && N == "anon")
    return true;
  return scoped(CT, false) == N;
}

const DICompositeType *StructKeys::fromIR(const StructType *ST) const {
  StringRef N = irName(ST);
  if (N.empty() || N == "anon" || ST->isOpaque())
    return nullptr;
  auto It = ByName.find(N);
  if (It == ByName.end())
    return nullptr;
  if (It->second.size() == 1)
    return It->second.front();
  // Several (template instances, same-named local types): the one of the
  // IR type's size, if only one has it.
  uint64_t Bits = DL.getTypeAllocSizeInBits(const_cast<StructType *>(ST));
  const DICompositeType *Found = nullptr;
  for (const DICompositeType *CT : It->second)
    if (CT->getSizeInBits() == Bits) {
      if (Found)
        return nullptr;
      Found = CT;
    }
  return Found;
}

const DIDerivedType *StructKeys::memberAt(const DICompositeType *CT, uint64_t Off,
                                          bool Named) {
  const DIDerivedType *Other = nullptr;
  for (const DINode *E : CT->getElements()) {
    auto *M = dyn_cast_or_null<DIDerivedType>(E);
    if (!M || M->getOffsetInBits() != Off * 8 || M->isStaticMember())
      continue;
    bool Member = M->getTag() == dwarf::DW_TAG_member && !M->isBitField();
    if (Member && !M->getName().empty())
      return M;
    if (!Named && !Other && (Member || M->getTag() == dwarf::DW_TAG_inheritance))
      Other = M;
  }
  return Other;
}

} // namespace vprof
