//===- TopKCost.cpp - what top_k costs on XLA:CPU ---------------------------===//
//
// Constants in ns per element, measured by bench/bench_topk.py (Intel Xeon,
// jax 0.12 defaults, 2 shared cores); the bench prints them again on any
// machine, next to the block sizes this model picks.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/TopKCost.h"

#include <cmath>

using namespace memfit;

namespace {

/// lax.top_k of a long row: XLA's TopK runtime call for f32 and f64; a full
/// stable sort of the row for every other type.
constexpr double kTopKFast = 4.0;
constexpr double kTopKSorted = 90.0;
/// The block maxima: XLA:CPU's integer max-reduction is fastest over rows
/// of 32, slower over shorter ones and about four times slower over longer
/// ones (reducing those in groups of 32 first measured slower than blocks
/// of 32 once the top_k of the maxima is counted).
constexpr double kMaximaOf32 = 0.6;
constexpr double kMaximaShorter = 1.1;
constexpr double kMaximaLonger = 2.7;
/// top_k of the maxima (per maximum) and of the candidates (per candidate,
/// gathers included; short rows cost more per element). Slicing the full
/// blocks off a row that the block does not divide is fused into the
/// maxima's reduction (measured at 1x to 2x the divisible row's maxima on a
/// loaded machine); the model leaves it out.
constexpr double kTopKPerMaximum = 4.0;
constexpr double kPerCandidate = 20.0;
/// A stable sort, per element and per halving (log2 of the row).
constexpr double kSortPerElementLevel = 4.0;
/// The two-stage form must model at least this speed-up: the model is rough.
constexpr double kRequiredSpeedup = 1.5;

double twoStageNanos(int64_t n, int64_t k, int64_t block, double perCandidate) {
  int64_t full = n / block, rem = n % block;
  double maxima = block == 32  ? kMaximaOf32
                  : block < 32 ? kMaximaShorter
                               : kMaximaLonger;
  return maxima * n + kTopKPerMaximum * full + perCandidate * (k * block + rem);
}

} // namespace

std::optional<TwoStageBlocks> memfit::cheapestBlock(int64_t n, int64_t k, double perCandidateNanos,
                                                    int64_t minBlock) {
  std::optional<TwoStageBlocks> best;
  for (int64_t b = std::max<int64_t>(minBlock, 1); b <= 1024 && n / b > k; ++b) {
    double c = twoStageNanos(n, k, b, perCandidateNanos);
    if (!best || c < best->nanos)
      best = TwoStageBlocks{b, c};
  }
  return best;
}

bool memfit::hasFastTopK(mlir::Type et) { return et.isF32() || et.isF64(); }

double memfit::plainTopKNanos(mlir::Type et, int64_t n) {
  return (hasFastTopK(et) ? kTopKFast : kTopKSorted) * n;
}

std::optional<TwoStageBlocks> memfit::twoStageTopK(mlir::Type et, int64_t n, int64_t k) {
  if (k < 1)
    return std::nullopt;
  std::optional<TwoStageBlocks> best = cheapestBlock(n, k, kPerCandidate, 8);
  if (!best || plainTopKNanos(et, n) < kRequiredSpeedup * best->nanos)
    return std::nullopt;
  return best;
}

double memfit::topKRowNanos(mlir::Type et, int64_t n, int64_t k) {
  std::optional<TwoStageBlocks> two = twoStageTopK(et, n, k);
  return two ? two->nanos : plainTopKNanos(et, n);
}

double memfit::mergeRowNanos(int64_t n) {
  return kSortPerElementLevel * n * std::log2(std::max<int64_t>(n, 2));
}
