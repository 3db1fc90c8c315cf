//===- Builders.cpp - builders of generic StableHLO ops -------------------===//
//
// Creates StableHLO ops by name in the generic form jax prints: attributes
// as inherent attributes (`<{...}>`), regions filled where the op needs one.
//
//===----------------------------------------------------------------------===//
#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

void memfit::setInherentAttr(Operation *op, llvm::StringRef name, Attribute value) {
  NamedAttrList attrs;
  if (auto dict = llvm::dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute()))
    attrs.append(dict.getValue());
  attrs.set(name, value);
  LogicalResult ok = op->setPropertiesFromAttribute(
      attrs.getDictionary(op->getContext()), /*emitError=*/nullptr);
  if (failed(ok)) // a registered op without such a property
    op->setAttr(name, value);
}

Operation *memfit::buildGenericOp(OpBuilder &b, Location loc, llvm::StringRef name,
                                  ValueRange operands, TypeRange resultTypes,
                                  llvm::ArrayRef<NamedAttribute> attrs,
                                  unsigned numRegions) {
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addTypes(resultTypes);
  if (!attrs.empty())
    state.propertiesAttr = b.getDictionaryAttr(attrs);
  for (unsigned i = 0; i < numRegions; ++i)
    state.addRegion();
  return b.create(state);
}

static RankedTensorType scalarOf(Type elementType) {
  return RankedTensorType::get({}, elementType);
}

Value memfit::buildConstant(OpBuilder &b, Location loc, DenseElementsAttr value) {
  return buildGenericOp(b, loc, "stablehlo.constant", {}, {value.getType()},
                        {b.getNamedAttr("value", value)})
      ->getResult(0);
}

Value memfit::buildConstantSplat(OpBuilder &b, Location loc,
                                 RankedTensorType type, double value) {
  DenseElementsAttr dense = getSplatAttr(type, value);
  assert(dense && "element type not checked by verifyOpInvariants");
  return buildGenericOp(b, loc, "stablehlo.constant", {}, {type},
                        {b.getNamedAttr("value", dense)})
      ->getResult(0);
}

Value memfit::buildIntegerSplat(OpBuilder &b, Location loc, RankedTensorType type,
                                const APInt &bits) {
  auto dense = DenseElementsAttr::get(type, b.getIntegerAttr(type.getElementType(), bits));
  return buildGenericOp(b, loc, "stablehlo.constant", {}, {type},
                        {b.getNamedAttr("value", dense)})
      ->getResult(0);
}

Value memfit::buildScalarI64(OpBuilder &b, Location loc, int64_t v) {
  return buildConstantSplat(b, loc, scalarOf(b.getI64Type()), static_cast<double>(v));
}

Value memfit::buildIota(OpBuilder &b, Location loc, RankedTensorType type,
                        int64_t dim) {
  return buildGenericOp(b, loc, "stablehlo.iota", {}, {type},
                        {b.getNamedAttr("iota_dimension", b.getI64IntegerAttr(dim))})
      ->getResult(0);
}

Value memfit::buildBroadcastInDim(OpBuilder &b, Location loc,
                                  RankedTensorType type, Value operand,
                                  llvm::ArrayRef<int64_t> dims) {
  return buildGenericOp(b, loc, "stablehlo.broadcast_in_dim", {operand}, {type},
                        {b.getNamedAttr("broadcast_dimensions",
                                        b.getDenseI64ArrayAttr(dims))})
      ->getResult(0);
}

Value memfit::buildReshape(OpBuilder &b, Location loc, RankedTensorType type,
                           Value operand) {
  return buildGenericOp(b, loc, "stablehlo.reshape", {operand}, {type})->getResult(0);
}

Operation *memfit::buildOptimizationBarrier(OpBuilder &b, Location loc,
                                            ValueRange operands) {
  return buildGenericOp(b, loc, "stablehlo.optimization_barrier", operands,
                        operands.getTypes());
}

Value memfit::buildTranspose(OpBuilder &b, Location loc, Value operand,
                             llvm::ArrayRef<int64_t> perm) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in.getDimSize(p));
  auto type = RankedTensorType::get(shape, in.getElementType());
  return buildGenericOp(b, loc, "stablehlo.transpose", {operand}, {type},
                        {b.getNamedAttr("permutation", b.getDenseI64ArrayAttr(perm))})
      ->getResult(0);
}

