//===- Reductions.cpp - accumulators for reduce and dot_general -----------===//
//
// A reduce with add/mul/max/min/and/or combines its running state with the
// chunk's partial result elementwise; any other reducer (variadic
// argmax/argmin) combines by reducing the stacked (accumulator, partial)
// pair with the op's own body. A dot_general contracting the split
// dimension adds partial products (with memfit-split{minor-contraction},
// in the form XLA:CPU's ynn fusions take: MinorContraction.h). In a layer
// loop's body, a dot whose whole result is only stored into a slice of a
// stacked value the layer loop carries (jax's scan transpose writes each
// layer's weight gradient into the stacked gradient with
// dynamic_update_slice(G, view(dW), layer, 0, ..)) accumulates straight in
// that slice: the loop carries G, zeroes the slice once and adds each
// partial product there, so no zero-initialised accumulator of the
// gradient's size lives beside G, and no copy of it follows the loop.
//
//===----------------------------------------------------------------------===//
#include "Reductions.h"

#include "MinorContraction.h"

using namespace mlir;

namespace memfit::split {

void Accumulator::deliver(OpBuilder &, Location, ValueRange state, ReplaceOutside replace,
                          SmallVectorImpl<Operation *> &) {
  for (auto [v, s] : llvm::zip(sink->getResults(), state))
    replace(v, s);
}

void initReduceState(OpBuilder &b, Location loc, Operation *reduce,
                     SmallVectorImpl<Value> &state) {
  ReduceView r(reduce);
  for (auto [res, init] : llvm::zip(reduce->getResults(), r.getInitValues()))
    state.push_back(buildBroadcastInDim(b, loc, tensorType(res), init, {}));
}

Operation *applyToChunk(OpBuilder &b, Operation *sink, ValueRange operands) {
  Operation *y = b.clone(*sink);
  y->setOperands(operands);
  return y;
}

namespace {

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

class ReduceAccumulator : public Accumulator {
public:
  using Accumulator::Accumulator;

  void init(OpBuilder &b, Location loc, SmallVectorImpl<Value> &state) const override {
    initReduceState(b, loc, sink, state);
  }

  void step(ChunkStep &s, ValueRange operands, ValueRange state,
            SmallVectorImpl<Value> &next) override {
    ReduceView rv(sink);
    Operation *y = applyToChunk(s.b, sink, operands);
    llvm::StringRef comb = combinerName(rv.getReducerKind());
    if (rv.getNumInputs() == 1 && !comb.empty())
      next.push_back(buildElementwise(s.b, s.loc, comb, {state[0], y->getResult(0)}));
    else
      combineWithBody(s, y, operands, state, next);
  }

private:
  /// Reduces the stacked (accumulator, partial) pairs with the op's body.
  void combineWithBody(ChunkStep &s, Operation *partial, ValueRange operands,
                       ValueRange state, SmallVectorImpl<Value> &next) {
    OpBuilder &b = s.b;
    Location loc = s.loc;
    unsigned n = ReduceView(sink).getNumInputs();
    SmallVector<Value> stacked;
    for (unsigned j = 0; j < n; ++j) {
      auto t = tensorType(sink->getResult(j));
      SmallVector<int64_t> shape{1};
      shape.append(t.getShape().begin(), t.getShape().end());
      auto one = RankedTensorType::get(shape, t.getElementType());
      Value a = buildReshape(b, loc, one, state[j]);
      Value p = buildReshape(b, loc, one, partial->getResult(j));
      stacked.push_back(buildConcatenate(b, loc, {a, p}, 0));
    }
    for (unsigned j = 0; j < n; ++j)
      stacked.push_back(operands[n + j]);
    Operation *z = buildGenericOp(
        b, loc, "stablehlo.reduce", stacked, sink->getResultTypes(),
        {b.getNamedAttr("dimensions", b.getDenseI64ArrayAttr({0}))}, 1);
    IRMapping none;
    sink->getRegion(0).cloneInto(&z->getRegion(0), none);
    b.setInsertionPointAfter(z);
    for (unsigned j = 0; j < n; ++j)
      next.push_back(z->getResult(j));
  }
};

/// Where a layer loop's body stores a sink's whole result: the
/// dynamic_update_slice of a value the loop carries, reached through views
/// (transpose, reshape, a broadcast that adds unit dimensions), each the
/// only reader of the one before.
struct StackedSlice {
  Operation *update = nullptr;
  SmallVector<Operation *> views; // from the sink's result to the update
};

bool isView(Operation *op) {
  OpKind k = getOpKind(op);
  if (k == OpKind::Transpose || k == OpKind::Reshape)
    return true;
  return k == OpKind::BroadcastInDim &&
         tensorType(op->getOperand(0)).getNumElements() ==
             tensorType(op->getResult(0)).getNumElements();
}

/// Whether the slice's start indices are defined before the region (so
/// before the loop), or are constants, which are cloned where used.
bool startsBeforeRegion(const Plan &plan, Operation *update) {
  for (Value i : update->getOperands().drop_front(2)) {
    Operation *d = i.getDefiningOp();
    if (d && !isConstantLike(d) && d->getBlock() == plan.block &&
        !d->isBeforeInBlock(plan.order.front()))
      return false;
  }
  return true;
}

/// The carried slot `update` writes: its operand is the body's argument i,
/// read by nothing else, and its result is returned as slot i.
bool updatesCarriedSlot(const Plan &plan, Operation *update) {
  auto g = llvm::dyn_cast<BlockArgument>(update->getOperand(0));
  Operation *loop = plan.block->getParentOp();
  if (!g || g.getOwner() != plan.block || !loop || getOpKind(loop) != OpKind::While ||
      plan.block->getParent() != &loop->getRegion(1) || !g.hasOneUse())
    return false;
  Value r = update->getResult(0);
  if (!r.hasOneUse())
    return false;
  OpOperand &use = *r.getUses().begin();
  return use.getOwner() == plan.block->getTerminator() &&
         use.getOperandNumber() == g.getArgNumber();
}

std::optional<StackedSlice> findStackedSlice(const Plan &plan, Operation *sink) {
  if (sink->getNumResults() != 1 || !inProgramLoop(sink))
    return std::nullopt;
  StackedSlice s;
  Value v = sink->getResult(0);
  while (v.hasOneUse()) {
    Operation *u = *v.getUsers().begin();
    if (u->getBlock() != plan.block)
      return std::nullopt;
    if (isView(u)) {
      s.views.push_back(u);
      v = u->getResult(0);
      continue;
    }
    if (getOpKind(u) != OpKind::DynamicUpdateSlice || u->getOperand(1) != v ||
        !updatesCarriedSlot(plan, u) || !startsBeforeRegion(plan, u))
      return std::nullopt;
    s.update = u;
    return s;
  }
  return std::nullopt;
}

class DotAccumulator : public Accumulator {
public:
  DotAccumulator(Operation *sink, bool minorContraction, std::optional<StackedSlice> into)
      : Accumulator(sink), into(std::move(into)) {
    if (minorContraction)
      form = planMinorContraction(sink);
  }

