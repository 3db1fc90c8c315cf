//===- OpViews.h - typed views over generic StableHLO ops -------*- C++ -*-===//
//
// StableHLO ops arrive as unregistered operations. A view wraps one such op
// and gives typed access to its operands and attributes; `build*` functions
// create new ones by name. Dialect attributes (#stablehlo.dot<...>,
// #stablehlo<comparison_direction LT>) are read and written through their
// text, which is the same whether or not the host process registers
// StableHLO: this is the only code that knows that text.
//
// Implemented in lib/IR, one file per section below: AttrText.cpp (attribute
// text, DotDims), ShardyText.cpp, Verify.cpp, OpViews.cpp (the views),
// ElementTypes.cpp (element types, constant values), Builders.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_IR_OPVIEWS_H
#define MEMFIT_IR_OPVIEWS_H

#include "memfit/IR/OpTable.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace memfit {

//===-- attribute text -----------------------------------------------------===//

/// The printed text of an attribute (e.g. `#stablehlo.dot<...>`).
std::string attrToText(mlir::Attribute attr);
/// Reads `key = [a, b]` (or `key = a`) from a dialect attribute's text
/// (gather and scatter dimension numbers); empty when absent.
llvm::SmallVector<int64_t> readAttrField(llvm::StringRef text, llvm::StringRef key);
/// Parses attribute text in `ctx`; null (and no diagnostic) if it fails.
mlir::Attribute attrFromText(mlir::MLIRContext *ctx, llvm::StringRef text);

/// Reads an `array<i64: ...>` attribute (also accepts a dense i64 tensor).
std::optional<llvm::SmallVector<int64_t>> getI64Array(mlir::Operation *op,
                                                      llvm::StringRef name);
std::optional<int64_t> getInteger(mlir::Operation *op, llvm::StringRef name);

/// Byte size of a tensor type (pred counts one byte, as XLA stores it);
/// nullopt for dynamic shapes or non-tensor types.
std::optional<int64_t> getTensorBytes(mlir::Type type);
/// Byte size of one element of `type` (XLA's storage size).
int64_t getElementBytes(mlir::Type elementType);

//===-- Shardy (sdy) attribute text ----------------------------------------===//

/// `#sdy.mesh<["x"=4, "y"=2]>`: the axes of a mesh, in order.
struct MeshText {
  llvm::SmallVector<std::pair<std::string, int64_t>, 4> axes;
};
/// One tensor's sharding, `#sdy.sharding<@mesh, [{"x"}, {}]>` (or one entry
/// of `#sdy.sharding_per_value<[<@mesh, [...]>, ...]>`): per dimension the
/// axes that split it, major first. `exact` is false when a dimension names
/// something memfit does not read (a sub-axis "x":(1)2); such a dimension
/// comes back with no axes.
struct ShardingText {
  std::string mesh;
  llvm::SmallVector<llvm::SmallVector<std::string, 2>, 4> dims;
  bool exact = true;
};
std::optional<MeshText> parseMeshText(llvm::StringRef text);
std::optional<ShardingText> parseShardingText(llvm::StringRef text);
/// The shardings of `#sdy.sharding_per_value<[...]>`, one per result.
std::optional<llvm::SmallVector<ShardingText, 2>> parseShardingPerValueText(llvm::StringRef text);

//===-- verification -------------------------------------------------------===//

/// Checks every known op under `root` against the op table (operand, result
/// and region counts, required attributes, static shapes). Emits an error at
/// the first offending op and returns failure. Passes call this first so that
/// no view is ever built over a malformed op.
mlir::LogicalResult verifyOpInvariants(mlir::Operation *root);

//===-- views --------------------------------------------------------------===//

