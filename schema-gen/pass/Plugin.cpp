// Plugin.cpp - the vprof schema pass as a clang pass plugin
// (`clang -fpass-plugin=vprof-schema.so`, LLVM 14 new pass manager).
//
// Registered at the start of the pipeline, which LLVM runs at every -O
// level (at -O0 too, where functions are optnone; a module pass marked
// required is not skipped). There, the IR still has one alloca per source
// variable and a load per use, so names and uses are exact; later passes
// would have folded many of them away. The pass changes no code: it only
// appends module-level assembly that puts the schema text into the
// non-allocated section `.vprof_schema`. With VPROF_KEEP_VARS=1 (vprof-cc
// --keep-vars) it also adds fake uses of the schema's local variables
// (KeepVars.h), so that -O2 keeps their values where the profiler reads them;
// with VPROF_CC_CALLS (vprof-cc's --calls=guarded default, or --calls) call
// counters (CallCounts.h).
#include "CallCounts.h"
#include "FunctionScan.h"
#include "DebugNames.h"
#include "KeepVars.h"
#include "StructKeys.h"

#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/ErrorHandling.h"

#include <cstdlib>
#include <string>

extern "C" {
#include "../schema_table.h"
#include "../section_asm.h"
#include "vprof_format.h"
}

using namespace llvm;

namespace {

struct TableOwner {
  vsg_table *T = vsg_table_new();
  ~TableOwner() { vsg_table_free(T); }
};

// Collects the schema of M into T, and when Keep, inserts the fake uses of
// each function's schema locals; false when out of memory. *Changed says
// whether code was added.
bool collect(Module &M, vsg_table *T, bool Keep, bool *Changed) {
  // without -g nothing can be named: the header alone is emitted
  if (!vprof::unitSelected(M))
    return true;
  std::string File = (*M.debug_compile_units().begin())->getFilename().str();
  // All globals (and function-local statics) this unit defines.
  for (const GlobalVariable &GV : M.globals()) {
    vprof::VarRef V;
    if (GV.isDeclaration() || GV.hasAvailableExternallyLinkage() ||
        !vprof::globalRef(GV, V))
      continue;
    if (vsg_table_add_var(T, File.c_str(), V.Function.c_str(), V.Line,
                          V.Name.c_str(), V.Type.c_str(),
                          V.Global ? VPF_TAG_GLOBAL : 0) < 0)
      return false;
  }
  vprof::StructKeys Keys(M);
  for (Function &F : M) {
    // available_externally bodies (glibc's extern inline atoi at -O2) are
    // never emitted into this object: nothing of theirs can be placed.
    if (F.isDeclaration() || F.hasAvailableExternallyLinkage() ||
        !F.getSubprogram())
      continue;
    SmallPtrSet<const AllocaInst *, 16> Vars;
    if (!vprof::scanFunction(F, File.c_str(), Keys, T, Keep ? &Vars : nullptr))
      return false;
    // After the scan, so the schema describes the code as written.
    if (Keep && vprof::keepVars(F, Vars))
      *Changed = true;
  }
  return true;
}

struct VprofSchemaPass : PassInfoMixin<VprofSchemaPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    // Once per module, even if a pipeline runs the pass twice (LTO).
    if (M.getModuleInlineAsm().find(VSG_SECTION_NAME) != std::string::npos)
      return PreservedAnalyses::all();
    TableOwner Tab;
    size_t Len = 0;
    char *Text = nullptr, *Asm = nullptr;
    bool Changed = false;
    if (Tab.T && collect(M, Tab.T, vprof::keepVarsEnabled(), &Changed))
      Text = vsg_table_text(Tab.T, &Len);
    if (Text)
      Asm = vsg_section_asm(Text, Len);
    std::free(Text);
    if (!Asm) // fail the compile rather than produce an object without schema
      report_fatal_error(Twine("vprof-schema: out of memory while building the schema of ") +
                         M.getSourceFileName());
    M.appendModuleInlineAsm(Asm);
    std::free(Asm);
    // Without fake uses only module-level asm was added: no function or
    // analysis changed.
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// Last in the optimisation pipeline, after the fake uses were inlined and
// optimised with their functions (KeepVars.h).
struct VprofKeepVarsTailPass : PassInfoMixin<VprofKeepVarsTailPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    bool Changed = false;
    for (Function &F : M)
      if (!F.isDeclaration())
        Changed |= vprof::tidyFakeUses(F);
    return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "vprof-schema", "1", [](PassBuilder &PB) {
            PB.registerPipelineStartEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  MPM.addPass(VprofSchemaPass());
                  // vprof-cc --calls: counters before inlining removes calls
                  // ("guarded": only the calls the report's guard test rates)
                  const char *Calls = std::getenv("VPROF_CC_CALLS");
                  if (Calls && *Calls && std::string(Calls) != "0")
                    MPM.addPass(vprof::CallCountsPass(std::string(Calls) == "guarded"));
                });
            PB.registerOptimizerLastEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) {
                  if (vprof::keepVarsEnabled())
                    MPM.addPass(VprofKeepVarsTailPass());
                });
            // `opt -load-pass-plugin=... -passes=vprof-schema` for debugging.
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM,
                   ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name != "vprof-schema")
                    return false;
                  MPM.addPass(VprofSchemaPass());
                  return true;
                });
          }};
}
