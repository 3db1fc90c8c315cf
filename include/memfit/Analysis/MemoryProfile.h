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

#include "memfit/Analysis/FusionModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include <string>
#include <vector>

namespace memfit {

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
  /// Of liveBytes, what lives outside the op's block while the block runs:
  /// the arguments at depth 0; inside a loop body, also the loop's carried
  /// state, its stacked inputs and outputs and every other value live
  /// around the loop (a body's block arguments alias the loop's operands).
  int64_t outsideBytes = 0;
};

struct FunctionProfile {
  std::string name;
  int64_t argumentBytes = 0;
  int64_t outputBytes = 0;
  int64_t peakBytes = 0;
  mlir::Operation *peakOp = nullptr;
  /// The function is sharded over a mesh: every byte count is one device's.
  bool perDevice = false;
  /// Everything live at the peak, largest first (nested blocks included).
  std::vector<LiveTensor> liveAtPeak;
  std::vector<TimelinePoint> timeline;
};

/// Profiles `func`. Calls are analysed across (the callee's internal peak is
/// added at the call). Fails with an error on dynamic shapes or recursion.
///
/// `reserveOutputs`: count the function's outputs from its start, as XLA
/// does (the entry computation's outputs are allocations of their own for
/// the whole run, which no temporary shares; a value whose buffer an
/// output takes over in place is counted as that output). A loop that runs
/// before the outputs are written (a first pass) then has only the room
/// they leave. The split's chunk rule uses it; the profile reported to
/// users keeps each output from its producer.
mlir::FailureOr<FunctionProfile> profileFunction(mlir::func::FuncOp func,
                                                 bool reserveOutputs = false);

/// Peak bytes of the body of a region-holding op beyond what its parent
/// already counts (loop-carried values alias the loop's operands).
int64_t getNestedExtraBytes(mlir::Operation *op);

} // namespace memfit

#endif
