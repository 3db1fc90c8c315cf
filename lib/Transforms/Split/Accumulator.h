//===- Accumulator.h - what a split loop carries for one sink ---*- C++ -*-===//
//
// A sink (a reduce, a dot_general contracting the split dimension, a top-k)
// sees the split dimension in chunks; its accumulator says what the loop
// carries for it (one state value per result of the sink), how one chunk
// updates that state, and how the final state reaches the sink's readers.
// The LoopEmitter calls nothing else. One file per kind: Reductions.cpp
// (reduce, dot_general), TopK.cpp (chlo.top_k, sort prefixes),
// OnlineSoftmax.cpp (softmax-normalised contraction), Scatter.cpp (a
// scatter into a running result).
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_ACCUMULATOR_H
#define MEMFIT_TRANSFORMS_SPLIT_ACCUMULATOR_H

#include "Plan.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <memory>

namespace memfit::split {

/// Where one chunk is being emitted (the loop body or the remainder step).
struct ChunkStep {
  mlir::OpBuilder &b;
  mlir::Location loc;
  Value start;    // tensor<i64>: index of the chunk's first element
  int64_t chunk;  // the chunk's extent
  Value isFirst;  // i == 0 in a loop body that needs it; null otherwise
};

/// Replaces a value for its readers outside the region.
using ReplaceOutside = llvm::function_ref<void(Value from, Value to)>;

class Accumulator {
public:
  explicit Accumulator(Operation *sink) : sink(sink) {}
  virtual ~Accumulator() = default;

  /// The loop carries one state value per result of the sink (by default).
  virtual unsigned numState() const { return sink->getNumResults(); }
  /// Whether `step` reads ChunkStep::isFirst (a running top-k).
  virtual bool needsFirstFlag() const { return false; }
  /// Whether the sink's operand `i` is only the initial state (a scatter's
  /// input): read once before the loop, neither carried nor passed to `step`
  /// (which gets a null value in its place).
  virtual bool isInitialState(unsigned i) const { return false; }
  /// Appends the state before the first chunk.
  virtual void init(mlir::OpBuilder &b, mlir::Location loc,
                    llvm::SmallVectorImpl<Value> &state) const = 0;
  /// Appends the state after one more chunk; `operands` are the sink's
  /// operands for this chunk (chunked or whole, as the plan says).
  virtual void step(ChunkStep &s, mlir::ValueRange operands, mlir::ValueRange state,
                    llvm::SmallVectorImpl<Value> &next) = 0;
  /// Hands the final state to the sink's readers (built at `b`, after the
  /// loop). Ops that become dead but must outlive `b`'s insertion point go
  /// to `dead` (erased last).
  virtual void deliver(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange state,
                       ReplaceOutside replace, llvm::SmallVectorImpl<Operation *> &dead);

protected:
  Operation *sink;
};

} // namespace memfit::split

#endif
