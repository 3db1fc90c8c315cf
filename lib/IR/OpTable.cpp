//===- OpTable.cpp - the StableHLO op table --------------------------------===//
//
// One row per op kind memfit handles: its arity, regions, whether XLA fuses it
// into consumers, and the attributes it cannot do without. Adding an op is
// adding a row.
//
//===----------------------------------------------------------------------===//
#include "memfit/IR/OpTable.h"

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/StringMap.h"

using namespace memfit;

namespace {
using A = AttrKind;
constexpr RequiredAttr kBroadcastAttrs[] = {{"broadcast_dimensions", A::I64Array}};
constexpr RequiredAttr kTransposeAttrs[] = {{"permutation", A::I64Array}};
constexpr RequiredAttr kIotaAttrs[] = {{"iota_dimension", A::Integer}};
constexpr RequiredAttr kConstantAttrs[] = {{"value", A::Dense}};
constexpr RequiredAttr kDotAttrs[] = {{"dot_dimension_numbers", A::Dialect}};
constexpr RequiredAttr kReduceAttrs[] = {{"dimensions", A::I64Array}};
constexpr RequiredAttr kSliceAttrs[] = {{"start_indices", A::I64Array},
                                        {"limit_indices", A::I64Array},
                                        {"strides", A::I64Array}};
constexpr RequiredAttr kDynSliceAttrs[] = {{"slice_sizes", A::I64Array}};
constexpr RequiredAttr kConcatAttrs[] = {{"dimension", A::Integer}};
constexpr RequiredAttr kPadAttrs[] = {{"edge_padding_low", A::I64Array},
                                      {"edge_padding_high", A::I64Array},
                                      {"interior_padding", A::I64Array}};
constexpr RequiredAttr kCompareAttrs[] = {{"comparison_direction", A::Dialect}};
constexpr RequiredAttr kSortAttrs[] = {{"dimension", A::Integer}};
constexpr RequiredAttr kTopKAttrs[] = {{"k", A::Integer}};
constexpr RequiredAttr kCustomCallAttrs[] = {{"call_target_name", A::String}};
constexpr RequiredAttr kCallAttrs[] = {{"callee", A::Any}};

#define UNARY(n) {n, OpKind::ElementwiseUnary, 1, 1, 0, true, {}}
#define BINARY(n) {n, OpKind::ElementwiseBinary, 2, 1, 0, true, {}}
#define COSTLY_UNARY(n) {n, OpKind::ElementwiseUnary, 1, 1, 0, true, {}, /*costly=*/true}
#define COSTLY_BINARY(n) {n, OpKind::ElementwiseBinary, 2, 1, 0, true, {}, /*costly=*/true}
// The same, for ops passes recognise by what they compute (ElementwiseFn).
#define UNARY_FN(n, f) {n, OpKind::ElementwiseUnary, 1, 1, 0, true, {}, false, ElementwiseFn::f}
#define BINARY_FN(n, f) {n, OpKind::ElementwiseBinary, 2, 1, 0, true, {}, false, ElementwiseFn::f}
#define COSTLY_UNARY_FN(n, f) {n, OpKind::ElementwiseUnary, 1, 1, 0, true, {}, true, ElementwiseFn::f}
#define COSTLY_BINARY_FN(n, f) {n, OpKind::ElementwiseBinary, 2, 1, 0, true, {}, true, ElementwiseFn::f}

const OpInfo kOpTable[] = {
    {"stablehlo.constant", OpKind::Constant, 0, 1, 0, true, kConstantAttrs},
    {"arith.constant", OpKind::ArithConstant, 0, 1, 0, true, kConstantAttrs},
    {"stablehlo.iota", OpKind::Iota, 0, 1, 0, true, kIotaAttrs},
    {"stablehlo.broadcast_in_dim", OpKind::BroadcastInDim, 1, 1, 0, true, kBroadcastAttrs},
    {"stablehlo.reshape", OpKind::Reshape, 1, 1, 0, true, {}},
    {"stablehlo.transpose", OpKind::Transpose, 1, 1, 0, true, kTransposeAttrs},
    {"stablehlo.convert", OpKind::Convert, 1, 1, 0, true, {}},
    {"stablehlo.bitcast_convert", OpKind::ElementwiseUnary, 1, 1, 0, true, {}},
    UNARY_FN("stablehlo.abs", Abs), COSTLY_UNARY("stablehlo.cbrt"), UNARY("stablehlo.ceil"),
    COSTLY_UNARY("stablehlo.cosine"), UNARY("stablehlo.count_leading_zeros"),
    COSTLY_UNARY_FN("stablehlo.exponential", Exponential), COSTLY_UNARY("stablehlo.exponential_minus_one"),
    UNARY("stablehlo.floor"), UNARY("stablehlo.imag"), UNARY("stablehlo.is_finite"),
    COSTLY_UNARY("stablehlo.log"), COSTLY_UNARY("stablehlo.log_plus_one"),
    COSTLY_UNARY("stablehlo.logistic"), UNARY("stablehlo.not"), UNARY_FN("stablehlo.negate", Negate),
    UNARY("stablehlo.popcnt"), UNARY("stablehlo.real"),
    UNARY("stablehlo.round_nearest_afz"), UNARY("stablehlo.round_nearest_even"),
    COSTLY_UNARY("stablehlo.rsqrt"), UNARY("stablehlo.sign"),
    COSTLY_UNARY("stablehlo.sine"), COSTLY_UNARY("stablehlo.sqrt"),
    COSTLY_UNARY("stablehlo.tan"), COSTLY_UNARY("stablehlo.tanh"),
    UNARY("stablehlo.reduce_precision"), COSTLY_UNARY("chlo.erf"),
    COSTLY_UNARY("chlo.erfc"), COSTLY_UNARY("chlo.erf_inv"), COSTLY_UNARY("chlo.lgamma"),
    COSTLY_UNARY("chlo.digamma"), COSTLY_UNARY("chlo.bessel_i1e"), UNARY("chlo.asin"),
    UNARY("chlo.acos"), UNARY("chlo.atan"), UNARY("chlo.sinh"), UNARY("chlo.cosh"),
    UNARY("chlo.asinh"), UNARY("chlo.acosh"), UNARY("chlo.atanh"), UNARY_FN("chlo.square", Square),
    BINARY_FN("stablehlo.add", Add), BINARY_FN("stablehlo.subtract", Subtract),
    BINARY_FN("stablehlo.multiply", Multiply),
    COSTLY_BINARY_FN("stablehlo.divide", Divide), COSTLY_BINARY("stablehlo.remainder"),
    BINARY_FN("stablehlo.maximum", Maximum), BINARY_FN("stablehlo.minimum", Minimum),
    COSTLY_BINARY_FN("stablehlo.power", Power), COSTLY_BINARY("stablehlo.atan2"),
    BINARY_FN("stablehlo.and", And), BINARY_FN("stablehlo.or", Or), BINARY("stablehlo.xor"),
    BINARY("stablehlo.shift_left"), BINARY("stablehlo.shift_right_arithmetic"),
    BINARY("stablehlo.shift_right_logical"), BINARY("stablehlo.complex"),
    BINARY("chlo.next_after"), BINARY("chlo.polygamma"), BINARY("chlo.zeta"),
    {"stablehlo.compare", OpKind::Compare, 2, 1, 0, true, kCompareAttrs},
    {"stablehlo.select", OpKind::Select, 3, 1, 0, true, {}},
    {"stablehlo.clamp", OpKind::Clamp, 3, 1, 0, true, {}},
    {"stablehlo.dot_general", OpKind::DotGeneral, 2, 1, 0, false, kDotAttrs},
    {"stablehlo.reduce", OpKind::Reduce, -1, -1, 1, false, kReduceAttrs},
    {"stablehlo.slice", OpKind::Slice, 1, 1, 0, true, kSliceAttrs},
    {"stablehlo.dynamic_slice", OpKind::DynamicSlice, -1, 1, 0, true, kDynSliceAttrs},
    {"stablehlo.dynamic_update_slice", OpKind::DynamicUpdateSlice, -1, 1, 0, false, {}},
    {"stablehlo.concatenate", OpKind::Concatenate, -1, 1, 0, true, kConcatAttrs},
    {"stablehlo.pad", OpKind::Pad, 2, 1, 0, true, kPadAttrs},
    {"stablehlo.while", OpKind::While, -1, -1, 2, false, {}},
    {"stablehlo.return", OpKind::Return, -1, 0, 0, false, {}},
    {"stablehlo.sort", OpKind::Sort, -1, -1, 1, false, kSortAttrs},
    {"chlo.top_k", OpKind::TopK, 1, 2, 0, false, kTopKAttrs},
    {"stablehlo.custom_call", OpKind::CustomCall, -1, -1, 0, false, kCustomCallAttrs},
    {"func.return", OpKind::FuncReturn, -1, 0, 0, false, {}},
    {"func.call", OpKind::FuncCall, -1, -1, 0, false, kCallAttrs},
    // Opaque materialising ops that an analysis singles out by kind.
    {"stablehlo.gather", OpKind::Gather, 2, 1, 0, false, {}},
    {"stablehlo.scatter", OpKind::Scatter, -1, -1, 1, false, {}},
    {"stablehlo.convolution", OpKind::Convolution, 2, 1, 0, false, {}},
    {"stablehlo.reduce_window", OpKind::ReduceWindow, -1, -1, 1, false, {}},
    {"stablehlo.select_and_scatter", OpKind::SelectAndScatter, 3, 1, 2, false, {}},
    {"stablehlo.case", OpKind::Case, -1, -1, -1, false, {}},
    {"stablehlo.if", OpKind::If, 1, -1, 2, false, {}},
    {"stablehlo.optimization_barrier", OpKind::OptimizationBarrier, -1, -1, 0, false, {}},
    {"stablehlo.cholesky", OpKind::Cholesky, 1, 1, 0, false, {}},
    {"stablehlo.triangular_solve", OpKind::TriangularSolve, 2, 1, 0, false, {}},
    // The identity on values, stating its result's sharding.
    {"sdy.sharding_constraint", OpKind::ShardingConstraint, 1, 1, 0, true, {}},
    // A module-level mesh, read for its axes (Shardy checks its structure).
    {"sdy.mesh", OpKind::Mesh, -1, -1, -1, false, {}},
    // Known, handled as opaque materialising ops.
    {"stablehlo.reverse", OpKind::Other, 1, 1, 0, true, {}},
    {"stablehlo.get_tuple_element", OpKind::Other, 1, 1, 0, false, {}},
    {"stablehlo.tuple", OpKind::Other, -1, 1, 0, false, {}},
    {"stablehlo.rng_bit_generator", OpKind::Other, 1, 2, 0, false, {}},
    {"stablehlo.all_reduce", OpKind::Other, -1, -1, 1, false, {}},
    {"stablehlo.reduce_scatter", OpKind::Other, 1, 1, 1, false, {}},
    {"stablehlo.all_gather", OpKind::Other, -1, -1, 0, false, {}},
    {"stablehlo.all_to_all", OpKind::Other, -1, -1, 0, false, {}},
    {"stablehlo.collective_permute", OpKind::Other, 1, 1, 0, false, {}},
    {"stablehlo.batch_norm_inference", OpKind::Other, 5, 1, 0, false, {}},
    {"stablehlo.fft", OpKind::Other, 1, 1, 0, false, {}},
    {"stablehlo.map", OpKind::Other, -1, 1, 1, false, {}},
};
#undef UNARY
#undef BINARY
#undef COSTLY_UNARY
#undef COSTLY_BINARY
#undef UNARY_FN
#undef BINARY_FN
#undef COSTLY_UNARY_FN
#undef COSTLY_BINARY_FN

const llvm::StringMap<const OpInfo *> &opIndex() {
  static const llvm::StringMap<const OpInfo *> index = [] {
    llvm::StringMap<const OpInfo *> m;
    for (const OpInfo &info : kOpTable)
      m[info.name] = &info;
    return m;
  }();
  return index;
}
} // namespace

