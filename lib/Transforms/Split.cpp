//===- Split.cpp - memfit-split --------------------------------------------===//
//
// Rewrites the computation around a tensor that pushes a function over its
// memory limit into a `stablehlo.while` over chunks of one dimension.
//
// The algorithm, per function (on a clone; the original is replaced only on
// success, so a failed split leaves the function exactly as it was):
//
//  1. Profile (MemoryProfile.h: fusion-aware, arguments + outputs + temps).
//     If the peak fits the limit, stop.
//  2. Take the largest tensors live at the peak (seeds). For each dimension
//     of a seed, plan a split region with the per-op dimension table
//     (DimMapping.h):
//       - backward, through ops that pass the dimension through, pulling in
//         producers that are cheap to recompute (fusible ops, splat
//         constants, iota) or large; other operands become leaves, sliced per
//         chunk with dynamic_slice, or are used whole;
//       - forward, through pass-through users; a user that reduces the
//         dimension (reduce, dot_general contracting it) or takes its top-k
//         (chlo.top_k along it, or a sort along it whose results are only
//         read through prefix slices [0:k]) is a sink that accumulates
//         across chunks;
//         any other use assembles the chunks (dynamic_update_slice into a
//         buffer carried by the loop).
//     A plan is rejected when an op of the region needs a value both whole
//     and in chunks, except that a user reached forward from a pulled-in
//     producer that needs it whole is kept out of the region (it reads the
//     original). Ops that need a sink's result (a second pass over the data,
//     as a gradient's backward part needs its forward's sums) are left out
//     of the loop reading the original values, and step 5 splits them in a
//     second loop that recomputes the region; such a plan is chosen only
//     when no one-pass plan fits.
//  3. Choose the chunk size (the rule): the largest chunk c in
//     [minChunk, N) such that, in the rewritten program's profile, the loop
//     (its body and the remainder step, with everything live around them)
//     stays within the limit when its temporaries are counted twice:
//       arguments + outputs + 2 * (modelled loop peak - arguments - outputs)
//     <= limit  (the margin covers buffers XLA materialises in loop bodies
//     that the fusion model does not predict). c is found by bisection on
//     rewritten clones. It is then rounded down to a multiple of 128 when
//     c >= 256, or of 8 when c >= 16 (dot_general and vector units work in
//     such tiles), and balanced: with n = ceil(N / c) chunks,
//     c' = ceil(N / n) rounded up to the same multiple replaces c when
//     c' <= c, which keeps n and shrinks the remainder. minChunk is 1, or k
//     for a running top-k. Among the feasible plans (seeds x dimensions) the
//     one with the largest c / N wins (fewest iterations), ties going to
//     plans without accumulation.
//  4. Rewrite: a while loop over the floor(N / c) full chunks (counter
//     tensor<i64>, cond `compare LT`, as jax writes lax.fori_loop) carrying
//     accumulators, output buffers and every value the region reads from
//     outside; then, when c does not divide N, a straight-line copy of the
//     body for the remainder (dynamic_slice clamps its start index, so a
//     last chunk that ran past the end would silently overlap). Replaced ops
//     are erased explicitly (MLIR's DCE keeps unregistered ops). Live-ins
//     that XLA would fuse (a transpose or broadcast of an argument) are
//     recomputed in the body rather than materialised as loop operands.
//  5. Repeat from 1 (several oversized regions; regions inside existing
//     loops are split inside their loop body). The steps are greedy; when
//     they get stuck, the probe that finds the smallest reachable limit
//     (lowest peak each step) is used if it fits.
//
// Accumulation: reduce with add/mul/max/min/and/or combines elementwise;
// any other reducer (variadic argmax/argmin) combines by reducing the stacked
// (accumulator, partial) pair with the op's own body. dot_general contracting
// the split dimension adds partial products. chlo.top_k keeps a running
// (values, indices): the chunk's top-k with indices offset by the chunk
// start is concatenated after the running set and a stable descending sort
// keeps the first k, so ties go to the lower index exactly as lax.top_k.
// A sort-based top-k (sort along the split dimension, every result read only
// through slices [0:k], as jnp.argsort(d)[:, :k] and torch-mlir write it)
// keeps a running sorted prefix the same way with the sort's own comparator:
// the chunk is sorted and its first k kept, appended after the running k
// and sorted again (stably, so earlier chunks win ties as in the full stable
// sort); after the loop the slices read the running prefix.
//
// Online softmax (matchOnlineSoftmax): when the split dimension is reduced
// by a reduce-max m and a reduce-add l of e = exp(x - bcast(chain(m))), and
// e / bcast(l) feeds only a dot_general contracting that dimension, the
// loop carries (m, l, acc) and rescales l and acc by
// exp(chain(m_old) - shift) per chunk, with shift = chain(m_new) (0 where it
// is -inf, and the correction 0 where chain(m_old) is -inf, so chunks whose
// keys are all masked add nothing); after the loop out = acc / l. Such a
// plan is chosen only when no plain plan fits (docs/split.md).
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/DimMapping.h"
#include "memfit/Analysis/MemoryProfile.h"
#include "memfit/IR/OpViews.h"
#include "memfit/Support/ByteSize.h"
#include "memfit/Support/Diagnostics.h"
#include "memfit/Transforms/Passes.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <deque>
#include <functional>
#include <limits>

namespace memfit {
#define GEN_PASS_DEF_MEMFITSPLIT
#include "memfit/Transforms/Passes.h.inc"
} // namespace memfit

using namespace mlir;
using namespace memfit;

namespace {

constexpr int64_t kInfeasible = std::numeric_limits<int64_t>::max();

int64_t bytesOf(Value v) { return getTensorBytes(v.getType()).value_or(0); }

RankedTensorType tensorType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}

RankedTensorType withDim(RankedTensorType t, int64_t dim, int64_t size) {
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = size;
  return RankedTensorType::get(shape, t.getElementType());
}

std::string opLabel(Operation *op) {
  std::string s = "'" + op->getName().getStringRef().str() + "'";
  std::string line = getUserSourceLine(op->getLoc());
  if (!line.empty())
    s += " (at " + line + ")";
  return s;
}

/// For a sort whose results are read only through slices starting at 0 with
/// stride 1 along its sort dimension (a sort-based top-k), the longest such
/// prefix; nullopt otherwise.
std::optional<int64_t> sortPrefixLength(Operation *sort) {
  int64_t sd = SortView(sort).getDimension();
  int64_t k = 0;
  for (Value r : sort->getResults())
    for (Operation *u : r.getUsers()) {
      if (getOpKind(u) != OpKind::Slice)
        return std::nullopt;
      SliceView s(u);
      if (s.getStartIndices()[sd] != 0 || s.getStrides()[sd] != 1)
        return std::nullopt;
      k = std::max(k, s.getLimitIndices()[sd]);
    }
  if (k == 0)
    return std::nullopt;
  return k;
}

bool isConstantLike(Operation *op) {
  OpKind k = getOpKind(op);
  return k == OpKind::Constant || k == OpKind::ArithConstant;
}

//===----------------------------------------------------------------------===//
// Plan
//===----------------------------------------------------------------------===//

enum class SinkKind { Reduce, Dot, TopK, SortTopK };

struct Plan {
  Block *block = nullptr;
  Operation *seedOp = nullptr;
  int64_t size = 0;     // extent of the split dimension
  int64_t minChunk = 1; // top-k needs chunks of at least k
  SmallVector<Operation *> order; // chunked ops and sinks, in block order
  llvm::DenseSet<Operation *> chunked;
  llvm::DenseMap<Operation *, SinkKind> sinks;
  llvm::DenseSet<Operation *> backward; // pulled in as producers
  llvm::DenseMap<Value, int64_t> dimOf; // chunked values and their split dim
  llvm::DenseMap<Operation *, SmallVector<int64_t>> operandDims;
  SmallVector<Value> outputs; // chunked values assembled whole
  Operation *stopper = nullptr; // first user that needed the dimension whole
  int64_t stopperDim = -1;
  /// Online softmax: the split dimension is reduced by a softmax-normalised
  /// contraction (softmax(s) . v over the split dimension), see
  /// matchOnlineSoftmax.
  struct OnlineSoftmax {
    Operation *maxR = nullptr, *sumR = nullptr, *dot = nullptr;
    Operation *bm = nullptr, *bl = nullptr, *div = nullptr, *exp = nullptr;
    SmallVector<Operation *> chainM, chainL; // outside ops m -> bm, l -> bl
    int64_t keyE = -1;                       // split dim of exp's result
  };
  std::optional<OnlineSoftmax> osm;
  /// Second pass: ops that need what the loop accumulates (a gradient's
  /// backward part reading the forward's reductions). They stay outside
  /// the loop, reading the region's values from the original ops, which a
  /// later split recomputes in chunks.
  llvm::DenseSet<Operation *> later;