Value memfit::buildConvert(OpBuilder &b, Location loc, RankedTensorType type,
                           Value operand) {
  return buildGenericOp(b, loc, "stablehlo.convert", {operand}, {type})->getResult(0);
}

Value memfit::buildElementwise(OpBuilder &b, Location loc, llvm::StringRef name,
                               ValueRange operands) {
  // Select's result follows its value operands, not its predicate.
  Type resultType = operands.size() == 3 ? operands[1].getType() : operands[0].getType();
  return buildGenericOp(b, loc, name, operands, {resultType})->getResult(0);
}

Value memfit::buildCompare(OpBuilder &b, Location loc, Value lhs, Value rhs,
                           llvm::StringRef direction, llvm::StringRef compareType) {
  MLIRContext *ctx = b.getContext();
  SmallVector<NamedAttribute> attrs;
  attrs.push_back(b.getNamedAttr(
      "comparison_direction",
      attrFromText(ctx, ("#stablehlo<comparison_direction " + direction + ">").str())));
  if (!compareType.empty())
    attrs.push_back(b.getNamedAttr(
        "compare_type",
        attrFromText(ctx, ("#stablehlo<comparison_type " + compareType + ">").str())));
  auto in = llvm::cast<RankedTensorType>(lhs.getType());
  auto type = RankedTensorType::get(in.getShape(), b.getI1Type());
  return buildGenericOp(b, loc, "stablehlo.compare", {lhs, rhs}, {type}, attrs)
      ->getResult(0);
}

Value memfit::buildSelect(OpBuilder &b, Location loc, Value pred, Value onTrue,
                          Value onFalse) {
  return buildElementwise(b, loc, "stablehlo.select", {pred, onTrue, onFalse});
}

Value memfit::buildDotGeneral(OpBuilder &b, Location loc, RankedTensorType type,
                              Value lhs, Value rhs, const DotDims &dims) {
  Attribute dd = attrFromText(b.getContext(), dims.toText());
  return buildGenericOp(b, loc, "stablehlo.dot_general", {lhs, rhs}, {type},
                        {b.getNamedAttr("dot_dimension_numbers", dd)})
      ->getResult(0);
}

Value memfit::buildReduce(OpBuilder &b, Location loc, Value input, Value init,
                          llvm::ArrayRef<int64_t> dims, llvm::StringRef combiner) {
  auto in = llvm::cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      shape.push_back(in.getDimSize(i));
  auto type = RankedTensorType::get(shape, in.getElementType());
  Operation *op = buildGenericOp(b, loc, "stablehlo.reduce", {input, init}, {type},
                                 {b.getNamedAttr("dimensions", b.getDenseI64ArrayAttr(dims))},
                                 /*numRegions=*/1);
  auto scalar = scalarOf(in.getElementType());
  OpBuilder::InsertionGuard g(b); // createBlock moves the insertion point
  Block *body = b.createBlock(&op->getRegion(0), {}, {scalar, scalar}, {loc, loc});
  Value r = buildElementwise(b, loc, combiner, body->getArguments());
  buildReturn(b, loc, r);
  return op->getResult(0);
}

Value memfit::buildSlice(OpBuilder &b, Location loc, Value operand,
                         llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> limit,
                         llvm::ArrayRef<int64_t> strides) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < start.size(); ++i)
    shape.push_back((limit[i] - start[i] + strides[i] - 1) / strides[i]);
  auto type = RankedTensorType::get(shape, in.getElementType());
  return buildGenericOp(b, loc, "stablehlo.slice", {operand}, {type},
                        {b.getNamedAttr("start_indices", b.getDenseI64ArrayAttr(start)),
                         b.getNamedAttr("limit_indices", b.getDenseI64ArrayAttr(limit)),
                         b.getNamedAttr("strides", b.getDenseI64ArrayAttr(strides))})
      ->getResult(0);
}

Value memfit::buildDynamicSlice(OpBuilder &b, Location loc, Value operand,
                                ValueRange starts, llvm::ArrayRef<int64_t> sizes) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  auto type = RankedTensorType::get(sizes, in.getElementType());
  SmallVector<Value> operands{operand};
  operands.append(starts.begin(), starts.end());
  return buildGenericOp(b, loc, "stablehlo.dynamic_slice", operands, {type},
                        {b.getNamedAttr("slice_sizes", b.getDenseI64ArrayAttr(sizes))})
      ->getResult(0);
}

