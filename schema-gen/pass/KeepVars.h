// KeepVars.h - `vprof-cc --keep-vars`: fake uses that keep the schema's
// local variables computed and live at -O2, so that their DWARF locations
// cover the code where the profiler samples them (clang 19 has
// -fextend-lifetimes for this; LLVM 14 has no fake-use intrinsic).
//
// A fake use is `call void asm sideeffect "", "r"(load %var.addr)`, tagged
// !vprof.keep: an empty instruction that reads the variable's current value.
// It is inserted at the start of the pipeline, while every variable is still
// an alloca, before each `ret` and `resume` (the value is then needed until
// the function ends) and at the latch of each loop that assigns the variable
// and calls a function (so a loop's induction variable and the values
// computed per iteration stay materialised every iteration; loops without
// calls are left to the vectoriser and unroller). The asm is marked
// nounwind, willreturn and inaccessiblememonly: it is no throw point and no
// memory barrier, only an opaque use the optimiser must keep. Each one costs
// the inliner an instruction and an argument, so inlining decisions can
// change (bench/RESULTS.md: an inline-neutral llvm.assume bundle was tried;
// it is a droppable use and kept too little).
//
// Never touched: functions at -O0 (optnone; their variables live in memory
// anyway), naked functions, coroutines before splitting, functions with a
// musttail call (nothing may come between it and its ret), variables whose
// address is taken (they stay in memory and are placed already) and
// variables of aggregate, long double or wider-than-64-bit type.
#ifndef VPROF_KEEPVARS_H
#define VPROF_KEEPVARS_H

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"

namespace vprof {

// VPROF_KEEP_VARS (vprof-cc sets it for --keep-vars/--no-keep-vars): "1"
// on, "0" or unset off; anything else is a fatal error naming the value.
bool keepVarsEnabled();

// Inserts the fake uses of Vars (allocas of F chosen by the schema scan);
// returns whether F changed.
bool keepVars(llvm::Function &F,
              const llvm::SmallPtrSetImpl<const llvm::AllocaInst *> &Vars);

// Run at the end of the optimisation pipeline, after inlining: fake uses
// between a call and the ret that follows it are moved above the call (or
// dropped when they use the call's own result), so the call can still
// become a sibling call (`jmp`) as it would without --keep-vars; fake uses
// of constants (DWARF describes those without a register) and repeated
// ones in a block are removed. Returns whether F changed.
bool tidyFakeUses(llvm::Function &F);

} // namespace vprof
#endif
