//===- MinorContraction.cpp - accumulated dots in the form ynn takes -------===//
//
// See MinorContraction.h for what and why. Only the dot's form changes: the
// same products are summed in the same order per output element, so the
// result is the same up to the library's own summation order.
//
//===----------------------------------------------------------------------===//
#include "MinorContraction.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace memfit::split {
namespace {

/// The element types whose dots XLA:CPU's ynn fusions take (f32, f64, bf16
/// operands); for others the rewrite would buy nothing.
bool ynnElementType(Type t) { return t.isF32() || t.isF64() || t.isBF16(); }

/// Whether `dims` lists 0, 1, ..., n-1.
bool isLeading(ArrayRef<int64_t> dims) {
  for (auto [i, d] : llvm::enumerate(dims))
    if (d != static_cast<int64_t>(i))
      return false;
  return true;
}

/// [0, ..., nb-1, nb+1, nb]: swaps the two dimensions after `nb` batch ones.
SmallVector<int64_t> swapLastTwo(int64_t nb) {
  SmallVector<int64_t> p;
  for (int64_t i = 0; i < nb; ++i)
    p.push_back(i);
  p.push_back(nb + 1);
  p.push_back(nb);
  return p;
}

/// `v` transposed by `perm` behind a one-operand optimization_barrier:
/// XLA's algebraic simplifier would otherwise fold the transpose into the
/// dot's dimension numbers and undo the rewrite.
Value barrierTranspose(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  Value t = buildTranspose(b, loc, v, perm);
  return buildOptimizationBarrier(b, loc, {t})->getResult(0);
}

/// precision_config lists the operands' precisions in order: swapped with
/// the operands.
void swapPrecision(Operation *dot) {
  auto pc = llvm::dyn_cast_or_null<ArrayAttr>(dot->getAttr("precision_config"));
  if (!pc || pc.size() != 2)
    return;
  setInherentAttr(dot, "precision_config",
                  ArrayAttr::get(dot->getContext(), {pc[1], pc[0]}));
}

} // namespace

std::optional<MinorContraction> planMinorContraction(Operation *dot) {
  auto view = DotGeneralView::match(dot);
  if (!view || view->hasOrderedAnnotations())
    return std::nullopt;
  auto lt = llvm::dyn_cast<RankedTensorType>(view->getLhs().getType());
  auto rt = llvm::dyn_cast<RankedTensorType>(view->getRhs().getType());
  auto out = view->getResultType();
  if (!lt || !rt || !out || !ynnElementType(lt.getElementType()) ||
      !ynnElementType(rt.getElementType()))
    return std::nullopt;
  DotDims d = view->getDims();
  int64_t nb = static_cast<int64_t>(d.lhsBatch.size());
  if (d.lhsContract.size() != 1 || lt.getRank() != nb + 2 || rt.getRank() != nb + 2)
    return std::nullopt;
  // Contracted on its minor dimension already: XLA moves batch dimensions
  // to the front, which keeps it minor.
  if (d.lhsContract[0] == nb + 1)
    return std::nullopt;

  MinorContraction mc;
  bool rhsMinor = isLeading(d.rhsBatch) && d.rhsContract[0] == nb + 1;
  if (rhsMinor) {
    mc.swap = true; // rhs [B, N, K] becomes the lhs as it is
  } else if (getTensorBytes(lt).value_or(0) <= getTensorBytes(rt).value_or(0)) {
    mc.transposed = 0; // lhs^T [B, M, K], result in the original layout
  } else {
    mc.transposed = 1; // rhs^T [B, N, K] becomes the lhs
    mc.swap = true;
  }
  // The emitted lhs: [B, free, K], transposed so when it is not already.
  const SmallVector<int64_t> &batch = mc.swap ? d.rhsBatch : d.lhsBatch;
  int64_t contract = mc.swap ? d.rhsContract[0] : d.lhsContract[0];
  if (mc.transposed >= 0) {
    mc.perm.assign(batch.begin(), batch.end());
    for (int64_t i = 0; i < nb + 2; ++i)
      if (i != contract && !llvm::is_contained(batch, i))
        mc.perm.push_back(i);
    mc.perm.push_back(contract);
  }
  mc.dims.lhsBatch = llvm::to_vector(llvm::seq<int64_t>(0, nb));
  mc.dims.lhsContract = {nb + 1};
  // The emitted rhs as it is, with its own dimension numbers.
  mc.dims.rhsBatch = mc.swap ? d.lhsBatch : d.rhsBatch;
  mc.dims.rhsContract = mc.swap ? d.lhsContract : d.rhsContract;
  if (mc.swap) {
    mc.toOriginal = swapLastTwo(nb);
    SmallVector<int64_t> shape(out.getShape());
    std::swap(shape[nb], shape[nb + 1]);
    mc.resultType = RankedTensorType::get(shape, out.getElementType());
  } else {
    mc.resultType = out;
  }
  return mc;
}

