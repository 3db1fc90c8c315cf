//===- Split.cpp - memfit-split --------------------------------------------===//
//
// Rewrites the computation around a tensor that pushes a function over its
// memory limit into a `stablehlo.while` over chunks of one dimension.
//
// The algorithm, per function (on a clone; the original is replaced only on
// success, so a failed split leaves the function exactly as it was):
//
//  1. Profile (MemoryProfile.h: fusion-aware, arguments + outputs + temps).
//     If the peak fits the limit, stop. The first time it does not, fold
//     identity views and constant conversions (FoldViews.h: torch-mlir's
//     StableHLO is full of them) and profile again.
//  2. Take the largest tensors live at the peak (seeds). For each dimension
//     of a seed, plan a split region (Planner.cpp): the ops the dimension
//     travels through, the sinks that accumulate it (Accumulator.h), the
//     values assembled whole, and the ops left to a second pass.
//  3. Choose the chunk size (ChunkChooser.cpp): the largest chunk with which
//     the loop stays within the limit, its temporaries counted `temp-margin`
//     times; aligned and balanced. Among the feasible plans (seeds x
//     dimensions) the one of least modelled time wins (LoopCost.cpp: fewest
//     iterations, and top_k rows kept whole where the two-stage top_k
//     makes that cheaper), ties going to plans without accumulation;
//     online softmax only when no plain plan fits, a second pass only when
//     neither does (a logsumexp's online max and sum are no resort: they
//     replace a second pass).
//  4. Rewrite (LoopEmitter.cpp): the while loop, its remainder step, the
//     accumulators' states and the live-ins recomputed in the body.
//  5. Repeat from 1 (several oversized regions; regions inside existing
//     loops are split inside their loop body; a first pass's second pass).
//     The steps are greedy; when they get stuck, the probe that finds the
//     smallest reachable limit (lowest peak each step) is used if it fits.
//
// This file only drives those parts and reports why a function cannot fit.
//
//===----------------------------------------------------------------------===//
#include "ChunkChooser.h"
#include "MinorContraction.h"
#include "FoldViews.h"
#include "GatherElementwise.h"
#include "ShortReduceFirst.h"
#include "LoopCost.h"
#include "LoopEmitter.h"
#include "Planner.h"
#include "SinkInvariants.h"

#include "memfit/Analysis/FusionModel.h"
#include "memfit/Analysis/MemoryProfile.h"
#include "memfit/Analysis/Sharding.h"
#include "memfit/Support/Diagnostics.h"
#include "memfit/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

namespace memfit {
#define GEN_PASS_DEF_MEMFITSPLIT
#include "memfit/Transforms/Passes.h.inc"
} // namespace memfit

using namespace mlir;
using namespace memfit;
using namespace memfit::split;

namespace {

/// The pass's options, as the split steps read them.
struct Settings {
  double margin = 2.0;           // temp-margin
  bool minorContraction = false; // minor-contraction
  /// What a first pass may assemble for its second pass (Stash.h): the
  /// limit asked for, whatever limit a step is planned against (the
  /// probe's is 0), so that the probe's plans and their replays agree.
  int64_t stashBytes = 0;
  /// Set when a plan built under these settings keeps values for its
  /// second pass: only then can a split without stashes differ.
  bool *sawStash = nullptr;
};

/// How the split steps choose. Greedy: the plan of least modelled time
/// among those whose loop fits, stopping when none does. Minimize: the
/// probe for the smallest reachable limit, whatever lowers the peak most
/// with the smallest chunks, until nothing does. Projected: the probe's
/// plans, until the function fits, with chunks sized by what each loop
/// adds (chooseProjectedChunk), not the smallest: where the greedy steps
/// get stuck, the probe's smallest chunks cost a loop iteration per row.
enum class Steps { Greedy, Projected, Minimize };

struct RunResult {
  bool ok = false;
  int64_t peak = 0;
  std::string why;
  Operation *blocker = nullptr;
  bool belowFixed = false;
  int64_t fixedBytes = 0;
  std::string sharded; // a plan refused because it chunks a sharded dimension
  /// Whether every loop the steps made nests in the body of a loop the
  /// program runs (a layer loop), where the chunk rule's margin multiplies
  /// only what grows with the chunk.
  bool loopsInBodiesOnly = true;

