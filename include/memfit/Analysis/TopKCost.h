//===- TopKCost.h - what top_k costs on XLA:CPU -----------------*- C++ -*-===//
//
// The measured time model of top_k (bench/bench_topk.py) that both the
// two-stage top-k rewrite (whether and with which block) and memfit-split
// (which dimension to chunk a loop with a top_k along) use.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_ANALYSIS_TOPKCOST_H
#define MEMFIT_ANALYSIS_TOPKCOST_H

#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>

namespace memfit {

/// The two-stage form of one row: its block size and modelled ns.
struct TwoStageBlocks {
  int64_t block;
  double nanos;
};

/// Element types XLA:CPU's fast TopK call takes (f32, f64); every other
/// type's top_k sorts the whole row.
bool hasFastTopK(mlir::Type et);

/// ns of lax.top_k over one row of `n` elements of type `et` as XLA:CPU
/// runs it (its TopK call for f32/f64, a sort of the row otherwise).
double plainTopKNanos(mlir::Type et, int64_t n);

/// The two-stage form of a row of `n` with `k`, when the model predicts that
/// it pays (the rewrite applies exactly then).
std::optional<TwoStageBlocks> twoStageTopK(mlir::Type et, int64_t n, int64_t k);

/// The block of the two-stage form whose modelled ns are least when each
/// candidate costs `perCandidateNanos` (its gather and whatever its caller
/// computes on it), among blocks from `minBlock` on with more than k blocks
/// per row; none when no block leaves more than k.
std::optional<TwoStageBlocks> cheapestBlock(int64_t n, int64_t k, double perCandidateNanos,
                                            int64_t minBlock);

/// ns of one row's top_k once memfit-rewrite has run: the two-stage form
/// where it applies, else the plain one.
double topKRowNanos(mlir::Type et, int64_t n, int64_t k);

/// ns of a stable sort of one row of `n` (values and indices): the merge a
/// loop that splits a top_k's rows does every iteration.
double mergeRowNanos(int64_t n);

} // namespace memfit

#endif