Value emitMinorContraction(OpBuilder &b, Location loc, Operation *dot,
                           const MinorContraction &mc, Value lhs, Value rhs) {
  int64_t nb = static_cast<int64_t>(mc.dims.lhsBatch.size());
  if (mc.transposed == 0)
    lhs = barrierTranspose(b, loc, lhs, mc.perm);
  else if (mc.transposed == 1)
    rhs = barrierTranspose(b, loc, rhs, mc.perm);
  if (mc.swap)
    std::swap(lhs, rhs);
  // A clone keeps the dot's other attributes (precision, frontend
  // attributes) and its location.
  Operation *y = b.clone(*dot);
  y->setOperands({lhs, rhs});
  setInherentAttr(y, "dot_dimension_numbers", attrFromText(b.getContext(), mc.dims.toText()));
  if (mc.swap)
    swapPrecision(y);
  // The chunk's result: the emitted layout with the operands' extents
  // (batch, the lhs's free dimension, the rhs's).
  auto lt = llvm::cast<RankedTensorType>(lhs.getType());
  auto rt = llvm::cast<RankedTensorType>(rhs.getType());
  SmallVector<int64_t> shape(lt.getShape().take_front(nb));
  shape.push_back(lt.getDimSize(nb));
  for (int64_t i = 0; i < rt.getRank(); ++i)
    if (i != mc.dims.rhsContract[0] && !llvm::is_contained(mc.dims.rhsBatch, i))
      shape.push_back(rt.getDimSize(i));
  y->getResult(0).setType(RankedTensorType::get(shape, mc.resultType.getElementType()));
  return y->getResult(0);
}

std::optional<SmallVector<int64_t>> carriedOperandLayout(Operation *dot, unsigned operand) {
  auto view = DotGeneralView::match(dot);
  if (!view || operand > 1)
    return std::nullopt;
  auto t = llvm::dyn_cast<RankedTensorType>(dot->getOperand(operand).getType());
  if (!t || !t.hasStaticShape() || !ynnElementType(t.getElementType()))
    return std::nullopt;
  DotDims d = view->getDims();
  const SmallVector<int64_t> &batch = operand == 0 ? d.lhsBatch : d.rhsBatch;
  if (batch.empty() || isLeading(batch))
    return std::nullopt;
  SmallVector<int64_t> rest;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (!llvm::is_contained(batch, i))
      rest.push_back(i);
  llvm::stable_sort(rest, [&](int64_t a, int64_t b) { return t.getDimSize(a) < t.getDimSize(b); });
  SmallVector<int64_t> perm(batch.begin(), batch.end());
  perm.append(rest.begin(), rest.end());
  return perm;
}

unsigned writeTopLevelDotsMinor(Block &block) {
  SmallVector<Operation *> dots;
  for (Operation &op : block)
    if (getOpKind(&op) == OpKind::DotGeneral)
      dots.push_back(&op);
  unsigned n = 0;
  for (Operation *dot : dots) {
    std::optional<MinorContraction> mc = planMinorContraction(dot);
    if (!mc)
      continue;
    OpBuilder b(dot);
    Value r = emitMinorContraction(b, dot->getLoc(), dot, *mc, dot->getOperand(0),
                                   dot->getOperand(1));
    // XLA folds a transpose of a dot's result into the dot by swapping its
    // operands (jax transposes a weight gradient h^T dK so), which would
    // contract the other operand on its major dimension again.
    r = buildOptimizationBarrier(b, dot->getLoc(), {r})->getResult(0);
    if (!mc->toOriginal.empty())
      r = buildTranspose(b, dot->getLoc(), r, mc->toOriginal);
    dot->getResult(0).replaceAllUsesWith(r);
    dot->erase();
    ++n;
  }
  return n;
}

} // namespace memfit::split