  /// The peak with its temporaries counted `margin` times.
  int64_t margined(double margin) const {
    return fixedBytes + static_cast<int64_t>(std::ceil(margin * double(peak - fixedBytes)));
  }
};

/// The function's profile as the split steps judge it. XLA counts the
/// outputs for the whole run; where that puts the peak in the body of a loop
/// the program runs (a layer scan's forward pass, before the gradients
/// exist), the profile counts them from the start. Elsewhere each output
/// counts from where it is made: on a one-sided contrastive loss's gradient
/// (B = 1024) counting them from the start put the floor at 4.02 MiB, over
/// a 3.02 MiB limit that XLA's count of the split program meets.
FailureOr<FunctionProfile> profileForSplit(func::FuncOp f) {
  FailureOr<FunctionProfile> reserved = profileFunction(f, /*reserveOutputs=*/true);
  if (failed(reserved))
    return reserved;
  Operation *at = reserved->peakOp;
  if (at && (isProgramLoop(at) || inProgramLoop(at)))
    return reserved;
  return profileFunction(f);
}

/// Where `v` is made: the first value of its type reached back through the
/// fusible ops that compute it elementwise from one value of the same type
/// (broadcasts aside: the logits of `exp(logits - broadcast(max))`). Split from there, a region also
/// takes what the other readers of that value need, along dimensions the
/// live value's own users would stop (a gather along the vocabulary).
Value producerRoot(Value v) {
  for (unsigned steps = 0; steps < 64; ++steps) {
    Operation *op = v.getDefiningOp();
    if (!op || !FusionModel::isFusible(op) || op->getNumRegions())
      return v;
    Value same;
    for (Value o : op->getOperands())
      if (o.getType() == v.getType() && llvm::isa_and_present<OpResult>(o) &&
          o.getDefiningOp()->getBlock() == op->getBlock() &&
          getOpKind(o.getDefiningOp()) != OpKind::BroadcastInDim) {
        if (same && same != o)
          return v;
        same = o;
      }
    if (!same)
      return v;
    v = same;
  }
  return v;
}

/// A value live at the peak and, when it is another value, its producer
/// root: the root is planned along the dimensions no plan of the value
/// takes, the better of their plans taken.
using SeedGroup = SmallVector<Value, 2>;

/// The (up to 4) largest values live at the peak that a split can remove:
/// op results that the function does not return; each with its producer
/// root at the function's top level (in a layer loop's body the plans
/// along rows are kept, which the calibration re-splits as one set).
SmallVector<SeedGroup> pickSeeds(func::FuncOp f, const FunctionProfile &prof) {
  llvm::DenseSet<Value> returned;
  for (Value v : f.front().getTerminator()->getOperands())
    returned.insert(v);
  auto splittable = [&](Value v) {
    return llvm::isa<OpResult>(v) && !returned.contains(v) && bytesOf(v) > 0;
  };
  SmallVector<SeedGroup> seeds;
  llvm::DenseSet<Value> taken;
  for (const LiveTensor &t : prof.liveAtPeak) {
    if (t.isArgument || !splittable(t.value) || !taken.insert(t.value).second)
      continue;
    SeedGroup group{t.value};
    Value root = producerRoot(t.value);
    if (splittable(root) && root.getParentBlock() == &f.front() && taken.insert(root).second)
      group.push_back(root);
    seeds.push_back(group);
    if (seeds.size() == 4)
      break;
  }
  return seeds;
}

/// The plans tried in one step: the best feasible one, the one whose loop
/// has the lowest peak (what a failure reports), and the one the probe for
/// the smallest reachable limit applies.
struct Candidates {
  std::optional<Plan> best;
  Choice bestChoice;
  double bestScore = -std::numeric_limits<double>::infinity();
  Plan minPlan;
  Choice minChoice;
  bool haveMin = false;
  /// The probe's: the lowest overall peak (the loop's and the function's
  /// after it: a loop of low peak may leave a higher one untouched), among
  /// one-pass plans and among first passes (whose peak leaves out their
  /// second pass, so the probe takes one only when no one-pass plan lowers
  /// the peak).
  Plan probeOnePass, probeFirstPass;
  Choice probeOnePassChoice, probeFirstPassChoice;

