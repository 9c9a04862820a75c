// WriteScan.h - finds, in one function, the stores into globals and into
// struct members (`@writes` lines, FORMATS.md §1), so the report can name
// the function that decided a value read elsewhere.
#ifndef VPROF_WRITESCAN_H
#define VPROF_WRITESCAN_H

#include "llvm/IR/Function.h"

#include <string>

struct vsg_table;

namespace vprof {

class VarResolver;

// Adds to T one `@writes` line per distinct (file, line, target) that F
// stores into — stores, atomic read-modify-write and compare-exchange,
// memset/memcpy/memmove destinations — and a `@field` line for each member
// of a global struct it writes. `File` is the compilation unit's path.
// Returns false when the table ran out of memory.
bool scanWrites(const llvm::Function &F, const char *File, const VarResolver &R,
                vsg_table *T);

// The `@writes` target a load or store through Ptr in F reads or writes
// (`g`, `g.f`, `g+N`, `struct T.f`), "" when none names it (a local, a
// pointer to a scalar): the one naming, so a reader of some state and its
// writers meet. May add the `@field` line a global's member needs; Ok is
// cleared when the table ran out of memory.
std::string stateTarget(const llvm::Function &F, const char *File, const VarResolver &R,
                        vsg_table *T, const llvm::Value *Ptr, bool &Ok);

} // namespace vprof
#endif
