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

#include "memfit/Analysis/TopKCost.h"
#include "memfit/IR/OpViews.h"

#include <cmath>

using namespace mlir;
using namespace memfit;

namespace {

/// Marks top_k ops this rewrite created (their rows are short or already
/// reduced; rewriting them again would only add ops).
constexpr llvm::StringLiteral kTwoStageAttr = "memfit.two_stage";

struct BlockPlan {
  int64_t rows, n, k, block, full, remainder;
};

/// Element types whose order lax.top_k defines and keys can express.
bool hasKeys(Type et) {
  if (et.isF16() || et.isBF16() || et.isF32() || et.isF64())
    return true;
  auto it = llvm::dyn_cast<IntegerType>(et);
  return it && it.getWidth() >= 8 && it.getWidth() <= 64;
}

std::optional<BlockPlan> planBlocks(Operation *op) {
  auto topK = TopKView::match(op);
  if (!topK || op->hasAttr(kTwoStageAttr))
    return std::nullopt;
  auto t = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  if (!t.hasStaticShape() || t.getRank() < 1 || !hasKeys(t.getElementType()))
    return std::nullopt;
  int64_t n = t.getShape().back(), k = topK->getK();
  std::optional<TwoStageBlocks> two = twoStageTopK(t.getElementType(), n, k);
  if (!two)
    return std::nullopt;
  int64_t rows = t.getNumElements() / n, block = two->block;
  return BlockPlan{rows, n, k, block, n / block, n % block};
}

/// Integer bits with the magnitude of negative numbers flipped: turns IEEE
/// bits into keys of the total order, and keys back into bits.
Value flipNegatives(OpBuilder &b, Location loc, Value bits) {
  auto kt = llvm::cast<RankedTensorType>(bits.getType());
  unsigned w = kt.getElementType().getIntOrFloatBitWidth();
  Value sign = buildGenericOp(b, loc, "stablehlo.shift_right_arithmetic",
                              {bits, buildIntegerSplat(b, loc, kt, APInt(w, w - 1))}, {kt})
                   ->getResult(0);
  Value mask = buildElementwise(b, loc, "stablehlo.and",
                                {sign, buildIntegerSplat(b, loc, kt, APInt::getSignedMaxValue(w))});
  return buildElementwise(b, loc, "stablehlo.xor", {bits, mask});
}

Value bitcastTo(OpBuilder &b, Location loc, Value v, Type et) {
  auto t = tensorOf(llvm::cast<RankedTensorType>(v.getType()).getShape(), et);
  return buildGenericOp(b, loc, "stablehlo.bitcast_convert", {v}, {t})->getResult(0);
}

/// Keys whose integer order is lax.top_k's order of `v`'s elements.
Value orderKeys(OpBuilder &b, Location loc, Value v) {
  Type et = llvm::cast<RankedTensorType>(v.getType()).getElementType();
  if (llvm::isa<IntegerType>(et))
    return v;
  return flipNegatives(b, loc, bitcastTo(b, loc, v, b.getIntegerType(et.getIntOrFloatBitWidth())));
}

/// Keys of `et` values as floats of the same order that XLA's fast TopK
/// takes: the values themselves for f32/f64, else the keys converted
/// exactly (16-bit keys to f32, 32-bit ones to f64); 64-bit integer keys
/// stay as they are (a sort).
Value fastImage(OpBuilder &b, Location loc, Value keys, Type et) {
  if (hasFastTopK(et))
    return bitcastTo(b, loc, flipNegatives(b, loc, keys), et);
  auto kt = llvm::cast<RankedTensorType>(keys.getType());
  unsigned w = kt.getElementType().getIntOrFloatBitWidth();
  if (w > 32)
    return keys;
  Type ft = w <= 16 ? Type(b.getF32Type()) : Type(b.getF64Type());
  return buildConvert(b, loc, tensorOf(kt.getShape(), ft), keys);
}

/// The smallest key: the maximum's initial value.
Value lowestKey(OpBuilder &b, Location loc, Type kt) {
  auto it = llvm::cast<IntegerType>(kt);
  unsigned w = it.getWidth();
  APInt v = it.isUnsigned() ? APInt::getZero(w) : APInt::getSignedMinValue(w);
  return buildIntegerSplat(b, loc, tensorOf({}, kt), v);
}

/// `v` as `t`, without a reshape when it already is.
Value reshapeTo(OpBuilder &b, Location loc, RankedTensorType t, Value v) {
  return v.getType() == t ? v : buildReshape(b, loc, t, v);
}

Value sliceColumns(OpBuilder &b, Location loc, Value m, int64_t from, int64_t to) {
  int64_t rows = llvm::cast<RankedTensorType>(m.getType()).getDimSize(0);
  return buildSlice(b, loc, m, {0, from}, {rows, to}, {1, 1});
}

/// take_along_axis(operand [P, ..], idx [P, j]) along dim 1, slices of
/// `sliceSizes` (leading 1, 1): [P, j, trailing slice dims...].
Value gatherAlongRows(OpBuilder &b, Location loc, Value operand, Value idx,
                      ArrayRef<int64_t> trailing) {
  auto ot = llvm::cast<RankedTensorType>(operand.getType());
  auto it = llvm::cast<RankedTensorType>(idx.getType());
  int64_t p = it.getDimSize(0), j = it.getDimSize(1);
  Value idx3 = buildReshape(b, loc, tensorOf({p, j, 1}, it.getElementType()), idx);
  std::string offsets = trailing.empty() ? "" : "offset_dims = [2], ";
  Attribute dims = attrFromText(
      b.getContext(), "#stablehlo.gather<" + offsets +
                          "collapsed_slice_dims = [1], operand_batching_dims = [0], "
                          "start_indices_batching_dims = [0], start_index_map = [1], "
                          "index_vector_dim = 2>");
  SmallVector<int64_t> sizes{1, 1}, shape{p, j};
  sizes.append(trailing.begin(), trailing.end());
  shape.append(trailing.begin(), trailing.end());
  return buildGenericOp(b, loc, "stablehlo.gather", {operand, idx3},
                        {tensorOf(shape, ot.getElementType())},
                        {b.getNamedAttr("dimension_numbers", dims),
                         b.getNamedAttr("indices_are_sorted", b.getBoolAttr(false)),
                         b.getNamedAttr("slice_sizes", b.getDenseI64ArrayAttr(sizes))})
      ->getResult(0);
}

std::pair<Value, Value> markedTopK(OpBuilder &b, Location loc, Value v, int64_t k) {
  auto [vals, idx] = buildTopK(b, loc, v, k);
  vals.getDefiningOp()->setAttr(kTwoStageAttr, b.getUnitAttr());
  return {vals, idx};
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

/// Row positions of the candidates: picked block * B + offset, then the
/// remainder's positions: [P, k B + rem] i32.
Value candidatePositions(OpBuilder &b, Location loc, const BlockPlan &p, Value picked) {
  Type i32 = b.getI32Type();
  auto kb = tensorOf({p.rows, p.k, p.block}, i32);
  Value starts = buildElementwise(
      b, loc, "stablehlo.multiply",
      {buildBroadcastInDim(b, loc, kb, picked, {0, 1}),
       buildConstantSplat(b, loc, kb, static_cast<double>(p.block))});
  Value pos = buildElementwise(b, loc, "stablehlo.add", {starts, buildIota(b, loc, kb, 2)});
  pos = buildReshape(b, loc, tensorOf({p.rows, p.k * p.block}, i32), pos);
  if (p.remainder == 0)
    return pos;
  auto rt = tensorOf({p.rows, p.remainder}, i32);
  Value rem = buildElementwise(
      b, loc, "stablehlo.add",
      {buildIota(b, loc, rt, 1),
       buildConstantSplat(b, loc, rt, static_cast<double>(p.full * p.block))});
  return buildConcatenate(b, loc, {pos, rem}, 1);
}

/// Stage 3: top_k of the candidates, (values, positions among them); on
/// their keys' fast image when the values have no fast TopK.
std::pair<Value, Value> finishOnCandidates(OpBuilder &b, Location loc, Value cand,
                                           int64_t k) {
  Type et = llvm::cast<RankedTensorType>(cand.getType()).getElementType();
  if (hasFastTopK(et))
    return markedTopK(b, loc, cand, k);
  Value at = markedTopK(b, loc, fastImage(b, loc, orderKeys(b, loc, cand), et), k).second;
  return {gatherAlongRows(b, loc, cand, at, {}), at};
}

} // namespace

bool memfit::rewriteTwoStageTopK(Operation *op) {
  auto plan = planBlocks(op);
  if (!plan)
    return false;
  const BlockPlan &p = *plan;
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value operand = op->getOperand(0);
  Type et = llvm::cast<RankedTensorType>(operand.getType()).getElementType();
  Value rows = reshapeTo(b, loc, tensorOf({p.rows, p.n}, et), operand);
  Value main = p.remainder ? sliceColumns(b, loc, rows, 0, p.full * p.block) : rows;
  Value blocks = buildReshape(b, loc, tensorOf({p.rows, p.full, p.block}, et), main);

  Value picked = pickBlocks(b, loc, p, blockMaxima(b, loc, p, blocks), et);
  Value cand = buildReshape(b, loc, tensorOf({p.rows, p.k * p.block}, et),
                            gatherAlongRows(b, loc, blocks, picked, {p.block}));
  if (p.remainder)
    cand = buildConcatenate(b, loc, {cand, sliceColumns(b, loc, rows, p.full * p.block, p.n)},
                            1);
  auto [vals, at] = finishOnCandidates(b, loc, cand, p.k);
  Value idx = gatherAlongRows(b, loc, candidatePositions(b, loc, p, picked), at, {});

  auto vt = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  auto it = llvm::cast<RankedTensorType>(op->getResult(1).getType());
  op->getResult(0).replaceAllUsesWith(reshapeTo(b, loc, vt, vals));
  op->getResult(1).replaceAllUsesWith(reshapeTo(b, loc, it, idx));
  op->erase();
  return true;
}
