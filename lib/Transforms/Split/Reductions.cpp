//===- Reductions.cpp - accumulators for reduce and dot_general -----------===//
//
// A reduce with add/mul/max/min/and/or combines its running state with the
// chunk's partial result elementwise; any other reducer (variadic
// argmax/argmin) combines by reducing the stacked (accumulator, partial)
// pair with the op's own body. A dot_general contracting the split
// dimension adds partial products (with memfit-split{minor-contraction},
// in the form XLA:CPU's ynn fusions take: MinorContraction.h).
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

class DotAccumulator : public Accumulator {
public:
  DotAccumulator(Operation *sink, bool minorContraction) : Accumulator(sink) {
    if (minorContraction)
      form = planMinorContraction(sink);
  }

  /// In the minor-contraction form the state has the emitted dot's layout
  /// ([B, N, M] when the operands were swapped): accumulated as it comes,
  /// transposed once in `deliver`.
  void init(OpBuilder &b, Location loc, SmallVectorImpl<Value> &state) const override {
    auto t = form ? form->resultType : tensorType(sink->getResult(0));
    state.push_back(zerosLike(b, loc, t));
  }

  void step(ChunkStep &s, ValueRange operands, ValueRange state,
            SmallVectorImpl<Value> &next) override {
    Value partial = form ? emitMinorContraction(s.b, s.loc, sink, *form, operands[0], operands[1])
                         : applyToChunk(s.b, sink, operands)->getResult(0);
    next.push_back(buildElementwise(s.b, s.loc, "stablehlo.add", {state[0], partial}));
  }

  void deliver(OpBuilder &b, Location loc, ValueRange state, ReplaceOutside replace,
               SmallVectorImpl<Operation *> &dead) override {
    if (!form || form->toOriginal.empty())
      return Accumulator::deliver(b, loc, state, replace, dead);
    replace(sink->getResult(0), buildTranspose(b, loc, state[0], form->toOriginal));
  }

private:
  std::optional<MinorContraction> form;
};

} // namespace

std::unique_ptr<Accumulator> makeReductionAccumulator(Operation *sink, bool minorContraction) {
  if (getOpKind(sink) == OpKind::DotGeneral)
    return std::make_unique<DotAccumulator>(sink, minorContraction);
  return std::make_unique<ReduceAccumulator>(sink);
}

} // namespace memfit::split
