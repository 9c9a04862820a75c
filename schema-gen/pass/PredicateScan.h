// PredicateScan.h - finds the functions that are pure predicates: they
// answer a truth value and change nothing (`@predicate` lines, FORMATS.md
// §1). When such a function's answer decides a call whose count changed,
// the decision is inside it - its caller only acts on the answer - unlike
// a query (a length, a lookup: `if (sdslen(s) > n)`, `if (dictFind(...))`)
// whose answer the caller weighs, or an action that reports success.
#ifndef VPROF_PREDICATESCAN_H
#define VPROF_PREDICATESCAN_H

#include "llvm/IR/Function.h"

namespace llvm {
class LoopInfo;
} // namespace llvm

struct vsg_table;

namespace vprof {

// Adds to T a `@predicate` line for F when every value F returns is a
// truth value (a comparison, the constant 0 or 1, a logical combination of
// them), F has no loop of its own (LI: F's; a loop makes it a search - "is
// the key in the set" - whose answer is a fact about the data, a query)
// and F stores only into its own locals and calls only functions that
// store nothing either (those of the module, looked into, or declared
// read-only). `File` is the compilation unit's path. Returns false when
// the table ran out of memory.
bool scanPredicate(const llvm::Function &F, const char *File, const llvm::LoopInfo &LI,
                   vsg_table *T);

} // namespace vprof
#endif
