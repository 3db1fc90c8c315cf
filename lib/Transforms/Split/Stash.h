//===- Stash.h - keep what a second pass would recompute at a cost -*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_STASH_H
#define MEMFIT_TRANSFORMS_SPLIT_STASH_H

#include "Plan.h"

namespace memfit::split {

/// A first pass's chunked values that its second pass (Plan::later) reads
/// and whose chunks cost a contraction to compute (a dot_general in the
/// region behind them) become outputs of the loop, assembled whole, when
/// together they take at most `budget` bytes: the second pass then reads
/// them instead of recomputing the region. In a transformer block's SGD
/// step the second pass needs dq W_q^T beside the key and value gradients,
/// and recomputed, it ran the whole attention forward and backward again.
/// All or nothing: stashing part of them still leaves the recomputation.
/// Returns whether anything was stashed.
bool stashForSecondPass(Plan &plan, int64_t budget);

} // namespace memfit::split

#endif
