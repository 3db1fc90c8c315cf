//===- LoopEmitter.cpp - a plan becomes a stablehlo.while -----------------===//
//
// A while loop over the floor(N / c) full chunks (counter tensor<i64>, cond
// `compare LT`, as jax writes lax.fori_loop) carrying accumulators, output
// buffers and every value the region reads from outside; then, when c does
// not divide N, a straight-line copy of the body for the remainder
// (dynamic_slice clamps its start index, so a last chunk that ran past the
// end would silently overlap). Replaced ops are erased explicitly (MLIR's
// DCE keeps unregistered ops). Live-ins that XLA would fuse (a transpose or
// broadcast of an argument) are recomputed in the body rather than
// materialised as loop operands.
//
// What each sink carries is its Accumulator's business (Accumulator.h);
// this file only asks it for its initial state, its step and its delivery.
//
//===----------------------------------------------------------------------===//
#include "LoopEmitter.h"

#include "GatherSelect.h"
#include "MinorContraction.h"
#include "OnlineSoftmax.h"
#include "Reductions.h"
#include "Scatter.h"
#include "TopK.h"

#include "memfit/Analysis/DimMapping.h"
#include "memfit/Analysis/FusionModel.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace memfit::split {
namespace {

class LoopEmitter {
public:
  explicit LoopEmitter(const Plan &plan);
  Operation *apply(int64_t chunk);

private:
  friend class ChunkEmission;

  std::unique_ptr<Accumulator> makeAccumulator(Operation *sink);
  void chooseOutputBuffers();
  void relayoutWholeOperands();
  bool readOnlyAsChunks(Value v, int64_t dim) const;
  bool recomputedBySecondPass(Value v) const;
  void findStackRows();
  void collectLiveIns();
  void rematerialiseLiveIns(llvm::SetVector<Value> &ins);
  void cloneRemat(OpBuilder &b, IRMapping &outer);
  Operation *insertionPoint() const;
  SmallVector<Value> initialState(OpBuilder &b, Location loc);
  Operation *buildLoop(OpBuilder &b, Location loc, ValueRange init, int64_t chunk, int64_t n);
  void emitRemainder(OpBuilder &b, Location loc, Operation *loop, SmallVector<Value> &state,
                     int64_t chunk, int64_t rem);
  SmallVector<Value> emitChunk(OpBuilder &b, Location loc, IRMapping &outer, Value start,
                               int64_t c, Value isFirst, ValueRange state);
  void deliverResults(OpBuilder &b, Location loc, ValueRange state,
                      SmallVectorImpl<Operation *> &dead);
  void eraseReplaced(ArrayRef<Operation *> dead);

  const Plan &plan;
  std::optional<OnlineSoftmaxRun> osm;
  llvm::DenseMap<Operation *, std::unique_ptr<Accumulator>> accumulators;
  SmallVector<Value> liveIns;
  /// Fusible producers of live-ins recomputed in the loop body (block
  /// order) instead of carried: see rematerialiseLiveIns.
  SmallVector<Operation *> remat;
  /// Per output (plan.outputs' order): the whole value whose buffer it is
  /// assembled in, or null for a new zero buffer (chooseOutputBuffers).
  SmallVector<Value> outputLeaf;
  /// Whole operands of the region's dots that the loop carries in another
  /// layout (relayoutWholeOperands): by (dot, operand number), the carried
  /// value and the permutation back to the operand's own layout.
  struct Relayout {
    Value carried;
    SmallVector<int64_t> back;
  };
  llvm::DenseMap<std::pair<Operation *, unsigned>, Relayout> relayouts;
  /// Leaves read by rows that are one layer's slice of a stacked value the
  /// layer loop carries (findStackRows): each chunk is sliced from it.
  struct StackRows {
    Value stack;
    SmallVector<Value> starts; // the layer's slice's start indices
  };
  llvm::DenseMap<Value, StackRows> stackRows;
};

/// One chunk of the region at `b`: the loop body, or the remainder step.
class ChunkEmission {
public:
  ChunkEmission(LoopEmitter &e, OpBuilder &b, Location loc, IRMapping &outer, Value start,
                int64_t c, Value isFirst)
      : e(e), plan(e.plan), outer(outer), step{b, loc, start, c, isFirst},
        zero(buildScalarI64(b, loc, 0)) {}

