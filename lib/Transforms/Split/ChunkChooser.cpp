//===- ChunkChooser.cpp - how large a plan's chunks may be ----------------===//
//
// The rule: the largest chunk c in [minChunk, N) such that, in the rewritten
// program's profile, the loop (its body and the remainder step, with
// everything live around them) stays within the limit when its temporaries
// are counted `margin` times:
//   arguments + outputs + margin * (modelled loop peak - arguments - outputs)
//   <= limit
// c is found by bisection on rewritten clones. It is then rounded down to a
// multiple of 128 when c >= 256, or of 8 when c >= 16 (dot_general and
// vector units work in such tiles), and balanced: with n = ceil(N / c)
// chunks, c' = ceil(N / n) rounded up to the same multiple replaces c when
// c' <= c, which keeps n and shrinks the remainder. minChunk is 1, or k for
// a running top-k.
//
//===----------------------------------------------------------------------===//
#include "ChunkChooser.h"

#include "LoopEmitter.h"
#include "Planner.h"

#include "memfit/Analysis/MemoryProfile.h"

#include <cmath>

using namespace mlir;

namespace memfit::split {
namespace {

/// Peak of the loop the plan becomes with chunks of `c` (rewriting a clone):
/// the largest live total at the ops the rewrite created.
int64_t regionPeak(func::FuncOp f, const Plan &plan, int64_t c) {
  IRMapping m;
  auto clone = llvm::cast<func::FuncOp>(f->clone(m));
  Plan q = translatePlan(plan, m);
  // Mark what exists now (addresses of erased ops may be reused).
  auto mark = StringAttr::get(f.getContext(), "memfit.split.pre");
  for (Operation &op : *q.block)
    op.setDiscardableAttr(mark, UnitAttr::get(f.getContext()));
  detachSecondPass(q);
  emitLoop(q, c);
  int64_t peak = kInfeasible;
  FailureOr<FunctionProfile> prof = profileFunction(clone);
  if (succeeded(prof)) {
    peak = 0;
    for (const TimelinePoint &p : prof->timeline) {
      Operation *a = q.block->findAncestorOpInBlock(*p.op);
      if (a && !a->getDiscardableAttr(mark))
        peak = std::max(peak, p.liveBytes);
    }
  }
  clone->erase();
  return peak;
}

int64_t alignDown(int64_t c) {
  if (c >= 256)
    return c / 128 * 128;
  if (c >= 16)
    return c / 8 * 8;
  return c;
}

int64_t alignUpLike(int64_t c, int64_t ref) {
  int64_t a = ref >= 256 ? 128 : ref >= 16 ? 8 : 1;
  return (c + a - 1) / a * a;
}

/// `lo` aligned down, then balanced over the same number of chunks.
int64_t alignAndBalance(const Plan &plan, int64_t lo) {
  int64_t c = std::max(alignDown(lo), plan.minChunk);
  int64_t chunks = (plan.size + c - 1) / c;
  int64_t balanced = alignUpLike((plan.size + chunks - 1) / chunks, c);
  if (balanced <= c && balanced >= plan.minChunk)
    c = balanced;
  return c;
}

} // namespace

/// The profile is a model of XLA's fusion; inside loop bodies XLA sometimes
/// materialises what the model fuses (a reduce and the transpose or negate
/// of its result both get buffers) and adds scratch the model does not see.
/// The chunk size therefore budgets the loop's temporaries `margin` times
/// over: 2 by default (the pass option temp-margin); memfit.jit calibrates
/// it against XLA's own memory analysis of the compiled result.
Choice chooseChunk(func::FuncOp f, const Plan &plan, int64_t limit, int64_t fixed,
                   double margin) {
  Choice ch;
  int64_t lo = plan.minChunk, hi = plan.size - 1;
  if (lo > hi)
    return ch;
  auto peakAt = [&](int64_t c) -> int64_t {
    int64_t p = regionPeak(f, plan, c);
    if (p == kInfeasible || p <= fixed)
      return p;
    return fixed + static_cast<int64_t>(std::ceil(margin * double(p - fixed)));
  };
  ch.chunk = lo;
  ch.peak = peakAt(lo);
  if (ch.peak > limit)
    return ch;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (peakAt(mid) <= limit)
      lo = mid;
    else
      hi = mid - 1;
  }
  ch.feasible = true;
  ch.chunk = alignAndBalance(plan, lo);
  ch.peak = peakAt(ch.chunk);
  if (ch.peak > limit) { // alignment changed the remainder step: fall back
    ch.chunk = lo;
    ch.peak = peakAt(lo);
  }
  return ch;
}

} // namespace memfit::split
