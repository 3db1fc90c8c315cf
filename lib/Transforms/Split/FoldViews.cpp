//===- FoldViews.cpp - fold what computes nothing before a split ----------===//
//
// torch-mlir's StableHLO wraps nearly every op in reshapes and
// broadcast_in_dims to the operand's own type, and writes scalars as
// `arith.constant dense<8.0> : tensor<1xf64>` followed by convert, reshape
// and broadcast. Each such op is a node the planner must pass through, and
// a value read both through a view and directly looks like two different
// values (one chunked, one whole). Folding them first leaves the dataflow
// jax would have written. memfit-split runs this on its working clone only
// when a function is over its limit, so programs that fit come back as they
// were.
//
//===----------------------------------------------------------------------===//
#include "FoldViews.h"

#include "memfit/IR/OpViews.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace memfit::split {
namespace {

/// The constant a reshape or convert of a constant computes; null when the
/// op is neither or the value is not folded (convertElements says which).
DenseElementsAttr foldedValue(Operation *op) {
  OpKind k = getOpKind(op);
  if ((k != OpKind::Reshape && k != OpKind::Convert) || op->getNumOperands() != 1)
    return {};
  DenseElementsAttr in = getConstantElements(op->getOperand(0).getDefiningOp());
  auto out = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out || !out.hasStaticShape())
    return {};
  if (k == OpKind::Reshape)
    return in.reshape(out);
  return convertElements(in, out.getElementType());
}

} // namespace

bool foldViewsAndConstants(func::FuncOp f) {
  SmallVector<Operation *> ops;
  f.walk([&](Operation *op) { ops.push_back(op); });
  bool changed = false;
  llvm::SetVector<Operation *> maybeDead;
  for (Operation *op : ops) {
    if (isIdentityView(op)) {
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
      changed = true;
      continue;
    }
    DenseElementsAttr value = foldedValue(op);
    if (!value)
      continue;
    OpBuilder b(op);
    maybeDead.insert(op->getOperand(0).getDefiningOp());
    op->getResult(0).replaceAllUsesWith(buildConstant(b, op->getLoc(), value));
    op->erase();
    changed = true;
  }
  // Constants only the folded ops read (MLIR's DCE keeps unregistered ops).
  for (Operation *c : maybeDead)
    if (c->use_empty())
      c->erase();
  return changed;
}

} // namespace memfit::split