  /// The state after this chunk, given the state before it.
  SmallVector<Value> run(ValueRange state);

private:
  SmallVector<Value> starts(int64_t rank, int64_t dim) const;
  Value whole(Value o);
  Value chunkOperand(Value o, int64_t dim);
  Value stackRowsChunk(const LoopEmitter::StackRows &sr, int64_t dim, ArrayRef<int64_t> sizes);
  SmallVector<Value> operandsOf(Operation *x, const Accumulator *acc);
  void emitChunkedOp(Operation *x, ValueRange operands);
  void shiftScatterIndices(Operation *x, Operation *y);
  void emitSplatConstant(Operation *x);

  LoopEmitter &e;
  const Plan &plan;
  IRMapping &outer;
  ChunkStep step;
  Value zero;
  llvm::DenseMap<Value, Value> chunkOf;
  llvm::DenseMap<std::pair<Value, int64_t>, Value> leafCache;
  /// Leaves an output is assembled over: read from that output's state.
  llvm::DenseMap<Value, Value> leafInState;
  /// Carried relaid-out operands, back in their own layout in this chunk.
  llvm::DenseMap<Value, Value> relaidBack;
};

SmallVector<Value> ChunkEmission::starts(int64_t rank, int64_t dim) const {
  SmallVector<Value> s(rank, zero);
  s[dim] = step.start;
  return s;
}

/// A value the region reads whole: a live-in, or a constant cloned here.
Value ChunkEmission::whole(Value o) {
  if (Value m = outer.lookupOrNull(o))
    return m;
  Operation *def = o.getDefiningOp();
  assert(def && isConstantLike(def) && "live-in not mapped");
  Operation *copy = step.b.clone(*def);
  outer.map(def->getResults(), copy->getResults());
  return copy->getResult(llvm::cast<OpResult>(o).getResultNumber());
}

/// `o` chunked along `dim`: computed in this chunk, or a leaf sliced once.
Value ChunkEmission::chunkOperand(Value o, int64_t dim) {
  auto it = chunkOf.find(o);
  if (it != chunkOf.end())
    return it->second;
  auto key = std::make_pair(o, dim);
  auto lc = leafCache.find(key);
  if (lc != leafCache.end())
    return lc->second;
  auto t = tensorType(o);
  SmallVector<int64_t> sizes(t.getShape());
  sizes[dim] = step.chunk;
  if (auto sr = e.stackRows.find(o); sr != e.stackRows.end()) {
    Value s = stackRowsChunk(sr->second, dim, sizes);
    leafCache[key] = s;
    return s;
  }
  // A leaf an output is assembled over still holds its own values in this
  // chunk: the output's chunks written so far are the earlier ones.
  Value from = leafInState.lookup(o);
  Value s = buildDynamicSlice(step.b, step.loc, from ? from : whole(o), starts(t.getRank(), dim),
                              sizes);
  leafCache[key] = s;
  return s;
}

/// One chunk of a layer's slice read from the stack itself: the slice's
/// start indices, the chunk's start added along `dim`, one layer deep.
Value ChunkEmission::stackRowsChunk(const LoopEmitter::StackRows &sr, int64_t dim,
                                    ArrayRef<int64_t> sizes) {
  auto i64 = RankedTensorType::get({}, step.b.getIntegerType(64));
  SmallVector<Value> at;
  for (Value v : sr.starts) {
    Value w = whole(v);
    at.push_back(tensorType(w).getElementType().isInteger(64)
                     ? w
                     : buildConvert(step.b, step.loc, i64, w));
  }
  at[dim + 1] = buildElementwise(step.b, step.loc, "stablehlo.add", {at[dim + 1], step.start});
  SmallVector<int64_t> deep{1};
  deep.append(sizes.begin(), sizes.end());
  Value s = buildDynamicSlice(step.b, step.loc, whole(sr.stack), at, deep);
  auto t = RankedTensorType::get(sizes, tensorType(s).getElementType());
  return buildReshape(step.b, step.loc, t, s);
}

/// `x`'s operands in this chunk; a sink's initial state is left null.
SmallVector<Value> ChunkEmission::operandsOf(Operation *x, const Accumulator *acc) {
  SmallVector<Value> operands;
  for (auto [i, o] : llvm::enumerate(x->getOperands())) {
    if (acc && acc->isInitialState(i)) {
      operands.push_back(Value());
      continue;
    }
    if (auto r = e.relayouts.find({x, static_cast<unsigned>(i)}); r != e.relayouts.end()) {
      // The transpose folds into the dot's dimension numbers.
      Value &back = relaidBack[r->second.carried];
      if (!back)
        back = buildTranspose(step.b, step.loc, whole(r->second.carried), r->second.back);
      operands.push_back(back);
      continue;
    }
    int64_t d = plan.operandDims.lookup(x)[i];
    operands.push_back(d >= 0 ? chunkOperand(o, d) : whole(o));
  }
  return operands;
}

void ChunkEmission::emitSplatConstant(Operation *x) {
  OpBuilder &b = step.b;
  auto dense = llvm::cast<DenseElementsAttr>(x->getAttr("value"));
  auto t = withDim(tensorType(x->getResult(0)), plan.dimOf.lookup(x->getResult(0)),
                   step.chunk);
  Value v = buildGenericOp(b, x->getLoc(), "stablehlo.constant", {}, {t},
                           {b.getNamedAttr("value", dense.resizeSplat(t))})
                ->getResult(0);
  chunkOf[x->getResult(0)] = v;
}

/// A chunked op: the same op on chunk types (slice sizes shrunk; an iota
/// along the split dimension offset by the chunk's start).
void ChunkEmission::emitChunkedOp(Operation *x, ValueRange operands) {
  OpBuilder &b = step.b;
  OpKind kind = getOpKind(x);
  if (isConstantLike(x)) // stablehlo.constant or arith.constant: a splat
    return emitSplatConstant(x);
  Operation *y = b.clone(*x);
  y->setOperands(operands);
  // A Shardy rule (jax's LAPACK calls carry one) states the full sizes.
  y->removeAttr("sdy.sharding_rule");
  for (auto [r, res] : llvm::enumerate(x->getResults())) {
    auto it = plan.dimOf.find(res);
    if (it != plan.dimOf.end())
      y->getResult(r).setType(withDim(tensorType(res), it->second, step.chunk));
  }
  int64_t d = plan.dimOf.lookup(x->getResult(0));
  if (kind == OpKind::Slice) {
    SmallVector<int64_t> limits = *getI64Array(x, "limit_indices");
    limits[d] = step.chunk;
    y->setAttr("limit_indices", b.getDenseI64ArrayAttr(limits));
  } else if (std::optional<SmallVector<int64_t>> sizes = getI64Array(x, "slice_sizes")) {
    // dynamic_slice, gather: a slice that took the chunked operand dimension
    // whole takes the chunk (a gather's batching dimensions slice 1).
    int64_t e = plan.operandDims.lookup(x)[0];
    auto in = tensorType(x->getOperand(0));
    if (e >= 0 && e < int64_t(sizes->size()) && (*sizes)[e] == in.getDimSize(e)) {
      (*sizes)[e] = step.chunk;
      y->setAttr("slice_sizes", b.getDenseI64ArrayAttr(*sizes));
    }
  }
  if (kind == OpKind::Scatter)
    shiftScatterIndices(x, y);
  for (auto [r, res] : llvm::enumerate(x->getResults()))
    chunkOf[res] = y->getResult(r);
  if (kind == OpKind::Iota && IotaView(x).getIotaDimension() == d) {
    auto t = tensorType(y->getResult(0));
    Value off = broadcastStart(b, step.loc, step.start, t);
    chunkOf[x->getResult(0)] =
        buildElementwise(b, step.loc, "stablehlo.add", {y->getResult(0), off});
  }
}

/// A scatter chunked along the input dimension its indices address: the
/// chunk's scatter `y` reads the indices less the chunk's start, and XLA
/// drops the updates that then fall outside the chunk.
void ChunkEmission::shiftScatterIndices(Operation *x, Operation *y) {
  int64_t e = plan.operandDims.lookup(x)[0];
  std::optional<OpDimRule> rule = getOpDimRule(x);
  const DimFactor *f = rule && e >= 0 ? rule->forOperand(0, e) : nullptr;
  if (!f || !f->shiftsIndices)
    return;
  unsigned n = x->getNumOperands() / 2;
  Value idx = y->getOperand(n);
  OpBuilder::InsertionGuard guard(step.b);
  step.b.setInsertionPoint(y);
  Value off = broadcastStart(step.b, step.loc, step.start, tensorType(idx));
  y->setOperand(n, buildElementwise(step.b, step.loc, "stablehlo.subtract", {idx, off}));
}

SmallVector<Value> ChunkEmission::run(ValueRange state) {
  SmallVector<Value> next;
  unsigned si = 0;
  unsigned outputsAt = state.size() - plan.outputs.size();
  for (auto [k, leaf] : llvm::enumerate(e.outputLeaf))
    if (leaf)
      leafInState[leaf] = state[outputsAt + k];
  for (Operation *x : plan.order) {
    if (e.osm && emitOnlineSoftmaxChunkOp(plan, *e.osm, step.b, x, step.chunk, chunkOf))
      continue;
    auto acc = e.accumulators.find(x);
    bool isSink = acc != e.accumulators.end();
    SmallVector<Value> operands = operandsOf(x, isSink ? acc->second.get() : nullptr);
    if (!isSink) {
      emitChunkedOp(x, operands);
      continue;
    }
    // A sink: the op on chunks gives a partial result to accumulate.
    unsigned n = acc->second->numState();
    acc->second->step(step, operands, state.slice(si, n), next);
    si += n;
  }
  for (Value v : plan.outputs) {
    auto t = tensorType(v);
    next.push_back(buildDynamicUpdateSlice(step.b, step.loc, state[si++], chunkOf.lookup(v),
                                           starts(t.getRank(), plan.dimOf.lookup(v))));
  }
  return next;
}

//===----------------------------------------------------------------------===//
// LoopEmitter
//===----------------------------------------------------------------------===//

LoopEmitter::LoopEmitter(const Plan &plan) : plan(plan) {
  if (plan.osm)
    osm.emplace(*plan.osm);
  for (Operation *op : plan.order)
    if (plan.sinks.contains(op))
      accumulators[op] = makeAccumulator(op);
}

std::unique_ptr<Accumulator> LoopEmitter::makeAccumulator(Operation *sink) {
  if (osm)
    if (std::unique_ptr<Accumulator> a = makeOnlineSoftmaxAccumulator(*osm, sink))
      return a;
  switch (plan.sinks.lookup(sink)) {
  case SinkKind::Reduce:
  case SinkKind::Dot:
    return makeReductionAccumulator(sink, plan.minorContraction, &plan);
  case SinkKind::TopK:
  case SinkKind::SortTopK:
    return makeTopKAccumulator(sink);
  case SinkKind::Scatter:
    return makeScatterAccumulator(sink);
  case SinkKind::GatherSelect:
    return makeGatherSelectAccumulator(sink, plan.size);
  }
  llvm_unreachable("unknown sink kind");
}

/// An output assembled chunk by chunk is assembled in the buffer of a whole
/// value of its type that the region reads only as the same chunks and
/// nothing else reads (it dies at the loop, and no second pass recomputes
/// from it: recomputedBySecondPass): each iteration reads its chunk
/// of that value before writing its chunk of the output there. Split by
/// columns, a loop body's `acc + partial` then updates acc in place instead
/// of filling a second buffer of its size.
void LoopEmitter::chooseOutputBuffers() {
  outputLeaf.assign(plan.outputs.size(), Value());
  if (plan.osm)
    return; // the online softmax emits its ops its own way
  for (auto [k, v] : llvm::enumerate(plan.outputs)) {
    int64_t d = plan.dimOf.lookup(v);
    for (Operation *x : plan.order) {
      for (Value o : x->getOperands())
        if (!outputLeaf[k] && o.getType() == v.getType() && !plan.dimOf.count(o) &&
            !llvm::is_contained(outputLeaf, o) && readOnlyAsChunks(o, d))
          outputLeaf[k] = o;
    }
  }
}

/// Whether every reader of `v` is an op of the region reading it chunked
/// along `dim` (not a sink's initial state), and `v` is neither a constant
/// nor a function's argument (which XLA does not overwrite).
bool LoopEmitter::readOnlyAsChunks(Value v, int64_t dim) const {
  if (auto arg = llvm::dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (!owner || getOpKind(owner) != OpKind::While)
      return false;
  } else if (isConstantLike(v.getDefiningOp())) {
    return false;
  }
  for (OpOperand &use : v.getUses()) {
    Operation *u = use.getOwner();
    unsigned i = use.getOperandNumber();
    auto dims = plan.operandDims.find(u);
    if (!plan.inPlan(u) || dims == plan.operandDims.end() || dims->second[i] != dim)
      return false;
    if (auto acc = accumulators.find(u);
        acc != accumulators.end() && acc->second->isInitialState(i))
      return false;
  }
  return !recomputedBySecondPass(v);
}

/// Whether a second pass (Plan::later) reads a value that the region
/// computes from `v` and does not deliver: a later split recomputes it in
/// chunks from `v`, so `v` must outlive this loop. Assembled over, XLA
/// copies it whole (twice per iteration in a checkpointed decoder's
/// backward body, where the stash of dq W_q^T was written over the
/// incoming gradient that the second pass reads again).
bool LoopEmitter::recomputedBySecondPass(Value v) const {
  if (plan.later.empty())
    return false;
  llvm::DenseSet<Value> seen;
  SmallVector<Value> stack{v};
  while (!stack.empty()) {
    Value x = stack.pop_back_val();
    if (!seen.insert(x).second || (x != v && llvm::is_contained(plan.outputs, x)))
      continue;
    for (Operation *user : x.getUsers()) {
      Operation *u = plan.block->findAncestorOpInBlock(*user);
      if (!u)
        continue;
      if (plan.later.contains(u))
        return true;
      if (plan.chunked.contains(u))
        stack.append(u->result_begin(), u->result_end());
    }
  }
  return false;
}

/// Whether a copy of `v` that the loop carries takes the place of a buffer
/// the loop would carry anyway: `v` is read only by ops of the region, and
/// is (through reshapes and transposes, views XLA makes of a buffer, read
/// by nothing else) the result of an op that is no fusible computation
/// (attention's k = h W_k). A fusible one (an argument scaled) the body
/// recomputes in whatever layout its dots read; an argument its caller
/// keeps, so a copy would take its bytes again.
static bool carriedInstead(const Plan &plan, Value v) {
  if (!llvm::all_of(v.getUsers(), [&](Operation *u) { return plan.inPlan(u); }))
    return false;
  for (unsigned steps = 0; steps < 16; ++steps) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    OpKind kind = getOpKind(def);
    if (kind != OpKind::Reshape && kind != OpKind::Transpose)
      return !FusionModel::isFusible(def) && !isConstantLike(def);
    v = def->getOperand(0);
    if (!v.hasOneUse())
      return false;
  }
  return false;
}

