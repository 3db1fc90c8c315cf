//===- Embedding.cpp - memfit inside another MLIR compiler -----------------===//
#include "memfit/API/Embedding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>

using namespace mlir;

namespace memfit {

void registerPasses() {
  // The generated registration re-registers harmlessly, but a host may call
  // this from several places: do it once.
  static const bool registered = [] {
    registerMemfitPasses();
    return true;
  }();
  (void)registered;
}

void registerDialects(DialectRegistry &registry) {
  registry.insert<func::FuncDialect, arith::ArithDialect>();
}

LogicalResult buildMemoryLimitPipeline(OpPassManager &pm, int64_t memoryLimitBytes,
                                       const MemoryLimitPipelineOptions &options,
                                       std::string *error) {
  auto fail = [&](std::string why) {
    if (error)
      *error = std::move(why);
    return failure();
  };
  // memfit's passes need the whole module (inlining, symbol tables): a
  // pass manager nested on functions cannot hold them. An op-agnostic one
  // (mlir::PassManager's default anchor) can; MLIR checks at run time that
  // it runs on a module.
  std::optional<StringRef> anchor = pm.getOpName();
  if (anchor && *anchor != ModuleOp::getOperationName())
    return fail("memfit's memory-limit pipeline needs a pass manager anchored on "
                "builtin.module (or op-agnostic), not '" + anchor->str() + "'");
  if (memoryLimitBytes <= 0)
    return fail("memory limit must be a positive number of bytes, not " +
                std::to_string(memoryLimitBytes));
  if (!(options.tempMargin > 0.0) || !std::isfinite(options.tempMargin))
    return fail("temp margin must be a positive number, not " +
                std::to_string(options.tempMargin));

  // memfit-rewrite runs twice around memfit-split, as in memfit.jit
  // (python/memfit/transform.py): the two-stage top-k after the split, so
  // that a split loop sees the program's one top_k and its chunks get the
  // two-stage form; the other rewrites before it.
  pm.addPass(createMemfitInline());
  if (options.rewrite) {
    MemfitRewriteOptions before;
    before.topK = false;
    // the exact kNN sizes its two-level loop's query chunks to the limit
    before.memoryLimit = std::to_string(memoryLimitBytes);
    before.tempMargin = options.tempMargin;
    pm.addPass(createMemfitRewrite(before));
  }
  MemfitSplitOptions split;
  split.memoryLimit = std::to_string(memoryLimitBytes);
  split.tempMargin = options.tempMargin;
  // Accumulated dots in the form XLA:CPU's ynn fusions take, as memfit.jit
  // (target "xla") writes them.
  split.minorContraction = true;
  pm.addPass(createMemfitSplit(split));
  if (options.rewrite) {
    MemfitRewriteOptions after;
    after.distance = false;
    after.matrixChain = false;
    after.reduceToDot = false;
    after.factorSums = false;
    pm.addPass(createMemfitRewrite(after));
  }
  return success();
}

} // namespace memfit
