// FunctionScan.h - finds, in one function, the variables vProf monitors
// (paper §3.1) and the function's basic blocks with their construct kind.
#ifndef VPROF_FUNCTIONSCAN_H
#define VPROF_FUNCTIONSCAN_H

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"

struct vsg_table;

namespace vprof {

class StructKeys;

// Adds to T: every variable read in a branch/switch/select condition (`cond`),
// every variable passed to a call (`args`), every variable of a loop's exit
// condition that the loop also assigns (`loop`, the induction variables), and
// one `@block` line per basic block; a `@field` line for each member
// variable, and the function's `@writes` lines (WriteScan.h). `File` is
// the compilation unit's path; `Keys` names struct types for the module.
// When Keep is given, it receives the allocas of the local variables
// recorded (for --keep-vars, KeepVars.h). Returns false when the table ran
// out of memory.
bool scanFunction(const llvm::Function &F, const char *File, const StructKeys &Keys,
                  vsg_table *T, llvm::SmallPtrSetImpl<const llvm::AllocaInst *> *Keep = nullptr);

} // namespace vprof
#endif
