//===- Planner.cpp - which region a split along one dimension takes -------===//
//
// From a seed (a large tensor live at the peak) and one of its dimensions,
// the region is grown with the per-op dimension table (DimMapping.h):
//   - backward, through ops that pass the dimension through, pulling in
//     producers that are cheap to recompute (fusible ops, splat constants,
//     iota) or large; other operands become leaves, sliced per chunk with
//     dynamic_slice, or are used whole;
//   - forward, through pass-through users; a user that reduces the
//     dimension (reduce, dot_general contracting it) or takes its top-k
//     (chlo.top_k along it, or a sort along it whose results are only read
//     through prefix slices [0:k]) or scatters it into a result (a
//     scatter-add along its updates' rows) is a sink that accumulates
//     across chunks;
//     any other use assembles the chunks (dynamic_update_slice into a
//     buffer carried by the loop).
// A plan is rejected when an op of the region needs a value both whole and
// in chunks, except that a user reached forward from a pulled-in producer
// that needs it whole is kept out of the region (it reads the original).
// Ops that need a sink's result (a second pass over the data, as a
// gradient's backward part needs its forward's sums) are left out of the
// loop reading the original values, and a later split recomputes the region
// for them in a second loop.
//
//===----------------------------------------------------------------------===//
#include "Planner.h"

#include "OnlineSoftmax.h"
#include "Stash.h"
#include "TopK.h"

#include "memfit/Analysis/DimMapping.h"
#include "memfit/Analysis/FusionModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include <deque>

using namespace mlir;

namespace memfit::split {
namespace {

using EdgeSet = llvm::DenseSet<std::pair<Operation *, Operation *>>;

/// Why an attempt failed in a way that the next attempt can avoid.
struct Retry {
  /// A pulled-in producer read both whole and in chunks: make it a leaf.
  Value conflict;
  /// A user reached forward from a pulled-in producer that needs the
  /// producer whole: keep it out of the region.
  Operation *keepOut = nullptr;
  /// A sink (or an op it pulled in) reached forward from a pulled-in
  /// producer conflicts with the region: keep it from joining through
  /// that producer only (it may still join from the seed's side).
  std::pair<Operation *, Operation *> keepOutEdge{nullptr, nullptr};
  /// Planned ops that need what the loop accumulates (a second pass).
  SmallVector<Operation *> dependents;
  /// A logsumexp whose e the region reads elsewhere than its sum: plan
  /// again without the logsumexp form.
  bool noLogSumExp = false;
};

/// One attempt at growing a region from a seed.
class RegionBuilder {
public:
  RegionBuilder(int64_t limit, int64_t stashBytes, const llvm::DenseSet<Value> &forcedLeaves,
                const llvm::DenseSet<Operation *> &keptOut, const EdgeSet &keptOutEdges,
                bool logSumExp, Plan &plan, PlanFailure &fail, Retry &retry)
      : limit(limit), stashBytes(stashBytes), forcedLeaves(forcedLeaves), keptOut(keptOut), keptOutEdges(keptOutEdges),
        logSumExp(logSumExp), plan(plan), fail(fail), retry(retry) {}

  bool build(Value seed, int64_t dim);

private:
  bool startAt(Value seed, int64_t dim);
  void addChunked(Operation *op, const DimFactor &f, bool isBackward);
  void addSink(Operation *op, SinkKind k, const DimFactor &f);
  bool shouldPull(Value o) const;
  bool isSharedSmallValue(Value o) const;
  void pullProducers(Operation *op);
  void pushUsers(Operation *op);
  void pushUse(OpOperand &use, Operation *from, int64_t dim);
  bool checkOperandDims(Operation *op);
  llvm::SetVector<Operation *> collectOutputs();
  bool checkNoDependents(const llvm::SetVector<Operation *> &frontier);
  static bool pruneUnused(Plan &plan);
  void sortOrder();

