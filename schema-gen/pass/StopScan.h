// StopScan.h - finds, in one function, the loops that stop at a limit held
// in state: a test that leaves the loop when a value reaches a member or a
// global (`if (len >= plan->nice_len) break;`, `while (now_us() < g_deadline)`)
// (`@stops` lines, FORMATS.md §1). A search that runs longer per call runs
// to a limit its writers set - a clamp to the wrong bound, a factor in the
// wrong unit - and the function that computed it is cheap and off the
// search's stack. Loops over a count or a cursor (`i < t->n`, `pos <
// buf->len` with `pos++` or `pos += n`) stop where the data ends, not at a
// limit: not recorded.
#ifndef VPROF_STOPSCAN_H
#define VPROF_STOPSCAN_H

#include "llvm/IR/Function.h"

namespace llvm {
class LoopInfo;
} // namespace llvm

struct vsg_table;

namespace vprof {

class VarResolver;

// Adds to T one `@stops` line per distinct (line, state) in F. `File` is
// the compilation unit's path; LI is F's. Returns false when the table ran
// out of memory.
bool scanStops(const llvm::Function &F, const char *File, const VarResolver &R,
               const llvm::LoopInfo &LI, vsg_table *T);

} // namespace vprof
#endif
