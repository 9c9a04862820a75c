// ItemScan.h - finds, in one function, the standard containers held in a
// global or a struct member that it walks (reads their elements in a loop:
// size(), data(), begin(), end() at pipeline start) or adds to (push_back,
// emplace_back, push, emplace, insert): `@items` lines (FORMATS.md §1). A
// container whose inserter lacks a check (a duplicate subscription, an
// orphaned timer, a cell queued twice) grows beyond what the work needs,
// and the functions that walk it later pay; the adders are cheap and off
// their stack. The report names them next to the walk.
#ifndef VPROF_ITEMSCAN_H
#define VPROF_ITEMSCAN_H

#include "llvm/IR/Function.h"

namespace llvm {
class DominatorTree;
class LoopInfo;
} // namespace llvm

struct vsg_table;

namespace vprof {

class VarResolver;

// Adds to T one `@items` line per distinct (line, use, state) in F: a call
// of a std:: container's member function on a global or a member, `use`
// `add` for an insertion, `walk` for an element read when F has a loop; an
// array held in a member or a global, `add` for a store into the element a
// count F increments indexes (`a[n++] = x`), `walk` for a load of an
// element in a loop. An add made only when a predicate's answer says so
// gets an `@addguard` line too. `File` is the compilation unit's path; DT
// and LI are F's. Returns false when the table ran out of memory.
bool scanItems(const llvm::Function &F, const char *File, const VarResolver &R,
               const llvm::DominatorTree &DT, const llvm::LoopInfo &LI, vsg_table *T);

} // namespace vprof
#endif