  int64_t limit;
  int64_t stashBytes; // what a first pass may assemble for its second (Stash.h)
  const llvm::DenseSet<Value> &forcedLeaves;
  const llvm::DenseSet<Operation *> &keptOut;
  const EdgeSet &keptOutEdges;
  bool logSumExp; // whether a logsumexp's max and sum may share one pass
  Plan &plan;
  PlanFailure &fail;
  Retry &retry;
  Operation *p0 = nullptr; // the seed's producer
  int64_t seedBytes = 0;
  std::deque<Operation *> work;
  bool ok = true;
  llvm::DenseMap<Operation *, Operation *> reachedFrom; // forward adds
  llvm::DenseMap<Operation *, Operation *> sinkFrom;    // sinks, reached forward
  llvm::DenseMap<Operation *, Operation *> pulledBy;    // backward adds
  bool findSinkEdge(Operation *op);
  bool reachedFromPulledProducer(Operation *op) const;
};

bool RegionBuilder::startAt(Value seed, int64_t dim) {
  auto res = llvm::dyn_cast<OpResult>(seed);
  if (!res) {
    fail.why = "it is a block argument";
    return false;
  }
  p0 = res.getOwner();
  seedBytes = bytesOf(seed);
  plan.block = p0->getBlock();
  plan.seedOp = p0;
  std::optional<OpDimRule> rule0 = getOpDimRule(p0);
  if (!rule0) {
    fail = {"memfit has no dimension rule for " + opLabel(p0), p0};
    return false;
  }
  const DimFactor *f0 = rule0->forResult(res.getResultNumber(), dim);
  if (!f0 || f0->kind != FactorKind::PassThrough) {
    fail = {"dimension " + std::to_string(dim) + " of " + opLabel(p0) + " cannot be chunked",
            p0};
    return false;
  }
  plan.size = f0->size;
  addChunked(p0, *f0, /*isBackward=*/false);
  return true;
}

void RegionBuilder::addChunked(Operation *op, const DimFactor &f, bool isBackward) {
  if (plan.inPlan(op))
    return;
  plan.chunked.insert(op);
  if (isBackward)
    plan.backward.insert(op);
  plan.operandDims[op] = SmallVector<int64_t>(f.operandDims.begin(), f.operandDims.end());
  for (auto [r, d] : llvm::enumerate(f.resultDims)) {
    if (d < 0)
      continue;
    Value v = op->getResult(r);
    auto it = plan.dimOf.find(v);
    if (it != plan.dimOf.end() && it->second != d) {
      fail = {"a value of " + opLabel(op) + " is needed in two splits", op};
      ok = false;
    }
    plan.dimOf[v] = d;
  }
  work.push_back(op);
}

void RegionBuilder::addSink(Operation *op, SinkKind k, const DimFactor &f) {
  plan.sinks[op] = k;
  plan.operandDims[op] = SmallVector<int64_t>(f.operandDims.begin(), f.operandDims.end());
  if (k == SinkKind::TopK)
    plan.minChunk = std::max(plan.minChunk, TopKView(op).getK());
  if (k == SinkKind::SortTopK)
    plan.minChunk = std::max(plan.minChunk, *sortPrefixLength(op));
  work.push_back(op);
}

/// A fusible value that ops outside the region also read is sliced, not
/// recomputed, when it is at most 1/kSharedOfLimit of the limit and
/// 1/kSharedOfSeed of the seed (isSharedSmallValue): whole, it costs
/// little next to what the split saves.
constexpr int64_t kSharedOfLimit = 16;
constexpr int64_t kSharedOfSeed = 128;

/// Whether `o` is small and read outside the region. The loop then slices
/// the one value that every reader sees instead of recomputing a copy:
/// XLA rewrites each copy by its own users (x / sqrt(y) becomes
/// x * rsqrt(y) when the sqrt has one user, not when it has several), so a
/// recomputed copy can differ from the original in its last bits. A second
/// pass (a softmax gradient's exponentials) and the first pass that summed
/// its normaliser would then read differently rounded logits, and the
/// normalised terms no longer sum to one, by the same sign in every row:
/// a gradient that cancels them (a CLIP loss's d/d log_scale, logits
/// nearly tied) loses its digits. Slicing costs no recomputation.
bool RegionBuilder::isSharedSmallValue(Value o) const {
  if (bytesOf(o) * kSharedOfLimit > limit || bytesOf(o) * kSharedOfSeed > seedBytes)
    return false;
  for (Operation *u : o.getUsers())
    if (!plan.inPlan(u))
      return true;
  return false;
}

/// A producer is recomputed per chunk when that is cheap (splat constants,
/// iota, fusible ops, unless small and read outside the region), when it is
/// large, or when only the region reads it.
bool RegionBuilder::shouldPull(Value o) const {
  auto res = llvm::dyn_cast<OpResult>(o);
  if (!res || forcedLeaves.contains(o))
    return false;
  Operation *p = res.getOwner();
  if (p->getBlock() != plan.block || p->hasAttr(kRemainderAttr))
    return false;
  OpKind kind = getOpKind(p);
  if (isConstantLike(p)) {
    DenseElementsAttr dense = getConstantElements(p);
    return dense && dense.isSplat();
  }
  if (kind == OpKind::Iota)
    return true;
  if (FusionModel::isFusible(p))
    return !isSharedSmallValue(o);
  if (bytesOf(o) * 4 >= limit)
    return true;
  for (Operation *u : o.getUsers())
    if (!plan.inPlan(u))
      return false;
  return true;
}

/// Backward: producers of `op`'s chunked operands.
void RegionBuilder::pullProducers(Operation *op) {
  for (auto [i, o] : llvm::enumerate(op->getOperands())) {
    int64_t e = plan.operandDims[op][i];
    if (e < 0 || plan.dimOf.count(o) || !shouldPull(o))
      continue;
    auto r = llvm::cast<OpResult>(o);
    Operation *p = r.getOwner();
    if (plan.inPlan(p) || plan.later.contains(p))
      continue; // consistency is checked later
    std::optional<OpDimRule> rule = getOpDimRule(p);
    if (!rule)
      continue;
    const DimFactor *f = rule->forResult(r.getResultNumber(), e);
    if (f && f->kind == FactorKind::PassThrough && f->size == plan.size) {
      pulledBy.try_emplace(p, op);
      addChunked(p, *f, /*isBackward=*/true);
    }
  }
}

/// Forward: users of `op`'s chunked results.
void RegionBuilder::pushUsers(Operation *op) {
  if (!plan.chunked.contains(op))
    return;
  OpKind kind = getOpKind(op);
  if (kind == OpKind::Constant || kind == OpKind::Iota)
    return;
  for (Value v : op->getResults()) {
    auto it = plan.dimOf.find(v);
    if (it == plan.dimOf.end())
      continue;
    // By value: pushUse adds to dimOf, which may move its entries.
    int64_t dim = it->second;
    for (OpOperand &use : v.getUses())
      pushUse(use, op, dim);
  }
}

/// A user that passes dimension `dim` through joins the region; one that
/// reduces it, contracts it, takes its top-k or scatters along it becomes a
/// sink; any other
/// (the first is recorded as the stopper) reads the assembled value.
void RegionBuilder::pushUse(OpOperand &use, Operation *from, int64_t dim) {
  Operation *u = use.getOwner();
  if (u->getBlock() != plan.block || u->hasTrait<OpTrait::IsTerminator>() ||
      u->hasAttr(kRemainderAttr) ||
      plan.inPlan(u) || plan.later.contains(u) || keptOut.contains(u) ||
      keptOutEdges.contains({u, from}))
    return;
  std::optional<OpDimRule> rule = getOpDimRule(u);
  const DimFactor *f = rule ? rule->forOperand(use.getOperandNumber(), dim) : nullptr;
  OpKind uk = getOpKind(u);
  bool takes = f && f->size == plan.size &&
               (f->kind == FactorKind::PassThrough ||
                (f->kind == FactorKind::Reduction &&
                 (uk == OpKind::Reduce || uk == OpKind::DotGeneral)) ||
                (f->kind == FactorKind::TopK && uk == OpKind::TopK) ||
                (f->kind == FactorKind::SortPrefix && sortPrefixLength(u)) ||
                f->kind == FactorKind::ScatterInto ||
                (f->kind == FactorKind::IndexedSelect && uk == OpKind::Gather));
  if (!takes) {
    if (!plan.stopper) {
      plan.stopper = u;
      plan.stopperOperand = use.getOperandNumber();
      plan.stopperDim = dim;
      plan.stopperWhy = f ? f->why : nullptr;
    }
    return;
  }
  if (f->kind == FactorKind::PassThrough) {
    reachedFrom[u] = from;
    addChunked(u, *f, /*isBackward=*/false);
    return;
  }
  sinkFrom[u] = from;
  if (f->kind == FactorKind::Reduction && uk == OpKind::Reduce)
    addSink(u, SinkKind::Reduce, *f);
  else if (f->kind == FactorKind::Reduction && uk == OpKind::DotGeneral)
    addSink(u, SinkKind::Dot, *f);
  else if (f->kind == FactorKind::TopK && uk == OpKind::TopK)
    addSink(u, SinkKind::TopK, *f);
  else if (f->kind == FactorKind::SortPrefix)
    addSink(u, SinkKind::SortTopK, *f);
  else if (f->kind == FactorKind::ScatterInto)
    addSink(u, SinkKind::Scatter, *f);
  else if (f->kind == FactorKind::IndexedSelect)
    addSink(u, SinkKind::GatherSelect, *f);
}

/// Every operand of a planned op is either chunked along the dimension the
/// op expects, or not chunked at all; and the op has no regions that see
/// the dimension.
bool RegionBuilder::checkOperandDims(Operation *op) {
  for (auto [i, o] : llvm::enumerate(op->getOperands())) {
    auto it = plan.dimOf.find(o);
    if (it == plan.dimOf.end() || it->second == plan.operandDims[op][i])
      continue;
    Operation *p = o.getDefiningOp();
    if (p && plan.backward.contains(p) && p != p0 && !forcedLeaves.contains(o)) {
      retry.conflict = o;
      return false;
    }
    for (Operation *q = p; q && reachedFrom.count(q);) {
      Operation *from = reachedFrom.lookup(q);
      if (plan.backward.contains(from) && from != p0) {
        retry.keepOut = q;
        return false;
      }
      q = from;
    }
    if (findSinkEdge(op) || (p && findSinkEdge(p)))
      return false;
    fail = {opLabel(op) + " needs a split value whole", op};
    return false;
  }
  std::optional<OpDimRule> rule = getOpDimRule(op);
  if (op->getNumRegions() && !plan.sinks.contains(op) && !(rule && rule->scalarRegions)) {
    fail = {opLabel(op) + " has regions memfit cannot split", op};
    return false;
  }
  return true;
}

/// Whether `op` is in the region because of a sink reached forward from a
/// pulled-in producer (not the seed's), directly or through ops reached
/// forward from it: self-attention's q = k = v = f(x) pulls f(x) in for the
/// queries' rows, and from there reaches the product with v (v = f(x) wv,
/// reshaped to heads) as a sink along the keys, which contradicts the rows'
/// split. Walks back through what pulled `op` in; records the edge to cut.
bool RegionBuilder::findSinkEdge(Operation *op) {
  for (unsigned steps = 0; op && steps < 10000; ++steps) {
    if (Operation *from = sinkFrom.lookup(op)) {
      if (!reachedFromPulledProducer(from))
        return false;
      retry.keepOutEdge = {op, from};
      return true;
    }
    Operation *next = pulledBy.lookup(op);
    op = next ? next : reachedFrom.lookup(op);
  }
  return false;
}

/// Whether `op` is a pulled-in producer other than the seed's, or was
/// reached forward from one (before reaching the seed).
bool RegionBuilder::reachedFromPulledProducer(Operation *op) const {
  for (unsigned steps = 0; op && op != p0 && steps < 10000; ++steps) {
    if (plan.backward.contains(op))
      return true;
    op = reachedFrom.lookup(op);
  }
  return false;
}

/// Chunked values read outside the region are assembled (plan.outputs);
/// producers pulled in from upstream are simply kept (and recomputed in the
/// loop). Returns the outside readers of what the region produces.
llvm::SetVector<Operation *> RegionBuilder::collectOutputs() {
  llvm::SetVector<Operation *> frontier;
  auto outsideUser = [&](OpOperand &use) -> Operation * {
    Operation *u = plan.block->findAncestorOpInBlock(*use.getOwner());
    if (!u || plan.later.contains(u))
      return nullptr;
    if (u == use.getOwner() && plan.inPlan(u))
      return nullptr;
    return u;
  };
  for (Operation *op : plan.chunked) {
    for (Value v : op->getResults()) {
      if (!plan.dimOf.count(v))
        continue;
      bool usedOutside = false;
      for (OpOperand &use : v.getUses())
        if (Operation *u = outsideUser(use)) {
          usedOutside = true;
          if (!plan.backward.contains(op))
            frontier.insert(u);
        }
      if (usedOutside && !plan.backward.contains(op))
        plan.outputs.push_back(v);
    }
  }
  // Not inside a layer loop's body: there the steps split the body's
  // regions one after another, and on the scanned decoder the online form
  // made later steps take more loops (6 instead of 3 at margin 1.25).
  bool topLevel = llvm::isa_and_present<func::FuncOp>(plan.block->getParentOp());
  plan.osm = matchOnlineSoftmax(plan, logSumExp && topLevel);
  bool contraction = plan.osm && plan.osm->dot;
  for (auto &[op, k] : plan.sinks) {
    // The online softmax's max and sum feed the region through their
    // chains by design (running max and sum). A logsumexp's sum is read
    // outside (its readers in the region are a second pass), and its max
    // feeds the region only through the shift (checkNoDependents).
    if (contraction && (op == plan.osm->maxR || op == plan.osm->sumR))
      continue;
    for (Value v : op->getResults())
      for (OpOperand &use : v.getUses())
        if (Operation *u = plan.block->findAncestorOpInBlock(*use.getOwner()))
          frontier.insert(u);
  }
  return frontier;
}

/// Nothing the region reads may depend on what it produces; the planned
/// ops that do are recorded as dependents (for a second pass).
bool RegionBuilder::checkNoDependents(const llvm::SetVector<Operation *> &frontier) {
  SmallVector<Operation *> &dependents = retry.dependents;
  llvm::DenseSet<Operation *> seen;
  SmallVector<Operation *> stack(frontier.begin(), frontier.end());
  // A logsumexp's shift reads the running max, not the loop's result.
  Operation *shift = plan.osm && !plan.osm->dot ? plan.osm->bm : nullptr;
  while (!stack.empty()) {
    Operation *u = stack.pop_back_val();
    if (!seen.insert(u).second || u == shift)
      continue;
    if (plan.inPlan(u)) {
      if (dependents.empty())
        fail = {opLabel(u) + " needs a value accumulated over the split "
                             "dimension (that would take a second pass)",
                u};
      dependents.push_back(u);
    }
    for (Value r : u->getResults())
      for (OpOperand &use : r.getUses())
        if (Operation *w = plan.block->findAncestorOpInBlock(*use.getOwner()))
          stack.push_back(w);
  }
  return dependents.empty();
}

/// Drops chunked ops that only the second pass reads (the loop would
/// compute them for nothing); false when no sink or output is left.
bool RegionBuilder::pruneUnused(Plan &plan) {
  llvm::DenseSet<Value> outputs(plan.outputs.begin(), plan.outputs.end());
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation *op : llvm::to_vector(plan.chunked)) {
      bool used = false;
      for (Value r : op->getResults()) {
        used |= outputs.contains(r);
        for (Operation *u : r.getUsers())
          used |= plan.inPlan(u);
      }
      if (used)
        continue;
      plan.chunked.erase(op);
      plan.backward.erase(op);
      plan.operandDims.erase(op);
      for (Value r : op->getResults())
        plan.dimOf.erase(r);
      changed = true;
    }
  }
  return !plan.sinks.empty() || !plan.outputs.empty();
}