  bool inPlan(Operation *op) const {
    return chunked.contains(op) || sinks.contains(op);
  }
};

Plan translatePlan(const Plan &p, IRMapping &m) {
  Plan q;
  q.block = m.lookup(p.block);
  q.seedOp = m.lookup(p.seedOp);
  q.size = p.size;
  q.minChunk = p.minChunk;
  for (Operation *op : p.order)
    q.order.push_back(m.lookup(op));
  for (Operation *op : p.chunked)
    q.chunked.insert(m.lookup(op));
  for (auto &[op, k] : p.sinks)
    q.sinks[m.lookup(op)] = k;
  for (Operation *op : p.backward)
    q.backward.insert(m.lookup(op));
  for (auto &[v, d] : p.dimOf)
    q.dimOf[m.lookup(v)] = d;
  for (auto &[op, dims] : p.operandDims)
    q.operandDims[m.lookup(op)] = dims;
  for (Value v : p.outputs)
    q.outputs.push_back(m.lookup(v));
  for (Operation *op : p.later)
    q.later.insert(m.lookup(op));
  if (p.osm) {
    Plan::OnlineSoftmax o = *p.osm;
    for (Operation **x : {&o.maxR, &o.sumR, &o.dot, &o.bm, &o.bl, &o.div, &o.exp})
      *x = m.lookup(*x);
    for (Operation *&x : o.chainM)
      x = m.lookup(x);
    for (Operation *&x : o.chainL)
      x = m.lookup(x);
    q.osm = o;
  }
  return q;
}

struct PlanFailure {
  std::string why;
  Operation *blocker = nullptr;
};

class Planner {
public:
  explicit Planner(int64_t limit) : limit(limit) {}

  /// Plans splitting `seed` along `dim`; on failure fills `fail`.
  /// Ops that need a sink's result are left for a second pass (see
  /// Plan::later) and the region is planned again without them.
  std::optional<Plan> build(Value seed, int64_t dim, PlanFailure &fail) {
    llvm::DenseSet<Value> forcedLeaves;
    llvm::DenseSet<Operation *> later, keptOut;
    for (int attempt = 0; attempt < 32; ++attempt) {
      Plan plan;
      plan.later = later;
      Value conflict;
      Operation *keepOut = nullptr;
      SmallVector<Operation *> dependents;
      if (tryBuild(seed, dim, forcedLeaves, keptOut, plan, conflict, keepOut, dependents,
                   fail))
        return plan;
      // The seed itself needing the loop's sums leaves nothing to split.
      if (!dependents.empty() && !llvm::is_contained(dependents, seed.getDefiningOp())) {
        later.insert(dependents.begin(), dependents.end());
        continue;
      }
      if (!dependents.empty())
        return std::nullopt;
      if (keepOut) {
        keptOut.insert(keepOut);
        continue;
      }
      if (!conflict)
        return std::nullopt;
      forcedLeaves.insert(conflict);
    }
    fail.why = "the split region did not settle";
    return std::nullopt;
  }

private:
  int64_t limit;

  /// A value computed from splat constants only (cloned into loop bodies).
  static bool constantDerived(Value v, int depth = 0) {
    Operation *d = v.getDefiningOp();
    if (!d || depth > 4)
      return false;
    OpKind k = getOpKind(d);
    if (k == OpKind::Constant)
      return ConstantView(d).getSplatValue().has_value();
    if (k == OpKind::BroadcastInDim || k == OpKind::Convert || k == OpKind::Reshape)
      return constantDerived(d->getOperand(0), depth + 1);
    return false;
  }