/// A whole operand of a dot in the region whose batch dimensions do not
/// lead, a buffer the loop would carry (carriedInstead), is carried in the layout carriedOperandLayout gives (behind an
/// optimization_barrier, made where the operand is), and each chunk
/// transposes it back, which XLA folds into the dot: XLA:CPU would
/// otherwise copy it into that layout in every iteration (attention's k and
/// v, [S, H, D], per head: three whole copies per iteration in a
/// transformer block's SGD step). Written with minor-contraction (the
/// forms XLA:CPU's ynn fusions take), not for an online softmax's loop.
void LoopEmitter::relayoutWholeOperands() {
  // Inside a layer loop's body the copies are whole [S, d]-sized values
  // beside the body's own, where the floor is what no chunk shrinks: the
  // 4-layer decoder's floor rose from 57.2 to 63.1 MiB with them.
  if (!plan.minorContraction || plan.osm || inLoopBody(plan))
    return;
  // Which operands, before any copy adds a reader outside the region.
  SmallVector<std::tuple<Operation *, unsigned, SmallVector<int64_t>>> chosen;
  for (Operation *x : plan.order) {
    if (getOpKind(x) != OpKind::DotGeneral)
      continue;
    for (unsigned i = 0; i < 2; ++i) {
      Value o = x->getOperand(i);
      Operation *def = o.getDefiningOp();
      if (!def || plan.operandDims.lookup(x)[i] >= 0 || plan.dimOf.count(o) ||
          isConstantLike(def) || plan.inPlan(def) || !carriedInstead(plan, o))
        continue;
      if (std::optional<SmallVector<int64_t>> perm = carriedOperandLayout(x, i))
        chosen.emplace_back(x, i, *perm);
    }
  }
  SmallVector<std::tuple<Value, SmallVector<int64_t>, Value>> made;
  for (auto &[x, i, perm] : chosen) {
    Value o = x->getOperand(i);
    Value carried;
    for (auto &[v, p, c] : made)
      if (v == o && p == perm)
        carried = c;
    if (!carried) {
      OpBuilder b(x->getContext());
      b.setInsertionPointAfter(o.getDefiningOp());
      Value t = buildTranspose(b, x->getLoc(), o, perm);
      carried = buildOptimizationBarrier(b, x->getLoc(), {t})->getResult(0);
      made.emplace_back(o, perm, carried);
    }
    SmallVector<int64_t> back(perm.size());
    for (auto [j, d] : llvm::enumerate(perm))
      back[d] = static_cast<int64_t>(j);
    relayouts[{x, i}] = Relayout{carried, back};
  }
}