/// Block order for the region and its outputs (a deterministic rewrite).
void RegionBuilder::sortOrder() {
  for (Operation &op : *plan.block)
    if (plan.inPlan(&op))
      plan.order.push_back(&op);
  llvm::DenseMap<Operation *, unsigned> pos;
  for (auto [i, op] : llvm::enumerate(plan.order))
    pos[op] = i;
  llvm::stable_sort(plan.outputs, [&](Value a, Value b) {
    return pos[a.getDefiningOp()] < pos[b.getDefiningOp()];
  });
}

bool RegionBuilder::build(Value seed, int64_t dim) {
  if (!startAt(seed, dim))
    return false;
  while (!work.empty() && ok) {
    Operation *op = work.front();
    work.pop_front();
    pullProducers(op);
    pushUsers(op);
  }
  if (!ok)
    return false;
  SmallVector<Operation *> all(plan.chunked.begin(), plan.chunked.end());
  for (auto &entry : plan.sinks)
    all.push_back(entry.first);
  for (Operation *op : all)
    if (!checkOperandDims(op))
      return false;
  if (!checkNoDependents(collectOutputs()))
    return false;
  if (plan.osm && !checkLogSumExpAlone(plan, *plan.osm)) {
    fail = {opLabel(plan.osm->exp) + " is read in the loop with the running max", plan.osm->exp};
    retry.noLogSumExp = true;
    return false;
  }
  // What the second pass would recompute behind a contraction is kept
  // when it fits stashBytes (Stash.h).
  stashForSecondPass(plan, stashBytes);
  if (!plan.later.empty() && !pruneUnused(plan)) {
    fail = {"nothing is left to split before the second pass", p0};
    return false;
  }
  sortOrder();
  return true;
}

} // namespace

