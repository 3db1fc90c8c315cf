//===- Reductions.h - accumulators for reduce and dot_general ---*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_REDUCTIONS_H
#define MEMFIT_TRANSFORMS_SPLIT_REDUCTIONS_H

#include "Accumulator.h"

namespace memfit::split {

/// A reduce over the split dimension (its reducer combines the partials) or
/// a dot_general contracting it (partial products add up; with
/// `minorContraction`, in the form of MinorContraction.h).
/// With `plan`, a dot whose whole result a layer loop's body only writes
/// into a slice of a stacked value the loop carries (jax's scan transpose
/// stores each layer's weight gradient so) accumulates in that slice.
std::unique_ptr<Accumulator> makeReductionAccumulator(Operation *sink,
                                                      bool minorContraction = false,
                                                      const Plan *plan = nullptr);

/// The reduce's init values broadcast to its results (its running state
/// before any chunk).
void initReduceState(mlir::OpBuilder &b, mlir::Location loc, Operation *reduce,
                     llvm::SmallVectorImpl<Value> &state);
/// The sink applied to one chunk's operands (its partial result).
Operation *applyToChunk(mlir::OpBuilder &b, Operation *sink, mlir::ValueRange operands);

} // namespace memfit::split

#endif
