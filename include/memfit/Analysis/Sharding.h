//===- Sharding.h - what one device holds of a sharded program --*- C++ -*-===//
//
// A jax program sharded with a mesh (Shardy) is one global StableHLO program:
// `sdy.mesh` names the device axes, `sdy.sharding` on the function's
// arguments and results and `sdy.sharding_constraint` ops say which tensor
// dimensions are split over which axes, and XLA's SPMD partitioner makes the
// per-device program at compile time. A memory limit of such a program is a
// limit per device, so memory must be counted in per-device shards.
//
// ShardingModel propagates the given shardings forward through the ops
// memfit knows (DimMapping.h: a PassThrough factor keeps its operand's mesh
// axes; reduced, top-k, sorted and sliced dimensions lose them), through
// while loops (a carried value is sharded like its operand or like what the
// body yields, whichever splits it more; a splat initialising it, like a
// zero accumulator, is sharded the same way), and answers:
//  - shardsAlong(v, d): how many devices split dimension d of v;
//  - deviceBytes(v): the bytes one device holds of v. A dimension that a
//    consumer needs whole on every device (top_k or sort along it, a slice of
//    it, an op memfit cannot see through) is counted whole: XLA all-gathers
//    it there, so the gathered copy is what the device holds. A dimension
//    that XLA partitions without gathering (DimFactor::localOnShards: the
//    rows a gather reads one by one, as the nearest-neighbour rewrite reads
//    its candidates from the sharded database) stays a shard.
// The model is forward only and takes no sharding it cannot parse (sub-axes,
// inline meshes): it never divides by more than the program says, so it can
// only overcount, which memfit.jit's calibration against XLA's per-device
// memory analysis then corrects. Without a mesh every value is whole.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_ANALYSIS_SHARDING_H
#define MEMFIT_ANALYSIS_SHARDING_H

#include "memfit/IR/OpViews.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

namespace memfit {

class ShardingModel {
public:
  /// Reads the mesh from `f`'s module and propagates through `f`.
  explicit ShardingModel(mlir::func::FuncOp f);

  /// True when the program names a mesh and shards something.
  bool isSharded() const { return !dims.empty(); }
  /// Devices that split dimension `d` of `v` (1: each device has it whole).
  int64_t shardsAlong(mlir::Value v, int64_t d) const;
  /// Bytes one device holds of `v` (see the file comment).
  int64_t deviceBytes(mlir::Value v) const;

private:
  /// Per dimension: a bit per mesh axis that splits it.
  using Axes = llvm::SmallVector<uint64_t, 4>;

  void readMeshes(mlir::Operation *module);
  void readMesh(llvm::StringRef name, mlir::Attribute mesh);
  Axes parseSharding(llvm::StringRef text, int64_t rank) const;
  Axes axesFrom(const ShardingText &sh, int64_t rank) const;
  void propagate(mlir::Operation *op);
  void set(mlir::Value v, Axes axes);
  Axes combine(const Axes &a, const Axes &b) const;
  Axes axesOf(mlir::Value v) const;
  int64_t count(uint64_t mask) const;
  bool neededWhole(mlir::Value v, int64_t d) const;

  llvm::StringMap<unsigned> axisIndex; // axis name -> bit
  llvm::SmallVector<int64_t, 8> axisSize;
  llvm::StringMap<bool> meshes; // mesh symbol names
  bool usable = false, conflicting = false;
  llvm::DenseMap<mlir::Value, Axes> dims; // only values with a sharded dim
  llvm::DenseMap<mlir::Value, Axes> hints; // splats sharded by their user
  bool changed = false;
  /// deviceBytes of sharded values (the profile asks for each many times).
  mutable llvm::DenseMap<mlir::Value, int64_t> byteCache;
};

/// memfit-split works on detached clones of a function, which have no
/// module to read meshes from: this copies `module`'s `sdy.mesh` ops onto
/// `detached` as the discardable attribute `memfit.meshes`, which
/// ShardingModel reads first (and clones of the clone carry along).
void attachMeshes(mlir::func::FuncOp detached, mlir::Operation *module);

} // namespace memfit

#endif
