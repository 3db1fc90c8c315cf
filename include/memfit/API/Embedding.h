//===- Embedding.h - memfit inside another MLIR compiler --------*- C++ -*-===//
//
// For a compiler that links MLIR (Debian's libMLIR.so, or any build of the
// same LLVM) and wants memfit's passes in its own pass manager, without
// mlir-opt or memfit-opt:
//
//   find_package(memfit CONFIG REQUIRED)
//   target_link_libraries(mycompiler PRIVATE memfit::memfit)
//
//   memfit::registerPasses();                 // --memfit-* in pipelines
//   mlir::PassManager pm(&ctx);               // op-agnostic, or on builtin.module
//   if (mlir::failed(memfit::buildMemoryLimitPipeline(pm, 1 << 30)))
//     ...;                                    // wrong anchor or bad limit
//   if (mlir::failed(pm.run(module))) ...;    // errors name op and line
//
// StableHLO may be registered in the host's context or arrive unregistered
// (generic form, ctx.allowUnregisteredDialects()); memfit reads it either way.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_API_EMBEDDING_H
#define MEMFIT_API_EMBEDDING_H

#include "memfit/Support/Version.h"   // memfit::version()
#include "memfit/Transforms/Passes.h" // the passes' create functions and options

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <string>

namespace memfit {

/// Registers every memfit pass with MLIR's global pass registry, so that
/// textual pipelines ("memfit-inline,memfit-split{memory-limit=1GiB}") and
/// `--memfit-*` flags know them. Safe to call more than once.
void registerPasses();

/// Adds the dialects memfit's passes create or read as registered ops
/// (func, arith) to `registry`. Everything else (stablehlo, chlo, sdy) may
/// stay unregistered.
void registerDialects(mlir::DialectRegistry &registry);

struct MemoryLimitPipelineOptions {
  /// Apply memfit-rewrite's algebraic rewrites around the split (as
  /// memfit.jit does); false = inline and split only.
  bool rewrite = true;
  /// memfit-split's temp-margin: how many times over a loop's modelled
  /// temporaries are budgeted (> 0; the pass's default unless set).
  double tempMargin = MemfitSplitOptions().tempMargin;
};

/// Appends memfit's memory-limit pipeline, the one memfit.jit and
/// `memfit opt --memory-limit` run:
///   memfit-inline, memfit-rewrite{top-k=false},
///   memfit-split{memory-limit=<bytes> minor-contraction=true},
///   memfit-rewrite{top-k, invariant-solve, scale-after-dot, batched-gemv}
/// to `pm`, which must be anchored on builtin.module or op-agnostic
/// (mlir::PassManager's default) and run on a module. Fails, adding
/// nothing, when it is anchored elsewhere (e.g. nested on func.func) or
/// `memoryLimitBytes` is not positive; `error` (when given) says which.
mlir::LogicalResult
buildMemoryLimitPipeline(mlir::OpPassManager &pm, int64_t memoryLimitBytes,
                         const MemoryLimitPipelineOptions &options = {},
                         std::string *error = nullptr);

} // namespace memfit

#endif
