//===- GatherElementwise.cpp - gather before elementwise ops --------------===//
//
// jax's gradient of `sum(segment_sum(m, r) ** 2)` gathers its cotangent
// `2 * agg` by the receivers: a whole [nodes, F] value made from a loop
// result only to be read, row by row, by a later loop's gather. A loop
// operand is a buffer, so that value lives beside `agg` for the whole loop
// (two buffers where one holds the information). Gathering `agg`'s rows
// and scaling each chunk instead leaves one whole value, `agg`, and costs
// a multiply per gathered element, which XLA fuses into the gather.
// memfit-split runs this on its working clone only when a function is over
// its limit.
//
//===----------------------------------------------------------------------===//
#include "GatherElementwise.h"

#include "memfit/Analysis/BroadcastSource.h"
#include "memfit/IR/OpTable.h"
#include "memfit/IR/OpViews.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace memfit::split {
namespace {

int64_t elementsOf(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t.getNumElements() : -1;
}

/// The one-element value that `v` broadcasts (through broadcast_in_dim and
/// unit reshapes), or the constant of a splat; null when `v` varies.
Value splatSource(Value v) {
  if (!llvm::isa<RankedTensorType>(v.getType()))
    return {};
  Value source = traceBroadcast(v).source;
  if (elementsOf(source) == 1)
    return source;
  DenseElementsAttr c = getConstantElements(source.getDefiningOp());
  return c && c.isSplat() ? source : Value();
}

/// `source` (from splatSource) broadcast to `shape`'s dimensions, in its
/// own element type.
Value splatTo(OpBuilder &b, Location loc, Value source, RankedTensorType shape) {
  auto type = llvm::cast<RankedTensorType>(source.getType());
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  Value scalar;
  if (DenseElementsAttr c = getConstantElements(source.getDefiningOp()); c && c.isSplat())
    scalar = buildConstant(b, loc, DenseElementsAttr::get(scalarType,
                                                          c.getSplatValue<Attribute>()));
  else
    scalar = type.getRank() == 0 ? source : buildReshape(b, loc, scalarType, source);
  return buildBroadcastInDim(
      b, loc, RankedTensorType::get(shape.getShape(), type.getElementType()), scalar, {});
}

/// The operand of elementwise `op` that varies when all its others are
/// splats; null otherwise.
Value soleVaryingOperand(Operation *op) {
  if (!isElementwise(getOpKind(op)) || op->getNumResults() != 1 || op->getNumRegions() != 0)
    return {};
  Value varying;
  for (Value o : op->getOperands()) {
    if (!llvm::isa<RankedTensorType>(o.getType()))
      return {};
    if (splatSource(o))
      continue;
    if (varying && varying != o)
      return {};
    varying = o;
  }
  return varying;
}

/// Whether every reader of `v` gathers from it (operand 0).
bool readOnlyByGathers(Value v) {
  return !v.use_empty() && llvm::all_of(v.getUses(), [](OpOperand &use) {
    return getOpKind(use.getOwner()) == OpKind::Gather && use.getOperandNumber() == 0;
  });
}

/// Whether running `op` on `gathered`'s elements instead of its own is
/// acceptable: cheap ops always, costly ones only on no more elements.
bool worthCommuting(Operation *op, Value gathered) {
  const OpInfo *info = lookupOpInfo(op);
  return !(info && info->costly) || elementsOf(gathered) <= elementsOf(op->getResult(0));
}

/// `gather` of `ew`'s result becomes `ew` of the gathered varying operand.
void commute(Operation *gather, Operation *ew, Value varying) {
  OpBuilder b(gather);
  Location loc = gather->getLoc();
  auto outType = llvm::cast<RankedTensorType>(gather->getResult(0).getType());
  auto varyingType = llvm::cast<RankedTensorType>(varying.getType());
  Operation *gathered = b.clone(*gather);
  gathered->setOperand(0, varying);
  gathered->getResult(0).setType(
      RankedTensorType::get(outType.getShape(), varyingType.getElementType()));
  IRMapping map;
  for (Value o : ew->getOperands())
    if (!map.contains(o))
      map.map(o, o == varying ? gathered->getResult(0)
                              : splatTo(b, loc, splatSource(o), outType));
  Operation *applied = b.clone(*ew, map);
  applied->getResult(0).setType(outType);
  gather->getResult(0).replaceAllUsesWith(applied->getResult(0));
  gather->erase();
}

/// Erases `op` when nothing reads it, then its producers that nothing else
/// reads (pure ops only: MLIR's DCE keeps unregistered ops). An op leaves
/// the worklist before it is erased, and nothing reads an erased op, so no
/// erased op is visited again.
void eraseIfDead(Operation *op) {
  llvm::SetVector<Operation *> work;
  work.insert(op);
  while (!work.empty()) {
    Operation *x = work.pop_back_val();
    if (!x->use_empty() || !isKnownPure(getOpKind(x)))
      continue;
    for (Value o : x->getOperands())
      if (Operation *p = o.getDefiningOp())
        work.insert(p);
    x->erase();
  }
}

/// One gather commuted with its operand's producer, if it qualifies.
bool commuteOne(Operation *gather) {
  Operation *ew = gather->getOperand(0).getDefiningOp();
  if (!ew)
    return false;
  Value varying = soleVaryingOperand(ew);
  if (!varying || !readOnlyByGathers(ew->getResult(0)))
    return false;
  for (OpOperand &use : ew->getResult(0).getUses())
    if (!worthCommuting(ew, use.getOwner()->getResult(0)))
      return false;
  for (Operation *g : llvm::to_vector(ew->getResult(0).getUsers()))
    commute(g, ew, varying);
  eraseIfDead(ew);
  return true;
}

} // namespace

bool gatherBeforeElementwise(func::FuncOp f) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    SmallVector<Operation *> gathers;
    f.walk([&](Operation *op) {
      if (getOpKind(op) == OpKind::Gather)
        gathers.push_back(op);
    });
    for (Operation *g : gathers)
      if (commuteOne(g)) {
        again = changed = true;
        break; // the gathers commuted with it are erased
      }
  }
  return changed;
}

} // namespace memfit::split
