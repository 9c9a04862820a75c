// SizeScan.h - finds, in one function, the index computations that reduce a
// value by a table's size held in a global or a struct member (`@sizes`
// lines, FORMATS.md §1): `hash & (ht->nbuckets - 1)`, `hv &
// hashmask(hashpower)`, `hash % _table_size`. A table whose chains grew
// (every lookup walks further) was sized by whoever wrote that size, or not
// resized by whoever filled it: neither is on the stack of the lookups that
// pay, and both are cheap. The report names them next to the lookups.
#ifndef VPROF_SIZESCAN_H
#define VPROF_SIZESCAN_H

#include "llvm/IR/Function.h"

struct vsg_table;

namespace vprof {

class VarResolver;

// Adds to T one `@sizes` line per distinct (line, use, state) in F: an
// `and` with a mask computed from a loaded global or member (through `- 1`,
// `<<`, a call), or a `%` by one, whose result indexes memory (an address,
// a returned index, a stored bucket number). `use` is `slot` when F also
// stores into the element it indexes (an insert, a delete: the code that
// fills the table), else `index`. `File` is the compilation unit's path.
// Returns false when the table ran out of memory.
bool scanSizes(const llvm::Function &F, const char *File, const VarResolver &R, vsg_table *T);

} // namespace vprof
#endif
