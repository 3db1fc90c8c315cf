//===- ChunkChooser.cpp - how large a plan's chunks may be ----------------===//
//
// The rule: the largest chunk c in [minChunk, N) such that, in the rewritten
// program's profile, the loop (its body and the remainder step, with
// everything live around them) stays within the limit when its temporaries
// are counted `margin` times:
//   arguments + outputs + margin * (modelled loop peak - arguments - outputs)
//   <= limit
// Inside a layer loop's body (a split nested in a `lax.scan` over layers),
// and for a first pass that keeps values for its second (Stash.h), the
// margin multiplies only what grows with the chunk: the loop's peak
// beyond what the same loop holds at any chunk (extrapolated from its two
// smallest chunks: the body's whole live-ins, accumulators and their
// partial products, which the model counts as XLA allocates them). In a
// layer loop's body the function's outputs also count from the start, as
// XLA counts them (a layer loop's forward pass runs before the gradients
// exist).
// c is found on rewritten clones by a search that aims where the peak,
// nearly affine in c, meets the limit (largestFeasible). It is then rounded down to a
// multiple of 128 when c >= 256, or of 8 when c >= 16 (dot_general and
// vector units work in such tiles), and balanced: with n = ceil(N / c)
// chunks, c' = ceil(N / n) rounded up to the same multiple replaces c when
// c' <= c, which keeps n and shrinks the remainder. Last, the largest
// chunk in [3c/4, c] aligned the same way that divides N replaces c when
// one does: a remainder step is a second copy of the body, which XLA
// compiles and runs as kernels of its own (docs/split.md has the compile
// times it costs on a transformer block). minChunk is 1, or k for
// a running top-k.
//
//===----------------------------------------------------------------------===//
#include "ChunkChooser.h"

#include "LoopEmitter.h"
#include "Planner.h"

