//===- LoopCost.cpp - what a split loop costs in time -----------------------===//
#include "LoopCost.h"

#include "memfit/Analysis/TopKCost.h"

#include <algorithm>

using namespace mlir;

namespace memfit::split {

namespace {

/// A nominal cost per iteration (loop control, slicing the chunk's inputs):
/// it only decides between plans that the top_k terms do not, in favour of
/// fewer iterations.
constexpr double kIterationNanos = 1000.0;

/// Extra ns of a top_k whose rows are cut into `chunk`s over `iterations`:
/// per-chunk top_k plus a merge of the running k, minus one top_k of the
/// whole rows (what a plan that keeps the rows whole pays).
double cutTopKNanos(Operation *topK, int64_t chunk, int64_t iterations) {
  auto t = tensorType(topK->getOperand(0));
  int64_t n = t.getShape().back(), rows = t.getNumElements() / std::max<int64_t>(n, 1);
  int64_t k = TopKView(topK).getK(), kk = std::min(k, chunk);
  Type et = t.getElementType();
  double perIteration = topKRowNanos(et, chunk, kk) + mergeRowNanos(k + kk);
  return rows * (iterations * perIteration - topKRowNanos(et, n, k));
}

} // namespace

double modelledLoopNanos(const Plan &plan, int64_t chunk) {
  int64_t iterations = (plan.size + chunk - 1) / chunk;
  double nanos = kIterationNanos * iterations;
  for (const auto &[op, kind] : plan.sinks)
    if (kind == SinkKind::TopK)
      nanos += cutTopKNanos(op, chunk, iterations);
  return nanos;
}

} // namespace memfit::split
