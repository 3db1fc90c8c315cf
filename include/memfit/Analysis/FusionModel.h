//===- FusionModel.h - what XLA materialises, and what it recomputes -*- C++ -*-===//
//
// The one model of XLA's fusion that memfit's analyses and transforms share
// (memfit-profile, memfit-export-buffers, memfit-assign-memory-space and
// memfit-split): which values of a block are materialised, which producers
// are fused into (recomputed by) which consumer, and the order and live
// ranges XLA would give the block's buffers. The rules are listed in
// FusionModel.cpp; op knowledge comes from OpTable.h (the `fusible` flag).
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_ANALYSIS_FUSIONMODEL_H
#define MEMFIT_ANALYSIS_FUSIONMODEL_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <vector>

namespace memfit {

/// Which values of one block XLA would materialise, and their live ranges
/// in the order XLA would run the block's ops (a post-order of the dataflow
/// graph from the block's terminator, operands in order, as XLA's
/// post-order scheduler visits them).
class FusionModel {
public:
  explicit FusionModel(mlir::Block &block);

  //===-- per-op rules (no block needed) ----------------------------------===//

  /// XLA can fuse the op into its consumers (elementwise and layout ops;
  /// OpTable's `fusible`): recomputing it costs no buffer.
  static bool isFusible(mlir::Operation *op);
  /// The op can take a fused producer: fusible ops, and reductions short
  /// enough that XLA fuses their inputs' producers.
  static bool acceptsFusedOperand(mlir::Operation *user);
  /// XLA:CPU's TreeReductionRewriter turns a reduce over a dimension longer
  /// than this into a reduce-window and a reduce; the reduce-window does
  /// not fuse its producers, so the reduce's input is materialised.
  static constexpr int64_t kTreeReductionWindow = 32;
  /// The value whose buffer `v` is: an optimization_barrier's results are
  /// its operands' buffers.
  static mlir::Value forwardedThroughBarriers(mlir::Value v);

  //===-- this block ------------------------------------------------------===//

  bool isMaterialised(mlir::Value v) const { return materialised.contains(v); }
  /// A cheap fusible value materialised for its non-fusing consumers while
  /// its fusing consumers recompute it from its inputs (XLA duplicates cheap
  /// producers rather than reading their buffer).
  bool isDuplicated(mlir::Value v) const { return duplicated.contains(v); }
  /// Is `v`, an operand of `consumer` (an op of this block or fused into
  /// one), computed inside the consumer's fusion rather than read from
  /// memory? False for arguments, constants and values of other blocks.
  bool isRecomputedBy(mlir::Value v, mlir::Operation *consumer) const;
  /// The values `root` reads from memory (materialised values, block
  /// arguments, values of enclosing blocks; not constants), through the
  /// producers fused into it, each once, in depth-first operand order.
  /// The fused producers are appended to `fused` when it is given.
  void collectFusionInputs(mlir::Operation *root, llvm::SmallVectorImpl<mlir::Value> &inputs,
                           llvm::SmallVectorImpl<mlir::Operation *> *fused = nullptr) const;

  /// The operands of `dot` (a dot_general of this block) that XLA:CPU
  /// copies into a transposed buffer while the dot runs: its DotDecomposer
  /// wants the batch dimensions leading, in order, in memory, and an
  /// operand read from a buffer laid out otherwise (an argument, a loop
  /// result, a value with other readers; through a transpose folded into
  /// the dot) is transposed first. A producer fused only into the dot
  /// writes its buffer transposed instead.
  void collectTransposedDotOperands(mlir::Operation *dot,
                                    llvm::SmallVectorImpl<mlir::Value> &copied) const;

  /// A loop body's value written in place into the buffer its loop
  /// carries (a scan's stacked outputs): the loop's parent counts it.
  bool isInCarriedBuffer(mlir::Value v) const { return carried.contains(v); }
  /// The operand whose buffer `v` takes over (it dies where `v` is made:
  /// an in-place elementwise fusion, a dynamic_update_slice, a loop's
  /// result in its initial value's buffer), or null.
  mlir::Value bufferDonor(mlir::Value v) const { return donorOf.lookup(v); }
  /// Index of `op` (an op of this block) in the op order.
  unsigned indexOf(mlir::Operation *op) const { return index.lookup(op); }
  /// Last op index at which a materialised value must still exist (the
  /// fusion roots that read it); the block's size for values it returns.
  unsigned lastUse(mlir::Value v) const { return lastUseIndex.lookup(v); }
  /// First op index at which the value occupies memory (later than its
  /// producer for loop results that reuse their operand's buffer; after
  /// lastUse for a while body's new value written into its loop-carried
  /// slot, which the body does not count).
  unsigned firstLive(mlir::Value v) const { return firstLiveIndex.lookup(v); }
  llvm::ArrayRef<mlir::Operation *> getOps() const { return ops; }

private:
  void schedule();
  void classify(mlir::Operation *op);
  void computeLiveRanges();
  mlir::Operation *userInBlock(mlir::OpOperand &use) const;
  bool updatesCarriedArgument(mlir::Operation *op, unsigned resultIndex) const;
  /// A materialised operand whose buffer `result` can take over (it dies at
  /// `op`), or null.
  mlir::Value findReusableOperand(mlir::Operation *op, unsigned resultIndex,
                                  mlir::Value result,
                                  const llvm::SmallPtrSetImpl<mlir::Value> &taken) const;
  /// In a while body: values returned into a loop-carried slot whose old
  /// value is dead take that slot's buffer (no bytes of the body's own).
  void placeInLoopCarriedBuffers(
      llvm::function_ref<unsigned(mlir::BlockArgument)> lastUseOfArgument);
  bool writesInPlaceOver(mlir::Operation *def, mlir::Value v, mlir::Value operand) const;

  mlir::Block &block;
  std::vector<mlir::Operation *> ops;
  llvm::DenseMap<mlir::Operation *, unsigned> index;
  llvm::DenseSet<mlir::Value> materialised;
  llvm::DenseSet<mlir::Value> duplicated;
  llvm::DenseSet<mlir::Value> carried;
  llvm::DenseMap<mlir::Value, mlir::Value> donorOf;
  llvm::DenseMap<mlir::Value, unsigned> lastUseIndex;
  llvm::DenseMap<mlir::Value, unsigned> firstLiveIndex;
};

} // namespace memfit

#endif
