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
#include "memfit/Support/ByteSize.h"
#include "memfit/Transforms/Passes.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>

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
    if (!memoryLimit.empty()) {
      std::string error;
      std::optional<int64_t> limit = memfit::parseByteSize(memoryLimit, error);
      if (!limit) {
        getOperation().emitError() << "memfit-rewrite: bad memory-limit: " << error;
        return signalPassFailure();
      }
      knn.memoryLimit = *limit;
    }
    if (!(tempMargin > 0.0) || !std::isfinite(tempMargin)) {
      getOperation().emitError() << "memfit-rewrite: invalid temp-margin " << tempMargin;
      return signalPassFailure();
    }
    knn.tempMargin = tempMargin;
    knn.cacheBytes = cacheBytes;
    // Each sweep collects candidates first: rewrites erase ops.
    llvm::StringMap<int64_t> applied;
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<Operation *> candidates;
      getOperation().walk([&](Operation *op) {
        memfit::OpKind k = memfit::getOpKind(op);
        if (k == memfit::OpKind::Reduce || k == memfit::OpKind::DotGeneral ||
            k == memfit::OpKind::TopK || k == memfit::OpKind::CustomCall ||
            memfit::getElementwiseFn(op) == memfit::ElementwiseFn::Add)
          candidates.push_back(op);
      });
      for (Operation *op : candidates) {
        if (const char *name = applyOne(op)) {
          ++applied[name];
          changed = true;
          break; // candidates may now be erased; collect again
        }
      }
    }
    recordApplied(applied);
  }

  memfit::NearestNeighbourOptions knn;

  /// The name of the rewrite applied at `op` (its pass option), or null.
  const char *applyOne(Operation *op) {
    if (distance && memfit::rewriteNearestNeighbours(op, knn))
      return "distance";
    if (fastDistance && memfit::rewriteSquaredDistance(op))
      return "fast-distance";
    if (reduceToDot && memfit::rewriteReduceOfProduct(op))
      return "reduce-to-dot";
    if (matrixChain && memfit::rewriteMatrixChain(op))
      return "matrix-chain";
    if (factorSums && memfit::rewriteFactorSum(op))
      return "factor-sums";
    if (invariantSolve && memfit::rewriteLoopInvariantSolve(op))
      return "invariant-solve";
    if (scaleAfterDot && memfit::rewriteScaleAfterDot(op))
      return "scale-after-dot";
    // Last: the other rewrites read top_k as the program wrote it.
    if (topK && memfit::rewriteTwoStageTopK(op))
      return "top-k";
    return nullptr;
  }

  /// `memfit.rewrites = {distance = 1 : i64, ...}` on the module, so that a
  /// report can say which rewrites changed the program (and how often).
  void recordApplied(const llvm::StringMap<int64_t> &applied) {
    if (applied.empty())
      return;
    Builder b(&getContext());
    // memfit's pipeline runs this pass twice (around memfit-split): add to
    // what an earlier run recorded.
    llvm::StringMap<int64_t> total(applied);
    if (auto before = getOperation()->getAttrOfType<DictionaryAttr>("memfit.rewrites"))
      for (NamedAttribute e : before)
        if (auto n = llvm::dyn_cast<IntegerAttr>(e.getValue()))
          total[e.getName().getValue()] += n.getInt();
    SmallVector<NamedAttribute> counts;
    for (const auto &e : total)
      counts.push_back(b.getNamedAttr(e.getKey(), b.getI64IntegerAttr(e.getValue())));
    getOperation()->setAttr("memfit.rewrites", b.getDictionaryAttr(counts));
  }
};

} // namespace