  /// The outside ops from `root` (a sink result) up to the single planned op
  /// they all feed (returned); layout ops and maximum/minimum with
  /// constant-derived operands only. Null when the uses go anywhere else.
  static Operation *followChain(const Plan &plan, Value root,
                                SmallVector<Operation *> &chain) {
    Operation *target = nullptr;
    SmallVector<Value> work{root};
    llvm::DenseSet<Operation *> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *u : v.getUsers()) {
        if (u->getBlock() != plan.block)
          return nullptr;
        if (plan.inPlan(u)) {
          if (target && target != u)
            return nullptr;
          target = u;
          continue;
        }
        if (!seen.insert(u).second)
          continue;
        llvm::StringRef n = u->getName().getStringRef();
        bool layout = n == "stablehlo.broadcast_in_dim" || n == "stablehlo.reshape" ||
                      n == "stablehlo.transpose" || n == "stablehlo.convert";
        bool minmax = n == "stablehlo.maximum" || n == "stablehlo.minimum";
        if (!layout && !minmax)
          return nullptr;
        if (minmax)
          for (Value o : u->getOperands())
            if (o != v && !constantDerived(o))
              return nullptr;
        chain.push_back(u);
        work.push_back(u->getResult(0));
      }
    }
    llvm::sort(chain, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    return target;
  }

  /// Recognises, structurally, softmax over the split dimension feeding a
  /// contraction over it:
  ///   m = reduce max over k (sink); X = chain(m) (outside layout ops, max
  ///   with constants); bm = broadcast_in_dim(X) (planned); e = exp(x - bm);
  ///   l = reduce add of e over k (sink); bl = broadcast(chain(l)); p = e / bl;
  ///   out = dot_general(p, v) contracting k only (sink).
  /// Then the loop carries (m, l, acc) and rescales (online softmax).
  static std::optional<Plan::OnlineSoftmax> matchOnlineSoftmax(const Plan &plan) {
    for (auto &[op, kind] : plan.sinks) {
      if (kind != SinkKind::Reduce)
        continue;
      ReduceView rm(op);
      if (rm.getNumInputs() != 1 || rm.getReducerKind() != ReducerKind::Max ||
          rm.getDimensions().size() != 1)
        continue;
      Plan::OnlineSoftmax o;
      o.maxR = op;
      o.bm = followChain(plan, op->getResult(0), o.chainM);
      if (!o.bm || getOpKind(o.bm) != OpKind::BroadcastInDim || !o.bm->hasOneUse() ||
          plan.dimOf.count(o.bm->getOperand(0)))
        continue;
      Operation *sub = *o.bm->getUsers().begin();
      if (sub->getName().getStringRef() != "stablehlo.subtract" ||
          sub->getOperand(1) != o.bm->getResult(0) ||
          sub->getOperand(0) == o.bm->getResult(0) || !sub->hasOneUse() ||
          !plan.chunked.contains(sub))
        continue;
      o.exp = *sub->getUsers().begin();
      if (o.exp->getName().getStringRef() != "stablehlo.exponential" ||
          !plan.chunked.contains(o.exp))
        continue;
      o.keyE = plan.dimOf.lookup(o.exp->getResult(0));
      for (Operation *u : o.exp->getUsers()) {
        auto it = plan.sinks.find(u);
        if (it != plan.sinks.end() && it->second == SinkKind::Reduce) {
          ReduceView rl(u);
          if (rl.getNumInputs() == 1 && rl.getReducerKind() == ReducerKind::Add &&
              rl.getDimensions() == SmallVector<int64_t>{o.keyE} && !o.sumR)
            o.sumR = u;
          else
            o.sumR = o.div = o.exp; // poison
        } else if (u->getName().getStringRef() == "stablehlo.divide" &&
                   u->getOperand(0) == o.exp->getResult(0) && !o.div &&
                   plan.chunked.contains(u)) {
          o.div = u;
        } else {
          o.div = o.exp; // poison
        }
      }
      if (!o.sumR || !o.div || o.sumR == o.exp || o.div == o.exp)
        continue;
      o.bl = followChain(plan, o.sumR->getResult(0), o.chainL);
      if (!o.bl || o.div->getOperand(1) != o.bl->getResult(0) || !o.bl->hasOneUse() ||
          getOpKind(o.bl) != OpKind::BroadcastInDim ||
          plan.dimOf.count(o.bl->getOperand(0)) || !o.div->hasOneUse())
        continue;
      o.dot = *o.div->getUsers().begin();
      auto dit = plan.sinks.find(o.dot);
      if (dit == plan.sinks.end() || dit->second != SinkKind::Dot)
        continue;
      DotDims dd = DotGeneralView(o.dot).getDims();
      bool lhs = o.dot->getOperand(0) == o.div->getResult(0);
      if (o.dot->getOperand(0) == o.dot->getOperand(1) ||
          (lhs ? dd.lhsContract : dd.rhsContract) != SmallVector<int64_t>{o.keyE})
        continue;
      // bm's operand X covers every non-split dim of e with its full size.
      auto et = tensorType(o.exp->getResult(0));
      auto xt = tensorType(o.bm->getOperand(0));
      SmallVector<int64_t> bd = BroadcastInDimView(o.bm).getBroadcastDimensions();
      SmallVector<bool> covered(et.getRank(), false);
      bool okX = true;
      for (auto [i, d] : llvm::enumerate(bd)) {
        if (d == o.keyE) {
          okX &= xt.getDimSize(i) == 1;
          continue;
        }
        okX &= xt.getDimSize(i) == et.getDimSize(d);
        covered[d] = true;
      }
      for (int64_t d = 0; d < et.getRank(); ++d)
        okX &= d == o.keyE || covered[d];
      if (!okX || !llvm::isa<FloatType>(et.getElementType()))
        continue;
      return o;
    }
    return std::nullopt;
  }

  bool shouldPull(const Plan &plan, Value o,
                  const llvm::DenseSet<Value> &forcedLeaves) {
    auto res = llvm::dyn_cast<OpResult>(o);
    if (!res || forcedLeaves.contains(o))
      return false;
    Operation *p = res.getOwner();
    if (p->getBlock() != plan.block)
      return false;
    OpKind kind = getOpKind(p);
    if (kind == OpKind::Constant) {
      auto dense = llvm::dyn_cast<DenseElementsAttr>(p->getAttr("value"));
      return dense && dense.isSplat();
    }
    if (kind == OpKind::ArithConstant)
      return false;
    if (kind == OpKind::Iota)
      return true;
    const OpInfo *info = lookupOpInfo(p);
    if (info && info->fusible)
      return true;
    if (bytesOf(o) * 4 >= limit)
      return true;
    for (Operation *u : o.getUsers())
      if (!plan.inPlan(u))
        return false;
    return true;
  }

  /// Drops chunked ops that only the second pass reads (the loop would
  /// compute them for nothing); false when no sink or output is left.
  static bool pruneUnused(Plan &plan) {
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

  /// A user reached forward from a producer pulled in backward may need
  /// the producer's value whole (attention in a transformer: the keys are
  /// computed from the same hidden rows as the queries). On such a conflict
  /// `keepOut` names that user: it stays outside the region and reads the
  /// original producer.
  bool tryBuild(Value seed, int64_t dim, const llvm::DenseSet<Value> &forcedLeaves,
                const llvm::DenseSet<Operation *> &keptOut, Plan &plan, Value &conflict,
                Operation *&keepOut, SmallVectorImpl<Operation *> &dependents,
                PlanFailure &fail) {
    auto res = llvm::dyn_cast<OpResult>(seed);
    if (!res) {
      fail.why = "it is a block argument";
      return false;
    }
    Operation *p0 = res.getOwner();
    plan.block = p0->getBlock();
    plan.seedOp = p0;
    std::optional<OpDimRule> rule0 = getOpDimRule(p0);
    if (!rule0) {
      fail = {"memfit has no dimension rule for " + opLabel(p0), p0};
      return false;
    }
    const DimFactor *f0 = rule0->forResult(res.getResultNumber(), dim);
    if (!f0 || f0->kind != FactorKind::PassThrough) {
      fail = {"dimension " + std::to_string(dim) + " of " + opLabel(p0) +
                  " cannot be chunked",
              p0};
      return false;
    }
    plan.size = f0->size;
    std::deque<Operation *> work;
    bool ok = true;
    llvm::DenseMap<Operation *, Operation *> reachedFrom; // forward adds

    auto addChunked = [&](Operation *op, const DimFactor &f, bool isBackward) {
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
    };
    auto addSink = [&](Operation *op, SinkKind k, const DimFactor &f) {
      plan.sinks[op] = k;
      plan.operandDims[op] = SmallVector<int64_t>(f.operandDims.begin(), f.operandDims.end());
      if (k == SinkKind::TopK)
        plan.minChunk = std::max(plan.minChunk, TopKView(op).getK());
      if (k == SinkKind::SortTopK)
        plan.minChunk = std::max(plan.minChunk, *sortPrefixLength(op));
      work.push_back(op);
    };

    addChunked(p0, *f0, /*isBackward=*/false);
    while (!work.empty() && ok) {
      Operation *op = work.front();
      work.pop_front();
      // Backward: producers of chunked operands.
      for (auto [i, o] : llvm::enumerate(op->getOperands())) {
        int64_t e = plan.operandDims[op][i];
        if (e < 0 || plan.dimOf.count(o) || !shouldPull(plan, o, forcedLeaves))
          continue;
        auto r = llvm::cast<OpResult>(o);
        Operation *p = r.getOwner();
        if (plan.inPlan(p) || plan.later.contains(p))
          continue; // consistency is checked below
        std::optional<OpDimRule> rule = getOpDimRule(p);
        if (!rule)
          continue;
        const DimFactor *f = rule->forResult(r.getResultNumber(), e);
        if (f && f->kind == FactorKind::PassThrough && f->size == plan.size)
          addChunked(p, *f, /*isBackward=*/true);
      }
      // Forward: users of chunked results.
      if (!plan.chunked.contains(op))
        continue;
      OpKind kind = getOpKind(op);
      if (kind == OpKind::Constant || kind == OpKind::Iota)
        continue;
      for (Value v : op->getResults()) {
        auto it = plan.dimOf.find(v);
        if (it == plan.dimOf.end())
          continue;
        int64_t d = it->second;
        for (OpOperand &use : v.getUses()) {
          Operation *u = use.getOwner();
          if (u->getBlock() != plan.block || u->hasTrait<OpTrait::IsTerminator>() ||
              plan.inPlan(u) || plan.later.contains(u) || keptOut.contains(u))
            continue;
          std::optional<OpDimRule> rule = getOpDimRule(u);
          const DimFactor *f =
              rule ? rule->forOperand(use.getOperandNumber(), d) : nullptr;
          OpKind uk = getOpKind(u);
          bool takes = f && f->size == plan.size &&
                       (f->kind == FactorKind::PassThrough ||
                        (f->kind == FactorKind::Reduction &&
                         (uk == OpKind::Reduce || uk == OpKind::DotGeneral)) ||
                        (f->kind == FactorKind::TopK && uk == OpKind::TopK) ||
                        (f->kind == FactorKind::SortPrefix && sortPrefixLength(u)));
          if (!takes) {
            if (!plan.stopper) {
              plan.stopper = u;
              plan.stopperDim = d;
            }
            continue;
          }
          if (f->kind == FactorKind::PassThrough) {
            reachedFrom[u] = op;
            addChunked(u, *f, /*isBackward=*/false);
          }
          else if (f->kind == FactorKind::Reduction && uk == OpKind::Reduce)
            addSink(u, SinkKind::Reduce, *f);
          else if (f->kind == FactorKind::Reduction && uk == OpKind::DotGeneral)
            addSink(u, SinkKind::Dot, *f);
          else if (f->kind == FactorKind::TopK && uk == OpKind::TopK)
            addSink(u, SinkKind::TopK, *f);
          else if (f->kind == FactorKind::SortPrefix)
            addSink(u, SinkKind::SortTopK, *f);
        }
      }
    }
    if (!ok)
      return false;

    // Every operand of a planned op is either chunked along the dimension
    // the op expects, or not chunked at all.
    SmallVector<Operation *> all(plan.chunked.begin(), plan.chunked.end());
    for (auto &entry : plan.sinks)
      all.push_back(entry.first);
    for (Operation *op : all) {
      for (auto [i, o] : llvm::enumerate(op->getOperands())) {
        auto it = plan.dimOf.find(o);
        if (it == plan.dimOf.end() || it->second == plan.operandDims[op][i])
          continue;
        Operation *p = o.getDefiningOp();
        if (p && plan.backward.contains(p) && p != p0 && !forcedLeaves.contains(o)) {
          conflict = o;
          return false;
        }
        for (Operation *q = p; q && reachedFrom.count(q);) {
          Operation *from = reachedFrom.lookup(q);
          if (plan.backward.contains(from) && from != p0) {
            keepOut = q;
            return false;
          }
          q = from;
        }
        fail = {opLabel(op) + " needs a split value whole", op};
        return false;
      }
      std::optional<OpDimRule> rule = getOpDimRule(op);
      if (op->getNumRegions() && !plan.sinks.contains(op) &&
          !(rule && rule->scalarRegions)) {
        fail = {opLabel(op) + " has regions memfit cannot split", op};
        return false;
      }
    }

    // Chunked values read outside the region are assembled; producers pulled
    // in from upstream are simply kept (and recomputed in the loop).
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
    plan.osm = matchOnlineSoftmax(plan);
    for (auto &[op, k] : plan.sinks) {
      // The online softmax's max and sum feed the region through their
      // chains by design (running max and sum).
      if (plan.osm && (op == plan.osm->maxR || op == plan.osm->sumR))
        continue;
      for (Value v : op->getResults())
        for (OpOperand &use : v.getUses())
          if (Operation *u = plan.block->findAncestorOpInBlock(*use.getOwner()))
            frontier.insert(u);
    }
    // Nothing the region reads may depend on what it produces.
    llvm::DenseSet<Operation *> seen;
    SmallVector<Operation *> stack(frontier.begin(), frontier.end());
    while (!stack.empty()) {
      Operation *u = stack.pop_back_val();
      if (!seen.insert(u).second)
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
    if (!dependents.empty())
      return false;
    if (!plan.later.empty() && !pruneUnused(plan)) {
      fail = {"nothing is left to split before the second pass", p0};
      return false;
    }
    // Sorted outputs make the rewrite deterministic.
    for (Operation &op : *plan.block)
      if (plan.inPlan(&op))
        plan.order.push_back(&op);
    llvm::DenseMap<Operation *, unsigned> pos;
    for (auto [i, op] : llvm::enumerate(plan.order))
      pos[op] = i;
    llvm::stable_sort(plan.outputs, [&](Value a, Value b) {
      return pos[a.getDefiningOp()] < pos[b.getDefiningOp()];
    });
    return true;
  }
};

//===----------------------------------------------------------------------===//
// Rewrite
//===----------------------------------------------------------------------===//

Value scalarI64(OpBuilder &b, Location loc, int64_t v) {
  return buildScalarI64(b, loc, v);
}

Value zerosLike(OpBuilder &b, Location loc, RankedTensorType t) {
  Value zero = buildConstantSplat(b, loc, RankedTensorType::get({}, t.getElementType()), 0);
  return buildBroadcastInDim(b, loc, t, zero, {});
}

/// `start` (tensor<i64>) converted and broadcast to `t`.
Value broadcastStart(OpBuilder &b, Location loc, Value start, RankedTensorType t) {
  auto scalar = RankedTensorType::get({}, t.getElementType());
  Value s = start;
  if (scalar != start.getType())
    s = buildConvert(b, loc, scalar, start);
  return buildBroadcastInDim(b, loc, t, s, {});
}

llvm::StringRef combinerName(ReducerKind k) {
  switch (k) {
  case ReducerKind::Add: return "stablehlo.add";
  case ReducerKind::Mul: return "stablehlo.multiply";
  case ReducerKind::Max: return "stablehlo.maximum";
  case ReducerKind::Min: return "stablehlo.minimum";
  case ReducerKind::And: return "stablehlo.and";
  case ReducerKind::Or: return "stablehlo.or";
  case ReducerKind::Other: return "";
  }
  return "";
}

/// A stable sort of (values, indices) along `dim`, largest value first.
Operation *sortDescending(OpBuilder &b, Location loc, Value values, Value indices,
                          int64_t dim) {
  Operation *sort = buildGenericOp(
      b, loc, "stablehlo.sort", {values, indices},
      {values.getType(), indices.getType()},
      {b.getNamedAttr("dimension", b.getI64IntegerAttr(dim)),
       b.getNamedAttr("is_stable", b.getBoolAttr(true))},
      /*numRegions=*/1);
  auto vs = RankedTensorType::get({}, tensorType(values).getElementType());
  auto is = RankedTensorType::get({}, tensorType(indices).getElementType());
  Block *body = b.createBlock(&sort->getRegion(0), {}, {vs, vs, is, is},
                              {loc, loc, loc, loc});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(body);
    Value gt = buildCompare(b, loc, body->getArgument(0), body->getArgument(1), "GT",
                            llvm::isa<FloatType>(vs.getElementType()) ? "TOTALORDER"
                                                                        : "SIGNED");
    buildReturn(b, loc, gt);
  }
  b.setInsertionPointAfter(sort);
  return sort;
}

