//===- Contraction.h - broadcast products as dot_general -------*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_CONTRACTION_H
#define MEMFIT_TRANSFORMS_CONTRACTION_H

#include "memfit/Analysis/BroadcastSource.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include <optional>

namespace memfit {

/// How sum over `reduced` of A*B maps onto one dot_general, where A and B
/// are broadcasts (rank `rank`) of the sources in `lhs` and `rhs`.
struct ContractionPlan {
  BroadcastSource lhs, rhs;
  llvm::SmallVector<int64_t> reduced; // dims of the broadcast product
  int64_t rank = 0;
  /// For each dim of the squeezed lhs/rhs: the product dim it carries.
  llvm::SmallVector<int64_t> lhsDims, rhsDims;

  /// Plans the contraction; nullopt when some reduced dim is missing from a
  /// side (a sum over a broadcast dimension), or element types differ.
  static std::optional<ContractionPlan> make(mlir::Value a, mlir::Value b,
                                             llvm::ArrayRef<int64_t> reduced);

  /// dot_general(a, b) shaped and ordered like reduce(A*B, reduced).
  mlir::Value buildDot(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::RankedTensorType resultType) const;
  /// One side's source without its broadcast unit dims; `dims` receives the
  /// product dim each remaining dim carries.
  mlir::Value squeezedSource(mlir::OpBuilder &b, mlir::Location loc, bool lhsSide,
                             llvm::SmallVectorImpl<int64_t> &dims) const;
  /// sum over the reduced dims of side^2, placed like the reduce result.
  mlir::Value buildSquaredNorm(mlir::OpBuilder &b, mlir::Location loc,
                               bool lhsSide,
                               mlir::RankedTensorType resultType) const;
};

} // namespace memfit

#endif
