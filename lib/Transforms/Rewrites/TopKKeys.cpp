//===- TopKKeys.cpp - lax.top_k's order as integer keys --------------------===//
#include "TopKKeys.h"
#include "Rewrites.h"

#include "memfit/Analysis/TopKCost.h"
#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

namespace {

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

} // namespace

bool memfit::hasOrderKeys(Type et) {
  if (et.isF16() || et.isBF16() || et.isF32() || et.isF64())
    return true;
  auto it = llvm::dyn_cast<IntegerType>(et);
  return it && it.getWidth() >= 8 && it.getWidth() <= 64;
}

Value memfit::orderKeys(OpBuilder &b, Location loc, Value v) {
  Type et = llvm::cast<RankedTensorType>(v.getType()).getElementType();
  if (llvm::isa<IntegerType>(et))
    return v;
  return flipNegatives(b, loc, bitcastTo(b, loc, v, b.getIntegerType(et.getIntOrFloatBitWidth())));
}

Value memfit::fastImage(OpBuilder &b, Location loc, Value keys, Type et) {
  if (hasFastTopK(et))
    return bitcastTo(b, loc, flipNegatives(b, loc, keys), et);
  auto kt = llvm::cast<RankedTensorType>(keys.getType());
  unsigned w = kt.getElementType().getIntOrFloatBitWidth();
  if (w > 32)
    return keys;
  Type ft = w <= 16 ? Type(b.getF32Type()) : Type(b.getF64Type());
  return buildConvert(b, loc, tensorOf(kt.getShape(), ft), keys);
}

Value memfit::lowestKey(OpBuilder &b, Location loc, Type kt) {
  auto it = llvm::cast<IntegerType>(kt);
  unsigned w = it.getWidth();
  APInt v = it.isUnsigned() ? APInt::getZero(w) : APInt::getSignedMinValue(w);
  return buildIntegerSplat(b, loc, tensorOf({}, kt), v);
}

std::pair<Value, Value> memfit::markedTopK(OpBuilder &b, Location loc, Value v, int64_t k) {
  auto [vals, idx] = buildTopK(b, loc, v, k);
  vals.getDefiningOp()->setAttr(kTwoStageAttr, b.getUnitAttr());
  return {vals, idx};
}

Value memfit::takeAlongRows(OpBuilder &b, Location loc, Value operand, Value idx,
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


Value memfit::blockPositions(OpBuilder &b, Location loc, Value picked, int64_t block,
                             int64_t tailStart, int64_t remainder) {
  Type i32 = b.getI32Type();
  auto pt = llvm::cast<RankedTensorType>(picked.getType());
  int64_t rows = pt.getDimSize(0), j = pt.getDimSize(1);
  auto kb = tensorOf({rows, j, block}, i32);
  Value starts = buildElementwise(
      b, loc, "stablehlo.multiply",
      {buildBroadcastInDim(b, loc, kb, picked, {0, 1}),
       buildConstantSplat(b, loc, kb, static_cast<double>(block))});
  Value pos = buildElementwise(b, loc, "stablehlo.add", {starts, buildIota(b, loc, kb, 2)});
  pos = buildReshape(b, loc, tensorOf({rows, j * block}, i32), pos);
  if (remainder == 0)
    return pos;
  auto rt = tensorOf({rows, remainder}, i32);
  Value rem = buildElementwise(
      b, loc, "stablehlo.add",
      {buildIota(b, loc, rt, 1), buildConstantSplat(b, loc, rt, static_cast<double>(tailStart))});
  return buildConcatenate(b, loc, {pos, rem}, 1);
}