/// The first `len` entries of `v` along `dim`.
Value prefixAlong(OpBuilder &b, Location loc, Value v, int64_t dim, int64_t len) {
  auto t = tensorType(v);
  SmallVector<int64_t> lo(t.getRank(), 0), hi(t.getShape()), st(t.getRank(), 1);
  hi[dim] = len;
  return buildSlice(b, loc, v, lo, hi, st);
}

/// `sort` (with its comparator) applied to `operands`, whose extent along
/// the sort dimension is `len`; always stable, so that among equal keys the
/// operands' order (running prefix first) decides, as in one stable sort.
Operation *cloneSortOn(OpBuilder &b, Operation *sort, ValueRange operands, int64_t len) {
  int64_t sd = SortView(sort).getDimension();
  Operation *y = b.clone(*sort);
  y->setOperands(operands);
  for (OpResult r : y->getResults())
    r.setType(withDim(tensorType(r), sd, len));
  setInherentAttr(y, "is_stable", b.getBoolAttr(true));
  return y;
}

/// The running top-k's next state (chlo.top_k and sort-based top-k alike):
/// the first k along `dim` of `merged` (a stable sort of the running k
/// followed by the chunk's best, `top`); on the first iteration, when the
/// chunk holds k, the chunk's own (the running state starts as zeros).
SmallVector<Value> keepFirstK(OpBuilder &b, Location loc, Operation *merged, ValueRange top,
                              int64_t dim, int64_t k, Value isFirst) {
  SmallVector<Value> next;
  for (auto [r, t] : llvm::zip(merged->getResults(), top)) {
    Value m = prefixAlong(b, loc, r, dim, k);
    if (isFirst && tensorType(t).getDimSize(dim) == k)
      m = buildSelect(b, loc, isFirst, t, m);
    next.push_back(m);
  }
  return next;
}

/// `src`, whose dims are dims `srcE` of a tensor E, broadcast to `target`
/// where E dim j lands at target dim eToT[j] (transposing as needed).
Value mapToTarget(OpBuilder &b, Location loc, Value src, ArrayRef<int64_t> srcE,
                  RankedTensorType target, ArrayRef<int64_t> eToT) {
  SmallVector<int64_t> tDims;
  for (int64_t e : srcE)
    tDims.push_back(eToT[e]);
  SmallVector<int64_t> perm(tDims.size());
  for (unsigned i = 0; i < perm.size(); ++i)
    perm[i] = i;
  llvm::stable_sort(perm, [&](int64_t a, int64_t c) { return tDims[a] < tDims[c]; });
  bool identity = true;
  for (unsigned i = 0; i < perm.size(); ++i)
    identity &= perm[i] == int64_t(i);
  if (!identity)
    src = buildTranspose(b, loc, src, perm);
  SmallVector<int64_t> sorted;
  for (int64_t i : perm)
    sorted.push_back(tDims[i]);
  auto st = tensorType(src);
  return buildBroadcastInDim(
      b, loc, RankedTensorType::get(target.getShape(), st.getElementType()), src, sorted);
}

/// Where each dim of the online softmax's e lands in its dot's result (-1 for
/// the split dim).
SmallVector<int64_t> expToDotResult(const Plan::OnlineSoftmax &o) {
  DotDims dd = DotGeneralView(o.dot).getDims();
  bool lhs = o.dot->getOperand(0) == o.div->getResult(0);
  auto rank = [&](Value v) { return tensorType(v).getRank(); };
  int64_t lr = rank(o.dot->getOperand(0));
  int64_t nb = dd.lhsBatch.size();
  int64_t lhsFree = lr - nb - int64_t(dd.lhsContract.size());
  ArrayRef<int64_t> batch = lhs ? dd.lhsBatch : dd.rhsBatch;
  ArrayRef<int64_t> contract = lhs ? dd.lhsContract : dd.rhsContract;
  int64_t r = rank(o.div->getResult(0));
  SmallVector<int64_t> map(r, -1);
  int64_t free = nb + (lhs ? 0 : lhsFree);
  for (int64_t j = 0; j < r; ++j) {
    if (llvm::is_contained(contract, j))
      continue;
    auto it = llvm::find(batch, j);
    map[j] = it != batch.end() ? it - batch.begin() : free++;
  }
  return map;
}

