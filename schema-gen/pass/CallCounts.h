// CallCounts.h - the call-count pass of vprof-cc --calls (CallCounts.cpp).
#ifndef VPROF_CALLCOUNTS_H
#define VPROF_CALLCOUNTS_H

#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"

namespace vprof {

struct CallCountsPass : llvm::PassInfoMixin<CallCountsPass> {
  // Only guarded calls and the calls of their holders (--calls=guarded)
  bool GuardedOnly = false;
  explicit CallCountsPass(bool GuardedOnly) : GuardedOnly(GuardedOnly) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

} // namespace vprof

#endif
