//===- GatherElementwise.h - gather before elementwise ops ------*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_GATHERELEMENTWISE_H
#define MEMFIT_TRANSFORMS_SPLIT_GATHERELEMENTWISE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace memfit::split {

/// Everywhere in `f`, a gather of an elementwise value whose other operands
/// are splats (`gather(2 * x, idx)`) becomes the elementwise op of the
/// gathered rows (`2 * gather(x, idx)`), when the elementwise value has no
/// reader but gathers (it is then erased). A gather copies elements (its
/// indices clamped into range), so both compute the same elements. Not
/// done for costly ops (OpTable's `costly`) that would run on more
/// elements than before. Returns whether anything changed.
bool gatherBeforeElementwise(mlir::func::FuncOp f);

} // namespace memfit::split

#endif