/// A leaf the region reads only by rows along one dimension that is one
/// layer's slice of a stacked value the layer loop carries (the layer's
/// input, reshape(dynamic_slice(stack, layer, 0, ..)), behind the
/// checkpoint's optimization_barrier) is read from the stack chunk by
/// chunk: the loop carries the stack, which lives anyway, and the slice,
/// whole, dies with its last reader outside the loop (in a checkpointed
/// decoder's backward body, the key and value projections) instead of
/// living through the loops (2 MiB of the decoder's floor).
static std::optional<std::pair<Value, SmallVector<Value>>> stackSliceOf(const Plan &plan,
                                                                       Value o) {
  Value v = o;
  if (Operation *d = v.getDefiningOp(); d && getOpKind(d) == OpKind::OptimizationBarrier)
    v = d->getOperand(llvm::cast<OpResult>(v).getResultNumber());
  Operation *r = v.getDefiningOp();
  if (!r || getOpKind(r) != OpKind::Reshape)
    return std::nullopt;
  Operation *ds = r->getOperand(0).getDefiningOp();
  if (!ds || getOpKind(ds) != OpKind::DynamicSlice)
    return std::nullopt;
  auto stack = llvm::dyn_cast<BlockArgument>(ds->getOperand(0));
  Operation *loop = plan.block->getParentOp();
  if (!stack || stack.getOwner() != plan.block || !loop || getOpKind(loop) != OpKind::While)
    return std::nullopt;
  ArrayRef<int64_t> sliceShape = tensorType(ds->getResult(0)).getShape();
  ArrayRef<int64_t> rows = tensorType(o).getShape();
  if (sliceShape.empty() || sliceShape.front() != 1 || sliceShape.drop_front() != rows ||
      tensorType(stack).getShape().drop_front() != rows)
    return std::nullopt;
  SmallVector<Value> starts(ds->getOperands().drop_front());
  for (Value i : starts) {
    Operation *d = i.getDefiningOp();
    if (d && !isConstantLike(d) && d->getBlock() == plan.block &&
        !d->isBeforeInBlock(plan.order.front()))
      return std::nullopt;
  }
  return std::make_pair(Value(stack), starts);
}

