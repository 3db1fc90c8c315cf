//===- BroadcastSource.h - see through broadcasts ---------------*- C++ -*-===//
//
// jax writes `q[:, None, :] - x[None, :, :]` as chains of broadcast_in_dim
// (and reshapes that add unit dimensions) over small tensors. The algebraic
// rewrites need the small tensor and where each of its dimensions lands.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_ANALYSIS_BROADCASTSOURCE_H
#define MEMFIT_ANALYSIS_BROADCASTSOURCE_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace memfit {

struct BroadcastSource {
  /// The tensor before any broadcast.
  mlir::Value source;
  /// For each dimension of `source`: the dimension of the traced value it
  /// becomes, or -1 for a unit dimension that is broadcast away.
  llvm::SmallVector<int64_t> dimMap;

  /// Does some source dimension land on result dimension `d`?
  bool covers(int64_t d) const;
  /// The source dimension that lands on `d`, or -1.
  int64_t sourceDimOf(int64_t d) const;
};

/// Traces `v` back through broadcast_in_dim and unit-dimension reshapes.
/// Always succeeds: a value that is not a broadcast is its own source.
BroadcastSource traceBroadcast(mlir::Value v);

} // namespace memfit

#endif
