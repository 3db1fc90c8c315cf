//===- ShortReduceFirst.cpp - keep a reduce's input fused -----------------===//
//
// XLA:CPU rewrites a reduce over a dimension longer than 32 into a
// reduce-window and a reduce (TreeReductionRewriter, for precision), and
// the reduce-window fuses no producer: `jnp.sum(agg ** 2)` after a split
// GNN layer's forward loop materialises agg ** 2 beside agg, a second
// [nodes, F] buffer that no loop of the split removes. A reduce over a
// dimension of at most 32 elements stays a fused reduce, so reducing such a
// dimension first keeps the square fused and leaves a buffer F times
// smaller. jax writes the sum over both dimensions as one reduce, and
// XLA's algebraic simplifier would merge two reduces back into one, so an
// optimization_barrier separates them.
//
//===----------------------------------------------------------------------===//
#include "ShortReduceFirst.h"

#include "memfit/Analysis/FusionModel.h"
#include "memfit/IR/OpTable.h"
#include "memfit/IR/OpViews.h"

using namespace mlir;

namespace memfit::split {
namespace {

/// The reduced dimension to reduce first: the longest of at most
/// kTreeReductionWindow (and at least 2) elements, the minor one among
/// equals; -1 when none is.
int64_t shortDimension(RankedTensorType in, ArrayRef<int64_t> dims) {
  int64_t best = -1;
  for (int64_t d : dims) {
    int64_t n = in.getDimSize(d);
    if (n < 2 || n > FusionModel::kTreeReductionWindow)
      continue;
    if (best < 0 || n >= in.getDimSize(best))
      best = d;
  }
  return best;
}

/// Whether XLA:CPU would materialise `reduce`'s input for it alone.
bool materialisesItsInput(Operation *reduce) {
  ReduceView r(reduce);
  if (r.getNumInputs() != 1 || r.getReducerKind() == ReducerKind::Other ||
      FusionModel::acceptsFusedOperand(reduce))
    return false;
  Value in = r.getInputs()[0];
  Operation *def = in.getDefiningOp();
  return def && FusionModel::isFusible(def) && !isConstantLike(def) && in.hasOneUse();
}

/// A copy of `reduce` (its body, its init) over `input` and `dims`.
Value cloneReduce(OpBuilder &b, Operation *reduce, Value input, ArrayRef<int64_t> dims) {
  auto in = llvm::cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      shape.push_back(in.getDimSize(i));
  Operation *copy = b.clone(*reduce);
  copy->setOperand(0, input);
  setInherentAttr(copy, "dimensions", b.getDenseI64ArrayAttr(dims));
  copy->getResult(0).setType(RankedTensorType::get(shape, in.getElementType()));
  return copy->getResult(0);
}

/// reduce(x, dims) -> reduce(barrier(reduce(x, {d})), dims - {d}).
bool rewrite(Operation *reduce) {
  if (!materialisesItsInput(reduce))
    return false;
  ReduceView r(reduce);
  Value input = r.getInputs()[0];
  auto in = llvm::cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> dims = r.getDimensions();
  int64_t d = shortDimension(in, dims);
  if (d < 0)
    return false;
  OpBuilder b(reduce);
  Value partial = cloneReduce(b, reduce, input, {d});
  Value kept = buildOptimizationBarrier(b, reduce->getLoc(), partial)->getResult(0);
  SmallVector<int64_t> rest;
  for (int64_t e : dims)
    if (e != d)
      rest.push_back(e > d ? e - 1 : e);
  llvm::sort(rest);
  reduce->getResult(0).replaceAllUsesWith(cloneReduce(b, reduce, kept, rest));
  reduce->erase();
  return true;
}

} // namespace

int reduceShortDimensionFirst(Block &block) {
  int rewritten = 0;
  for (Operation &op : llvm::make_early_inc_range(block))
    if (getOpKind(&op) == OpKind::Reduce)
      rewritten += rewrite(&op);
  return rewritten;
}

} // namespace memfit::split