void LoopEmitter::findStackRows() {
  if (!inLoopBody(plan) || plan.osm)
    return;
  for (Operation *x : plan.order)
    for (auto [i, o] : llvm::enumerate(x->getOperands())) {
      if (plan.dimOf.count(o) || stackRows.count(o) || llvm::is_contained(outputLeaf, o))
        continue;
      int64_t d = plan.operandDims.lookup(x)[i];
      bool byRows = d >= 0 && llvm::all_of(o.getUses(), [&](OpOperand &use) {
        Operation *u = use.getOwner();
        if (!plan.inPlan(u))
          return true;
        if (auto acc = accumulators.find(u);
            acc != accumulators.end() && acc->second->isInitialState(use.getOperandNumber()))
          return false;
        return plan.operandDims.lookup(u)[use.getOperandNumber()] == d;
      });
      if (!byRows)
        continue;
      if (auto found = stackSliceOf(plan, o))
        stackRows[o] = StackRows{found->first, found->second};
    }
}

/// Values the region reads from outside (constants are cloned instead; a
/// sink's initial state is read before the loop).
void LoopEmitter::collectLiveIns() {
  llvm::SetVector<Value> ins;
  for (Operation *x : plan.order)
    for (auto [i, o] : llvm::enumerate(x->getOperands())) {
      if (auto r = relayouts.find({x, static_cast<unsigned>(i)}); r != relayouts.end()) {
        ins.insert(r->second.carried);
        continue;
      }
      if (plan.dimOf.count(o))
        continue;
      if (auto acc = accumulators.find(x);
          acc != accumulators.end() && acc->second->isInitialState(i))
        continue;
      if (llvm::is_contained(outputLeaf, o))
        continue; // the output's state carries it
      if (auto sr = stackRows.find(o); sr != stackRows.end()) {
        ins.insert(sr->second.stack);
        for (Value v : sr->second.starts)
          if (!v.getDefiningOp() || !isConstantLike(v.getDefiningOp()))
            ins.insert(v);
        continue;
      }
      if (plan.osm && isOnlineSoftmaxBroadcast(*plan.osm, x))
        continue; // replaced by the running shift / applied after the loop
      Operation *def = o.getDefiningOp();
      if (def && isConstantLike(def))
        continue;
      ins.insert(o);
    }
  rematerialiseLiveIns(ins);
  liveIns.assign(ins.begin(), ins.end());
}

