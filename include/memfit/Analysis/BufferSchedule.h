//===- BufferSchedule.h - a function as scheduled buffers ------*- C++ -*-===//
//
// A StableHLO function seen the way memory-space assignment sees it: a
// schedule of ops (one entry per op XLA materialises a result for, fused
// producers folded in), the buffers they read and write, each buffer's live
// interval in schedule positions, and per-op FLOPs. Shared by
// memfit-export-buffers (which writes it as an instance, the JSON schema of
// python/memfit/msa/instance.py) and memfit-assign-memory-space (which maps a
// solution's buffer ids back to SSA values): both build it the same way, so
// buffer ids agree.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_ANALYSIS_BUFFERSCHEDULE_H
#define MEMFIT_ANALYSIS_BUFFERSCHEDULE_H

#include "memfit/Analysis/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace memfit {

struct ScheduledOp {
  mlir::Operation *op = nullptr; // the fusion root (or the loop, for an empty body)
  std::string name;
  std::string location;
  double flops = 0;  // per execution, fused producers included
  double weight = 1; // executions: product of enclosing loops' trip counts
  std::vector<int> operands; // buffer ids, no repeats
  std::vector<int> results;
};

struct ScheduledBuffer {
  mlir::Value value; // the SSA value that creates it
  std::string name;
  int64_t size = 0;
  int start = 0;         // producer's position; 0 for arguments
  std::vector<int> uses; // positions that read it, ascending, no repeats
  std::string kind;      // "argument", "output" or "temp"
  /// SSA values sharing it (in-place updates and loop carries XLA aliases).
  int values = 1;
  int end() const { return uses.empty() ? start : std::max(start, uses.back()); }
};

struct BufferSchedule {
  std::vector<ScheduledOp> ops;
  std::vector<ScheduledBuffer> buffers;
  /// Dot/convolution FLOPs (times weight) on 16-bit floats and on others:
  /// picks the device's FLOP rate.
  double lowPrecisionDotFlops = 0, otherDotFlops = 0;
  /// Loops whose trip count could not be read (weighted 1).
  std::vector<mlir::Operation *> unknownTripCounts;

  /// Max over positions of the bytes of buffers live there ([start, end]).
  int64_t peakBytes() const;
};

/// Builds the schedule of `func` (inline calls first: a func.call is one
/// opaque entry).
BufferSchedule buildBufferSchedule(mlir::func::FuncOp func);

/// The function to export: `name` when given, else "main", else the first
/// public function with a body.
mlir::func::FuncOp findScheduledFunction(mlir::ModuleOp module,
                                         llvm::StringRef name);

/// The instance JSON text (version 1), keys in the schema's order. Ops also
/// carry "bytes" (operand + result buffer bytes per execution) and buffers
/// "values" (SSA values sharing the buffer): extra fields readers may ignore.
std::string instanceToJson(const BufferSchedule &s, const DeviceModel &device,
                           int64_t capacity, llvm::StringRef program,
                           llvm::StringRef function, llvm::StringRef mode);

/// The trip count of a stablehlo.while whose cond compares an induction
/// variable (constant start, constant step) against a constant bound.
std::optional<int64_t> readTripCount(mlir::Operation *whileOp);

} // namespace memfit

#endif
