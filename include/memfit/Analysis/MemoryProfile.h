//===- MemoryProfile.h - fusion-aware peak memory --------------*- C++ -*-===//
//
// What a StableHLO function holds in memory at each point of its op order,
// modelled the way XLA allocates: a value costs memory only when it is
// materialised, i.e. when it crosses a fusion boundary. Elementwise and
// layout ops (broadcast, reshape, transpose, slice, convert) fuse into their
// consumers; dot_general, reduce, sort, top_k, custom_call, while and calls
// are fusion roots whose operands and results are buffers.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_ANALYSIS_MEMORYPROFILE_H
#define MEMFIT_ANALYSIS_MEMORYPROFILE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <string>
#include <vector>

namespace memfit {

/// Which values of one block XLA would materialise, and their live ranges
/// in the order XLA would run the block's ops (a post-order of the dataflow
/// graph from the block's terminator, operands in order, as XLA's
/// post-order scheduler visits them).
class FusionModel {
public:
  explicit FusionModel(mlir::Block &block);

  bool isMaterialised(mlir::Value v) const { return materialised.contains(v); }
  /// A cheap fusible value materialised for its non-fusing consumers while
  /// its fusing consumers recompute it from its inputs (XLA duplicates cheap
  /// producers rather than reading their buffer).
  bool isDuplicated(mlir::Value v) const { return duplicated.contains(v); }
  /// Index of `op` (an op of this block) in the op order.
  unsigned indexOf(mlir::Operation *op) const { return index.lookup(op); }
  /// Last op index at which a materialised value must still exist (the
  /// fusion roots that read it); the block's size for values it returns.
  unsigned lastUse(mlir::Value v) const { return lastUseIndex.lookup(v); }
  /// First op index at which the value occupies memory (later than its
  /// producer for loop results that reuse their operand's buffer).
  unsigned firstLive(mlir::Value v) const { return firstLiveIndex.lookup(v); }
  llvm::ArrayRef<mlir::Operation *> getOps() const { return ops; }

private:
  void schedule();
  void classify(mlir::Operation *op);
  void computeLiveRanges();
  mlir::Operation *userInBlock(mlir::OpOperand &use) const;
  /// A materialised operand whose buffer `result` can take over (it dies at
  /// `op`), or null.
  mlir::Value findReusableOperand(mlir::Operation *op, unsigned resultIndex,
                                  mlir::Value result,
                                  const llvm::SmallPtrSetImpl<mlir::Value> &taken) const;

  mlir::Block &block;
  std::vector<mlir::Operation *> ops;
  llvm::DenseMap<mlir::Operation *, unsigned> index;
  llvm::DenseSet<mlir::Value> materialised;
  llvm::DenseSet<mlir::Value> duplicated;
  llvm::DenseMap<mlir::Value, unsigned> lastUseIndex;
  llvm::DenseMap<mlir::Value, unsigned> firstLiveIndex;
};

/// A tensor that occupies memory at some point.
struct LiveTensor {
  mlir::Value value;
  int64_t bytes = 0;
  bool isArgument = false;
  unsigned depth = 0; // nesting depth of the block that owns it
};

struct TimelinePoint {
  mlir::Operation *op;
  unsigned depth;
  int64_t liveBytes;
};

struct FunctionProfile {
  std::string name;
  int64_t argumentBytes = 0;
  int64_t outputBytes = 0;
  int64_t peakBytes = 0;
  mlir::Operation *peakOp = nullptr;
  /// Everything live at the peak, largest first (nested blocks included).
  std::vector<LiveTensor> liveAtPeak;
  std::vector<TimelinePoint> timeline;
};

/// Profiles `func`. Calls are analysed across (the callee's internal peak is
/// added at the call). Fails with an error on dynamic shapes or recursion.
mlir::FailureOr<FunctionProfile> profileFunction(mlir::func::FuncOp func);

/// Peak bytes of the body of a region-holding op beyond what its parent
/// already counts (loop-carried values alias the loop's operands).
int64_t getNestedExtraBytes(mlir::Operation *op);

} // namespace memfit

#endif
