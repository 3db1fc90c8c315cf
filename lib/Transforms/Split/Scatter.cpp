//===- Scatter.cpp - a scatter into a running result ----------------------===//
//
// jax's segment_sum, `.at[idx].add` and the gradient of every gather
// (embedding lookups, take_along_axis, a GNN's nodes[senders]) scatter rows
// of updates into a result. Split along those rows, the scatter is a sink
// whose running state is its own result: it starts as the scatter's input
// (the zeros jax scatters into) and each chunk scatters its updates into
// it, with the op's own update computation. The DimMapping rule allows this
// only for computations that give the same result in any order of the
// updates (add, multiply, max, min, and, or), so repeated indices across
// chunks combine as they would in one scatter (float sums up to rounding).
// The state is carried whole and updated in place by XLA; the input is
// not carried beside it.
//
//===----------------------------------------------------------------------===//
#include "Scatter.h"

#include "Reductions.h"

using namespace mlir;

namespace memfit::split {
namespace {

class ScatterAccumulator : public Accumulator {
public:
  using Accumulator::Accumulator;

  /// The scatter's inputs (its first numState() operands).
  bool isInitialState(unsigned i) const override { return i < numState(); }

  void init(OpBuilder &, Location, SmallVectorImpl<Value> &state) const override {
    for (unsigned k = 0; k < numState(); ++k)
      state.push_back(sink->getOperand(k));
  }

  void step(ChunkStep &s, ValueRange operands, ValueRange state,
            SmallVectorImpl<Value> &next) override {
    SmallVector<Value> ops(state.begin(), state.end());
    ops.append(operands.begin() + numState(), operands.end());
    Operation *y = applyToChunk(s.b, sink, ops);
    next.append(y->getResults().begin(), y->getResults().end());
  }
};

} // namespace

std::unique_ptr<Accumulator> makeScatterAccumulator(Operation *sink) {
  return std::make_unique<ScatterAccumulator>(sink);
}

} // namespace memfit::split
