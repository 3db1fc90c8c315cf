//===- TwoStageTopK.cpp - exact top-k over long rows in two stages --------===//
//
// XLA:CPU's top_k costs several nanoseconds per element of a long row; a max
// over blocks of the row costs a fraction of that. So a row of N is cut into
// blocks of B (and a remainder block of N mod B, kept whole):
//
//  1. the maximum of every full block;
//  2. top_k of the block maxima picks k blocks, taken in increasing block
//     order;
//  3. top_k over those k blocks' elements and the remainder block, whose
//     positions are then mapped back to positions in the row.
//
// It is exact. Order elements as lax.top_k does (value descending, ties to
// the lower index). If an element e of the true top k lay in a full block b
// that stage 2 did not pick, each of the k picked blocks would hold its
// maximum m >= e, with a lower block index when m == e; such an m ranks
// before e, so k elements would rank before e. The candidates keep the row's
// order (picked blocks in increasing order, the remainder last), so stage 3
// breaks ties as lax.top_k does.
//
// Values are compared through keys whose integer order is the order
// lax.top_k uses: for floats the total order (-NaN < -inf < ... < -0 < +0 <
// ... < inf < +NaN), by flipping the magnitude bits of negative numbers; for
// integers the value itself. XLA:CPU has a fast TopK only for f32 and f64
// (other types sort the whole row), so the top_k of stages 2 and 3 run on
// an f32/f64 image of the keys with the same order.
//
// B comes from a cost model measured on XLA:CPU (Analysis/TopKCost.cpp,
// bench/bench_topk.py): per row, a(B) N (the block maxima; integer max-reductions are fastest over
// rows of 32) + c N / B (top_k of the maxima) + g (k B + N mod B) (the
// candidates).
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"
#include "TopKKeys.h"

#include "memfit/Analysis/TopKCost.h"
#include "memfit/IR/OpViews.h"

#include <cmath>

using namespace mlir;
using namespace memfit;

namespace {

struct BlockPlan {
  int64_t rows, n, k, block, full, remainder;
};

/// The plan for `rows` rows of n elements of `et`, when the cost model
/// picks a block for them.
std::optional<BlockPlan> planRows(Type et, int64_t rows, int64_t n, int64_t k) {
  std::optional<TwoStageBlocks> two = twoStageTopK(et, n, k);
  if (!two || !hasOrderKeys(et))
    return std::nullopt;
  return BlockPlan{rows, n, k, two->block, n / two->block, n % two->block};
}

std::optional<BlockPlan> planBlocks(Operation *op) {
  auto topK = TopKView::match(op);
  if (!topK || op->hasAttr(kTwoStageAttr))
    return std::nullopt;
  auto t = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  if (!t.hasStaticShape() || t.getRank() < 1)
    return std::nullopt;
  int64_t n = t.getShape().back();
  return planRows(t.getElementType(), t.getNumElements() / n, n, topK->getK());
}

/// `v` as `t`, without a reshape when it already is.
Value reshapeTo(OpBuilder &b, Location loc, RankedTensorType t, Value v) {
  return v.getType() == t ? v : buildReshape(b, loc, t, v);
}

Value sliceColumns(OpBuilder &b, Location loc, Value m, int64_t from, int64_t to) {
  int64_t rows = llvm::cast<RankedTensorType>(m.getType()).getDimSize(0);
  return buildSlice(b, loc, m, {0, from}, {rows, to}, {1, 1});
}

/// Stage 1: the maximum key of every full block, [P, full].
Value blockMaxima(OpBuilder &b, Location loc, const BlockPlan &p, Value blocks) {
  Value keys = orderKeys(b, loc, blocks);
  Type kt = llvm::cast<RankedTensorType>(keys.getType()).getElementType();
  return buildReduce(b, loc, keys, lowestKey(b, loc, kt), {2}, "stablehlo.maximum");
}

/// Stage 2: the k blocks with the largest maxima, in increasing block
/// order: [P, k] i32.
Value pickBlocks(OpBuilder &b, Location loc, const BlockPlan &p, Value maxima, Type et) {
  Value picked = markedTopK(b, loc, fastImage(b, loc, maxima, et), p.k).second;
  return buildSort(b, loc, {picked}, 1)->getResult(0);
}

/// Stage 3: top_k of the candidates, (values, positions among them); on
/// their keys' fast image when the values have no fast TopK.
std::pair<Value, Value> finishOnCandidates(OpBuilder &b, Location loc, Value cand,
                                           int64_t k) {
  Type et = llvm::cast<RankedTensorType>(cand.getType()).getElementType();
  if (hasFastTopK(et))
    return markedTopK(b, loc, cand, k);
  Value at = markedTopK(b, loc, fastImage(b, loc, orderKeys(b, loc, cand), et), k).second;
  return {takeAlongRows(b, loc, cand, at, {}), at};
}

/// Stages 1-3 on rows [P, n]: the values and positions of their top k.
std::pair<Value, Value> inTwoStages(OpBuilder &b, Location loc, const BlockPlan &p, Value rows) {
  Type et = llvm::cast<RankedTensorType>(rows.getType()).getElementType();
  Value main = p.remainder ? sliceColumns(b, loc, rows, 0, p.full * p.block) : rows;
  Value blocks = buildReshape(b, loc, tensorOf({p.rows, p.full, p.block}, et), main);

  Value picked = pickBlocks(b, loc, p, blockMaxima(b, loc, p, blocks), et);
  Value cand = buildReshape(b, loc, tensorOf({p.rows, p.k * p.block}, et),
                            takeAlongRows(b, loc, blocks, picked, {p.block}));
  if (p.remainder)
    cand = buildConcatenate(b, loc, {cand, sliceColumns(b, loc, rows, p.full * p.block, p.n)},
                            1);
  auto [vals, at] = finishOnCandidates(b, loc, cand, p.k);
  Value positions = blockPositions(b, loc, picked, p.block, p.full * p.block, p.remainder);
  return {vals, takeAlongRows(b, loc, positions, at, {})};
}

} // namespace

std::pair<Value, Value> memfit::topKOfRows(OpBuilder &b, Location loc, Value rows, int64_t k) {
  auto t = llvm::cast<RankedTensorType>(rows.getType());
  if (auto plan = planRows(t.getElementType(), t.getDimSize(0), t.getDimSize(1), k))
    return inTwoStages(b, loc, *plan, rows);
  return markedTopK(b, loc, rows, k);
}

bool memfit::rewriteTwoStageTopK(Operation *op, RewriterBase &rewriter) {
  auto plan = planBlocks(op);
  if (!plan)
    return false;
  const BlockPlan &p = *plan;
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  Location loc = op->getLoc();
  Value operand = op->getOperand(0);
  Type et = llvm::cast<RankedTensorType>(operand.getType()).getElementType();
  Value rows = reshapeTo(b, loc, tensorOf({p.rows, p.n}, et), operand);
  auto [vals, idx] = inTwoStages(b, loc, p, rows);

  auto vt = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  auto it = llvm::cast<RankedTensorType>(op->getResult(1).getType());
  rewriter.replaceAllUsesWith(op->getResult(0), reshapeTo(b, loc, vt, vals));
  rewriter.replaceAllUsesWith(op->getResult(1), reshapeTo(b, loc, it, idx));
  rewriter.eraseOp(op);
  return true;
}