  /// Online softmax and a second pass are successively later resorts;
  /// within a resort, the least modelled time (LoopCost.h: fewest
  /// iterations, top_k rows kept whole where that pays); then plans without
  /// accumulation.
  static double score(const Plan &plan, const Choice &ch) {
    // A logsumexp's online max and sum only save a pass: no resort.
    double resort =
        (plan.osm && plan.osm->dot ? 1.0 : 0.0) + (plan.later.empty() ? 0.0 : 2.0);
    return -resort * 1e18 - modelledLoopNanos(plan, ch.chunk) -
           (plan.sinks.empty() ? 0.0 : 1e-3);
  }

  void offer(const Plan &plan, const Choice &ch) {
    if (ch.peak < minChoice.peak) {
      minChoice = ch;
      minPlan = plan;
      haveMin = true;
    }
    Choice &probe = plan.later.empty() ? probeOnePassChoice : probeFirstPassChoice;
    if (ch.overallPeak() < probe.overallPeak()) {
      probe = ch;
      (plan.later.empty() ? probeOnePass : probeFirstPass) = plan;
    }
    if (!ch.feasible)
      return;
    double s = score(plan, ch);
    if (s > bestScore) {
      bestScore = s;
      best = plan;
      bestChoice = ch;
    }
  }

  /// The probe's step from a function whose peak is `peak`: a one-pass plan
  /// that lowers it, else a first pass that does, else none (an embedding
  /// bag's gradient split by bags reaches its arguments and outputs, where
  /// a first pass along its tokens left the probe at jax's own peak).
  std::optional<std::pair<Plan, Choice>> probeStep(int64_t peak) const {
    if (probeOnePassChoice.overallPeak() < peak)
      return std::make_pair(probeOnePass, probeOnePassChoice);
    if (probeFirstPassChoice.overallPeak() < peak)
      return std::make_pair(probeFirstPass, probeFirstPassChoice);
    return std::nullopt;
  }
};

/// In a sharded program, whether the plan would chunk a value along a
/// dimension that is split over devices. Such a loop would slice across
/// devices: XLA's partitioner gathers the whole dimension onto every device
/// for each chunk, which costs more memory than the split saves. Chunks
/// therefore run along unsharded (or replicated) dimensions, each device
/// chunking its own shard of the others.
/// Returns how many devices split that dimension (0 if none is cut).
int64_t chunkedShardedDevices(const Plan &plan, const ShardingModel &sharding) {
  if (!sharding.isSharded())
    return 0;
  for (auto [v, d] : plan.dimOf)
    if (int64_t n = sharding.shardsAlong(v, d); n > 1)
      return n;
  for (auto &[op, dims] : plan.operandDims)
    for (auto [i, d] : llvm::enumerate(dims))
      if (d >= 0 && i < op->getNumOperands())
        if (int64_t n = sharding.shardsAlong(op->getOperand(i), d); n > 1)
          return n;
  return 0;
}

/// Plans the dimensions of `seed` (those in `dims`, when given), choosing
/// each plan's chunk. Returns the dimensions that had no plan.
SmallVector<int64_t> offerSeed(func::FuncOp f, Value seed, const Planner &planner,
                               const ShardingModel &sharding, int64_t limit, bool minimize,
                               const Settings &settings, RunResult &rr, Candidates &c,
                               std::optional<ArrayRef<int64_t>> dims = std::nullopt) {
  auto t = tensorType(seed);
  SmallVector<int64_t> unplanned;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    if (t.getDimSize(d) < 2 || (dims && !llvm::is_contained(*dims, d)))
      continue;
    PlanFailure fail;
    std::optional<Plan> plan = planner.build(seed, d, fail);
    if (!plan) {
      unplanned.push_back(d);
      if (rr.why.empty() || (!rr.blocker && fail.blocker)) {
        rr.why = fail.why;
        rr.blocker = fail.blocker ? fail.blocker : seed.getDefiningOp();
      }
      continue;
    }
    if (int64_t devices = chunkedShardedDevices(*plan, sharding)) {
      if (rr.sharded.empty())
        rr.sharded = "chunks along dimension " + std::to_string(d) + " of " +
                     opLabel(seed.getDefiningOp()) + " would cut a dimension sharded over " +
                     std::to_string(devices) +
                     " devices, and memfit chunks only unsharded dimensions";
      continue;
    }
    if (plan->stashed && settings.sawStash)
      *settings.sawStash = true;
    // The chunk is chosen on the loop as it will be emitted.
    plan->minorContraction = settings.minorContraction;
    c.offer(*plan, chooseChunk(f, *plan, minimize ? 0 : limit, rr.fixedBytes,
                               settings.margin));
  }
  return unplanned;
}