std::optional<Plan> Planner::build(Value seed, int64_t dim, PlanFailure &fail) const {
  llvm::DenseSet<Value> forcedLeaves;
  llvm::DenseSet<Operation *> later, keptOut;
  EdgeSet keptOutEdges;
  bool logSumExp = true;
  for (int attempt = 0; attempt < 32; ++attempt) {
    Plan plan;
    plan.later = later;
    Retry retry;
    if (RegionBuilder(limit, stashBytes, forcedLeaves, keptOut, keptOutEdges, logSumExp, plan, fail, retry)
            .build(seed, dim))
      return plan;
    if (retry.noLogSumExp) {
      logSumExp = false;
      continue;
    }
    SmallVector<Operation *> &dependents = retry.dependents;
    // The seed itself needing the loop's sums leaves nothing to split.
    if (!dependents.empty() && !llvm::is_contained(dependents, seed.getDefiningOp())) {
      later.insert(dependents.begin(), dependents.end());
      continue;
    }
    if (!dependents.empty())
      return std::nullopt;
    if (retry.keepOutEdge.first) {
      keptOutEdges.insert(retry.keepOutEdge);
      continue;
    }
    if (retry.keepOut) {
      keptOut.insert(retry.keepOut);
      continue;
    }
    if (!retry.conflict)
      return std::nullopt;
    forcedLeaves.insert(retry.conflict);
  }
  fail.why = "the split region did not settle";
  return std::nullopt;
}

