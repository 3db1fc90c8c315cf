//===- SinkInvariants.h - recompute hoisted loop invariants in the body -*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_SINKINVARIANTS_H
#define MEMFIT_TRANSFORMS_SPLIT_SINKINVARIANTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace memfit::split {

/// Moves into each `stablehlo.while` body the loop-invariant values that
/// the loop carries only because they were computed before it (jax's scan
/// passes its closure's constants as carried values): a carried value the
/// body returns unchanged, computed by cheap fusible ops (broadcasts,
/// iotas, compares, selects, converts) from constants and from values at
/// least four times smaller, is recomputed at the top of the body and no
/// longer carried; the small inputs it needs are carried instead. A causal
/// mask broadcast to [H, S, S] then costs no buffer across the loop, and
/// the body's split can chunk it like any other iota-derived value.
/// Returns whether anything changed.
bool sinkLoopInvariants(mlir::func::FuncOp f);

} // namespace memfit::split

#endif