/// Plans every seed group (stopping after the first that has a feasible
/// plan) and chooses each plan's chunk.
Candidates evaluateSeeds(func::FuncOp f, ArrayRef<SeedGroup> seeds, int64_t limit,
                         bool minimize, const Settings &settings, RunResult &rr) {
  Planner planner(limit, settings.stashBytes);
  ShardingModel sharding(f);
  Candidates c;
  for (const SeedGroup &group : seeds) {
    SmallVector<int64_t> unplanned =
        offerSeed(f, group.front(), planner, sharding, limit, minimize, settings, rr, c);
    // The root (of the same type) along the dimensions no plan of the live
    // value takes: a split along them would need the value's own reduction
    // first, which a first pass from the root accumulates.
    if (group.size() > 1 && !unplanned.empty())
      offerSeed(f, group[1], planner, sharding, limit, minimize, settings, rr, c,
                ArrayRef<int64_t>(unplanned));
    if (c.best)
      break;
  }
  return c;
}

/// Why no plan fits: the smallest chunks' peak and what stopped the region.
void explainNoFit(const Candidates &c, ArrayRef<SeedGroup> seeds, RunResult &rr) {
  if (c.haveMin) {
    rr.why = "even its smallest chunks (" + std::to_string(c.minChoice.chunk) + " of " +
             std::to_string(c.minPlan.size) + ") need " + formatBytes(c.minChoice.peak);
    if (c.minPlan.stopper) {
      // "operand dimension d" for the first operand; an op with several
      // (a scatter's indices and updates) names which one.
      std::string which = "operand dimension " + std::to_string(c.minPlan.stopperDim);
      if (c.minPlan.stopperOperand > 0)
        which = "dimension " + std::to_string(c.minPlan.stopperDim) + " of operand #" +
                std::to_string(c.minPlan.stopperOperand);
      rr.why += ", and " + opLabel(c.minPlan.stopper) + " needs the split dimension whole (" +
                which + ")";
      if (c.minPlan.stopperWhy)
        rr.why += std::string(": ") + c.minPlan.stopperWhy;
    }
    rr.blocker = c.minPlan.seedOp;
  }
  if (!rr.blocker)
    rr.blocker = seeds.front().front().getDefiningOp();
}

/// A split step's plan, told in the loop it becomes: the discardable
/// attribute `memfit.split` lets reports (memfit.explain) say what each loop
/// splits without re-deriving it. XLA ignores it.
struct LoopNote {
  std::string seedOp, element, location;
  SmallVector<int64_t> shape; // not the type's text: checks for big types would match it
  int64_t seedBytes = 0, dim = -1;
  const char *kind = "map";
};

LoopNote noteFor(const Plan &plan) {
  LoopNote n;
  n.seedOp = plan.seedOp->getName().getStringRef().str();
  n.location = getUserSourceLine(plan.seedOp->getLoc());
  for (Value r : plan.seedOp->getResults()) {
    auto it = plan.dimOf.find(r);
    if (it == plan.dimOf.end())
      continue;
    auto t = llvm::cast<RankedTensorType>(r.getType());
    n.shape.assign(t.getShape().begin(), t.getShape().end());
    llvm::raw_string_ostream os(n.element);
    t.getElementType().print(os);
    n.seedBytes = bytesOf(r);
    n.dim = it->second;
    break;
  }
  if (plan.osm && plan.osm->dot)
    n.kind = "online-softmax";
  else if (plan.osm)
    n.kind = "online-logsumexp";
  else if (!plan.later.empty())
    n.kind = "first-of-two-passes";
  else if (!plan.sinks.empty())
    n.kind = "accumulate";
  return n;
}