/// Where each dim of e lands in the reduce-over-k result l.
SmallVector<int64_t> expToSum(const Plan::OnlineSoftmax &o) {
  int64_t r = tensorType(o.exp->getResult(0)).getRank();
  SmallVector<int64_t> map(r, -1);
  for (int64_t j = 0; j < r; ++j)
    if (j != o.keyE)
      map[j] = j < o.keyE ? j : j - 1;
  return map;
}

/// The dims of e that the sum l holds, in order.
SmallVector<int64_t> sumDimsOfExp(const Plan::OnlineSoftmax &o) {
  SmallVector<int64_t> d;
  for (int64_t j = 0; j < tensorType(o.exp->getResult(0)).getRank(); ++j)
    if (j != o.keyE)
      d.push_back(j);
  return d;
}

class Rewriter {
public:
  Rewriter(const Plan &plan) : plan(plan) {}

  /// Rewrites the plan's region with chunks of `chunk`.
  void apply(int64_t chunk);

private:
  const Plan &plan;
  SmallVector<Value> liveIns;
  /// Fusible producers of live-ins recomputed in the loop body (block
  /// order) instead of carried: see rematerialiseLiveIns.
  SmallVector<Operation *> remat;

  void rematerialiseLiveIns(llvm::SetVector<Value> &ins);
  void cloneRemat(OpBuilder &b, IRMapping &outer);

  SmallVector<Value> initialState(OpBuilder &b, Location loc);
  SmallVector<Value> emitChunk(OpBuilder &b, Location loc, IRMapping &outer,
                               Value start, int64_t c, Value isFirst,
                               ValueRange state);
  void emitOnlineMax(OpBuilder &b, Location loc, Value mOld, Value partial,
                     SmallVector<Value> &next, Value &shiftX, Value &corrL,
                     Value &corrAcc);
};

/// Running max m_new = max(m_old, rowmax(chunk)); the shift applied to the
/// chunk is X_new = chain(m_new) with -inf replaced by 0 (a chunk whose keys
/// are all masked must not compute exp(-inf - -inf)); the correction of what
/// was accumulated is exp(X_old - shift), 0 where X_old is -inf (nothing
/// accumulated yet; exp(-inf - shift) would be NaN or overflow otherwise).
void Rewriter::emitOnlineMax(OpBuilder &b, Location loc, Value mOld, Value partial,
                             SmallVector<Value> &next, Value &shiftX, Value &corrL,
                             Value &corrAcc) {
  const Plan::OnlineSoftmax &o = *plan.osm;
  Value mNew = buildElementwise(b, loc, "stablehlo.maximum", {mOld, partial});
  next.push_back(mNew);
  std::function<void(Value, IRMapping &)> cloneConst = [&](Value v, IRMapping &cm) {
    if (cm.contains(v))
      return;
    Operation *d = v.getDefiningOp();
    for (Value w : d->getOperands())
      cloneConst(w, cm);
    b.clone(*d, cm);
  };
  auto chain = [&](Value m) -> Value {
    IRMapping cm;
    cm.map(o.maxR->getResult(0), m);
    for (Operation *ch : o.chainM) {
      for (Value w : ch->getOperands())
        cloneConst(w, cm);
      b.clone(*ch, cm);
    }
    return cm.lookupOrDefault(o.bm->getOperand(0));
  };
  Value xOld = chain(mOld), xNew = chain(mNew);
  auto xt = tensorType(xNew);
  auto scalar = RankedTensorType::get({}, xt.getElementType());
  Value negInf = buildBroadcastInDim(
      b, loc, xt, buildConstantSplat(b, loc, scalar, -std::numeric_limits<double>::infinity()), {});
  Value zero = buildBroadcastInDim(b, loc, xt, buildConstantSplat(b, loc, scalar, 0.0), {});
  shiftX = buildSelect(b, loc, buildCompare(b, loc, xNew, negInf, "EQ", "FLOAT"), zero, xNew);
  Value e = buildElementwise(
      b, loc, "stablehlo.exponential",
      {buildElementwise(b, loc, "stablehlo.subtract", {xOld, shiftX})});
  Value corrX = buildSelect(b, loc, buildCompare(b, loc, xOld, negInf, "EQ", "FLOAT"), zero, e);
  // Drop bm's size-1 split dim; the rest are dims of e.
  SmallVector<int64_t> bd = BroadcastInDimView(o.bm).getBroadcastDimensions();
  SmallVector<int64_t> srcE, shape;
  for (auto [i, d] : llvm::enumerate(bd))
    if (d != o.keyE) {
      srcE.push_back(d);
      shape.push_back(xt.getDimSize(i));
    }
  Value corr = corrX;
  if (int64_t(shape.size()) != xt.getRank())
    corr = buildReshape(b, loc, RankedTensorType::get(shape, xt.getElementType()), corrX);
  corrL = mapToTarget(b, loc, corr, srcE, tensorType(o.sumR->getResult(0)), expToSum(o));
  corrAcc = mapToTarget(b, loc, corr, srcE, tensorType(o.dot->getResult(0)),
                        expToDotResult(o));
}

