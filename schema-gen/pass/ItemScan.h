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

struct vsg_table;

namespace vprof {

class VarResolver;

// Adds to T one `@items` line per distinct (line, use, state) in F: a call
// of a std:: container's member function on a global or a member, `use`
// `add` for an insertion, `walk` for an element read when F has a loop
// (HasLoop). `File` is the compilation unit's path. Returns false when the
// table ran out of memory.
bool scanItems(const llvm::Function &F, const char *File, const VarResolver &R, bool HasLoop,
               vsg_table *T);

} // namespace vprof
#endif