/// Emits the plan's loop and records on it what it splits and how.
void emitNotedLoop(const Plan &plan, const Choice &ch, int64_t step, double margin) {
  LoopNote n = noteFor(plan); // before emitLoop erases the seed
  Operation *loop = emitLoop(plan, ch.chunk);
  Builder b(loop->getContext());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  SmallVector<NamedAttribute> f{
      b.getNamedAttr("step", i64(step)),
      b.getNamedAttr("seed", b.getStringAttr(n.seedOp)),
      b.getNamedAttr("seed_shape", b.getDenseI64ArrayAttr(n.shape)),
      b.getNamedAttr("seed_element", b.getStringAttr(n.element)),
      b.getNamedAttr("seed_bytes", i64(n.seedBytes)),
      b.getNamedAttr("location", b.getStringAttr(n.location)),
      b.getNamedAttr("dim", i64(n.dim)),
      b.getNamedAttr("size", i64(plan.size)),
      b.getNamedAttr("chunk", i64(ch.chunk)),
      b.getNamedAttr("chunks", i64(plan.size / ch.chunk)),
      b.getNamedAttr("remainder", i64(plan.size % ch.chunk)),
      b.getNamedAttr("kind", b.getStringAttr(n.kind)),
      b.getNamedAttr("modelled_peak", i64(ch.peak)),
      b.getNamedAttr("outside_bytes", i64(ch.outside)),
      b.getNamedAttr("loop_fixed_bytes", i64(ch.chunkFree)),
      b.getNamedAttr("temp_margin", b.getF64FloatAttr(margin))};
  loop->setAttr(kSplitRecordAttr, b.getDictionaryAttr(f));
}

/// A projected step's chunk: with `whole`, the largest with which the
/// probe's plan fits the limit on its own, as a greedy step's, when there
/// is one; else the largest whose loop adds at most `budget`. The budget is for a loop that
/// other oversized values, split by later steps, keep over the limit; a
/// loop that fits beside them needs none. On a transformer block's SGD
/// step (S=6144) the budget alone gave chunks of 88 and 88 rows where 224
/// and 160 fit, and XLA counted 0.51x of the limit. `withinLimit` says
/// whether the loop was sized within the limit.
Choice projectedChunk(func::FuncOp f, const Plan &plan, int64_t limit, int64_t budget,
                      int64_t fixed, double margin, bool whole, bool &withinLimit) {
  withinLimit = false;
  Choice budgeted = chooseProjectedChunk(f, plan, budget, fixed, margin);
  if (!budgeted.feasible || budgeted.peak > limit)
    return budgeted;
  withinLimit = true;
  if (!whole)
    return budgeted;
  Choice fits = chooseChunk(f, plan, limit, fixed, margin, budgeted.chunk);
  return fits.feasible && fits.chunk > budgeted.chunk ? fits : budgeted;
}

/// Splits `f` (a clone) until it fits `limit`, stepping as `steps` says
/// (a Projected step's loop may add `budget` bytes, or, with `whole`, take
/// the limit when it fits it on its own). Minimize instead applies
/// whatever lowers the peak most, until nothing does.
RunResult runSplits(func::FuncOp f, int64_t limit, Steps steps, const Settings &settings,
                    int64_t budget = 0, bool whole = false) {
  bool minimize = steps == Steps::Minimize;
  RunResult rr;
  int64_t lastPeak = kInfeasible;
  bool pendingSecondPass = false;
  bool budgetedLoop = false; // a projected loop that was not sized within the limit
  for (int iter = 0; iter < 32; ++iter) {
    FailureOr<FunctionProfile> prof = profileForSplit(f);
    if (failed(prof)) {
      rr.why = "the function could not be profiled";
      return rr;
    }
    rr.peak = prof->peakBytes;
    rr.fixedBytes = prof->argumentBytes + prof->outputBytes;
    // Projected steps stop where the probe's program is accepted: its
    // temporaries counted margin times when a loop was not made within the
    // limit (a loop's margin held when it was made, as a greedy step's).
    int64_t judged = budgetedLoop ? rr.margined(settings.margin) : rr.peak;
    if (!minimize && judged <= limit) {
      rr.ok = true;
      return rr;
    }
    if (!minimize && limit < rr.fixedBytes) {
      rr.belowFixed = true;
      return rr;
    }
    // Over the limit: fold identity views and constant conversions, and
    // recompute in loop bodies the invariants their loops carry, and gather
    // before elementwise ops of splats (once: FoldViews.h, SinkInvariants.h,
    // GatherElementwise.h), then look again.
    if (iter == 0 &&
        (foldViewsAndConstants(f) | sinkLoopInvariants(f) | gatherBeforeElementwise(f)))
      continue;
    // A first pass leaves the originals to its second pass: the peak drops
    // only once that is split too.
    if (steps != Steps::Greedy && prof->peakBytes >= lastPeak && !pendingSecondPass)
      return rr;
    lastPeak = std::min(lastPeak, prof->peakBytes);
    pendingSecondPass = false;

    // Why this step finds no plan: an op named by an earlier step's failed
    // plans may since have been erased by a loop that step emitted.
    rr.why.clear();
    rr.blocker = nullptr;
    SmallVector<SeedGroup> seeds = pickSeeds(f, *prof);
    if (seeds.empty()) {
      rr.why = "nothing live at the peak can be split (arguments and outputs)";
      return rr;
    }
    Candidates c = evaluateSeeds(f, seeds, limit, steps != Steps::Greedy, settings, rr);
    if (steps != Steps::Greedy) {
      std::optional<std::pair<Plan, Choice>> step = c.probeStep(prof->peakBytes);
      if (!step)
        return rr;
      Choice ch = step->second;
      if (steps == Steps::Projected) {
        bool withinLimit = false;
        ch = projectedChunk(f, step->first, limit, budget, rr.fixedBytes, settings.margin, whole,
                            withinLimit);
        if (!ch.feasible)
          return rr;
        budgetedLoop |= !withinLimit;
      }
      pendingSecondPass = !step->first.later.empty();
      rr.loopsInBodiesOnly &= inLoopBody(step->first);
      emitNotedLoop(step->first, ch, iter, settings.margin);
      continue;
    }
    if (!c.best) {
      explainNoFit(c, seeds, rr);
      return rr;
    }
    emitNotedLoop(*c.best, c.bestChoice, iter, settings.margin);
  }
  rr.why = "too many split steps";
  return rr;
}