const OpInfo *memfit::lookupOpInfo(llvm::StringRef name) {
  auto it = opIndex().find(name);
  return it == opIndex().end() ? nullptr : it->second;
}

const OpInfo *memfit::lookupOpInfo(mlir::Operation *op) {
  return lookupOpInfo(op->getName().getStringRef());
}

OpKind memfit::getOpKind(mlir::Operation *op) {
  const OpInfo *info = lookupOpInfo(op);
  return info ? info->kind : OpKind::Unknown;
}

ElementwiseFn memfit::getElementwiseFn(mlir::Operation *op) {
  const OpInfo *info = op ? lookupOpInfo(op) : nullptr;
  return info ? info->fn : ElementwiseFn::None;
}

bool memfit::isKnownPure(OpKind kind) {
  switch (kind) {
  case OpKind::Constant:
  case OpKind::ArithConstant:
  case OpKind::Iota:
  case OpKind::BroadcastInDim:
  case OpKind::Reshape:
  case OpKind::Transpose:
  case OpKind::Convert:
  case OpKind::ElementwiseUnary:
  case OpKind::ElementwiseBinary:
  case OpKind::Compare:
  case OpKind::Select:
  case OpKind::Clamp:
  case OpKind::DotGeneral:
  case OpKind::Reduce:
  case OpKind::Slice:
  case OpKind::DynamicSlice:
  case OpKind::DynamicUpdateSlice:
  case OpKind::Concatenate:
  case OpKind::Pad:
  case OpKind::Return:
  case OpKind::Sort:
  case OpKind::TopK:
  case OpKind::FuncReturn:
    return true;
  default:
    return false;
  }
}

bool memfit::isKnownDialect(mlir::Operation *op) {
  llvm::StringRef d = op->getName().getDialectNamespace();
  return d == "stablehlo" || d == "chlo" || d == "func" || d == "arith" ||
         d == "sdy" || d == "mhlo" || d == "builtin";
}

bool memfit::isTerminatorLike(mlir::Operation *op) {
  return op->getBlock() && op == &op->getBlock()->back() &&
         op->mightHaveTrait<mlir::OpTrait::IsTerminator>();
}
