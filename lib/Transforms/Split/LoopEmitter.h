//===- LoopEmitter.h - a plan becomes a stablehlo.while ---------*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_LOOPEMITTER_H
#define MEMFIT_TRANSFORMS_SPLIT_LOOPEMITTER_H

#include "Plan.h"

namespace memfit::split {

/// Rewrites the plan's region into a loop over chunks of `chunk` (plus a
/// remainder step when `chunk` does not divide the split dimension) and
/// erases what it replaced. Returns the loop.
mlir::Operation *emitLoop(const Plan &plan, int64_t chunk);

} // namespace memfit::split

#endif