/// Dimension numbers of a dot_general.
struct DotDims {
  llvm::SmallVector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract;
  std::string toText() const;
  static std::optional<DotDims> fromText(llvm::StringRef text);
  bool operator==(const DotDims &o) const {
    return lhsBatch == o.lhsBatch && rhsBatch == o.rhsBatch &&
           lhsContract == o.lhsContract && rhsContract == o.rhsContract;
  }
};

/// Base: an op of a known kind.
class OpView {
public:
  explicit OpView(mlir::Operation *op) : op(op) {}
  mlir::Operation *getOperation() const { return op; }
  mlir::Location getLoc() const { return op->getLoc(); }
  mlir::RankedTensorType getResultType(unsigned i = 0) const {
    return llvm::dyn_cast<mlir::RankedTensorType>(op->getResult(i).getType());
  }

protected:
  mlir::Operation *op;
};

#define MEMFIT_VIEW(Name, Kind)                                                \
  class Name : public OpView {                                                 \
  public:                                                                      \
    using OpView::OpView;                                                      \
    static std::optional<Name> match(mlir::Operation *op) {                    \
      if (op && getOpKind(op) == OpKind::Kind)                                 \
        return Name(op);                                                       \
      return std::nullopt;                                                     \
    }

#define MEMFIT_VIEW_END };

MEMFIT_VIEW(ConstantView, Constant)
  mlir::ElementsAttr getValue() const;
  /// The single value of a splat constant, as a double; nullopt otherwise.
  std::optional<double> getSplatValue() const;
MEMFIT_VIEW_END

MEMFIT_VIEW(ArithConstantView, ArithConstant)
  mlir::ElementsAttr getValue() const;
MEMFIT_VIEW_END

MEMFIT_VIEW(IotaView, Iota)
  int64_t getIotaDimension() const { return *getInteger(op, "iota_dimension"); }
MEMFIT_VIEW_END

MEMFIT_VIEW(BroadcastInDimView, BroadcastInDim)
  mlir::Value getOperand() const { return op->getOperand(0); }
  llvm::SmallVector<int64_t> getBroadcastDimensions() const {
    return *getI64Array(op, "broadcast_dimensions");
  }
MEMFIT_VIEW_END

MEMFIT_VIEW(ReshapeView, Reshape)
  mlir::Value getOperand() const { return op->getOperand(0); }
MEMFIT_VIEW_END

MEMFIT_VIEW(TransposeView, Transpose)
  mlir::Value getOperand() const { return op->getOperand(0); }
  llvm::SmallVector<int64_t> getPermutation() const {
    return *getI64Array(op, "permutation");
  }
MEMFIT_VIEW_END

MEMFIT_VIEW(ConvertView, Convert)
  mlir::Value getOperand() const { return op->getOperand(0); }
MEMFIT_VIEW_END

MEMFIT_VIEW(CompareView, Compare)
  mlir::Value getLhs() const { return op->getOperand(0); }
  mlir::Value getRhs() const { return op->getOperand(1); }
  /// EQ, NE, GE, GT, LE or LT.
  std::string getDirection() const;
  /// FLOAT, TOTALORDER, SIGNED, UNSIGNED, or empty when absent.
  std::string getCompareType() const;
MEMFIT_VIEW_END

MEMFIT_VIEW(SelectView, Select)
  mlir::Value getPred() const { return op->getOperand(0); }
  mlir::Value getOnTrue() const { return op->getOperand(1); }
  mlir::Value getOnFalse() const { return op->getOperand(2); }
MEMFIT_VIEW_END

MEMFIT_VIEW(DotGeneralView, DotGeneral)
  mlir::Value getLhs() const { return op->getOperand(0); }
  mlir::Value getRhs() const { return op->getOperand(1); }
  DotDims getDims() const;
  /// Whether an `algorithm` (which names the operands' precisions in
  /// order) or a sharding annotation (the result's dimensions in order)
  /// ties the dot to its written form: rewrites leave such a dot as it is.
  bool hasOrderedAnnotations() const {
    return op->getAttr("algorithm") || op->getAttr("sdy.sharding") ||
           op->getAttr("mhlo.sharding");
  }
MEMFIT_VIEW_END

/// The combiner of a reduce body when it is one binary op of the two
/// block arguments.
enum class ReducerKind { Add, Mul, Max, Min, And, Or, Other };

/// What a one-block region of two scalar arguments computes when it is one
/// binary op of both arguments returned (a reduce body, a scatter's update
/// computation); Other for anything else.
ReducerKind getCombinerKind(mlir::Region &region);

MEMFIT_VIEW(ReduceView, Reduce)
  unsigned getNumInputs() const { return op->getNumOperands() / 2; }
  mlir::ValueRange getInputs() const {
    return op->getOperands().take_front(getNumInputs());
  }
  mlir::ValueRange getInitValues() const {
    return op->getOperands().drop_front(getNumInputs());
  }
  llvm::SmallVector<int64_t> getDimensions() const {
    return *getI64Array(op, "dimensions");
  }
  mlir::Region &getBody() const { return op->getRegion(0); }
  ReducerKind getReducerKind() const;
MEMFIT_VIEW_END

MEMFIT_VIEW(SliceView, Slice)
  mlir::Value getOperand() const { return op->getOperand(0); }
  llvm::SmallVector<int64_t> getStartIndices() const { return *getI64Array(op, "start_indices"); }
  llvm::SmallVector<int64_t> getLimitIndices() const { return *getI64Array(op, "limit_indices"); }
  llvm::SmallVector<int64_t> getStrides() const { return *getI64Array(op, "strides"); }
MEMFIT_VIEW_END

MEMFIT_VIEW(DynamicSliceView, DynamicSlice)
  mlir::Value getOperand() const { return op->getOperand(0); }
  mlir::ValueRange getStartIndices() const { return op->getOperands().drop_front(); }
  llvm::SmallVector<int64_t> getSliceSizes() const { return *getI64Array(op, "slice_sizes"); }
MEMFIT_VIEW_END

MEMFIT_VIEW(DynamicUpdateSliceView, DynamicUpdateSlice)
  mlir::Value getOperand() const { return op->getOperand(0); }
  mlir::Value getUpdate() const { return op->getOperand(1); }
  mlir::ValueRange getStartIndices() const { return op->getOperands().drop_front(2); }
MEMFIT_VIEW_END

MEMFIT_VIEW(ConcatenateView, Concatenate)
  int64_t getDimension() const { return *getInteger(op, "dimension"); }
MEMFIT_VIEW_END

MEMFIT_VIEW(PadView, Pad)
  mlir::Value getOperand() const { return op->getOperand(0); }
  mlir::Value getPaddingValue() const { return op->getOperand(1); }
  llvm::SmallVector<int64_t> getLow() const { return *getI64Array(op, "edge_padding_low"); }
  llvm::SmallVector<int64_t> getHigh() const { return *getI64Array(op, "edge_padding_high"); }
  llvm::SmallVector<int64_t> getInterior() const { return *getI64Array(op, "interior_padding"); }
MEMFIT_VIEW_END

MEMFIT_VIEW(WhileView, While)
  mlir::Region &getCond() const { return op->getRegion(0); }
  mlir::Region &getBody() const { return op->getRegion(1); }
MEMFIT_VIEW_END

MEMFIT_VIEW(SortView, Sort)
  int64_t getDimension() const { return *getInteger(op, "dimension"); }
  bool isStable() const;
  mlir::Region &getComparator() const { return op->getRegion(0); }
MEMFIT_VIEW_END

MEMFIT_VIEW(TopKView, TopK)
  mlir::Value getOperand() const { return op->getOperand(0); }
  int64_t getK() const { return *getInteger(op, "k"); }
MEMFIT_VIEW_END

MEMFIT_VIEW(CustomCallView, CustomCall)
  std::string getTarget() const;
  /// An integer of the `mhlo.backend_config` dictionary (jax's LAPACK calls
  /// write their options there, e.g. trsm's side = 'L' or 'R').
  std::optional<int64_t> getBackendConfigInt(llvm::StringRef key) const;
  /// `mhlo.frontend_attributes.num_batch_dims` (LAPACK calls); 0 if absent.
  int64_t getNumBatchDims() const;
  /// jax's LAPACK triangular solve, lapack_{s,d,c,z}trsm_ffi: op(a) x = b
  /// (side 'L') or x op(a) = b (side 'R'); operands (a, b), result x.
  bool isTriangularSolve() const;
MEMFIT_VIEW_END

#undef MEMFIT_VIEW
#undef MEMFIT_VIEW_END

//===-- views of an operand, constants ------------------------------------===//
//
// torch-mlir writes a reshape, broadcast_in_dim or transpose to the operand's
// own type around nearly every op, and scalars as `arith.constant` of a
// different type followed by `convert`. They compute nothing; memfit-split
// folds them first so that its dimension table sees the real dataflow.

/// A reshape, broadcast_in_dim (dimensions 0..r-1), transpose (identity
/// permutation) or convert whose result type is its operand's type: reading
/// it is reading the operand.
bool isIdentityView(mlir::Operation *op);

/// The value of a constant (stablehlo.constant or arith.constant) with
/// dense elements; null otherwise.
mlir::DenseElementsAttr getConstantElements(mlir::Operation *op);

/// `value` converted to element type `to` as `stablehlo.convert` does
/// (floats round to nearest even; integers to floats by their signedness;
/// integers to integers by sign or zero extension or truncation); null for
/// other conversions (float to integer, complex) and for non-splat values
/// of more than `maxElements` elements.
mlir::DenseElementsAttr convertElements(mlir::DenseElementsAttr value, mlir::Type to,
                                        int64_t maxElements = 4096);

/// A `stablehlo.constant` of `value`.
mlir::Value buildConstant(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::DenseElementsAttr value);

//===-- builders -----------------------------------------------------------===//

/// Sets attribute `name` among `op`'s inherent attributes (the `<{...}>`
/// properties of a generic op), where parsers of the registered op look for
/// it; Operation::setAttr makes an attribute missing there discardable.
void setInherentAttr(mlir::Operation *op, llvm::StringRef name, mlir::Attribute value);

/// Creates a generic op `name`; `attrs` become its inherent attributes
/// (printed as `<{...}>`), as jax prints them.
mlir::Operation *buildGenericOp(mlir::OpBuilder &b, mlir::Location loc,
                                llvm::StringRef name, mlir::ValueRange operands,
                                mlir::TypeRange resultTypes,
                                llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
                                unsigned numRegions = 0);

//===-- element types ------------------------------------------------------===//
//
// The one place that knows StableHLO's element types: floats of every width
// (f64, f32, f16, bf16, the f8 kinds), integers of every width (signless,
// signed, unsigned, i1) and complex<f32>/complex<f64>. Quantized and other
// dialect types are refused: memfit cannot build their constants.

/// Why memfit cannot handle element type `t`, or "" when it can.
std::string whyUnsupportedElementType(mlir::Type t);
/// Whether `t` is ordered, so that max/min/top-k are defined (not complex).
bool isOrderedElementType(mlir::Type t);
/// The `compare_type` that orders elements of type `t` as lax.top_k and
/// jnp.sort do: TOTALORDER for floats, UNSIGNED for unsigned integers and
/// i1, SIGNED otherwise. `t` must be ordered.
llvm::StringRef orderedCompareType(mlir::Type t);
/// The splat of `value` in `type`: floats round to the nearest value, and
/// +-inf become the largest finite value in formats without infinities;
/// integers take the truncated value, +-inf their extremes; complex types
/// take value + 0i. Null for an unsupported element type.
mlir::DenseElementsAttr getSplatAttr(mlir::RankedTensorType type, double value);
/// A `stablehlo.constant` splat of getSplatAttr(type, value); the caller has
/// checked the element type with whyUnsupportedElementType (verifyOpInvariants
/// does for every op).
mlir::Value buildConstantSplat(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::RankedTensorType type, double value);
/// An integer splat from its bits (masks and extremes of 64-bit types,
/// which a double cannot hold).
mlir::Value buildIntegerSplat(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::RankedTensorType type, const llvm::APInt &bits);
mlir::Value buildScalarI64(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
mlir::Value buildIota(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::RankedTensorType type, int64_t dim);
mlir::Value buildBroadcastInDim(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::RankedTensorType type, mlir::Value operand,
                                llvm::ArrayRef<int64_t> dims);
mlir::Value buildReshape(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value operand);
mlir::Value buildTranspose(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value operand, llvm::ArrayRef<int64_t> perm);
/// `stablehlo.optimization_barrier` of `operands`: its results are the
/// operands, which XLA computes before the barrier and never fuses across it.
mlir::Operation *buildOptimizationBarrier(mlir::OpBuilder &b, mlir::Location loc,
                                          mlir::ValueRange operands);
mlir::Value buildConvert(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value operand);
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             llvm::StringRef name, mlir::ValueRange operands);
mlir::Value buildCompare(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs,
                         mlir::Value rhs, llvm::StringRef direction,
                         llvm::StringRef compareType = "");
mlir::Value buildSelect(mlir::OpBuilder &b, mlir::Location loc, mlir::Value pred,
                        mlir::Value onTrue, mlir::Value onFalse);
mlir::Value buildDotGeneral(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::RankedTensorType type, mlir::Value lhs,
                            mlir::Value rhs, const DotDims &dims);
/// A single-input reduce whose body is `combiner` (e.g. "stablehlo.add").
mlir::Value buildReduce(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                        mlir::Value init, llvm::ArrayRef<int64_t> dims,
                        llvm::StringRef combiner);
mlir::Value buildSlice(mlir::OpBuilder &b, mlir::Location loc, mlir::Value operand,
                       llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> limit,
                       llvm::ArrayRef<int64_t> strides);
mlir::Value buildDynamicSlice(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value operand, mlir::ValueRange starts,
                              llvm::ArrayRef<int64_t> sizes);
mlir::Value buildDynamicUpdateSlice(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value operand, mlir::Value update,
                                    mlir::ValueRange starts);
mlir::Value buildConcatenate(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::ValueRange operands, int64_t dim);
mlir::Value buildPad(mlir::OpBuilder &b, mlir::Location loc, mlir::Value operand,
                     mlir::Value padValue, llvm::ArrayRef<int64_t> low,
                     llvm::ArrayRef<int64_t> high, llvm::ArrayRef<int64_t> interior);
/// chlo.top_k: (values, indices : i32).
std::pair<mlir::Value, mlir::Value> buildTopK(mlir::OpBuilder &b,
                                              mlir::Location loc,
                                              mlir::Value operand, int64_t k);
/// stablehlo.while with empty cond/body regions whose blocks take
/// `operands`' types; the caller fills them.
mlir::Operation *buildWhile(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::ValueRange operands);
mlir::Operation *buildReturn(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::ValueRange operands);
/// stablehlo.sort of `operands` along `dim`, ascending on the first operand
/// (its comparator compares the first pair of block arguments with LT).
mlir::Operation *buildSort(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::ValueRange operands, int64_t dim,
                           bool isStable = false);
/// stablehlo.custom_call @target (api_version 1 = original, as jax writes
/// for host callbacks; the default).
mlir::Operation *buildCustomCall(mlir::OpBuilder &b, mlir::Location loc,
                                 llvm::StringRef target, mlir::ValueRange operands,
                                 mlir::TypeRange resultTypes);

} // namespace memfit

#endif
