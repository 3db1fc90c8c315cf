//===- MinorContraction.h - accumulated dots in the form ynn takes -*- C++ -*-===//
//
// memfit-split{minor-contraction}: an accumulated dot (a dot_general in a
// split loop contracting the split dimension, its partial products summed
// into a loop-carried accumulator) whose lhs is contracted on its major
// dimension is written so that the lhs is contracted on its last (minor)
// dimension.
//
// Why: XLA:CPU's ynn (XNNPACK) fusions take a dot only when its lhs is
// [batch..., M, K] (K minor) and no operand has a column-major layout
// (xla/backends/cpu/ynn_support.cc, IsDotSupportedByYnn). In a loop over
// query chunks, attention's key and value gradients (dS^T q, P^T g)
// contract the chunk, the lhs's major dimension: XLA runs them as Eigen
// contractions whose packing buffers, as large as their operands, XLA's
// memory analysis does not count (python/memfit/runtime_scratch.py). The
// calibration then budgets that scratch and the chunks shrink.
//
// The forms, for lhs [B, K, M] (contracted on K, its major free dimension):
//  * rhs [B, N, K] (contracted on its minor dimension): swap the operands,
//    dot(rhs, lhs) = [B, N, M];
//  * rhs [B, K, N], lhs the smaller: lhs^T = [B, M, K] behind a one-operand
//    optimization_barrier, dot(lhs^T, rhs) = [B, M, N], the original layout;
//  * rhs [B, K, N], rhs the smaller: rhs^T = [B, N, K] behind a barrier,
//    dot(rhs^T, lhs) = [B, N, M].
// Batch dimensions need not lead (jax's gradient of einsum("qhd,khd->hqk")
// by k reads the query chunk as [Q, H, D]): the operand transposed takes
// them to the front, [B, N, K], and the other keeps its dimension numbers.
// The barrier keeps XLA's algebraic simplifier from folding the transpose
// back into the dot's dimension numbers. A result in [B, N, M] order is
// accumulated as it comes and transposed once, after the loop.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_MINORCONTRACTION_H
#define MEMFIT_TRANSFORMS_SPLIT_MINORCONTRACTION_H

#include "Plan.h"

#include <optional>

namespace memfit::split {

struct MinorContraction {
  bool swap = false;     // the emitted dot reads (rhs, lhs)
  int transposed = -1;   // original operand (0 lhs, 1 rhs) transposed behind a barrier
  /// How that operand is transposed: to [batch..., free, contracted].
  llvm::SmallVector<int64_t> perm;
  DotDims dims;          // of the emitted dot
  /// The emitted dot's result type (its layout, [B, N, M] when swapped).
  mlir::RankedTensorType resultType;
  /// Permutation taking the emitted result to the original one (empty when
  /// they are the same).
  llvm::SmallVector<int64_t> toOriginal;
};

/// How `dot` (a dot_general) is written with its lhs contracted on its
/// minor dimension; nullopt when it already is, or when it is not a
/// batched matrix product memfit rewrites (one contracting dimension per
/// side, one free dimension per side, f32/f64/bf16 operands, no
/// `algorithm` or sharding attribute). Batch dimensions may lie anywhere:
/// the transposed operand takes them to the front, the other keeps its
/// dimension numbers.
std::optional<MinorContraction> planMinorContraction(Operation *dot);

/// `dot` applied to `lhs`, `rhs` (its operands, or chunks of them) in the
/// form `mc`: the emitted dot's result, in mc.resultType's layout.
Value emitMinorContraction(mlir::OpBuilder &b, mlir::Location loc, Operation *dot,
                           const MinorContraction &mc, Value lhs, Value rhs);

/// For an operand of `dot` that a split loop reads whole in every
/// iteration (a live-in: attention's keys and values, [S, H, D] by jax's
/// reshape of k = h W_k), the permutation to carry it in when its batch
/// dimensions do not lead: XLA:CPU makes a dot's batch dimensions leading
/// with a copy, and in a loop body that copy runs in every iteration
/// (XLA's while-loop sinking also moves a transposed loop operand back into
/// the body, so the carried copy goes behind an optimization_barrier).
/// Batch dimensions first, then the others by size, the largest minor:
/// [H, D, S] serves both of attention's dots on k and on v without a copy
/// (measured: [H, S, D] made XLA swap the product of the probabilities and
/// v into a library dot contracted on its major dimension). nullopt when
/// the batch dimensions lead already or the dot is not one memfit rewrites.
std::optional<llvm::SmallVector<int64_t>> carriedOperandLayout(Operation *dot, unsigned operand);

/// Writes the dots of `block` itself (not of loops in it) in the form
/// planMinorContraction gives, transposing the result back where the form
/// swaps the operands; returns how many. In a split program the dots left
/// outside its loops are whole (the key and value projections' weight
/// gradients h^T dK after a transformer block's loop over query rows): as
/// library dots their packing scratch, about their operands' bytes, is
/// memory XLA does not count (python/memfit/runtime_scratch.py), 18 MiB
/// beside a 69 MiB limit in that block's SGD step; written so, the operand
/// transposed is a buffer XLA counts, and ynn runs the dot.
unsigned writeTopLevelDotsMinor(mlir::Block &block);

} // namespace memfit::split

#endif