/// A loop operand is a buffer, so a live-in that XLA would have fused into
/// the region (a transpose, broadcast or reshape of an argument) would be
/// materialised whole just to enter the loop. Such a value is recomputed in
/// the body from its operands when they take no more bytes than it does
/// (operands the loop carries anyway cost nothing). Applied repeatedly.
void LoopEmitter::rematerialiseLiveIns(llvm::SetVector<Value> &ins) {
  auto isConstant = [](Value o) {
    Operation *d = o.getDefiningOp();
    return d && isConstantLike(d);
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (Value v : ins.takeVector()) {
      Operation *def = v.getDefiningOp();
      bool candidate = def && FusionModel::isFusible(def) && def->getNumRegions() == 0 &&
                       def->getBlock() == plan.block && !plan.inPlan(def) &&
                       def->getNumResults() == 1;
      int64_t added = 0;
      if (candidate)
        for (Value o : def->getOperands())
          if (!isConstant(o) && !ins.contains(o))
            added += bytesOf(o);
      if (!candidate || added > bytesOf(v)) {
        ins.insert(v);
        continue;
      }
      remat.push_back(def);
      for (Value o : def->getOperands())
        if (!isConstant(o))
          ins.insert(o);
      changed = true;
    }
  }
  llvm::sort(remat, [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
}

/// Recomputes the rematerialised live-ins at `b` (a loop body, or the
/// remainder step: there too the original would stay live across the loop).
void LoopEmitter::cloneRemat(OpBuilder &b, IRMapping &outer) {
  for (Operation *op : remat) {
    for (Value o : op->getOperands())
      if (!outer.contains(o))
        b.clone(*o.getDefiningOp(), outer); // a constant
    b.clone(*op, outer);
  }
}

/// Before the first outside reader of what the region produces (the
/// topological sort at the end moves it after every live-in).
Operation *LoopEmitter::insertionPoint() const {
  Block *block = plan.block;
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
  return ip;
}

/// Accumulators (in region order), then the output buffers.
SmallVector<Value> LoopEmitter::initialState(OpBuilder &b, Location loc) {
  SmallVector<Value> state;
  for (Operation *op : plan.order)
    if (auto it = accumulators.find(op); it != accumulators.end())
      it->second->init(b, loc, state);
  for (auto [v, leaf] : llvm::zip(plan.outputs, outputLeaf))
    state.push_back(leaf ? leaf : zerosLike(b, loc, tensorType(v)));
  return state;
}

/// while (i < n) { state = chunk(i * c, state) }, carrying (i, state, live-ins).
Operation *LoopEmitter::buildLoop(OpBuilder &b, Location loc, ValueRange init, int64_t chunk,
                                  int64_t n) {
  unsigned numState = init.size();
  SmallVector<Value> operands{buildScalarI64(b, loc, 0)};
  operands.append(init.begin(), init.end());
  operands.append(liveIns);
  Operation *loop = buildWhile(b, loc, operands);
  Block &cond = loop->getRegion(0).front();
  OpBuilder cb = OpBuilder::atBlockEnd(&cond);
  Value lt = buildCompare(cb, loc, cond.getArgument(0), buildScalarI64(cb, loc, n), "LT",
                          "SIGNED");
  buildReturn(cb, loc, lt);

  Block &body = loop->getRegion(1).front();
  OpBuilder bb = OpBuilder::atBlockEnd(&body);
  Value i = body.getArgument(0);
  Value start =
      buildElementwise(bb, loc, "stablehlo.multiply", {i, buildScalarI64(bb, loc, chunk)});
  // Running top-k states start as zeros: the first chunk replaces them. The
  // flag is built once per such accumulator (all equal; the extra ones are
  // dead scalars).
  Value isFirst;
  for (auto &[op, acc] : accumulators)
    if (acc->needsFirstFlag())
      isFirst = buildCompare(bb, loc, i, buildScalarI64(bb, loc, 0), "EQ", "SIGNED");
  IRMapping outer;
  for (auto [k, v] : llvm::enumerate(liveIns))
    outer.map(v, body.getArgument(1 + numState + k));
  cloneRemat(bb, outer);
  SmallVector<Value> next =
      emitChunk(bb, loc, outer, start, chunk, isFirst, body.getArguments().slice(1, numState));
  SmallVector<Value> yield{
      buildElementwise(bb, loc, "stablehlo.add", {i, buildScalarI64(bb, loc, 1)})};
  yield.append(next);
  for (unsigned k = 0; k < liveIns.size(); ++k)
    yield.push_back(body.getArgument(1 + numState + k));
  buildReturn(bb, loc, yield);
  return loop;
}

/// The last `rem` elements, straight-line after the loop. Its start comes
/// from the loop's final counter through an optimization_barrier, so that
/// XLA can neither fold it (the trip count is known) nor schedule the
/// remainder step before the loop, where its temporaries would stay live
/// during every iteration. XLA turns the barrier into control dependencies
/// on its operands' producers, so it also carries the smallest loop result
/// (a constant counter alone would tie the remainder to nothing).
void LoopEmitter::emitRemainder(OpBuilder &b, Location loc, Operation *loop,
                                SmallVector<Value> &state, int64_t chunk, int64_t rem) {
  IRMapping outer;
  for (Value v : liveIns)
    outer.map(v, v);
  cloneRemat(b, outer);
  unsigned tie = 0;
  for (unsigned k = 1; k < state.size(); ++k)
    if (bytesOf(state[k]) < bytesOf(state[tie]))
      tie = k;
  Operation *barrier = buildOptimizationBarrier(b, loc, {loop->getResult(0), state[tie]});
  Value counter = barrier->getResult(0);
  state[tie] = barrier->getResult(1);
  Value start =
      buildElementwise(b, loc, "stablehlo.multiply", {counter, buildScalarI64(b, loc, chunk)});
  state = emitChunk(b, loc, outer, start, rem, Value(), state);
}

SmallVector<Value> LoopEmitter::emitChunk(OpBuilder &b, Location loc, IRMapping &outer,
                                          Value start, int64_t c, Value isFirst,
                                          ValueRange state) {
  return ChunkEmission(*this, b, loc, outer, start, c, isFirst).run(state);
}

/// Hands the final state to the region's outside readers.
void LoopEmitter::deliverResults(OpBuilder &b, Location loc, ValueRange state,
                                 SmallVectorImpl<Operation *> &dead) {
  Block *block = plan.block;
  auto replaceOutside = [&](Value from, Value to) {
    from.replaceUsesWithIf(to, [&](OpOperand &use) {
      Operation *u = block->findAncestorOpInBlock(*use.getOwner());
      return !(u && u == use.getOwner() && plan.inPlan(u));
    });
  };
  unsigned si = 0;
  for (Operation *op : plan.order) {
    auto it = accumulators.find(op);
    if (it == accumulators.end())
      continue;
    unsigned n = it->second->numState();
    it->second->deliver(b, loc, state.slice(si, n), replaceOutside, dead);
    si += n;
  }
  for (Value v : plan.outputs)
    replaceOutside(v, state[si++]);
}

void LoopEmitter::eraseReplaced(ArrayRef<Operation *> dead) {
  // An op can be both delivered dead and in the plan's order: erase once.
  llvm::SmallPtrSet<Operation *, 16> erased;
  auto eraseOnce = [&](Operation *op) {
    if (erased.insert(op).second)
      op->erase();
  };
  for (Operation *op : dead)
    eraseOnce(op);
  for (Operation *op : llvm::reverse(plan.order))
    if (!erased.contains(op) && op->use_empty())
      eraseOnce(op);
  for (Operation *op : llvm::reverse(remat))
    if (!erased.contains(op) && op->use_empty())
      eraseOnce(op);
  if (plan.osm)
    eraseOnlineSoftmaxChains(*plan.osm);
  (void)sortTopologically(plan.block);
}

Operation *LoopEmitter::apply(int64_t chunk) {
  Location loc = plan.seedOp->getLoc();
  int64_t n = plan.size / chunk, rem = plan.size % chunk;
  chooseOutputBuffers();
  relayoutWholeOperands();
  findStackRows();
  collectLiveIns();
  OpBuilder b(insertionPoint());
  SmallVector<Value> init = initialState(b, loc);
  Operation *loop = buildLoop(b, loc, init, chunk, n);
  b.setInsertionPointAfter(loop);
  SmallVector<Value> state(loop->getResults().slice(1, init.size()));
  if (rem > 0) {
    emitRemainder(b, loc, loop, state, chunk, rem);
    auto unit = UnitAttr::get(loop->getContext());
    for (Operation *op = loop->getNextNode(); op && op != &*b.getInsertionPoint();
         op = op->getNextNode())
      op->setDiscardableAttr(kRemainderAttr, unit);
  }
  SmallVector<Operation *> dead;
  deliverResults(b, loc, state, dead);
  eraseReplaced(dead);
  return loop;
}

} // namespace

Operation *emitLoop(const Plan &plan, int64_t chunk) { return LoopEmitter(plan).apply(chunk); }

} // namespace memfit::split