Value memfit::buildDynamicUpdateSlice(OpBuilder &b, Location loc, Value operand,
                                      Value update, ValueRange starts) {
  SmallVector<Value> operands{operand, update};
  operands.append(starts.begin(), starts.end());
  return buildGenericOp(b, loc, "stablehlo.dynamic_update_slice", operands,
                        {operand.getType()})
      ->getResult(0);
}

Value memfit::buildConcatenate(OpBuilder &b, Location loc, ValueRange operands,
                               int64_t dim) {
  auto first = llvm::cast<RankedTensorType>(operands[0].getType());
  SmallVector<int64_t> shape(first.getShape());
  shape[dim] = 0;
  for (Value v : operands)
    shape[dim] += llvm::cast<RankedTensorType>(v.getType()).getDimSize(dim);
  auto type = RankedTensorType::get(shape, first.getElementType());
  return buildGenericOp(b, loc, "stablehlo.concatenate", operands, {type},
                        {b.getNamedAttr("dimension", b.getI64IntegerAttr(dim))})
      ->getResult(0);
}

Value memfit::buildPad(OpBuilder &b, Location loc, Value operand, Value padValue,
                       llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
                       llvm::ArrayRef<int64_t> interior) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    int64_t n = in.getDimSize(i);
    shape.push_back(low[i] + high[i] + n + std::max<int64_t>(n - 1, 0) * interior[i]);
  }
  auto type = RankedTensorType::get(shape, in.getElementType());
  return buildGenericOp(b, loc, "stablehlo.pad", {operand, padValue}, {type},
                        {b.getNamedAttr("edge_padding_low", b.getDenseI64ArrayAttr(low)),
                         b.getNamedAttr("edge_padding_high", b.getDenseI64ArrayAttr(high)),
                         b.getNamedAttr("interior_padding", b.getDenseI64ArrayAttr(interior))})
      ->getResult(0);
}

std::pair<Value, Value> memfit::buildTopK(OpBuilder &b, Location loc,
                                          Value operand, int64_t k) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape(in.getShape());
  shape.back() = k;
  auto vt = RankedTensorType::get(shape, in.getElementType());
  auto it = RankedTensorType::get(shape, b.getI32Type());
  Operation *op = buildGenericOp(b, loc, "chlo.top_k", {operand}, {vt, it},
                                 {b.getNamedAttr("k", b.getI64IntegerAttr(k))});
  return {op->getResult(0), op->getResult(1)};
}

Operation *memfit::buildWhile(OpBuilder &b, Location loc, ValueRange operands) {
  Operation *op = buildGenericOp(b, loc, "stablehlo.while", operands,
                                 operands.getTypes(), {}, /*numRegions=*/2);
  SmallVector<Location> locs(operands.size(), loc);
  OpBuilder::InsertionGuard g(b);
  b.createBlock(&op->getRegion(0), {}, operands.getTypes(), locs);
  b.createBlock(&op->getRegion(1), {}, operands.getTypes(), locs);
  return op;
}

Operation *memfit::buildReturn(OpBuilder &b, Location loc, ValueRange operands) {
  return buildGenericOp(b, loc, "stablehlo.return", operands, {});
}

Operation *memfit::buildSort(OpBuilder &b, Location loc, ValueRange operands,
                             int64_t dim, bool isStable) {
  Operation *op = buildGenericOp(
      b, loc, "stablehlo.sort", operands, operands.getTypes(),
      {b.getNamedAttr("dimension", b.getI64IntegerAttr(dim)),
       b.getNamedAttr("is_stable", b.getBoolAttr(isStable))},
      /*numRegions=*/1);
  SmallVector<Type> argTypes;
  for (Value v : operands) {
    Type scalar = scalarOf(llvm::cast<RankedTensorType>(v.getType()).getElementType());
    argTypes.append({scalar, scalar});
  }
  SmallVector<Location> locs(argTypes.size(), loc);
  OpBuilder::InsertionGuard g(b);
  Block *body = b.createBlock(&op->getRegion(0), {}, argTypes, locs);
  b.setInsertionPointToStart(body);
  Value lt = buildCompare(b, loc, body->getArgument(0), body->getArgument(1), "LT");
  buildReturn(b, loc, lt);
  return op;
}

Operation *memfit::buildCustomCall(OpBuilder &b, Location loc,
                                   llvm::StringRef target, ValueRange operands,
                                   TypeRange resultTypes) {
  return buildGenericOp(b, loc, "stablehlo.custom_call", operands, resultTypes,
                        {b.getNamedAttr("call_target_name", b.getStringAttr(target))});
}
