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
// Values are compared through keys whose signed integer order is the order
// lax.top_k uses: for floats the total order (-NaN < -inf < ... < -0 < +0 <
// ... < inf < +NaN), by flipping the magnitude bits of negative numbers; for
// integers the value itself. Stage 3 runs top_k on the original values.
//
// B comes from a cost model measured on XLA:CPU (`bench/bench_topk.py`):
// per row, a N (the block maxima) + c N / B (top_k of the maxima) + g k B
// (gathering and ranking the candidates); B = sqrt(c N / (g k)), moved to a
// divisor of N nearby when one exists (no remainder block to slice off).
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"

#include "memfit/IR/OpViews.h"

#include <cmath>

using namespace mlir;
using namespace memfit;

namespace {

/// Per-element costs on XLA:CPU in ns, measured by bench/bench_topk.py
/// (Intel Xeon, jax 0.12 defaults): lax.top_k of a long row, the block
/// maxima pass, the top_k of the maxima (per block), the candidates (per
/// candidate element, gather included).
constexpr double kTopKPerElement = 2.0;
constexpr double kMaxPerElement = 0.35;
constexpr double kTopKPerBlock = 2.0;
constexpr double kCandidatePerElement = 2.5;
/// The rewrite must model at least this speed-up: the model is rough.
constexpr double kRequiredSpeedup = 1.5;
/// Marks top_k ops this rewrite created (their rows are short or already
/// reduced; rewriting them again would only add ops).
constexpr llvm::StringLiteral kTwoStageAttr = "memfit.two_stage";

struct BlockPlan {
  int64_t rows, n, k, block, full, remainder;
};

double modelledPlainCost(int64_t n) { return kTopKPerElement * n; }

double modelledTwoStageCost(int64_t n, int64_t k, int64_t block) {
  int64_t full = n / block, rem = n % block;
  return kMaxPerElement * n + kTopKPerBlock * full +
         kCandidatePerElement * (k * block + rem);
}

/// The block size: the model's optimum, or a divisor of n within a factor
/// of 1.5 of it when one exists (no remainder to slice off the row).
int64_t chooseBlock(int64_t n, int64_t k) {
  double best = std::sqrt(kTopKPerBlock * n / (kCandidatePerElement * k));
  int64_t b = std::max<int64_t>(1, std::llround(best));
  int64_t lo = std::max<int64_t>(1, std::llround(best / 1.5)),
          hi = std::llround(best * 1.5);
  int64_t divisor = 0;
  for (int64_t d = lo; d <= hi; ++d)
    if (n % d == 0 && (divisor == 0 || std::abs(d - b) < std::abs(divisor - b)))
      divisor = d;
  return divisor ? divisor : b;
}

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
  if (k < 1 || n < 4 * k)
    return std::nullopt;
  int64_t block = chooseBlock(n, k);
  int64_t full = n / block;
  if (full <= k || modelledPlainCost(n) <
                        kRequiredSpeedup * modelledTwoStageCost(n, k, block))
    return std::nullopt;
  int64_t rows = t.getNumElements() / n;
  return BlockPlan{rows, n, k, block, full, n % block};
}

RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type et) {
  return RankedTensorType::get(shape, et);
}

/// A splat of an integer type from its bits (buildConstantSplat goes
/// through double, which cannot hold every 64-bit mask).
Value intSplat(OpBuilder &b, Location loc, RankedTensorType t, const APInt &v) {
  auto dense = DenseElementsAttr::get(t, b.getIntegerAttr(t.getElementType(), v));
  return buildGenericOp(b, loc, "stablehlo.constant", {}, {t},
                        {b.getNamedAttr("value", dense)})
      ->getResult(0);
}

/// The key type of `et`: itself for integers, the signless integer of the
/// same width for floats.
Type keyTypeOf(OpBuilder &b, Type et) {
  if (llvm::isa<IntegerType>(et))
    return et;
  return b.getIntegerType(et.getIntOrFloatBitWidth());
}

/// Keys whose integer order is lax.top_k's order of `v`'s elements.
Value orderKeys(OpBuilder &b, Location loc, Value v) {
  auto t = llvm::cast<RankedTensorType>(v.getType());
  if (llvm::isa<IntegerType>(t.getElementType()))
    return v;
  unsigned w = t.getElementType().getIntOrFloatBitWidth();
  auto kt = tensorOf(t.getShape(), b.getIntegerType(w));
  Value bits = buildGenericOp(b, loc, "stablehlo.bitcast_convert", {v}, {kt})->getResult(0);
  // Negative floats (sign bit set) order backwards: flip their magnitude.
  Value sign = buildGenericOp(b, loc, "stablehlo.shift_right_arithmetic",
                              {bits, intSplat(b, loc, kt, APInt(w, w - 1))}, {kt})
                   ->getResult(0);
  Value mask = buildElementwise(b, loc, "stablehlo.and",
                                {sign, intSplat(b, loc, kt, APInt::getSignedMaxValue(w))});
  return buildElementwise(b, loc, "stablehlo.xor", {bits, mask});
}

/// The smallest key: the maximum's initial value.
Value lowestKey(OpBuilder &b, Location loc, Type kt) {
  auto it = llvm::cast<IntegerType>(kt);
  unsigned w = it.getWidth();
  APInt v = it.isUnsigned() ? APInt::getZero(w) : APInt::getSignedMinValue(w);
  return intSplat(b, loc, tensorOf({}, kt), v);
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

/// Stages 1 and 2: the k full blocks with the largest maxima, in increasing
/// block order: [P, k] i32.
Value pickBlocks(OpBuilder &b, Location loc, const BlockPlan &p, Value blocks) {
  Value keys = orderKeys(b, loc, blocks);
  Type kt = llvm::cast<RankedTensorType>(keys.getType()).getElementType();
  Value maxima = buildReduce(b, loc, keys, lowestKey(b, loc, kt), {2}, "stablehlo.maximum");
  Value picked = markedTopK(b, loc, maxima, p.k).second;
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

  Value picked = pickBlocks(b, loc, p, blocks);
  Value cand = buildReshape(b, loc, tensorOf({p.rows, p.k * p.block}, et),
                            gatherAlongRows(b, loc, blocks, picked, {p.block}));
  if (p.remainder)
    cand = buildConcatenate(b, loc, {cand, sliceColumns(b, loc, rows, p.full * p.block, p.n)},
                            1);
  auto [vals, at] = markedTopK(b, loc, cand, p.k);
  Value idx = gatherAlongRows(b, loc, candidatePositions(b, loc, p, picked), at, {});

  auto vt = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  auto it = llvm::cast<RankedTensorType>(op->getResult(1).getType());
  op->getResult(0).replaceAllUsesWith(reshapeTo(b, loc, vt, vals));
  op->getResult(1).replaceAllUsesWith(reshapeTo(b, loc, it, idx));
  op->erase();
  return true;
}