void detachSecondPass(const Plan &q) {
  if (q.later.empty())
    return;
  SmallVector<Operation *> later;
  for (Operation &op : *q.block)
    if (q.later.contains(&op))
      later.push_back(&op);
  for (Operation *op : later)
    for (Value r : op->getResults())
      for (OpOperand &use : llvm::make_early_inc_range(r.getUses())) {
        Operation *u = q.block->findAncestorOpInBlock(*use.getOwner());
        if (u && q.later.contains(u))
          continue;
        OpBuilder b(use.getOwner());
        auto t = tensorType(r);
        use.set(buildConstantSplat(b, op->getLoc(), t, 0.0));
      }
  for (Operation *op : llvm::reverse(later))
    op->erase();
  // Keep what the rewrite still refers to: the plan's ops, its seed (for
  // the location; pruning may have left it outside the plan) and the
  // online softmax's outside chains.
  llvm::DenseSet<Operation *> planned(q.order.begin(), q.order.end());
  planned.insert(q.seedOp);
  if (q.osm) {
    planned.insert(q.osm->bm);
    planned.insert(q.osm->bl);
    planned.insert(q.osm->chainM.begin(), q.osm->chainM.end());
    planned.insert(q.osm->chainL.begin(), q.osm->chainL.end());
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*q.block))) {
      if (op.hasTrait<OpTrait::IsTerminator>() || planned.contains(&op) ||
          !op.use_empty() || op.getNumResults() == 0)
        continue;
      op.erase();
      changed = true;
    }
  }
}

} // namespace memfit::split
