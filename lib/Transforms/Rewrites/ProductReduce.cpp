//===- ProductReduce.cpp - sums of broadcast products as dot_general -------===//
//
// Two rewrites share the matcher: a sum over dims of A*B, and a sum over
// dims of (A-B)^2, where A and B are broadcasts of smaller tensors. Both
// avoid materialising the broadcast product (the kNN distance tensor is
// M x N x D before the reduce) and let XLA run a GEMM.
//
//===----------------------------------------------------------------------===//
#include "Contraction.h"
#include "Rewrites.h"

#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

namespace {

/// A single-input reduce(add) whose init value is the constant zero.
std::optional<ReduceView> matchSumReduce(Operation *op) {
  auto r = ReduceView::match(op);
  if (!r || r->getNumInputs() != 1 || r->getReducerKind() != ReducerKind::Add)
    return std::nullopt;
  auto init = ConstantView::match(r->getInitValues()[0].getDefiningOp());
  if (!init || init->getSplatValue() != 0.0)
    return std::nullopt;
  return r;
}

bool isOp(Operation *op, ElementwiseFn fn) { return getElementwiseFn(op) == fn; }

/// A splat constant (possibly broadcast) equal to `value`.
bool isSplatConstant(Value v, double value) {
  Operation *def = v.getDefiningOp();
  while (auto b = BroadcastInDimView::match(def))
    def = b->getOperand().getDefiningOp();
  auto c = ConstantView::match(def);
  return c && c->getSplatValue() == value;
}

/// `v` = |d| of a real (not complex) d, whose square is d's: returns d.
Value throughRealAbs(Value v) {
  Operation *def = v.getDefiningOp();
  if (!isOp(def, ElementwiseFn::Abs))
    return v;
  auto t = llvm::cast<RankedTensorType>(def->getOperand(0).getType());
  return llvm::isa<FloatType>(t.getElementType()) ? def->getOperand(0) : v;
}

/// `v` = d*d, d^2 (stablehlo.power, torch-mlir's form) or chlo.square(d)
/// (jnp.square), also of |d| (jnp.abs(d) ** 2): returns d.
Value matchSquare(Value v) {
  Operation *def = v.getDefiningOp();
  Value base;
  if (isOp(def, ElementwiseFn::Multiply) && def->getOperand(0) == def->getOperand(1))
    base = def->getOperand(0);
  else if (isOp(def, ElementwiseFn::Power) && isSplatConstant(def->getOperand(1), 2.0))
    base = def->getOperand(0);
  else if (isOp(def, ElementwiseFn::Square))
    base = def->getOperand(0);
  return base ? throughRealAbs(base) : Value();
}

} // namespace

std::optional<SquaredDistance> memfit::matchSquaredDistance(Operation *op) {
  auto reduce = matchSumReduce(op);
  if (!reduce || op->hasAttr(kExactDistanceAttr))
    return std::nullopt;
  Operation *square = reduce->getInputs()[0].getDefiningOp();
  Value diff = matchSquare(reduce->getInputs()[0]);
  if (!diff || !isOp(diff.getDefiningOp(), ElementwiseFn::Subtract))
    return std::nullopt;
  Operation *sub = diff.getDefiningOp();
  auto plan = ContractionPlan::make(sub->getOperand(0), sub->getOperand(1),
                                    reduce->getDimensions());
  if (!plan)
    return std::nullopt;
  return SquaredDistance{op, square, sub, *plan};
}

Value SquaredDistance::buildExpanded(OpBuilder &b, Location loc) const {
  auto resultType = llvm::cast<RankedTensorType>(reduce->getResult(0).getType());
  Value cross = plan.buildDot(b, loc, resultType);
  Value lhsNorm = plan.buildSquaredNorm(b, loc, /*lhsSide=*/true, resultType);
  Value rhsNorm = plan.buildSquaredNorm(b, loc, /*lhsSide=*/false, resultType);
  Value two = buildConstantSplat(b, loc, resultType, 2.0);
  Value norms = buildElementwise(b, loc, "stablehlo.add", {lhsNorm, rhsNorm});
  Value twice = buildElementwise(b, loc, "stablehlo.multiply", {two, cross});
  return buildElementwise(b, loc, "stablehlo.subtract", {norms, twice});
}

bool memfit::rewriteSquaredDistance(Operation *op, RewriterBase &rewriter) {
  auto match = matchSquaredDistance(op);
  if (!match)
    return false;
  rewriter.setInsertionPoint(op);
  Value dist = match->buildExpanded(rewriter, op->getLoc());
  rewriter.replaceAllUsesWith(op->getResult(0), dist);
  eraseIfDead(rewriter, {op, match->square, match->sub}); // and an abs between them
  return true;
}

bool memfit::rewriteReduceOfProduct(Operation *op, RewriterBase &rewriter) {
  auto reduce = matchSumReduce(op);
  if (!reduce || op->hasAttr(kBatchedGemvAttr))
    return false;
  Operation *mul = reduce->getInputs()[0].getDefiningOp();
  if (!isOp(mul, ElementwiseFn::Multiply) || mul->getOperand(0) == mul->getOperand(1))
    return false;
  auto plan = ContractionPlan::make(mul->getOperand(0), mul->getOperand(1),
                                    reduce->getDimensions());
  if (!plan)
    return false;
  rewriter.setInsertionPoint(op);
  Value dot = plan->buildDot(rewriter, op->getLoc(), reduce->getResultType());
  rewriter.replaceAllUsesWith(op->getResult(0), dot);
  eraseIfDead(rewriter, {op, mul});
  return true;
}

void memfit::eraseIfDead(RewriterBase &rewriter, llvm::ArrayRef<Operation *> ops) {
  SmallVector<Operation *> worklist(ops.begin(), ops.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!op || !op->use_empty() || op->hasTrait<OpTrait::IsTerminator>() ||
        op->getNumResults() == 0)
      continue;
    // Custom calls, calls, loops and opaque ops may have effects memfit
    // cannot see.
    if (!isKnownPure(getOpKind(op)))
      continue;
    SmallVector<Operation *> producers;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        producers.push_back(def);
    rewriter.eraseOp(op);
    for (Operation *p : producers)
      if (!llvm::is_contained(worklist, p))
        worklist.push_back(p);
  }
}
