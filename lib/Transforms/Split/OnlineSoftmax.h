//===- OnlineSoftmax.h - softmax-normalised contraction in chunks -*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_ONLINESOFTMAX_H
#define MEMFIT_TRANSFORMS_SPLIT_ONLINESOFTMAX_H

#include "Accumulator.h"

namespace memfit::split {

/// Recognises, in a planned region, softmax over the split dimension feeding
/// a contraction over it, or (with `logSumExp`) its max and sum alone (see
/// OnlineSoftmax.cpp); nullopt when absent.
std::optional<Plan::OnlineSoftmax> matchOnlineSoftmax(const Plan &plan, bool logSumExp);

/// For the logsumexp form: no planned op but the sum reads e (the running
/// shift differs from the final max; e's other readers must be a second
/// pass). Always true for the contraction form.
bool checkLogSumExpAlone(const Plan &plan, const Plan::OnlineSoftmax &o);

/// What the online softmax's three sinks share while one loop is emitted:
/// the chunk's shift and corrections (set by the running max, read by the
/// sum and the contraction) and the final sum (read after the loop).
struct OnlineSoftmaxRun {
  explicit OnlineSoftmaxRun(const Plan::OnlineSoftmax &o) : o(o) {}
  const Plan::OnlineSoftmax &o;
  Value shiftX, corrL, corrAcc, finalSum;
};

/// The accumulator of `sink` when it is the online softmax's max, sum or
/// contraction; null otherwise.
std::unique_ptr<Accumulator> makeOnlineSoftmaxAccumulator(OnlineSoftmaxRun &run,
                                                          Operation *sink);

/// The broadcasts of the running max and sum: they read no live-in (the
/// loop substitutes the running shift; the sum is divided by after it).
bool isOnlineSoftmaxBroadcast(const Plan::OnlineSoftmax &o, Operation *op);

/// Emits the chunked form of `op` when the online softmax replaces it (the
/// shift broadcast, the division and its broadcast); false for other ops.
bool emitOnlineSoftmaxChunkOp(const Plan &plan, OnlineSoftmaxRun &run, mlir::OpBuilder &b,
                              Operation *op, int64_t chunk,
                              llvm::DenseMap<Value, Value> &chunkOf);

/// Erases the outside chains from the max and sum to their broadcasts once
/// the loop has replaced them (and the broadcast constants they read).
void eraseOnlineSoftmaxChains(const Plan::OnlineSoftmax &o);

} // namespace memfit::split

#endif