  /// Into a stacked slice: the carried value, then the slice's start
  /// indices (read by every chunk).
  unsigned numState() const override {
    return into ? into->update->getNumOperands() - 1 : 1;
  }

  /// In the minor-contraction form the state has the emitted dot's layout
  /// ([B, N, M] when the operands were swapped): accumulated as it comes,
  /// transposed once in `deliver`.
  void init(OpBuilder &b, Location loc, SmallVectorImpl<Value> &state) const override {
    if (into) {
      SmallVector<Value> starts = startsAt(b);
      Value zeros = zerosLike(b, loc, tensorType(into->update->getOperand(1)));
      state.push_back(buildDynamicUpdateSlice(b, loc, into->update->getOperand(0), zeros, starts));
      state.append(starts.begin(), starts.end());
      return;
    }
    auto t = form ? form->resultType : tensorType(sink->getResult(0));
    state.push_back(zerosLike(b, loc, t));
  }

  void step(ChunkStep &s, ValueRange operands, ValueRange state,
            SmallVectorImpl<Value> &next) override {
    Value partial = form ? emitMinorContraction(s.b, s.loc, sink, *form, operands[0], operands[1])
                         : applyToChunk(s.b, sink, operands)->getResult(0);
    if (!into) {
      next.push_back(buildElementwise(s.b, s.loc, "stablehlo.add", {state[0], partial}));
      return;
    }
    Value update = asStored(s.b, s.loc, partial);
    ValueRange starts = state.drop_front();
    Value old = buildDynamicSlice(s.b, s.loc, state[0], starts, tensorType(update).getShape());
    Value sum = buildElementwise(s.b, s.loc, "stablehlo.add", {old, update});
    next.push_back(buildDynamicUpdateSlice(s.b, s.loc, state[0], sum, starts));
    next.append(starts.begin(), starts.end());
  }

  void deliver(OpBuilder &b, Location loc, ValueRange state, ReplaceOutside replace,
               SmallVectorImpl<Operation *> &dead) override {
    if (into) {
      into->update->getResult(0).replaceAllUsesWith(state[0]);
      dead.push_back(into->update);
      dead.append(into->views.rbegin(), into->views.rend());
      return;
    }
    if (!form || form->toOriginal.empty())
      return Accumulator::deliver(b, loc, state, replace, dead);
    replace(sink->getResult(0), buildTranspose(b, loc, state[0], form->toOriginal));
  }

private:
  /// The slice's start indices at `b` (constants cloned there).
  SmallVector<Value> startsAt(OpBuilder &b) const {
    SmallVector<Value> starts;
    for (Value i : into->update->getOperands().drop_front(2)) {
      Operation *d = i.getDefiningOp();
      starts.push_back(d && isConstantLike(d) ? b.clone(*d)->getResult(0) : i);
    }
    return starts;
  }

  /// A partial product in the stored slice's form: the sink's layout, then
  /// the views the body applies before storing it. Transposed, it is read
  /// through an optimization_barrier: XLA would fold the transpose into
  /// the dot by swapping its operands, undoing the minor-contraction form
  /// (a library dot, with its runtime scratch, in every iteration).
  Value asStored(OpBuilder &b, Location loc, Value partial) const {
    bool transposed = (form && !form->toOriginal.empty()) ||
                      llvm::any_of(into->views, [](Operation *v) {
                        return getOpKind(v) == OpKind::Transpose;
                      });
    if (transposed)
      partial = buildOptimizationBarrier(b, loc, {partial})->getResult(0);
    if (form && !form->toOriginal.empty())
      partial = buildTranspose(b, loc, partial, form->toOriginal);
    for (Operation *view : into->views) {
      Operation *y = b.clone(*view);
      y->setOperand(0, partial);
      partial = y->getResult(0);
    }
    return partial;
  }

  std::optional<MinorContraction> form;
  std::optional<StackedSlice> into;
};

} // namespace

std::unique_ptr<Accumulator> makeReductionAccumulator(Operation *sink, bool minorContraction,
                                                      const Plan *plan) {
  if (getOpKind(sink) == OpKind::DotGeneral)
    return std::make_unique<DotAccumulator>(
        sink, minorContraction, plan ? findStackedSlice(*plan, sink) : std::nullopt);
  return std::make_unique<ReduceAccumulator>(sink);
}

} // namespace memfit::split
