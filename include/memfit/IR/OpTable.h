//===- OpTable.h - what memfit knows about each StableHLO op ----*- C++ -*-===//
//
// The one place that knows StableHLO/CHLO op names. StableHLO is not packaged
// for Debian's MLIR, so its ops arrive as unregistered operations (generic
// form); passes ask this table what an op is instead of comparing names.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_IR_OPTABLE_H
#define MEMFIT_IR_OPTABLE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace memfit {

enum class OpKind {
  Unknown,
  Constant,      // stablehlo.constant
  ArithConstant, // arith.constant (torch-mlir and others emit it)
  Iota,
  BroadcastInDim,
  Reshape,
  Transpose,
  Convert,
  ElementwiseUnary,
  ElementwiseBinary,
  Compare,
  Select,
  Clamp,
  DotGeneral,
  Reduce,
  Slice,
  DynamicSlice,
  DynamicUpdateSlice,
  Concatenate,
  Pad,
  While,
  Return, // stablehlo.return (region terminator)
  Sort,
  TopK, // chlo.top_k
  CustomCall,
  FuncReturn,
  FuncCall,
  // Ops that analyses single out (dimension rules, FLOP counts, buffer
  // aliasing, shardings); the first ten are opaque materialising ops.
  Gather,
  Scatter,
  Convolution,
  ReduceWindow,
  SelectAndScatter,
  If,
  Case,
  OptimizationBarrier,
  Cholesky,
  TriangularSolve,
  ShardingConstraint, // sdy.sharding_constraint
  Mesh,               // sdy.mesh (a module-level symbol)
  Other, // a known op with no special handling (reverse, tuple, ...)
};

/// What an elementwise op computes, for the ones passes recognise by their
/// function (reducer bodies, the algebraic rewrites, loop steps, the online
/// softmax); None for every other op.
enum class ElementwiseFn {
  None,
  Add,
  Subtract,
  Multiply,
  Divide,
  Maximum,
  Minimum,
  And,
  Or,
  Power,
  Negate,
  Abs,
  Exponential,
  Square,
};

/// The type of a required attribute, checked by verifyOpInvariants().
enum class AttrKind { I64Array, Integer, String, Dense, Dialect, Bool, Any };

struct RequiredAttr {
  llvm::StringLiteral name;
  AttrKind kind;
};

/// Static facts about one op name. Counts of -1 mean "variadic".
struct OpInfo {
  llvm::StringLiteral name;
  OpKind kind;
  int numOperands;
  int numResults;
  int numRegions;
  /// XLA can fuse this op into its consumer (elementwise and layout ops):
  /// its result is not materialised when it has a single fusible consumer.
  bool fusible;
  llvm::ArrayRef<RequiredAttr> requiredAttrs;
  /// Elementwise work XLA will not duplicate into several consumers
  /// (InstructionFusion::IsExpensive: transcendentals, division): a value
  /// read by several fusions is materialised once instead.
  bool costly = false;
  ElementwiseFn fn = ElementwiseFn::None;
};

/// Looks up an op by name; null when memfit does not know it.
const OpInfo *lookupOpInfo(llvm::StringRef name);
const OpInfo *lookupOpInfo(mlir::Operation *op);
OpKind getOpKind(mlir::Operation *op);
/// What `op` computes elementwise; None for an op without an ElementwiseFn
/// (and for null, so that a missing producer matches nothing).
ElementwiseFn getElementwiseFn(mlir::Operation *op);

inline bool isElementwise(OpKind k) {
  return k == OpKind::ElementwiseUnary || k == OpKind::ElementwiseBinary ||
         k == OpKind::Compare || k == OpKind::Select || k == OpKind::Clamp ||
         k == OpKind::Convert;
}

/// Ops of `kind` compute values and nothing else, so that one whose results
/// are unused can be erased. False for custom calls, calls, loops and the
/// ops memfit handles as opaque (they may have effects memfit cannot see).
bool isKnownPure(OpKind kind);

/// A constant (stablehlo.constant or arith.constant): XLA keeps constants
/// outside the temp allocation, and memfit clones them where needed.
inline bool isConstantLike(mlir::Operation *op) {
  OpKind k = getOpKind(op);
  return k == OpKind::Constant || k == OpKind::ArithConstant;
}

/// The last op of its block and a terminator (stablehlo.return is
/// unregistered, so only `mightHaveTrait` knows it may be one).
bool isTerminatorLike(mlir::Operation *op);

/// Is the op one memfit understands as part of a StableHLO program
/// (stablehlo, chlo, func, arith.constant)?
bool isKnownDialect(mlir::Operation *op);

} // namespace memfit

#endif