/// A loop operand is a buffer, so a live-in that XLA would have fused into
/// the region (a transpose, broadcast or reshape of an argument) would be
/// materialised whole just to enter the loop. Such a value is recomputed in
/// the body from its operands when they take no more bytes than it does
/// (operands the loop carries anyway cost nothing). Applied repeatedly.
void Rewriter::rematerialiseLiveIns(llvm::SetVector<Value> &ins) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Value v : ins.takeVector()) {
      Operation *def = v.getDefiningOp();
      const OpInfo *info = def ? lookupOpInfo(def) : nullptr;
      bool candidate = info && info->fusible && def->getNumRegions() == 0 &&
                       def->getBlock() == plan.block && !plan.inPlan(def) &&
                       def->getNumResults() == 1;
      int64_t added = 0;
      if (candidate)
        for (Value o : def->getOperands()) {
          Operation *d = o.getDefiningOp();
          if (!(d && isConstantLike(d)) && !ins.contains(o))
            added += bytesOf(o);
        }
      if (!candidate || added > bytesOf(v)) {
        ins.insert(v);
        continue;
      }
      remat.push_back(def);
      for (Value o : def->getOperands()) {
        Operation *d = o.getDefiningOp();
        if (!(d && isConstantLike(d)))
          ins.insert(o);
      }
      changed = true;
    }
  }
  llvm::sort(remat, [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
}

/// Recomputes the rematerialised live-ins at `b` (a loop body, or the
/// remainder step: there too the original would stay live across the loop).
void Rewriter::cloneRemat(OpBuilder &b, IRMapping &outer) {
  for (Operation *op : remat) {
    for (Value o : op->getOperands())
      if (!outer.contains(o))
        b.clone(*o.getDefiningOp(), outer); // a constant
    b.clone(*op, outer);
  }
}

SmallVector<Value> Rewriter::initialState(OpBuilder &b, Location loc) {
  SmallVector<Value> state;
  for (Operation *op : plan.order) {
    auto it = plan.sinks.find(op);
    if (it == plan.sinks.end())
      continue;
    if (it->second == SinkKind::Reduce) {
      ReduceView r(op);
      for (auto [res, init] : llvm::zip(op->getResults(), r.getInitValues()))
        state.push_back(buildBroadcastInDim(b, loc, tensorType(res), init, {}));
    } else if (it->second == SinkKind::SortTopK) {
      int64_t sd = SortView(op).getDimension(), k = *sortPrefixLength(op);
      for (Value res : op->getResults())
        state.push_back(zerosLike(b, loc, withDim(tensorType(res), sd, k)));
    } else {
      for (Value res : op->getResults())
        state.push_back(zerosLike(b, loc, tensorType(res)));
    }
  }
  for (Value v : plan.outputs)
    state.push_back(zerosLike(b, loc, tensorType(v)));
  return state;
}

SmallVector<Value> Rewriter::emitChunk(OpBuilder &b, Location loc, IRMapping &outer,
                                       Value start, int64_t c, Value isFirst,
                                       ValueRange state) {
  llvm::DenseMap<Value, Value> chunkOf;
  llvm::DenseMap<std::pair<Value, int64_t>, Value> leafCache;
  Value zero = scalarI64(b, loc, 0);

  auto starts = [&](int64_t rank, int64_t dim) {
    SmallVector<Value> s(rank, zero);
    s[dim] = start;
    return s;
  };
  auto whole = [&](Value o) -> Value {
    if (Value m = outer.lookupOrNull(o))
      return m;
    Operation *def = o.getDefiningOp();
    assert(def && isConstantLike(def) && "live-in not mapped");
    Operation *copy = b.clone(*def);
    outer.map(def->getResults(), copy->getResults());
    return copy->getResult(llvm::cast<OpResult>(o).getResultNumber());
  };
  auto chunkOperand = [&](Value o, int64_t e) -> Value {
    auto it = chunkOf.find(o);
    if (it != chunkOf.end())
      return it->second;
    auto key = std::make_pair(o, e);
    auto lc = leafCache.find(key);
    if (lc != leafCache.end())
      return lc->second;
    auto t = tensorType(o);
    SmallVector<int64_t> sizes(t.getShape());
    sizes[e] = c;
    Value s = buildDynamicSlice(b, loc, whole(o), starts(t.getRank(), e), sizes);
    leafCache[key] = s;
    return s;
  };

  SmallVector<Value> next;
  unsigned si = 0;
  // Online softmax: the chunk's shift (in the shape of bm's operand) and the
  // correction of the running sum and accumulator.
  Value shiftX, corrL, corrAcc;
  for (Operation *x : plan.order) {
    if (plan.osm) {
      const Plan::OnlineSoftmax &o = *plan.osm;
      if (x == o.bl)
        continue; // the division by the sum happens after the loop
      if (x == o.div) {
        chunkOf[x->getResult(0)] = chunkOf.lookup(o.exp->getResult(0));
        continue;
      }
      if (x == o.bm) {
        Operation *y = b.clone(*x);
        y->setOperands(ValueRange{shiftX});
        y->getResult(0).setType(
            withDim(tensorType(x->getResult(0)), plan.dimOf.lookup(x->getResult(0)), c));
        chunkOf[x->getResult(0)] = y->getResult(0);
        continue;
      }
    }
    SmallVector<Value> operands;
    for (auto [i, o] : llvm::enumerate(x->getOperands())) {
      int64_t e = plan.operandDims.lookup(x)[i];
      operands.push_back(e >= 0 ? chunkOperand(o, e) : whole(o));
    }
    OpKind kind = getOpKind(x);
    auto sinkIt = plan.sinks.find(x);
    if (sinkIt == plan.sinks.end()) {
      // A chunked op: same op on chunk types.
      if (kind == OpKind::Constant) {
        auto dense = llvm::cast<DenseElementsAttr>(x->getAttr("value"));
        auto t = withDim(tensorType(x->getResult(0)), plan.dimOf.lookup(x->getResult(0)), c);
        Value v = buildGenericOp(b, x->getLoc(), "stablehlo.constant", {}, {t},
                                 {b.getNamedAttr("value", dense.resizeSplat(t))})
                      ->getResult(0);
        chunkOf[x->getResult(0)] = v;
        continue;
      }
      Operation *y = b.clone(*x);
      y->setOperands(operands);
      // A Shardy rule (jax's LAPACK calls carry one) states the full sizes.
      y->removeAttr("sdy.sharding_rule");
      for (auto [r, res] : llvm::enumerate(x->getResults())) {
        auto it = plan.dimOf.find(res);
        if (it != plan.dimOf.end())
          y->getResult(r).setType(withDim(tensorType(res), it->second, c));
      }
      int64_t d = plan.dimOf.lookup(x->getResult(0));
      if (kind == OpKind::Slice) {
        SmallVector<int64_t> limits = *getI64Array(x, "limit_indices");
        limits[d] = c;
        y->setAttr("limit_indices", b.getDenseI64ArrayAttr(limits));
      } else if (kind == OpKind::DynamicSlice) {
        SmallVector<int64_t> sizes = *getI64Array(x, "slice_sizes");
        sizes[d] = c;
        y->setAttr("slice_sizes", b.getDenseI64ArrayAttr(sizes));
      }
      for (auto [r, res] : llvm::enumerate(x->getResults()))
        chunkOf[res] = y->getResult(r);
      if (kind == OpKind::Iota && IotaView(x).getIotaDimension() == d) {
        auto t = tensorType(y->getResult(0));
        Value off = broadcastStart(b, loc, start, t);
        chunkOf[x->getResult(0)] =
            buildElementwise(b, loc, "stablehlo.add", {y->getResult(0), off});
      }
      continue;
    }
    // A sink: the op on chunks gives a partial result to accumulate.
    switch (sinkIt->second) {
    case SinkKind::Dot: {
      Operation *y = b.clone(*x);
      y->setOperands(operands);
      Value acc = state[si];
      if (plan.osm && x == plan.osm->dot)
        acc = buildElementwise(b, loc, "stablehlo.multiply", {acc, corrAcc});
      next.push_back(buildElementwise(b, loc, "stablehlo.add", {acc, y->getResult(0)}));
      si += 1;
      break;
    }
    case SinkKind::Reduce: {
      ReduceView rv(x);
      unsigned n = rv.getNumInputs();
      Operation *y = b.clone(*x);
      y->setOperands(operands);
      llvm::StringRef comb = combinerName(rv.getReducerKind());
      if (plan.osm && x == plan.osm->maxR) {
        emitOnlineMax(b, loc, state[si], y->getResult(0), next, shiftX, corrL, corrAcc);
      } else if (plan.osm && x == plan.osm->sumR) {
        Value scaled = buildElementwise(b, loc, "stablehlo.multiply", {state[si], corrL});
        next.push_back(buildElementwise(b, loc, "stablehlo.add", {scaled, y->getResult(0)}));
      } else if (n == 1 && !comb.empty()) {
        next.push_back(buildElementwise(b, loc, comb, {state[si], y->getResult(0)}));
      } else {
        // Reduce the stacked (accumulator, partial) pairs with the op's body.
        SmallVector<Value> stacked;
        for (unsigned j = 0; j < n; ++j) {
          auto t = tensorType(x->getResult(j));
          SmallVector<int64_t> shape{1};
          shape.append(t.getShape().begin(), t.getShape().end());
          auto one = RankedTensorType::get(shape, t.getElementType());
          Value a = buildReshape(b, loc, one, state[si + j]);
          Value p = buildReshape(b, loc, one, y->getResult(j));
          stacked.push_back(buildConcatenate(b, loc, {a, p}, 0));
        }
        for (unsigned j = 0; j < n; ++j)
          stacked.push_back(operands[n + j]);
        Operation *z = buildGenericOp(
            b, loc, "stablehlo.reduce", stacked, x->getResultTypes(),
            {b.getNamedAttr("dimensions", b.getDenseI64ArrayAttr({0}))}, 1);
        IRMapping none;
        x->getRegion(0).cloneInto(&z->getRegion(0), none);
        b.setInsertionPointAfter(z);
        for (unsigned j = 0; j < n; ++j)
          next.push_back(z->getResult(j));
      }
      si += n;
      break;
    }
    case SinkKind::TopK: {
      int64_t k = TopKView(x).getK();
      int64_t kk = std::min(k, c);
      Operation *y = b.clone(*x);
      y->setOperands(operands);
      auto vt = tensorType(x->getResult(0)), it = tensorType(x->getResult(1));
      int64_t last = vt.getRank() - 1;
      y->getResult(0).setType(withDim(vt, last, kk));
      y->getResult(1).setType(withDim(it, last, kk));
      y->setAttr("k", b.getI64IntegerAttr(kk));
      Value vals = y->getResult(0);
      Value idx = buildElementwise(
          b, loc, "stablehlo.add",
          {y->getResult(1), broadcastStart(b, loc, start, tensorType(y->getResult(1)))});
      Value catV = buildConcatenate(b, loc, {state[si], vals}, last);
      Value catI = buildConcatenate(b, loc, {state[si + 1], idx}, last);
      Operation *merged = sortDescending(b, loc, catV, catI, last);
      next.append(keepFirstK(b, loc, merged, {vals, idx}, last, k, isFirst));
      si += 2;
      break;
    }
    case SinkKind::SortTopK: {
      // Sort the chunk, keep its first kk, append them after the running
      // prefix and sort again; the first iteration takes the chunk's own.
      int64_t sd = SortView(x).getDimension(), k = *sortPrefixLength(x);
      int64_t kk = std::min(k, c);
      Operation *y = cloneSortOn(b, x, operands, c);
      SmallVector<Value> tops, cat;
      for (auto [j, r] : llvm::enumerate(y->getResults())) {
        tops.push_back(prefixAlong(b, loc, r, sd, kk));
        cat.push_back(buildConcatenate(b, loc, {state[si + j], tops.back()}, sd));
      }
      Operation *merged = cloneSortOn(b, x, cat, k + kk);
      next.append(keepFirstK(b, loc, merged, tops, sd, k, isFirst));
      si += x->getNumResults();
      break;
    }
    }
  }
  for (Value v : plan.outputs) {
    auto t = tensorType(v);
    next.push_back(buildDynamicUpdateSlice(b, loc, state[si++], chunkOf.lookup(v),
                                           starts(t.getRank(), plan.dimOf.lookup(v))));
  }
  return next;
}

void Rewriter::apply(int64_t chunk) {
  Block *block = plan.block;
  Location loc = plan.seedOp->getLoc();
  int64_t n = plan.size / chunk, rem = plan.size % chunk;

  // Values the region reads from outside (constants are cloned instead).
  llvm::SetVector<Value> ins;
  for (Operation *x : plan.order)
    for (Value o : x->getOperands()) {
      if (plan.dimOf.count(o))
        continue;
      if (plan.osm && (x == plan.osm->bm || x == plan.osm->bl))
        continue; // replaced by the running shift / applied after the loop
      Operation *def = o.getDefiningOp();
      if (def && isConstantLike(def))
        continue;
      ins.insert(o);
    }
  rematerialiseLiveIns(ins);
  liveIns.assign(ins.begin(), ins.end());

  // Insert before the first outside reader of what the region produces.
  Operation *ip = block->getTerminator();
  auto consider = [&](Value v) {
    for (OpOperand &use : v.getUses()) {
      Operation *u = block->findAncestorOpInBlock(*use.getOwner());
      if (u && !(u == use.getOwner() && plan.inPlan(u)) && u->isBeforeInBlock(ip))
        ip = u;
    }
  };
  for (Value v : plan.outputs)
    consider(v);
  for (auto &[op, k] : plan.sinks)
    for (Value v : op->getResults())
      consider(v);
  // ... but after every live-in (topological sort below settles the rest).
  OpBuilder b(ip);

  SmallVector<Value> init = initialState(b, loc);
  unsigned numState = init.size();
  SmallVector<Value> operands{scalarI64(b, loc, 0)};
  operands.append(init);
  operands.append(liveIns);
  Operation *loop = buildWhile(b, loc, operands);
  {
    Block &cond = loop->getRegion(0).front();
    OpBuilder cb = OpBuilder::atBlockEnd(&cond);
    Value lt = buildCompare(cb, loc, cond.getArgument(0), scalarI64(cb, loc, n), "LT", "SIGNED");
    buildReturn(cb, loc, lt);
  }
  {
    Block &body = loop->getRegion(1).front();
    OpBuilder bb = OpBuilder::atBlockEnd(&body);
    Value i = body.getArgument(0);
    Value start = buildElementwise(bb, loc, "stablehlo.multiply", {i, scalarI64(bb, loc, chunk)});
    Value isFirst;
    for (auto &[op, k] : plan.sinks)
      if (k == SinkKind::TopK || k == SinkKind::SortTopK)
        isFirst = buildCompare(bb, loc, i, scalarI64(bb, loc, 0), "EQ", "SIGNED");
    IRMapping outer;
    for (auto [k, v] : llvm::enumerate(liveIns))
      outer.map(v, body.getArgument(1 + numState + k));
    cloneRemat(bb, outer);
    SmallVector<Value> next =
        emitChunk(bb, loc, outer, start, chunk, isFirst,
                  body.getArguments().slice(1, numState));
    SmallVector<Value> yield{buildElementwise(bb, loc, "stablehlo.add", {i, scalarI64(bb, loc, 1)})};
    yield.append(next);
    for (unsigned k = 0; k < liveIns.size(); ++k)
      yield.push_back(body.getArgument(1 + numState + k));
    buildReturn(bb, loc, yield);
  }
  b.setInsertionPointAfter(loop);
  SmallVector<Value> state(loop->getResults().slice(1, numState));
  if (rem > 0) {
    IRMapping outer;
    for (Value v : liveIns)
      outer.map(v, v);
    cloneRemat(b, outer);
    // The remainder's start comes from the loop's final counter through an
    // optimization_barrier, so that XLA can neither fold it (the trip count
    // is known) nor schedule the remainder step before the loop, where its
    // temporaries would stay live during every iteration.
    // XLA turns the barrier into control dependencies on its operands'
    // producers, so it also carries the smallest loop result (a constant
    // counter alone would tie the remainder to nothing).
    unsigned tie = 0;
    for (unsigned k = 1; k < numState; ++k)
      if (bytesOf(state[k]) < bytesOf(state[tie]))
        tie = k;
    Operation *barrier = buildGenericOp(
        b, loc, "stablehlo.optimization_barrier", {loop->getResult(0), state[tie]},
        {loop->getResult(0).getType(), state[tie].getType()});
    Value counter = barrier->getResult(0);
    state[tie] = barrier->getResult(1);
    Value start = buildElementwise(b, loc, "stablehlo.multiply",
                                   {counter, scalarI64(b, loc, chunk)});
    state = emitChunk(b, loc, outer, start, rem, Value(), state);
  }

  // Hand the results to the region's outside readers.
  auto replaceOutside = [&](Value from, Value to) {
    from.replaceUsesWithIf(to, [&](OpOperand &use) {
      Operation *u = block->findAncestorOpInBlock(*use.getOwner());
      return !(u && u == use.getOwner() && plan.inPlan(u));
    });
  };
  unsigned si = 0;
  Value finalSum;
  SmallVector<Operation *> deadSlices;
  for (Operation *op : plan.order) {
    if (plan.sinks.lookup(op) == SinkKind::SortTopK) {
      // Its readers are prefix slices: the same slices of the running prefix.
      for (Value v : op->getResults()) {
        Value prefix = state[si++];
        for (Operation *u : llvm::to_vector(v.getUsers())) {
          Value same = prefix;
          if (u->getResult(0).getType() != prefix.getType() ||
              llvm::any_of(SliceView(u).getStartIndices(), [](int64_t i) { return i != 0; })) {
            Operation *s = b.clone(*u);
            s->setOperand(0, prefix);
            same = s->getResult(0);
          }
          u->getResult(0).replaceAllUsesWith(same);
          deadSlices.push_back(u); // erased last: `b` may insert before it
        }
      }
      continue;
    }
    if (plan.sinks.contains(op))
      for (Value v : op->getResults()) {
        if (plan.osm && op == plan.osm->sumR)
          finalSum = state[si];
        if (plan.osm && op == plan.osm->dot) {
          // out = acc / l; a row whose keys are all masked has l = acc = 0
          // and gives 0/0 = NaN, as jax's softmax does for an all -inf row.
          Value l = mapToTarget(b, loc, finalSum, sumDimsOfExp(*plan.osm),
                                tensorType(v), expToDotResult(*plan.osm));
          replaceOutside(v, buildElementwise(b, loc, "stablehlo.divide", {state[si++], l}));
          continue;
        }
        replaceOutside(v, state[si++]);
      }
  }
  for (Value v : plan.outputs)
    replaceOutside(v, state[si++]);

  for (Operation *op : deadSlices)
    op->erase();
  for (Operation *op : llvm::reverse(plan.order))
    if (op->use_empty())
      op->erase();
  for (Operation *op : llvm::reverse(remat))
    if (op->use_empty())
      op->erase();
  if (plan.osm) {
    SmallVector<Operation *> dead(plan.osm->chainM);
    dead.append(plan.osm->chainL);
    llvm::sort(dead, [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
    for (Operation *op : llvm::reverse(dead)) {
      SmallVector<Operation *> producers;
      for (Value w : op->getOperands())
        if (Operation *d = w.getDefiningOp())
          producers.push_back(d);
      if (!op->use_empty())
        continue;
      op->erase();
      for (Operation *d : producers) // broadcast constants of the chain
        if (d->use_empty() && !llvm::is_contained(dead, d) &&
            getOpKind(d) == OpKind::BroadcastInDim && d->getOperand(0).getDefiningOp() &&
            getOpKind(d->getOperand(0).getDefiningOp()) == OpKind::Constant)
          d->erase();
    }
  }
  (void)sortTopologically(block);
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

struct Choice {
  bool feasible = false;
  int64_t chunk = 0;
  int64_t peak = kInfeasible;
};

/// In a clone measured for the chunk size, the second pass is cut off: the
/// function returns splat constants (not counted) in its place and what
/// only it read is erased, so the originals it keeps alive until a later
/// split recomputes them do not count against this loop.
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
        Value zero = buildGenericOp(b, op->getLoc(), "stablehlo.constant", {}, {t},
                                    {b.getNamedAttr("value", DenseElementsAttr::get(
                                        t, b.getZeroAttr(t.getElementType())))})
                         ->getResult(0);
        use.set(zero);
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

/// Peak of the loop the plan becomes with chunks of `c` (rewriting a clone).
int64_t regionPeak(func::FuncOp f, const Plan &plan, int64_t c) {
  IRMapping m;
  auto clone = llvm::cast<func::FuncOp>(f->clone(m));
  Plan q = translatePlan(plan, m);
  // Mark what exists now (addresses of erased ops may be reused).
  auto mark = StringAttr::get(f.getContext(), "memfit.split.pre");
  for (Operation &op : *q.block)
    op.setDiscardableAttr(mark, UnitAttr::get(f.getContext()));
  detachSecondPass(q);
  Rewriter(q).apply(c);
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

/// The profile is a model of XLA's fusion; inside loop bodies XLA sometimes
/// materialises what the model fuses (a reduce and the transpose or negate
/// of its result both get buffers) and adds scratch the model does not see.
/// The chunk size therefore budgets the loop's temporaries (its modelled
/// peak beyond the arguments and outputs) `margin` times over: 2 by default
/// (the pass option temp-margin); memfit.jit calibrates it against XLA's
/// own memory analysis of the compiled result.
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
  int64_t pLo = peakAt(lo);
  ch.chunk = lo;
  ch.peak = pLo;
  if (pLo > limit)
    return ch;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (peakAt(mid) <= limit)
      lo = mid;
    else
      hi = mid - 1;
  }
  int64_t c = std::max(alignDown(lo), plan.minChunk);
  int64_t chunks = (plan.size + c - 1) / c;
  int64_t balanced = alignUpLike((plan.size + chunks - 1) / chunks, c);
  if (balanced <= c && balanced >= plan.minChunk)
    c = balanced;
  ch.feasible = true;
  ch.chunk = c;
  ch.peak = peakAt(c);
  if (ch.peak > limit) { // alignment changed the remainder step: fall back
    ch.chunk = lo;
    ch.peak = peakAt(lo);
  }
  return ch;
}

struct RunResult {
  bool ok = false;
  int64_t peak = 0;
  std::string why;
  Operation *blocker = nullptr;
  bool belowFixed = false;
  int64_t fixedBytes = 0;
  int64_t appliedPeak = 0; // largest (margined) peak of the loops made
};

/// Splits `f` (a clone) until it fits `limit`. With `minimize`, instead
/// applies whatever lowers the peak most, until nothing does.
RunResult runSplits(func::FuncOp f, int64_t limit, bool minimize, double margin) {
  RunResult rr;
  Planner planner(limit);
  int64_t lastPeak = kInfeasible;
  bool pendingSecondPass = false;
  for (int iter = 0; iter < 32; ++iter) {
    FailureOr<FunctionProfile> prof = profileFunction(f);
    if (failed(prof)) {
      rr.why = "the function could not be profiled";
      return rr;
    }
    rr.peak = prof->peakBytes;
    rr.fixedBytes = prof->argumentBytes + prof->outputBytes;
    if (!minimize && prof->peakBytes <= limit) {
      rr.ok = true;
      return rr;
    }
    if (!minimize && limit < rr.fixedBytes) {
      rr.belowFixed = true;
      return rr;
    }
    // A first pass leaves the originals to its second pass: the peak drops
    // only once that is split too.
    if (minimize && prof->peakBytes >= lastPeak && !pendingSecondPass)
      return rr;
    lastPeak = std::min(lastPeak, prof->peakBytes);
    pendingSecondPass = false;

    llvm::DenseSet<Value> returned;
    for (Value v : f.front().getTerminator()->getOperands())
      returned.insert(v);
    SmallVector<Value> seeds;
    for (const LiveTensor &t : prof->liveAtPeak) {
      if (t.isArgument || !llvm::isa<OpResult>(t.value) || returned.contains(t.value) ||
          llvm::is_contained(seeds, t.value) || t.bytes == 0)
        continue;
      seeds.push_back(t.value);
      if (seeds.size() == 4)
        break;
    }
    if (seeds.empty()) {
      rr.why = "nothing live at the peak can be split (arguments and outputs)";
      return rr;
    }

    std::optional<Plan> best;
    Choice bestChoice;
    double bestScore = -std::numeric_limits<double>::infinity();
    Plan minPlan;
    Choice minChoice;
    bool haveMin = false;
    for (Value seed : seeds) {
      auto t = tensorType(seed);
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (t.getDimSize(d) < 2)
          continue;
        PlanFailure fail;
        std::optional<Plan> plan = planner.build(seed, d, fail);
        if (!plan) {
          if (rr.why.empty() || (!rr.blocker && fail.blocker)) {
            rr.why = fail.why;
            rr.blocker = fail.blocker ? fail.blocker : seed.getDefiningOp();
          }
          continue;
        }
        Choice ch = chooseChunk(f, *plan, minimize ? 0 : limit, rr.fixedBytes, margin);
        if (ch.peak < minChoice.peak) {
          minChoice = ch;
          minPlan = *plan;
          haveMin = true;
        }
        if (!ch.feasible)
          continue;
        // Online softmax (a rescaling per chunk) only when no plain split
        // fits.
        // A second pass (recomputing the region) only when neither fits.
        double score = double(ch.chunk) / double(plan->size) -
                       (plan->sinks.empty() ? 0.0 : 1e-9) - (plan->osm ? 1.0 : 0.0) -
                       (plan->later.empty() ? 0.0 : 2.0);
        if (score > bestScore) {
          bestScore = score;
          best = plan;
          bestChoice = ch;
        }
      }
      if (best)
        break;
    }
    if (minimize) {
      if (!haveMin || minChoice.peak >= prof->peakBytes)
        return rr;
      pendingSecondPass = !minPlan.later.empty();
      Rewriter(minPlan).apply(minChoice.chunk);
      rr.appliedPeak = std::max(rr.appliedPeak, minChoice.peak);
      continue;
    }
    if (!best) {
      if (haveMin) {
        rr.why = "even its smallest chunks (" + std::to_string(minChoice.chunk) +
                 " of " + std::to_string(minPlan.size) + ") need " +
                 formatBytes(minChoice.peak);
        if (minPlan.stopper)
          rr.why += ", and " + opLabel(minPlan.stopper) +
                    " needs the split dimension whole (operand dimension " +
                    std::to_string(minPlan.stopperDim) + ")";
        rr.blocker = minPlan.seedOp;
      }
      if (!rr.blocker)
        rr.blocker = seeds.front().getDefiningOp();
      return rr;
    }
    Rewriter(*best).apply(bestChoice.chunk);
    rr.appliedPeak = std::max(rr.appliedPeak, bestChoice.peak);
  }
  rr.why = "too many split steps";
  return rr;
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
    if (failed(verifyOpInvariants(module)))
      return signalPassFailure();
    for (auto f : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (f.isExternal())
        continue;
      if (failed(splitFunction(f, *limit)))
        return signalPassFailure();
    }
  }

  LogicalResult splitFunction(func::FuncOp f, int64_t limit) {
    auto work = llvm::cast<func::FuncOp>(f->clone());
    RunResult rr = runSplits(work, limit, /*minimize=*/false, tempMargin);
    if (rr.ok) {
      f.getBody().takeBody(work.getBody());
      work->erase();
      return success();
    }
    // Report, from a fresh clone, the smallest limit memfit can reach.
    auto probe = llvm::cast<func::FuncOp>(f->clone());
    RunResult best = runSplits(probe, 0, /*minimize=*/true, tempMargin);
    int64_t reachable = std::max({best.peak, best.appliedPeak, rr.fixedBytes});
    // The split steps are greedy (largest chunks first); when they get
    // stuck, the probe's steps (the lowest peak each time) may still fit.
    if (reachable <= limit) {
      f.getBody().takeBody(probe.getBody());
      probe->erase();
      work->erase();
      return success();
    }
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << "memfit-split: cannot fit @" << f.getSymName() << " into "
       << formatBytes(limit) << " (" << limit << " bytes): ";
    if (rr.belowFixed) {
      os << "its arguments and outputs alone take " << formatBytes(rr.fixedBytes);
    } else if (rr.blocker) {
      int64_t bytes = rr.blocker->getNumResults() ? bytesOf(rr.blocker->getResult(0)) : 0;
      os << "the " << formatBytes(bytes) << " result of " << opLabel(rr.blocker)
         << " cannot be split within the limit: " << rr.why;
    } else {
      os << rr.why;
    }
    os << "; the smallest limit memfit can reach is " << formatBytes(reachable)
       << " (" << reachable << " bytes)";
    Location loc = rr.blocker && !rr.belowFixed ? rr.blocker->getLoc() : f.getLoc();
    mlir::emitError(loc) << msg;
    probe->erase();
    work->erase();
    return failure();
  }
};

} // namespace