/// The remainder steps' marks are the split steps' business only.
void dropRemainderMarks(func::FuncOp f) {
  f.walk([](Operation *op) { op->removeDiscardableAttr(kRemainderAttr); });
}

/// Whether memfit-split made a loop in `f`.
bool madeLoops(func::FuncOp f) {
  bool any = false;
  f.walk([&](Operation *op) { any |= op->hasAttr(kSplitRecordAttr); });
  return any;
}

/// With minor-contraction, a split program's whole dots at its top level
/// in the form XLA:CPU's ynn fusions take (writeTopLevelDotsMinor), unless
/// the transposed operands would take the profile over `limit` (and over
/// its peak without them).
void writeWholeDotsMinor(func::FuncOp f, int64_t limit, const Settings &settings) {
  if (!settings.minorContraction || !madeLoops(f))
    return;
  FailureOr<FunctionProfile> before = profileForSplit(f);
  auto work = llvm::cast<func::FuncOp>(f->clone());
  if (writeTopLevelDotsMinor(work.front()) > 0) {
    FailureOr<FunctionProfile> after = profileForSplit(work);
    if (succeeded(before) && succeeded(after) &&
        after->peakBytes <= std::max(limit, before->peakBytes)) {
      f.getBody().takeBody(work.getBody());
    }
  }
  work->erase();
}

/// A split that fits: `work`'s body becomes `f`'s. Its top-level reduces
/// keep their inputs fused where XLA:CPU would materialise them
/// (ShortReduceFirst.h: a buffer smaller by a reduced dimension, never
/// larger, so no profile is needed to accept it).
void adoptSplit(func::FuncOp f, func::FuncOp work, int64_t limit, const Settings &settings) {
  dropRemainderMarks(work);
  writeWholeDotsMinor(work, limit, settings);
  if (madeLoops(work))
    reduceShortDimensionFirst(work.front());
  f.getBody().takeBody(work.getBody());
}

