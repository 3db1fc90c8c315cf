//===- ChunkChooser.h - how large a plan's chunks may be --------*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_CHUNKCHOOSER_H
#define MEMFIT_TRANSFORMS_SPLIT_CHUNKCHOOSER_H

#include "Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>

namespace memfit::split {

struct Choice {
  bool feasible = false;
  int64_t chunk = 0;
  int64_t peak = kInfeasible; // the (margined) peak of the loop with `chunk`
  /// Bytes live outside the loop's block beyond the arguments and outputs
  /// (a split inside a loop body: the enclosing loop's state), which the
  /// margin does not multiply.
  int64_t outside = 0;
  /// For a loop in a layer loop's body: what it holds whatever its chunk
  /// beyond what lives outside its block (whole live-ins, accumulators),
  /// which the margin does not multiply either.
  int64_t chunkFree = 0;
  /// The whole function's modelled peak after the rewrite (unmargined): a
  /// loop of low peak may leave a higher one elsewhere untouched.
  int64_t functionPeak = kInfeasible;

  /// What the smallest-limit probe lowers step by step.
  int64_t overallPeak() const { return std::max(peak, functionPeak); }
};

/// The largest aligned, balanced chunk with which the loop `plan` becomes
/// stays within `limit` when its temporaries (its modelled peak beyond the
/// `fixed` argument and output bytes, or beyond what lives outside its
/// block when that is more) are counted `margin` times; when none does,
/// infeasible with the smallest chunk's peak. `from`, when given, is a
/// chunk known to fit (the same plan's at a larger margin): the search
/// starts there.
Choice chooseChunk(mlir::func::FuncOp f, const Plan &plan, int64_t limit, int64_t fixed,
                   double margin, int64_t from = 0);

/// For a step at which no chunk fits because values live around the loop
/// (that later steps split) exceed the limit on their own: the largest
/// aligned, balanced chunk whose margined peak exceeds the smallest chunk's
/// by at most `budget`.
Choice chooseProjectedChunk(mlir::func::FuncOp f, const Plan &plan, int64_t budget,
                            int64_t fixed, double margin);

} // namespace memfit::split

#endif
