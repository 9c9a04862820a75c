// RangeScan.h - finds, in one function, the loops that walk a range held in
// state: `for (c = d->lo; c < d->hi; c++)`, both ends loaded from members of
// the same struct (or the same global) - a dirty region, a damage span, a
// window (`@bounds` lines, FORMATS.md §1). A walk that runs longer per call
// walks a range its writers widened, and the one that widens it for no
// reason (a cell marked dirty although unchanged) is off the walk's stack
// and cheap. Loops over a count (`i < t->n`) are not ranges: their bound is
// how much work there is.
#ifndef VPROF_RANGESCAN_H
#define VPROF_RANGESCAN_H

#include "llvm/IR/Function.h"

namespace llvm {
class LoopInfo;
} // namespace llvm

struct vsg_table;

namespace vprof {

class VarResolver;

// Adds to T one `@bounds` line per distinct (line, end, state) in F: `end`
// `lo` for the state the loop's variable starts from, `hi` for the state it
// is compared with to leave the loop. `File` is the compilation unit's
// path; LI is F's. Returns false when the table ran out of memory.
bool scanRanges(const llvm::Function &F, const char *File, const VarResolver &R,
                const llvm::LoopInfo &LI, vsg_table *T);

} // namespace vprof
#endif