#include "memfit/Analysis/MemoryProfile.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace memfit::split {
namespace {

/// What the loop the plan becomes holds at its peak.
struct LoopPeak {
  int64_t peak = kInfeasible; // the live total at the peak
  int64_t outside = 0;        // of it, what lives outside the loop's block
  /// A first pass's peak with the function's outputs counted from the
  /// start (0 for other loops), and what lives around the loop then.
  int64_t withOutputs = 0, aroundWithOutputs = 0;
};

/// The largest live total at the ops the rewrite created (not marked
/// `mark`) in `clone`'s profile; the whole function's peak goes to
/// `functionPeak`, what lives outside the loop's block to `outside`, and
/// the least live total at the created ops of the block itself (the loop's
/// initial values, before it runs: what lives around it) to `around`.
int64_t loopOpsPeak(func::FuncOp clone, Block *block, StringAttr mark, bool reserveOutputs,
                    int64_t &functionPeak, int64_t &outside, int64_t &around) {
  FailureOr<FunctionProfile> prof = profileFunction(clone, reserveOutputs);
  if (failed(prof))
    return kInfeasible;
  int64_t peak = 0;
  functionPeak = prof->peakBytes;
  around = kInfeasible;
  for (const TimelinePoint &p : prof->timeline) {
    Operation *a = block->findAncestorOpInBlock(*p.op);
    if (a && !a->getDiscardableAttr(mark)) {
      peak = std::max(peak, p.liveBytes);
      if (p.op->getBlock() == block)
        around = std::min(around, p.liveBytes);
    }
    // The same for every op of the block (its enclosing loops' state).
    if (p.op->getBlock() == block)
      outside = p.outsideBytes;
  }
  return peak;
}

/// A logsumexp's online loop holds one chunk of its exponentials more than
/// the profile: the profile reduces each materialised exponential before it
/// makes the next, where XLA:CPU's schedule makes a chunk's exponentials
/// together (measured on the CLIP loss's gradient: the columns' [B, c]
/// beside the rows' [c, B] and the logits chunk, 0.19 MiB over the model at
/// B = 1024, c = 48).
int64_t unscheduledExpBytes(const Plan &plan, int64_t c) {
  if (!plan.osm || plan.osm->dot)
    return 0;
  Value e = plan.osm->exp->getResult(0);
  return bytesOf(e) / std::max<int64_t>(plan.size, 1) * c;
}

/// Peak of the loop the plan becomes with chunks of `c` (rewriting a clone):
/// the largest live total at the ops the rewrite created; the whole
/// function's peak goes to `functionPeak`.
LoopPeak regionPeak(func::FuncOp f, const Plan &plan, int64_t c, int64_t &functionPeak) {
  IRMapping m;
  auto clone = llvm::cast<func::FuncOp>(f->clone(m));
  Plan q = translatePlan(plan, m);
  // Mark what exists now (addresses of erased ops may be reused).
  auto mark = StringAttr::get(f.getContext(), "memfit.split.pre");
  for (Operation &op : *q.block)
    op.setDiscardableAttr(mark, UnitAttr::get(f.getContext()));
  detachSecondPass(q);
  emitLoop(q, c);
  LoopPeak lp;
  functionPeak = kInfeasible;
  int64_t unused = 0;
  lp.peak = loopOpsPeak(clone, q.block, mark, inLoopBody(plan), functionPeak, lp.outside, unused);
  int64_t extra = unscheduledExpBytes(plan, c);
  if (lp.peak != kInfeasible)
    lp.peak += extra;
  // A first pass runs before the outputs are written, and its clone
  // returns splat constants for what the second pass computes; XLA's
  // outputs take their room all the same (profileFunction's
  // reserveOutputs).
  if (!q.later.empty() && lp.peak != kInfeasible) {
    int64_t unusedPeak = 0, unusedOutside = 0;
    lp.withOutputs = loopOpsPeak(clone, q.block, mark, true, unusedPeak, unusedOutside,
                                 lp.aroundWithOutputs) +
                     extra;
  }
  clone->erase();
  return lp;
}

/// The tile a chunk of `c` rows is a multiple of (the file's header).
int64_t tileOf(int64_t c) { return c >= 256 ? 128 : c >= 16 ? 8 : 1; }

int64_t alignDown(int64_t c) { return c / tileOf(c) * tileOf(c); }

int64_t alignUpLike(int64_t c, int64_t ref) {
  int64_t a = tileOf(ref);
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

/// The largest c in [lo, hi] with peakAt(c) <= limit, given that `lo`
/// fits with peak `pLo` and that the peak grows with c: bisection's answer.
/// Each probe profiles a rewritten clone of the whole function (most of
/// memfit-split's time), and bisection over 16,384 query rows took 15
/// probes. The loop's temporaries scale with the chunk, so the peak is
/// nearly affine in c: each step probes where the line through the
/// largest chunk that fits and the smallest that does not meets the limit,
/// and a bisection step follows two steps that did not halve the interval,
/// so a peak far from a line costs at most about twice bisection's probes.
int64_t largestFeasible(int64_t lo, int64_t pLo, int64_t hi, int64_t limit,
                        llvm::function_ref<int64_t(int64_t)> peakAt) {
  int64_t above = -1, pAbove = 0; // smallest chunk known not to fit; -1: none with a peak
  bool probedTop = false;
  int slowSteps = 0;
  while (lo < hi) {
    int64_t width = hi - lo, mid;
    if (!probedTop) {
      mid = hi; // one probe when every chunk fits; else the line's other end
      probedTop = true;
    } else if (above < 0 || pAbove <= pLo || slowSteps >= 2) {
      mid = lo + (hi - lo + 1) / 2;
      slowSteps = 0;
    } else {
      double t = double(limit - pLo) / double(pAbove - pLo);
      mid = std::clamp(lo + static_cast<int64_t>(t * double(above - lo)), lo + 1, hi);
    }
    int64_t p = peakAt(mid);
    if (p != kInfeasible && p <= limit) {
      lo = mid;
      pLo = p;
    } else {
      hi = mid - 1;
      above = p == kInfeasible ? -1 : mid;
      pAbove = p;
    }
    slowSteps = 2 * (hi - lo) > width ? slowSteps + 1 : 0;
  }
  return lo;
}

} // namespace

/// The profile is a model of XLA's fusion; inside loop bodies XLA sometimes
/// materialises what the model fuses (a reduce and the transpose or negate
/// of its result both get buffers) and adds scratch the model does not see.
/// The chunk size therefore budgets the loop's temporaries `margin` times
/// over: 2 by default (the pass option temp-margin); memfit.jit calibrates
/// it against XLA's own memory analysis of the compiled result.
/// The loop's peak with chunks of `c`, its temporaries counted `margin`
/// times over what lives outside its block (at least the arguments and
/// outputs): what lives outside (a layer loop's carried state and stacked
/// inputs and outputs around a split of its body) is no loop temporary, and
/// neither is, for a loop in a layer loop's body, what the loop holds
/// whatever its chunk (`chunkFree`, chunkFreePeak).
static int64_t marginedPeak(func::FuncOp f, const Plan &plan, int64_t c, int64_t fixed,
                            double margin, int64_t chunkFree, Choice &ch) {
  LoopPeak lp = regionPeak(f, plan, c, ch.functionPeak);
  int64_t base = std::max(fixed, lp.outside);
  ch.outside = std::max<int64_t>(0, base - fixed);
  ch.chunkFree = std::max<int64_t>(0, chunkFree - base);
  if (lp.peak == kInfeasible)
    return lp.peak;
  int64_t below = std::max(base, chunkFree);
  auto margined = [&](int64_t peak, int64_t under) {
    return peak <= under ? peak
                         : under + static_cast<int64_t>(std::ceil(margin * double(peak - under)));
  };
  // A first pass also fits with the outputs counted (below the arguments
  // and outputs its temporaries would go unchecked), its own temporaries
  // counted margin times over what lives around it.
  int64_t first = lp.withOutputs == kInfeasible
                      ? kInfeasible
                      : margined(lp.withOutputs, std::max(below, lp.aroundWithOutputs));
  return std::max(margined(lp.peak, below), first);
}

/// For a loop in a layer loop's body, what its modelled peak (unmargined)
/// holds whatever the chunk: the body's whole live-ins, the accumulators
/// and partial products of full size, which the model counts as XLA
/// allocates them. Extrapolated to a chunk of 0 from the two smallest
/// chunks, c0 and c0 + 1 (a dimension of 2 has a single chunk size below
/// its own: nothing is extrapolated, and the margin multiplies the lot).
/// On a checkpointed decoder's backward body (S=512, d=192) they were all
/// but one row's bytes of the 4.9 MiB the split loop held beyond the
/// arguments, outputs and stacked layer inputs at one row per chunk;
/// counted twice at the default margin, they put the smallest limit
/// reachable at 18.7 MiB instead of 13.5. The same for a first pass that
/// assembles values for its second pass (Stash.h): those buffers, the
/// whole live-ins and the accumulators take most of its room, and doubled
/// they left a transformer block's SGD step (S=3072, d=384) no chunk that
/// fits. 0 elsewhere, where the margin multiplies every temporary of the
/// loop.
static int64_t chunkFreePeak(func::FuncOp f, const Plan &plan) {
  int64_t c0 = plan.minChunk;
  if ((!inLoopBody(plan) && !plan.stashed) || c0 + 1 >= plan.size)
    return 0;
  int64_t unused = 0;
  int64_t p0 = regionPeak(f, plan, c0, unused).peak;
  int64_t p1 = regionPeak(f, plan, c0 + 1, unused).peak;
  if (p0 == kInfeasible || p1 == kInfeasible)
    return 0;
  return std::max<int64_t>(0, p0 - c0 * std::max<int64_t>(0, p1 - p0));
}

/// The largest chunk that divides `plan`'s dimension (no remainder step),
/// aligned as `c` is, between 3/4 of `c` (1/2 in a layer loop's body) and
/// `c` and at least the plan's smallest chunk: `c` itself when it divides;
/// 0 when none does. In a layer loop's body a remainder step also costs
/// bytes: XLA copies the whole operands its dots read in another layout
/// (attention's k and v, transposed) beside the loop, which the model does
/// not see (the S=512 scanned decoder of test_while_split.py: 5.12 MiB by
/// XLA's count with 88- and 104-row chunks and their remainders at a 5 MiB
/// limit).
static int64_t dividingChunk(const Plan &plan, int64_t c) {
  if (plan.size % c == 0)
    return c;
  int64_t a = tileOf(c);
  int64_t down = inLoopBody(plan) ? 2 : 4, keep = inLoopBody(plan) ? 1 : 3;
  for (int64_t d = c / a * a; d >= plan.minChunk && down * d >= keep * c; d -= a)
    if (plan.size % d == 0)
      return d;
  return 0;
}

/// `c` aligned and balanced when that keeps `fits`, else `c` itself; then
/// a chunk that divides the dimension, down to 3/4 of it, when one does
/// and keeps `fits`: a remainder step is a second copy of the loop's body,
/// which XLA compiles and runs as a second set of kernels.
static void settleChunk(const Plan &plan, int64_t c, Choice &ch,
                        llvm::function_ref<int64_t(int64_t)> peakAt,
                        llvm::function_ref<bool(int64_t)> fits) {
  ch.chunk = alignAndBalance(plan, c);
  ch.peak = peakAt(ch.chunk);
  if (!fits(ch.peak)) { // alignment changed the remainder step: fall back
    ch.chunk = c;
    ch.peak = peakAt(c);
  }
  int64_t d = dividingChunk(plan, ch.chunk);
  if (d == 0 || d == ch.chunk)
    return;
  int64_t p = peakAt(d);
  if (p != kInfeasible && fits(p)) {
    ch.chunk = d;
    ch.peak = p;
  }
}

/// The largest chunk whose margined peak, less the smallest chunk's peak
/// when `overSmallest`, is at most `bound`; infeasible, with the smallest
/// chunk's peak, when none is. `from` (without `overSmallest`), when above
/// the smallest chunk, is one known to fit: the search starts there.
static Choice largestChunkWithin(func::FuncOp f, const Plan &plan, int64_t fixed, double margin,
                                 int64_t bound, bool overSmallest, int64_t from = 0) {
  Choice ch;
  int64_t lo = plan.minChunk, hi = plan.size - 1;
  if (lo > hi)
    return ch;
  int64_t chunkFree = chunkFreePeak(f, plan);
  auto peakAt = [&](int64_t c) { return marginedPeak(f, plan, c, fixed, margin, chunkFree, ch); };
  if (!overSmallest && from > lo && from <= hi) {
    int64_t p = peakAt(from);
    if (p != kInfeasible && p <= bound) {
      lo = largestFeasible(from, p, hi, bound, peakAt);
      ch.feasible = true;
      settleChunk(plan, lo, ch, peakAt, [&](int64_t q) { return q <= bound; });
      return ch;
    }
  }
  ch.chunk = lo;
  ch.peak = peakAt(lo);
  if (ch.peak == kInfeasible)
    return ch;
  int64_t relief = overSmallest ? ch.peak : 0;
  if (ch.peak - relief > bound)
    return ch;
  auto measured = [&](int64_t c) {
    int64_t p = peakAt(c);
    return p == kInfeasible ? kInfeasible : p - relief;
  };
  lo = largestFeasible(lo, ch.peak - relief, hi, bound, measured);
  ch.feasible = true;
  settleChunk(plan, lo, ch, peakAt, [&](int64_t p) { return p - relief <= bound; });
  return ch;
}

Choice chooseChunk(func::FuncOp f, const Plan &plan, int64_t limit, int64_t fixed,
                   double margin, int64_t from) {
  return largestChunkWithin(f, plan, fixed, margin, limit, /*overSmallest=*/false, from);
}

/// A step at which no chunk fits, because values live around the loop are
/// over the limit on their own, would otherwise take the smallest chunk;
/// later steps remove most of those values (they are split too), so the
/// chunk is sized by what the loop itself adds: the largest chunk whose
/// peak exceeds the smallest chunk's by at most `budget` (margined).
Choice chooseProjectedChunk(func::FuncOp f, const Plan &plan, int64_t budget, int64_t fixed,
                            double margin) {
  return largestChunkWithin(f, plan, fixed, margin, budget, /*overSmallest=*/true);
}

} // namespace memfit::split
