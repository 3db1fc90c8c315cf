//===- TopKKeys.h - lax.top_k's order as integer keys ----------*- C++ -*-===//
//
// What the two-stage top-k and the tiled nearest-neighbour candidates share:
// integer keys whose order is lax.top_k's order of the values (block maxima
// are max-reductions of keys), their image in a float type that XLA:CPU's
// fast TopK takes, and the mark on top_k ops that are already short.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_TRANSFORMS_REWRITES_TOPKKEYS_H
#define MEMFIT_TRANSFORMS_REWRITES_TOPKKEYS_H

#include "mlir/IR/Builders.h"

namespace memfit {

/// Marks top_k ops whose rows are short or already reduced to block maxima:
/// the two-stage rewrite leaves them as they are.
inline constexpr llvm::StringLiteral kTwoStageAttr = "memfit.two_stage";

/// Element types whose order lax.top_k defines and keys can express.
bool hasOrderKeys(mlir::Type et);

/// Keys whose integer order is lax.top_k's order of `v`'s elements (the
/// total order for floats: -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN).
mlir::Value orderKeys(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

/// Keys of `et` values as values that XLA's fast TopK takes, in the same
/// order: the values themselves for f32/f64, else the keys converted
/// exactly (16-bit keys to f32, 32-bit ones to f64); 64-bit integer keys
/// stay as they are (a sort).
mlir::Value fastImage(mlir::OpBuilder &b, mlir::Location loc, mlir::Value keys,
                      mlir::Type et);

/// The smallest key of integer type `kt`: a max-reduction's initial value.
mlir::Value lowestKey(mlir::OpBuilder &b, mlir::Location loc, mlir::Type kt);

/// lax.top_k of rows [P, n]: its values and positions, in the two-stage
/// form (TwoStageTopK.cpp) when the cost model picks a block for such rows,
/// else as one marked top_k.
std::pair<mlir::Value, mlir::Value> topKOfRows(mlir::OpBuilder &b, mlir::Location loc,
                                               mlir::Value rows, int64_t k);

/// chlo.top_k marked with kTwoStageAttr.
std::pair<mlir::Value, mlir::Value> markedTopK(mlir::OpBuilder &b, mlir::Location loc,
                                               mlir::Value v, int64_t k);

/// take_along_axis(operand [P, ..], idx [P, j]) along dim 1, slices of
/// (1, 1, `trailing`...): [P, j, trailing...].
mlir::Value takeAlongRows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value operand,
                          mlir::Value idx, llvm::ArrayRef<int64_t> trailing);

/// Row positions of the elements of picked blocks of `block` (picked [P, j]
/// i32, increasing), then the `remainder` positions from `tailStart`:
/// [P, j block + remainder] i32, in increasing order.
mlir::Value blockPositions(mlir::OpBuilder &b, mlir::Location loc, mlir::Value picked,
                           int64_t block, int64_t tailStart, int64_t remainder);

} // namespace memfit

#endif
