//===- Rewrite.cpp - memfit-rewrite ----------------------------------------===//
//
// Applies the algebraic rewrites of lib/Transforms/Rewrites to every function
// until none applies. Nearest neighbours and squared distances go first:
// their cross term would otherwise be claimed by reduce-to-dot without the
// norms.
//
//===----------------------------------------------------------------------===//
#include "Rewrites/Rewrites.h"
#include "memfit/IR/OpViews.h"
#include "memfit/Transforms/Passes.h"

namespace memfit {
#define GEN_PASS_DEF_MEMFITREWRITE
#include "memfit/Transforms/Passes.h.inc"
} // namespace memfit

using namespace mlir;

namespace {

struct MemfitRewritePass : memfit::impl::MemfitRewriteBase<MemfitRewritePass> {
  using MemfitRewriteBase::MemfitRewriteBase;

  void runOnOperation() override {
    if (failed(memfit::verifyOpInvariants(getOperation())))
      return signalPassFailure();
    // Each sweep collects candidates first: rewrites erase ops.
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<Operation *> candidates;
      getOperation().walk([&](Operation *op) {
        memfit::OpKind k = memfit::getOpKind(op);
        if (k == memfit::OpKind::Reduce || k == memfit::OpKind::DotGeneral ||
            k == memfit::OpKind::TopK || k == memfit::OpKind::CustomCall ||
            op->getName().getStringRef() == "stablehlo.add")
          candidates.push_back(op);
      });
      for (Operation *op : candidates) {
        if (applyOne(op)) {
          changed = true;
          break; // candidates may now be erased; collect again
        }
      }
    }
  }

  bool applyOne(Operation *op) {
    if (distance && memfit::rewriteNearestNeighbours(op))
      return true;
    if (fastDistance && memfit::rewriteSquaredDistance(op))
      return true;
    if (reduceToDot && memfit::rewriteReduceOfProduct(op))
      return true;
    if (matrixChain && memfit::rewriteMatrixChain(op))
      return true;
    if (factorSums && memfit::rewriteFactorSum(op))
      return true;
    if (invariantSolve && memfit::rewriteLoopInvariantSolve(op))
      return true;
    // Last: the other rewrites read top_k as the program wrote it.
    if (topK && memfit::rewriteTwoStageTopK(op))
      return true;
    return false;
  }
};

} // namespace
