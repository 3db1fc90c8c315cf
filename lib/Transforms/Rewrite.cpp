//===- Rewrite.cpp - memfit-rewrite ----------------------------------------===//
//
// Applies the algebraic rewrites of lib/Transforms/Rewrites to every function
// until none applies, as a pattern set under MLIR's greedy driver. The
// driver visits ops in program order (top-down), so a producer's rewrite
// comes before its consumer's; at one op, the patterns' benefits order the
// rewrites: nearest neighbours and squared distances first (their cross
// term would otherwise be claimed by reduce-to-dot without the norms), the
// two-stage top-k last (the other rewrites read top_k as the program wrote
// it).
//
//===----------------------------------------------------------------------===//
#include "Rewrites/Rewrites.h"
#include "memfit/IR/OpViews.h"
#include "memfit/Support/ByteSize.h"
#include "memfit/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <functional>
#include <iterator>

namespace memfit {
#define GEN_PASS_DEF_MEMFITREWRITE
#include "memfit/Transforms/Passes.h.inc"
} // namespace memfit

using namespace mlir;

namespace {

/// The ops the rewrites start from: reduce, dot_general, top_k, custom_call
/// (the triangular solve) and add (the root of a factor sum).
bool isRewriteRoot(Operation *op) {
  memfit::OpKind k = memfit::getOpKind(op);
  return k == memfit::OpKind::Reduce || k == memfit::OpKind::DotGeneral ||
         k == memfit::OpKind::TopK || k == memfit::OpKind::CustomCall ||
         memfit::getElementwiseFn(op) == memfit::ElementwiseFn::Add;
}

using RewritePatternFn = std::function<bool(Operation *, RewriterBase &)>;

/// One rewrite of lib/Transforms/Rewrites as a pattern on any op: it either
/// changes nothing and fails, or rewrites and counts itself.
class RewriteFnPattern : public RewritePattern {
public:
  RewriteFnPattern(MLIRContext *ctx, unsigned benefit, llvm::StringRef name,
                   RewritePatternFn fn, llvm::StringMap<int64_t> &applied)
      : RewritePattern(MatchAnyOpTypeTag(), benefit, ctx), name(name),
        fn(std::move(fn)), applied(applied) {
    setDebugName(name);
  }

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isRewriteRoot(op) || !fn(op, rewriter))
      return failure();
    ++applied[name];
    return success();
  }

private:
  llvm::StringRef name;
  RewritePatternFn fn;
  llvm::StringMap<int64_t> &applied;
};

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
    llvm::StringMap<int64_t> applied;
    if (failed(applyPatternsGreedily(getOperation(), collectPatterns(applied),
                                     driverConfig()))) {
      getOperation().emitError() << "memfit-rewrite: the rewrites did not converge";
      return signalPassFailure();
    }
    recordApplied(applied);
  }

  memfit::NearestNeighbourOptions knn;

  /// The enabled rewrites, highest benefit first; each counts its
  /// applications in `applied` under its pass option's name.
  FrozenRewritePatternSet collectPatterns(llvm::StringMap<int64_t> &applied) {
    using Fn = RewritePatternFn;
    std::pair<bool, std::pair<const char *, Fn>> rewrites[] = {
        {distance, {"distance", [this](Operation *op, RewriterBase &r) {
                      return memfit::rewriteNearestNeighbours(op, knn, r);
                    }}},
        {fastDistance, {"fast-distance", memfit::rewriteSquaredDistance}},
        {reduceToDot, {"reduce-to-dot", memfit::rewriteReduceOfProduct}},
        {matrixChain, {"matrix-chain", memfit::rewriteMatrixChain}},
        {factorSums, {"factor-sums", memfit::rewriteFactorSum}},
        {invariantSolve, {"invariant-solve", memfit::rewriteLoopInvariantSolve}},
        {scaleAfterDot, {"scale-after-dot", memfit::rewriteScaleAfterDot}},
        {batchedGemv, {"batched-gemv", memfit::rewriteBatchedGemv}},
        {topK, {"top-k", memfit::rewriteTwoStageTopK}},
    };
    RewritePatternSet patterns(&getContext());
    unsigned benefit = std::size(rewrites);
    for (auto &[enabled, rewrite] : rewrites) {
      if (enabled)
        patterns.add<RewriteFnPattern>(&getContext(), benefit, rewrite.first,
                                       rewrite.second, applied);
      --benefit;
    }
    return FrozenRewritePatternSet(std::move(patterns));
  }

  /// Patterns only: no folding, constant CSE or region simplification (MLIR
  /// cannot fold unregistered ops, and memfit must not reorder constants),
  /// and no bound on the sweeps, as a rewrite may enable another.
  static GreedyRewriteConfig driverConfig() {
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true)
        .enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled)
        .setMaxIterations(GreedyRewriteConfig::kNoLimit);
    return config;
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
