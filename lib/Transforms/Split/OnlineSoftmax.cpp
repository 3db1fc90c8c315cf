//===- OnlineSoftmax.cpp - softmax-normalised contraction in chunks -------===//
//
// When the split dimension is reduced by a reduce-max m and a reduce-add l
// of e = exp(x - bcast(chain(m))), and e / bcast(l) feeds only a dot_general
// contracting that dimension, the loop carries (m, l, acc) and rescales l
// and acc by exp(chain(m_old) - shift) per chunk, with shift = chain(m_new)
// (0 where it is -inf, and the correction 0 where chain(m_old) is -inf, so
// chunks whose keys are all masked add nothing); after the loop
// out = acc / l. Such a plan is chosen only when no plain plan fits
// (docs/split.md).
//
// Without the contraction (a logsumexp: the sum is read outside the region,
// and e's other readers are left to a second pass) the loop carries (m, l)
// alone, so the max and the sum take one pass instead of two; the second
// pass recomputes e with the final max. jax's logsumexp shifts by
// where(isfinite(m), m, 0), so the chain may hold is_finite and select.
//
//===----------------------------------------------------------------------===//
#include "OnlineSoftmax.h"

#include "Reductions.h"

#include <functional>

using namespace mlir;

namespace memfit::split {

//===----------------------------------------------------------------------===//
// Matching (planner side)
//===----------------------------------------------------------------------===//

namespace {

/// A value computed from splat constants only (cloned into loop bodies).
bool constantDerived(Value v, int depth = 0) {
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

/// How a chain walk treats an outside user of a chain value.
enum class ChainStep { Follow, Skip, Fail };

/// The outside ops from `root` (a sink result) up to the single planned op
/// they all feed (returned), in block order in `chain`: each user that
/// `step` follows (given the chain value it was reached from) joins the
/// chain; a skipped one may join later, reached from another operand; a
/// failed one ends the walk. Null on a failure, a use outside the block, or
/// a second planned op.
Operation *walkChain(const Plan &plan, Value root, SmallVector<Operation *> &chain,
                     llvm::function_ref<ChainStep(Operation *, Value)> step) {
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
      if (seen.contains(u))
        continue;
      ChainStep s = step(u, v);
      if (s == ChainStep::Fail)
        return nullptr;
      if (s == ChainStep::Skip)
        continue;
      seen.insert(u);
      chain.push_back(u);
      work.push_back(u->getResult(0));
    }
  }
  llvm::sort(chain, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return target;
}

/// The softmax's chain: layout ops, and maximum/minimum whose other
/// operands are constant-derived; any other outside user fails.
Operation *followChain(const Plan &plan, Value root, SmallVector<Operation *> &chain) {
  return walkChain(plan, root, chain, [](Operation *u, Value from) {
    OpKind k = getOpKind(u);
    ElementwiseFn fn = getElementwiseFn(u);
    bool layout = k == OpKind::BroadcastInDim || k == OpKind::Reshape ||
                  k == OpKind::Transpose || k == OpKind::Convert;
    bool minmax = fn == ElementwiseFn::Maximum || fn == ElementwiseFn::Minimum;
    if (!layout && !minmax)
      return ChainStep::Fail;
    if (minmax && llvm::any_of(u->getOperands(), [&](Value o) {
          return o != from && !constantDerived(o);
        }))
      return ChainStep::Fail;
    return ChainStep::Follow;
  });
}

/// A reduce max of one input over one dimension (a softmax's or a
/// logsumexp's max).
bool isMaxOverOneDim(Operation *op) {
  ReduceView rm(op);
  return rm.getNumInputs() == 1 && rm.getReducerKind() == ReducerKind::Max &&
         rm.getDimensions().size() == 1;
}

/// The planned e = exp(x - bm) that o.bm (the broadcast max) shifts:
/// bm's one user x - bm, its one user the exponential, both chunked. Sets
/// o.exp and o.keyE.
bool matchExpOfShift(const Plan &plan, Plan::OnlineSoftmax &o) {
  Operation *sub = *o.bm->getUsers().begin();
  if (getElementwiseFn(sub) != ElementwiseFn::Subtract ||
      sub->getOperand(1) != o.bm->getResult(0) ||
      sub->getOperand(0) == o.bm->getResult(0) || !sub->hasOneUse() ||
      !plan.chunked.contains(sub))
    return false;
  o.exp = *sub->getUsers().begin();
  if (getElementwiseFn(o.exp) != ElementwiseFn::Exponential ||
      !plan.chunked.contains(o.exp))
    return false;
  o.keyE = plan.dimOf.lookup(o.exp->getResult(0));
  return true;
}

/// m = reduce max over one dim (`op`, a sink); X = chain(m);
/// bm = broadcast_in_dim(X) (planned); e = exp(x - bm) (planned).
bool matchShiftedExp(const Plan &plan, Operation *op, Plan::OnlineSoftmax &o) {
  if (!isMaxOverOneDim(op))
    return false;
  o.maxR = op;
  o.bm = followChain(plan, op->getResult(0), o.chainM);
  if (!o.bm || getOpKind(o.bm) != OpKind::BroadcastInDim || !o.bm->hasOneUse() ||
      plan.dimOf.count(o.bm->getOperand(0)))
    return false;
  return matchExpOfShift(plan, o);
}

/// e's users are exactly l = reduce add of e over k (a sink) and p = e / ...
/// (planned).
bool matchSumAndDivide(const Plan &plan, Plan::OnlineSoftmax &o) {
  for (Operation *u : o.exp->getUsers()) {
    auto it = plan.sinks.find(u);
    if (it != plan.sinks.end() && it->second == SinkKind::Reduce) {
      ReduceView rl(u);
      if (rl.getNumInputs() == 1 && rl.getReducerKind() == ReducerKind::Add &&
          rl.getDimensions() == SmallVector<int64_t>{o.keyE} && !o.sumR)
        o.sumR = u;
      else
        o.sumR = o.div = o.exp; // poison
    } else if (getElementwiseFn(u) == ElementwiseFn::Divide &&
               u->getOperand(0) == o.exp->getResult(0) && !o.div &&
               plan.chunked.contains(u)) {
      o.div = u;
    } else {
      o.div = o.exp; // poison
    }
  }
  return o.sumR && o.div && o.sumR != o.exp && o.div != o.exp;
}

/// p = e / bl with bl = broadcast(chain(l)), and p feeds only
/// out = dot_general(p, v) contracting k only (a sink).
bool matchNormalisedDot(const Plan &plan, Plan::OnlineSoftmax &o) {
  o.bl = followChain(plan, o.sumR->getResult(0), o.chainL);
  if (!o.bl || o.div->getOperand(1) != o.bl->getResult(0) || !o.bl->hasOneUse() ||
      getOpKind(o.bl) != OpKind::BroadcastInDim ||
      plan.dimOf.count(o.bl->getOperand(0)) || !o.div->hasOneUse())
    return false;
  o.dot = *o.div->getUsers().begin();
  auto dit = plan.sinks.find(o.dot);
  if (dit == plan.sinks.end() || dit->second != SinkKind::Dot)
    return false;
  DotDims dd = DotGeneralView(o.dot).getDims();
  bool lhs = o.dot->getOperand(0) == o.div->getResult(0);
  return !(o.dot->getOperand(0) == o.dot->getOperand(1) ||
           (lhs ? dd.lhsContract : dd.rhsContract) != SmallVector<int64_t>{o.keyE});
}

/// An op the logsumexp's chain may hold: one that maps a finite running max
/// monotonically (layout ops, max/min with constants, jax's
/// where(isfinite(m), m, 0)), so the correction exp(X_old - X_new) is at
/// most 1 for finite maxima.
bool isMonotoneChainOp(Operation *u) {
  OpKind k = getOpKind(u);
  ElementwiseFn fn = getElementwiseFn(u);
  return k == OpKind::BroadcastInDim || k == OpKind::Reshape || k == OpKind::Transpose ||
         k == OpKind::Convert || k == OpKind::Select || fn == ElementwiseFn::Maximum ||
         fn == ElementwiseFn::Minimum ||
         u->getName().getStringRef() == "stablehlo.is_finite";
}

/// The outside ops from `root` (the max sink's result) to the single
/// planned op they feed (returned), each computed from the chain and
/// constants only (isMonotoneChainOp); other outside readers of chain values
/// (the logsumexp's `log(l) + X`) read the final values after the loop.
/// Null when a chain value reaches another planned op, or none.
Operation *followChainLse(const Plan &plan, Value root, SmallVector<Operation *> &chain) {
  llvm::DenseSet<Value> inChain{root};
  return walkChain(plan, root, chain, [&](Operation *u, Value) {
    if (!isMonotoneChainOp(u) || u->getNumResults() != 1)
      return ChainStep::Skip;
    bool fromChain = llvm::all_of(u->getOperands(), [&](Value o) {
      return inChain.contains(o) || constantDerived(o);
    });
    if (!fromChain)
      return ChainStep::Skip; // an outside reader
    inChain.insert(u->getResult(0));
    return ChainStep::Follow;
  });
}

/// The logsumexp form: m (a sink), X = chain(m) (followChainLse),
/// e = exp(x - broadcast(X)) in the plan, l = reduce add of e over the
/// split dimension (a sink). e's other readers are not checked here: on a
/// first attempt they are still in the plan and become the second pass
/// (checkLogSumExpAlone checks the final plan).
bool matchLogSumExp(const Plan &plan, Operation *op, Plan::OnlineSoftmax &o) {
  if (!isMaxOverOneDim(op))
    return false;
  o.maxR = op;
  o.bm = followChainLse(plan, op->getResult(0), o.chainM);
  if (!o.bm || getOpKind(o.bm) != OpKind::BroadcastInDim || !o.bm->hasOneUse() ||
      plan.dimOf.count(o.bm->getOperand(0)) || o.chainM.empty() ||
      o.chainM.back()->getResult(0) != o.bm->getOperand(0))
    return false;
  if (!matchExpOfShift(plan, o))
    return false;
  for (Operation *u : o.exp->getUsers()) {
    auto it = plan.sinks.find(u);
    if (it == plan.sinks.end() || it->second != SinkKind::Reduce)
      continue;
    ReduceView rl(u);
    if (rl.getNumInputs() == 1 && rl.getReducerKind() == ReducerKind::Add &&
        rl.getDimensions() == SmallVector<int64_t>{o.keyE})
      o.sumR = u;
  }
  return o.sumR != nullptr;
}

/// bm's operand X covers every non-split dim of e with its full size, and e
/// is floating point.
bool shiftCoversRows(const Plan::OnlineSoftmax &o) {
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
  return okX && llvm::isa<FloatType>(et.getElementType());
}

/// The plan's reducing sinks in program order: the first that matches is
/// taken, and a map keyed by addresses would make that choice (a loss with
/// two logsumexps over one matrix: cross-entropy and its z-loss) differ
/// from run to run.
SmallVector<Operation *> reduceSinksInOrder(const Plan &plan) {
  SmallVector<Operation *> ops;
  for (auto &[op, kind] : plan.sinks)
    if (kind == SinkKind::Reduce)
      ops.push_back(op);
  llvm::sort(ops, [&](Operation *a, Operation *b) {
    return plan.block->findAncestorOpInBlock(*a)->isBeforeInBlock(
        plan.block->findAncestorOpInBlock(*b));
  });
  return ops;
}

} // namespace

std::optional<Plan::OnlineSoftmax> matchOnlineSoftmax(const Plan &plan, bool logSumExp) {
  SmallVector<Operation *> reduces = reduceSinksInOrder(plan);
  for (Operation *op : reduces) {
    Plan::OnlineSoftmax o;
    if (matchShiftedExp(plan, op, o) && matchSumAndDivide(plan, o) &&
        matchNormalisedDot(plan, o) && shiftCoversRows(o))
      return o;
  }
  if (!logSumExp)
    return std::nullopt;
  for (Operation *op : reduces) {
    Plan::OnlineSoftmax o;
    if (matchLogSumExp(plan, op, o) && shiftCoversRows(o))
      return o;
  }
  return std::nullopt;
}

bool checkLogSumExpAlone(const Plan &plan, const Plan::OnlineSoftmax &o) {
  if (o.dot)
    return true;
  for (Operation *u : o.exp->getUsers())
    if (u != o.sumR && plan.inPlan(u))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Emission (loop side)
//===----------------------------------------------------------------------===//

namespace {

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

/// Where each dim of e lands in its dot's result (-1 for the split dim).
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

/// chain(m) recomputed at `b` (the chain's constants cloned along).
Value cloneChain(OpBuilder &b, const Plan::OnlineSoftmax &o, Value m) {
  std::function<void(Value, IRMapping &)> cloneConst = [&](Value v, IRMapping &cm) {
    if (cm.contains(v))
      return;
    Operation *d = v.getDefiningOp();
    for (Value w : d->getOperands())
      cloneConst(w, cm);
    b.clone(*d, cm);
  };
  IRMapping cm;
  cm.map(o.maxR->getResult(0), m);
  for (Operation *ch : o.chainM) {
    for (Value w : ch->getOperands())
      cloneConst(w, cm);
    b.clone(*ch, cm);
  }
  return cm.lookupOrDefault(o.bm->getOperand(0));
}

/// The running max: m_new = max(m_old, rowmax(chunk)); the shift applied to
/// the chunk is X_new = chain(m_new) with -inf replaced by 0 (a chunk whose
/// keys are all masked must not compute exp(-inf - -inf)); the correction of
/// what was accumulated is exp(X_old - shift), 0 where X_old is -inf
/// (nothing accumulated yet; exp(-inf - shift) would be NaN or overflow
/// otherwise), mapped onto the sum and the contraction's result.
class OnlineMax : public Accumulator {
public:
  OnlineMax(OnlineSoftmaxRun &run) : Accumulator(run.o.maxR), run(run) {}

  void init(OpBuilder &b, Location loc, SmallVectorImpl<Value> &state) const override {
    initReduceState(b, loc, sink, state);
  }

  void step(ChunkStep &s, ValueRange operands, ValueRange state,
            SmallVectorImpl<Value> &next) override {
    OpBuilder &b = s.b;
    Location loc = s.loc;
    const Plan::OnlineSoftmax &o = run.o;
    Value partial = applyToChunk(b, sink, operands)->getResult(0);
    Value mOld = state[0];
    Value mNew = buildElementwise(b, loc, "stablehlo.maximum", {mOld, partial});
    next.push_back(mNew);
    Value xOld = cloneChain(b, o, mOld), xNew = cloneChain(b, o, mNew);
    auto xt = tensorType(xNew);
    auto scalar = RankedTensorType::get({}, xt.getElementType());
    Value negInf = buildBroadcastInDim(
        b, loc, xt,
        buildConstantSplat(b, loc, scalar, -std::numeric_limits<double>::infinity()), {});
    Value zero = buildBroadcastInDim(b, loc, xt, buildConstantSplat(b, loc, scalar, 0.0), {});
    run.shiftX =
        buildSelect(b, loc, buildCompare(b, loc, xNew, negInf, "EQ", "FLOAT"), zero, xNew);
    Value d = buildElementwise(b, loc, "stablehlo.subtract", {xOld, run.shiftX});
    // A logsumexp's chain (jax's) maps a max of -inf (nothing summed yet)
    // to 0, and exp(0 - shift) could overflow against l = 0; for finite
    // maxima its monotone chain keeps X_old - shift <= 0 already.
    if (!o.dot)
      d = buildElementwise(b, loc, "stablehlo.minimum", {d, zero});
    Value e = buildElementwise(b, loc, "stablehlo.exponential", {d});
    Value corrX =
        buildSelect(b, loc, buildCompare(b, loc, xOld, negInf, "EQ", "FLOAT"), zero, e);
    mapCorrection(b, loc, corrX);
  }

private:
  /// Drops bm's size-1 split dim from the correction (the rest are dims of
  /// e) and maps it onto the sum and the contraction's result.
  void mapCorrection(OpBuilder &b, Location loc, Value corrX) {
    const Plan::OnlineSoftmax &o = run.o;
    auto xt = tensorType(corrX);
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
    run.corrL = mapToTarget(b, loc, corr, srcE, tensorType(o.sumR->getResult(0)), expToSum(o));
    if (o.dot)
      run.corrAcc = mapToTarget(b, loc, corr, srcE, tensorType(o.dot->getResult(0)),
                                expToDotResult(o));
  }

  OnlineSoftmaxRun &run;
};

/// The running sum l and the running contraction acc (of e, not yet
/// divided), both rescaled by the max's correction: s = s * corr + partial.
/// After the loop the sum is handed on as is and out = acc / l.
class RescaledSum : public Accumulator {
public:
  RescaledSum(OnlineSoftmaxRun &run, Operation *sink)
      : Accumulator(sink), run(run), isSum(sink == run.o.sumR) {}

  void init(OpBuilder &b, Location loc, SmallVectorImpl<Value> &state) const override {
    if (isSum)
      initReduceState(b, loc, sink, state);
    else
      state.push_back(zerosLike(b, loc, tensorType(sink->getResult(0))));
  }

  void step(ChunkStep &s, ValueRange operands, ValueRange state,
            SmallVectorImpl<Value> &next) override {
    Operation *y = applyToChunk(s.b, sink, operands);
    Value corr = isSum ? run.corrL : run.corrAcc;
    Value scaled = buildElementwise(s.b, s.loc, "stablehlo.multiply", {state[0], corr});
    next.push_back(buildElementwise(s.b, s.loc, "stablehlo.add", {scaled, y->getResult(0)}));
  }

  /// A row whose keys are all masked has l = acc = 0 and gives 0/0 = NaN,
  /// as jax's softmax does for an all -inf row.
  void deliver(OpBuilder &b, Location loc, ValueRange state, ReplaceOutside replace,
               SmallVectorImpl<Operation *> &dead) override {
    if (isSum) {
      run.finalSum = state[0];
      return Accumulator::deliver(b, loc, state, replace, dead);
    }
    Value v = sink->getResult(0);
    Value l = mapToTarget(b, loc, run.finalSum, sumDimsOfExp(run.o), tensorType(v),
                          expToDotResult(run.o));
    replace(v, buildElementwise(b, loc, "stablehlo.divide", {state[0], l}));
  }

private:
  OnlineSoftmaxRun &run;
  bool isSum; // else the contraction
};

} // namespace

std::unique_ptr<Accumulator> makeOnlineSoftmaxAccumulator(OnlineSoftmaxRun &run,
                                                          Operation *sink) {
  if (sink == run.o.maxR)
    return std::make_unique<OnlineMax>(run);
  if (sink == run.o.sumR || (run.o.dot && sink == run.o.dot))
    return std::make_unique<RescaledSum>(run, sink);
  return nullptr;
}

bool isOnlineSoftmaxBroadcast(const Plan::OnlineSoftmax &o, Operation *op) {
  return op == o.bm || op == o.bl;
}

bool emitOnlineSoftmaxChunkOp(const Plan &plan, OnlineSoftmaxRun &run, OpBuilder &b,
                              Operation *op, int64_t chunk,
                              llvm::DenseMap<Value, Value> &chunkOf) {
  const Plan::OnlineSoftmax &o = run.o;
  if (op == o.bl)
    return true; // the division by the sum happens after the loop
  if (op == o.div) {
    chunkOf[op->getResult(0)] = chunkOf.lookup(o.exp->getResult(0));
    return true;
  }
  if (op != o.bm)
    return false;
  Operation *y = b.clone(*op);
  y->setOperands(ValueRange{run.shiftX});
  y->getResult(0).setType(
      withDim(tensorType(op->getResult(0)), plan.dimOf.lookup(op->getResult(0)), chunk));
  chunkOf[op->getResult(0)] = y->getResult(0);
  return true;
}

void eraseOnlineSoftmaxChains(const Plan::OnlineSoftmax &o) {
  SmallVector<Operation *> dead(o.chainM);
  dead.append(o.chainL);
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

} // namespace memfit::split
