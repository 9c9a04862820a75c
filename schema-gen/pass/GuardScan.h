// GuardScan.h - finds, in one function, the calls that run only when a
// branch on another function's return value goes their way (`@guard`
// lines, FORMATS.md §1): `if (block_needs_seal(w, len)) seal_block(w);`,
// `if (!should_log(lvl)) return; format_event(...)`. When the report sees
// the caller call seal_block far more often per call than in the normal
// run, the decision was block_needs_seal's answer: a cheap predicate, often
// inlined and never sampled, that the call counts alone would not name.
#ifndef VPROF_GUARDSCAN_H
#define VPROF_GUARDSCAN_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstrTypes.h"

namespace llvm {
class DominatorTree;
class LoopInfo;
} // namespace llvm

struct vsg_table;

namespace vprof {

// Adds to T one `@guard` line per distinct (line, called function,
// predicate) in F, whose dominator tree and loops the caller has built.
// `File` is the compilation unit's path. Returns false when the table ran
// out of memory.
bool scanGuards(const llvm::Function &F, const char *File, const llvm::DominatorTree &DT,
                const llvm::LoopInfo &LI, vsg_table *T);

// Calls Fn for each call in F that runs only when a predicate's answer says
// so, with its nearest such predicate: the calls scanGuards records, which
// vprof-cc --calls=guarded counts (CallCounts.h).
void forEachGuardedCall(const llvm::Function &F, const llvm::DominatorTree &DT,
                        const llvm::LoopInfo &LI,
                        llvm::function_ref<void(const llvm::CallBase &, const llvm::Function &)> Fn);

// The predicate whose answer decides whether B runs (the nearest, up the
// dominator tree, as forEachGuardedCall names a call's), or null.
const llvm::Function *guardingPredicate(const llvm::BasicBlock &B,
                                        const llvm::DominatorTree &DT,
                                        const llvm::LoopInfo &LI);

class VarResolver;

// Adds to T one `@guardstate` line per distinct (line, called function,
// state) in F: a call whose nearest deciding branch is on a value loaded
// from a global or a struct member (`if (!c->valid) rebuild(c);`, `if
// (hash_items > limit) expand();`), the state named as `@writes` names it.
// When the caller calls it far more or less often per call in the buggy
// run, that state held otherwise, and its writers decided so (an
// invalidation, a counter, a flag set elsewhere). Returns false when the
// table ran out of memory.
bool scanStateGuards(const llvm::Function &F, const char *File, const llvm::DominatorTree &DT,
                     const llvm::LoopInfo &LI, const VarResolver &R, vsg_table *T);

// The metadata kind scanStateGuards attaches to each call it writes a
// `@guardstate` line for, so that vprof-cc --calls=guarded (CallCounts.h),
// which runs right after the schema pass, counts those calls too: the
// schema names them, one walk decides.
extern const char *const StateGuardedKind;

} // namespace vprof
#endif
