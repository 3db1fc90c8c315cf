//===- Rewrites.h - the algebraic rewrites of memfit-rewrite ---*- C++ -*-===//
//
// Each rewrite is a function over one op that returns true when it changed
// the IR. Matching is done completely before anything is created, so a
// rewrite that does not apply leaves the IR as it was. Every change goes
// through `rewriter` (memfit-rewrite runs them as patterns under MLIR's
// greedy driver, which must hear of every op created, changed or erased).
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_TRANSFORMS_REWRITES_H
#define MEMFIT_TRANSFORMS_REWRITES_H

#include "Contraction.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"

namespace memfit {

/// The ranked tensor of `shape` and `et` (the rewrites build many).
inline mlir::RankedTensorType tensorOf(llvm::ArrayRef<int64_t> shape, mlir::Type et) {
  return mlir::RankedTensorType::get(shape, et);
}

/// reduce(add, (A - B)^2) over dims both A and B carry, where A and B are
/// broadcasts of smaller tensors a and b: the ops and how a.b is a GEMM.
struct SquaredDistance {
  mlir::Operation *reduce, *square, *sub;
  ContractionPlan plan;
  /// |a|^2 + |b|^2 - 2 a.b, shaped like the reduce's result.
  mlir::Value buildExpanded(mlir::OpBuilder &b, mlir::Location loc) const;
};
/// Squared distances that must keep their formula (the exact stages of the
/// nearest-neighbour rewrite) carry this unit attribute and never match.
inline constexpr llvm::StringLiteral kExactDistanceAttr = "memfit.exact_distance";
std::optional<SquaredDistance> matchSquaredDistance(mlir::Operation *reduce);

/// The squared distance expanded, whatever reads it (`fast-distance`): its
/// rounding error grows with |a|^2 + |b|^2, not with the distance, so it is
/// opt-in; see README's numerics contract.
bool rewriteSquaredDistance(mlir::Operation *reduce, mlir::RewriterBase &rewriter);

/// What the nearest-neighbour rewrite knows of the machine and the limit.
struct NearestNeighbourOptions {
  /// The function's memory limit in bytes (0: none): the two-level loop's
  /// query chunk is bounded by what it leaves after arguments and results,
  /// divided by `tempMargin`.
  int64_t memoryLimit = 0;
  double tempMargin = 2.0;
  /// One core's L2 in bytes (0: this host's); sizes the point tiles.
  int64_t cacheBytes = 0;
};

/// top_k(-d, k) of squared distances d, exactly: candidates from the
/// expanded form (data centred; over long rows from block maxima in a loop
/// over query chunks and L2-sized point tiles, otherwise one GEMM), their
/// distances recomputed as the program writes them, and a certificate from
/// a rounding-error bound; rows whose certificate fails are recomputed
/// exactly in a loop.
bool rewriteNearestNeighbours(mlir::Operation *topK, const NearestNeighbourOptions &opts,
                              mlir::RewriterBase &rewriter);

/// top_k over long rows, exactly, in two stages: top_k of block maxima
/// picks k blocks, top_k of their elements finishes. Applied where a cost
/// model measured on XLA:CPU predicts a clear gain.
bool rewriteTwoStageTopK(mlir::Operation *topK, mlir::RewriterBase &rewriter);

/// A triangular solve in a loop body against a factor the loop carries
/// unchanged: the factor's inverse is formed once before the loop and each
/// iteration multiplies by it (a GEMM instead of a solve with layout copies).
bool rewriteLoopInvariantSolve(mlir::Operation *solve, mlir::RewriterBase &rewriter);

/// In a loop memfit-split made: dot(x * broadcast(c), y) -> dot(x, y) *
/// broadcast(c) (also x / c) when c varies only along dimensions the result
/// keeps, every reader of x * c is such a dot, and the result is smaller
/// than x.
bool rewriteScaleAfterDot(mlir::Operation *dot, mlir::RewriterBase &rewriter);

/// In a split loop (a stablehlo.while memfit-split made, which carries
/// `memfit.split`), directly or nested: the rewrites that pay only on
/// chunks apply there, so that a program that fits compiles as written.
bool inSplitLoop(mlir::Operation *op);

/// In split loops, a batched matrix-vector dot_general (one operand has
/// only batch and contracting dimensions) whose matrix operand's batch
/// dimensions do not lead -> reduce(add, broadcast(vector) * matrix):
/// XLA:CPU would copy the matrix into a batch-leading layout first.
bool rewriteBatchedGemv(mlir::Operation *dot, mlir::RewriterBase &rewriter);
/// The reduces rewriteBatchedGemv makes carry this unit attribute, and
/// reduce-to-dot leaves them as they are.
inline constexpr llvm::StringLiteral kBatchedGemvAttr = "memfit.batched_gemv";

/// reduce(add, A * B) over dims both carry, A and B broadcasts of a and b
///  ->  dot_general(a, b)
bool rewriteReduceOfProduct(mlir::Operation *reduce, mlir::RewriterBase &rewriter);

/// A chain of matrix products (through transposes) re-associated by dynamic
/// programming on FLOPs, ties broken by the largest intermediate.
bool rewriteMatrixChain(mlir::Operation *dot, mlir::RewriterBase &rewriter);

/// A sum of matrix products (through transposes) sharing a factor,
/// `G1 A + G2 A`  ->  `(G1 + G2) A`, when the shared factor is the big one.
bool rewriteFactorSum(mlir::Operation *add, mlir::RewriterBase &rewriter);

/// Erases `ops` (and what they alone fed) when nothing uses them any more.
/// memfit erases replaced ops itself: MLIR's DCE must assume unregistered
/// ops have side effects.
void eraseIfDead(mlir::RewriterBase &rewriter, llvm::ArrayRef<mlir::Operation *> ops);

} // namespace memfit

#endif
