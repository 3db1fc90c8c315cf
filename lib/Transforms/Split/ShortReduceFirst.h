//===- ShortReduceFirst.h - keep a reduce's input fused ---------*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_SHORTREDUCEFIRST_H
#define MEMFIT_TRANSFORMS_SPLIT_SHORTREDUCEFIRST_H

#include "mlir/IR/Block.h"

namespace memfit::split {

/// In `block` (not in nested regions), a reduce whose input XLA:CPU would
/// materialise only for it (a fusible producer read by nothing else, one of
/// the reduced dimensions longer than FusionModel::kTreeReductionWindow)
/// first reduces its longest reduced dimension of at most that many
/// elements, which XLA fuses with the input's producers, then, behind an
/// optimization_barrier (XLA's simplifier would merge the two reduces
/// back into one), the other dimensions: `sum(agg ** 2)` over [N, 32]
/// holds N partial sums where it held agg ** 2. Reducers that combine in
/// any order only (OpViews' ReducerKind; sums round differently, as any
/// reassociation does). Returns how many reduces it rewrote.
int reduceShortDimensionFirst(mlir::Block &block);

} // namespace memfit::split

#endif
