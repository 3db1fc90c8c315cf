//===- Plan.h - what memfit-split rewrites, and shared helpers --*- C++ -*-===//
//
// A Plan is the region of one block that memfit-split turns into a loop over
// chunks of one dimension: the chunked ops, the sinks that accumulate across
// chunks, the values assembled whole after the loop, and the ops left to a
// second pass. The Planner builds it, the ChunkChooser measures it on
// clones, the LoopEmitter rewrites it. See Split.cpp for the algorithm.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_PLAN_H
#define MEMFIT_TRANSFORMS_SPLIT_PLAN_H

#include "memfit/IR/OpViews.h"
#include "memfit/Support/ByteSize.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include <limits>
#include <optional>
#include <string>

namespace memfit::split {

using mlir::Operation;
using mlir::Value;

constexpr int64_t kInfeasible = std::numeric_limits<int64_t>::max();

/// Marks, while memfit-split runs, the ops of a loop's remainder step: they
/// work on one (short) chunk already, so a later split neither pulls them
/// in nor chunks them again; they read its results like any outside user.
/// Removed when the pass finishes.
constexpr llvm::StringLiteral kRemainderAttr = "memfit.remainder";

inline int64_t bytesOf(Value v) { return getTensorBytes(v.getType()).value_or(0); }

/// The record memfit-split puts on each loop it makes.
constexpr llvm::StringLiteral kSplitRecordAttr = "memfit.split";

/// Whether `op` is a loop the program itself runs (a `lax.scan` over
/// layers, a `fori_loop`), not one memfit-split made.
bool isProgramLoop(Operation *op);

/// Whether `op` lies in the body of a loop the program itself runs, not
/// only in memfit-split's own.
bool inProgramLoop(Operation *op);

inline mlir::RankedTensorType tensorType(Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

/// `t` with dimension `dim` resized to `size`.
mlir::RankedTensorType withDim(mlir::RankedTensorType t, int64_t dim, int64_t size);

/// "'op.name' (at file:line)" for diagnostics.
std::string opLabel(Operation *op);

/// Zeros of type `t` (a broadcast splat).
Value zerosLike(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType t);

/// `start` (tensor<i64>) converted and broadcast to `t`.
Value broadcastStart(mlir::OpBuilder &b, mlir::Location loc, Value start,
                     mlir::RankedTensorType t);

/// How a sink combines its chunks' partial results (one accumulator kind
/// each: Reductions.h, TopK.h, Scatter.h; OnlineSoftmax.h refines Reduce and
/// Dot).
enum class SinkKind { Reduce, Dot, TopK, SortTopK, Scatter, GatherSelect };

struct Plan {
  mlir::Block *block = nullptr;
  Operation *seedOp = nullptr;
  int64_t size = 0;     // extent of the split dimension
  int64_t minChunk = 1; // top-k needs chunks of at least k
  llvm::SmallVector<Operation *> order; // chunked ops and sinks, in block order
  llvm::DenseSet<Operation *> chunked;
  llvm::DenseMap<Operation *, SinkKind> sinks;
  llvm::DenseSet<Operation *> backward; // pulled in as producers
  llvm::DenseMap<Value, int64_t> dimOf; // chunked values and their split dim
  llvm::DenseMap<Operation *, llvm::SmallVector<int64_t>> operandDims;
  llvm::SmallVector<Value> outputs; // chunked values assembled whole
  Operation *stopper = nullptr; // first user that needed the dimension whole
  unsigned stopperOperand = 0;  // the operand it reads the chunked value as
  int64_t stopperDim = -1;
  const char *stopperWhy = nullptr; // the op's reason, when it gives one
  /// Online softmax: the split dimension is reduced by a softmax-normalised
  /// contraction (softmax(s) . v over the split dimension), or, with `dot`,
  /// `div` and `bl` null, by a logsumexp's max and sum alone; see
  /// matchOnlineSoftmax (OnlineSoftmax.h).
  struct OnlineSoftmax {
    Operation *maxR = nullptr, *sumR = nullptr, *dot = nullptr;
    Operation *bm = nullptr, *bl = nullptr, *div = nullptr, *exp = nullptr;
    llvm::SmallVector<Operation *> chainM, chainL; // outside ops m -> bm, l -> bl
    int64_t keyE = -1;                             // split dim of exp's result
  };
  std::optional<OnlineSoftmax> osm;
  /// Second pass: ops that need what the loop accumulates (a gradient's
  /// backward part reading the forward's reductions). They stay outside
  /// the loop, reading the region's values from the original ops, which a
  /// later split recomputes in chunks.
  llvm::DenseSet<Operation *> later;
  /// Accumulated dots are written with their lhs contracted on its minor
  /// dimension (memfit-split{minor-contraction}, MinorContraction.h).
  bool minorContraction = false;
  /// Some outputs are assembled for the second pass to read (Stash.h).
  bool stashed = false;

  bool inPlan(Operation *op) const {
    return chunked.contains(op) || sinks.contains(op);
  }
};

/// Whether the plan's loop nests in the body of a loop the program runs
/// (a layer loop), not at the function's top level or only in memfit's
/// own loops.
bool inLoopBody(const Plan &plan);

/// The same plan over a clone of its function (`m` maps the original's ops).
Plan translatePlan(const Plan &p, mlir::IRMapping &m);

} // namespace memfit::split

#endif
