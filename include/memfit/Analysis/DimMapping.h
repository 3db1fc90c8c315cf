//===- DimMapping.h - how each op maps dimensions ---------------*- C++ -*-===//
//
// For every StableHLO op memfit can split through, which result dimension
// comes from which operand dimension. Modelled on Shardy's
// op_sharding_rule_registry: an op's dimensions are grouped into *factors*;
// a factor names, for each operand and result, the dimension it occupies
// (or -1 when absent). A factor's kind says what a split along it may do:
//
//   PassThrough      chunk it: every operand/result holding the factor is
//                    chunked the same way (elementwise dims, kept dims of a
//                    reduce, batch and free dims of a dot, ...).
//   Reduction        accumulate over it: the results do not hold the factor
//                    (reduced dims of a reduce, contracting dims of a dot).
//   TopK             the last dimension of chlo.top_k: keep a running top-k.
//   SortPrefix       the dimension stablehlo.sort sorts along: when every
//                    result is read only through a prefix slice [0:k] (a
//                    sort-based top-k), keep a running sorted prefix;
//                    otherwise the op needs the dimension whole.
//   ScatterInto      the scatter dimensions of a scatter's indices and
//                    updates (jax's segment_sum, .at[idx].add, the gradient
//                    of a gather) when its update computation combines
//                    elementwise in any order (add, multiply, max, min, and,
//                    or): the results do not hold the factor; the chunks'
//                    updates are scattered one after another into the
//                    running result, whose first state is the scatter's
//                    input.
//   IndexedSelect    the dimension of a gather's operand that its indices
//                    address with one index per result element (slice 1,
//                    collapsed: take_along_axis, an LLM loss's label
//                    logit): the result does not hold the factor; each
//                    chunk gathers at the indices less its start, and a
//                    result element is taken from the chunk its clamped
//                    index falls in.
//   NeedReplication  stop: the op needs the whole dimension (sliced or
//                    padded dims, concatenation, indexed dims of a gather's
//                    operand or a scatter's input).
//
// A dimension that is in no factor (e.g. a size-1 dimension broadcast_in_dim
// expands) cannot be split either. Splitting a tensor along a dimension is
// sharding in time, so the same table drives how far memfit-split travels.
// Adding an op is adding one case in DimMapping.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_ANALYSIS_DIMMAPPING_H
#define MEMFIT_ANALYSIS_DIMMAPPING_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace memfit {

enum class FactorKind {
  PassThrough,
  Reduction,
  TopK,
  SortPrefix,
  ScatterInto,
  IndexedSelect,
  NeedReplication
};

struct DimFactor {
  FactorKind kind = FactorKind::PassThrough;
  int64_t size = 0;
  /// Per operand: the dimension holding this factor, or -1.
  llvm::SmallVector<int64_t, 4> operandDims;
  /// Per result: the dimension holding this factor, or -1.
  llvm::SmallVector<int64_t, 2> resultDims;
  /// For a NeedReplication factor: why the op needs the dimension whole (a
  /// max over complex values, which have no order; an indexed dimension);
  /// null when the kind says it all.
  const char *why = nullptr;
  /// For a gather's indexed factor (needed whole, or an IndexedSelect): XLA's SPMD partitioner computes the op
  /// with this operand dimension sharded without gathering it (a gather's
  /// indexed dimension read with slice size 1: each device reads its own
  /// rows, the others masked, and the partial results are all-reduced), so a
  /// device holds only its shard of the operand.
  bool localOnShards = false;
  /// For a PassThrough factor of a scatter: the indices address this
  /// dimension of the input (with one index component), so a chunk's
  /// scatter reads the indices less the chunk's start; updates that then
  /// fall outside the chunk are dropped, as XLA drops out-of-bounds
  /// scatter updates (what jax's mode='drop' relies on).
  bool shiftsIndices = false;
};

struct OpDimRule {
  llvm::SmallVector<DimFactor, 4> factors;
  /// The op's regions combine scalars (reduce, sort, scatter): they see no
  /// dimension, so a chunked op keeps them unchanged.
  bool scalarRegions = false;

  /// The factor that holds dimension `dim` of operand `operand`; null if none.
  const DimFactor *forOperand(unsigned operand, int64_t dim) const;
  /// The factor that holds dimension `dim` of result `result`; null if none.
  const DimFactor *forResult(unsigned result, int64_t dim) const;
};

/// How `op` maps dimensions; nullopt when memfit cannot split through it
/// (while, custom_call, convolution, ... or malformed shapes).
std::optional<OpDimRule> getOpDimRule(mlir::Operation *op);

} // namespace memfit

#endif
