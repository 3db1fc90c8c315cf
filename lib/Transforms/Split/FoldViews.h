//===- FoldViews.h - fold what computes nothing before a split --*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_FOLDVIEWS_H
#define MEMFIT_TRANSFORMS_SPLIT_FOLDVIEWS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace memfit::split {

/// Folds, everywhere in `f`, the ops that compute nothing and hide the
/// dataflow from the dimension table: identity views (a reshape,
/// broadcast_in_dim, transpose or convert to the operand's own type) are
/// replaced by their operand, and a reshape or convert of a constant
/// becomes a `stablehlo.constant` (torch-mlir writes a scalar as an
/// `arith.constant` of another type, then convert and reshape). Returns
/// whether anything changed.
bool foldViewsAndConstants(mlir::func::FuncOp f);

} // namespace memfit::split

#endif