struct MemfitSplitPass : memfit::impl::MemfitSplitBase<MemfitSplitPass> {
  using MemfitSplitBase::MemfitSplitBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (memoryLimit.empty()) {
      module.emitError("memfit-split needs a memory limit: "
                       "memfit-split{memory-limit=1GiB}");
      return signalPassFailure();
    }
    std::string error;
    std::optional<int64_t> limit = parseByteSize(memoryLimit, error);
    if (!limit) {
      module.emitError() << "memfit-split: invalid memory-limit '" << memoryLimit
                         << "': " << error;
      return signalPassFailure();
    }
    if (!(tempMargin > 0.0) || !std::isfinite(tempMargin)) {
      module.emitError() << "memfit-split: invalid temp-margin " << tempMargin
                         << ": it must be a positive number (default 2)";
      return signalPassFailure();
    }
    if (failed(verifyOpInvariants(module)) || failed(checkNoCalls(module)))
      return signalPassFailure();
    for (auto f : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (f.isExternal())
        continue;
      if (failed(splitFunction(f, *limit)))
        return signalPassFailure();
    }
  }

  /// Fails, before anything changes, when a function calls another defined
  /// in the module. The split works within one function: a callee's ops
  /// cannot join a caller's loop, so jax's helpers (softmax, where, argmin
  /// as private functions) would block it with a misleading "cannot be
  /// split"; memfit-inline makes them one function first.
  LogicalResult checkNoCalls(ModuleOp module) {
    SymbolTable symbols(module);
    WalkResult r = module.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return WalkResult::advance();
      auto caller = call->getParentOfType<func::FuncOp>();
      call.emitError() << "memfit-split: @" << (caller ? caller.getSymName() : "?")
                       << " calls @" << callee.getSymName()
                       << ", and memfit-split does not see through func.call: run "
                          "memfit-inline first, e.g. --pass-pipeline='builtin.module("
                          "memfit-inline,memfit-split{memory-limit="
                       << memoryLimit << "})'";
      return WalkResult::interrupt();
    });
    return failure(r.wasInterrupted());
  }

  /// A first pass may keep up to an eighth of the limit for its second
  /// (Stash.h); where the split then cannot fit (a kept value that the
  /// smallest chunks' loop cannot afford), it is split again without, when
  /// some plan did keep values: without any, the second split would be the
  /// same, and its error (and each failed calibration split) would pay the
  /// search for the smallest reachable limit twice.
  LogicalResult splitFunction(func::FuncOp f, int64_t limit) {
    bool sawStash = false;
    Settings stashing{tempMargin, minorContraction, limit / 8, &sawStash};
    NoFit noFit;
    if (succeeded(splitFunction(f, limit, stashing, noFit)))
      return success();
    Settings plain{tempMargin, minorContraction, 0};
    if (sawStash && succeeded(splitFunction(f, limit, plain, noFit)))
      return success();
    if (noFit.reachable < kInfeasible / 2)
      noFit.reachable = lowestGreedyLimit(f, std::max(limit, noFit.fixedBytes), noFit.reachable,
                                          sawStash ? plain : stashing);
    reportNoFit(noFit);
    return failure();
  }

  /// Why a split failed: the greedy steps' result and the smallest limit
  /// the probe reaches.
  struct NoFit {
    std::string message;
    std::optional<Location> loc;
    int64_t fixedBytes = 0;
    int64_t reachable = kInfeasible;
  };

  /// Splits `f` to fit `limit`; on failure leaves it as it was and says
  /// in `noFit` why.
  LogicalResult splitFunction(func::FuncOp f, int64_t limit, const Settings &settings,
                              NoFit &noFit) {
    auto work = llvm::cast<func::FuncOp>(f->clone());
    attachMeshes(work, f->getParentOp());
    RunResult rr = runSplits(work, limit, Steps::Greedy, settings);
    if (rr.ok) {
      adoptSplit(f, work, limit, settings);
      work->erase();
      return success();
    }
    // Report, from a fresh clone, the smallest limit memfit can reach.
    auto probe = llvm::cast<func::FuncOp>(f->clone());
    attachMeshes(probe, f->getParentOp());
    RunResult best = runSplits(probe, 0, Steps::Minimize, settings);
    // The probe's program with its temporaries counted temp-margin times,
    // as the chunk rule counts them: a loop's margined peak when it was made
    // can shrink when a later step splits inside its body (an accumulated
    // partial product split by its rows), so the final program is measured.
    // Loops that all nest in layer loops' bodies run their smallest chunks
    // here, and their margin multiplies only what grows with the chunk
    // (ChunkChooser.cpp): what the program holds is its floor.
    int64_t margined = best.loopsInBodiesOnly ? best.peak : best.margined(tempMargin);
    int64_t reachable = std::max({best.peak, margined, rr.fixedBytes});
    // The split steps are greedy (largest chunks first); when they get
    // stuck, the probe's steps (the lowest peak each time) may still fit,
    // and so may its plans with larger chunks (projected steps).
    if (reachable <= limit && succeeded(splitProjected(f, limit, rr.fixedBytes, settings))) {
      probe->erase();
      work->erase();
      return success();
    }
    if (reachable <= limit) {
      adoptSplit(f, probe, limit, settings);
      probe->erase();
      work->erase();
      return success();
    }
    describeNoFit(f, limit, rr, noFit);
    noFit.reachable = reachable;
    probe->erase();
    work->erase();
    return failure();
  }

  /// When the greedy steps get stuck (values over the limit on their own
  /// live around every candidate loop) and the probe shows the limit
  /// reachable, projected steps: each loop allowed
  /// all of the limit's room for temporaries, then a quarter of it, down to
  /// 1/64 (the rest is left to what no later step removes). At each budget
  /// the loops that fit the limit on their own first take the largest
  /// chunks that do, then (when that program does not fit: after a loop
  /// sized by the budget the whole program's temporaries are counted
  /// margin times, and big later loops can break that) every loop takes
  /// the budget's. Replaces `f`'s body with the first that fits; the
  /// probe's smallest chunks are the last resort. `fixed`: the function's
  /// argument and output bytes.
  LogicalResult splitProjected(func::FuncOp f, int64_t limit, int64_t fixed,
                               const Settings &settings) {
    for (int64_t sixtyfourths : {64, 16, 4, 1}) {
      int64_t budget = (limit - fixed) * sixtyfourths / 64;
      if (budget <= 0)
        continue;
      for (bool whole : {true, false}) {
        auto work = llvm::cast<func::FuncOp>(f->clone());
        attachMeshes(work, f->getParentOp());
        RunResult rr = runSplits(work, limit, Steps::Projected, settings, budget, whole);
        if (rr.ok) {
          adoptSplit(f, work, limit, settings);
          work->erase();
          return success();
        }
        work->erase();
      }
    }
    return failure();
  }

  /// The smallest limit the greedy steps meet, by bisection between `lo`
  /// (not met) and `hi` (met by the probe). The probe takes the lowest peak
  /// at each step, which is not the lowest limit overall: at its smallest
  /// chunks the per-chunk accumulators and partial products of the later
  /// loops can outweigh what the chunk saves (a checkpointed layer loop's
  /// backward body). Every limit returned has been met by a run, so a user
  /// who asks for it gets a program.
  int64_t lowestGreedyLimit(func::FuncOp f, int64_t lo, int64_t hi, const Settings &settings) {
    for (int step = 0; step < 8 && hi - lo > hi / 100; ++step) {
      int64_t mid = lo + (hi - lo) / 2;
      auto work = llvm::cast<func::FuncOp>(f->clone());
      attachMeshes(work, f->getParentOp());
      bool met = runSplits(work, mid, Steps::Greedy, settings).ok;
      work->erase();
      (met ? hi : lo) = mid;
    }
    return hi;
  }

  /// What blocks a function left as it was, said while the clone whose ops
  /// the steps' result names still exists.
  static void describeNoFit(func::FuncOp f, int64_t limit, const RunResult &rr, NoFit &noFit) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << "memfit-split: cannot fit @" << f.getSymName() << " into " << formatBytes(limit)
       << " (" << limit << " bytes): ";
    if (rr.belowFixed) {
      os << "its arguments and outputs alone take " << formatBytes(rr.fixedBytes);
    } else if (rr.blocker) {
      int64_t bytes = rr.blocker->getNumResults() ? bytesOf(rr.blocker->getResult(0)) : 0;
      os << "the " << formatBytes(bytes) << " result of " << opLabel(rr.blocker)
         << " cannot be split within the limit: " << rr.why;
    } else {
      os << rr.why;
    }
    if (!rr.sharded.empty())
      os << "; " << rr.sharded;
    noFit.message = msg;
    noFit.loc = rr.blocker && !rr.belowFixed ? rr.blocker->getLoc() : functionLoc(f);
    noFit.fixedBytes = rr.fixedBytes;
  }

  /// The error for a function left as it was: what blocks, and the smallest
  /// limit that would work.
  static void reportNoFit(const NoFit &noFit) {
    mlir::emitError(*noFit.loc) << noFit.message << "; the smallest limit memfit can reach is "
                                << formatBytes(noFit.reachable) << " (" << noFit.reachable
                                << " bytes)";
  }

  /// Where an error about the whole function points: jax gives functions
  /// no location, but their return carries the user's source line.
  static Location functionLoc(func::FuncOp f) {
    if (!llvm::isa<UnknownLoc>(f.getLoc()) || f.getBody().empty())
      return f.getLoc();
    return f.getBody().back().back().getLoc();
  }
};

} // namespace
