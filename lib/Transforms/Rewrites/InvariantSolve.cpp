//===- InvariantSolve.cpp - loop-invariant triangular solves ----------------===//
//
// A loop that solves every chunk against the same triangular factor,
//
//   while (...) { x_c = trsm(L, b_c) }      (L carried unchanged)
//
// pays, every iteration, XLA:CPU's layout copies of L, b_c and x_c (jax's
// lapack_?trsm_ffi takes column-major operands) and a single-threaded
// substitution. Here the factor's inverse op(L)^-1 is formed once before the
// loop, by the same call against the identity, and each chunk becomes a
// GEMM (multithreaded, row-major):
//
//   Li = trsm(L, I);  while (...) { x_c = Li b_c }     (side 'L'; b_c Li for 'R')
//
// Accuracy: on well-conditioned factors the error against float64 is that
// of the substitution; on ill-conditioned ones (an RBF kernel's Cholesky
// factor with a long lengthscale) it measured 6x jax's, which breaks the
// README's contract (test_invariant_solve.py). So the rewrite is opt-in
// (`invariant-solve=true`), like fast-distance.
//
// Applied to trsm calls in the entry block of a stablehlo.while body whose
// factor is a loop-carried value returned unchanged (how memfit-split and
// jax's scan carry loop invariants), without batch dimensions.
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"

#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

namespace {

struct InvariantSolve {
  Operation *solve, *loop;
  unsigned carried; // the factor's position among the loop's values
  bool leftSide;
};

/// The index of `v` among the loop body's arguments when the body returns
/// it unchanged at that position.
std::optional<unsigned> invariantCarried(Operation *loop, Value v) {
  auto arg = llvm::dyn_cast<BlockArgument>(v);
  Block &body = WhileView(loop).getBody().front();
  if (!arg || arg.getOwner() != &body)
    return std::nullopt;
  unsigned i = arg.getArgNumber();
  if (body.getTerminator()->getOperand(i) != arg)
    return std::nullopt;
  return i;
}

std::optional<InvariantSolve> matchInvariantSolve(Operation *op) {
  auto call = CustomCallView::match(op);
  if (!call || !call->isTriangularSolve() || call->getNumBatchDims() != 0)
    return std::nullopt;
  std::optional<int64_t> side = call->getBackendConfigInt("side");
  auto a = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  if (!side || (*side != 'L' && *side != 'R') || a.getRank() != 2 || !a.hasStaticShape())
    return std::nullopt;
  Operation *loop = op->getParentOp();
  if (!loop || getOpKind(loop) != OpKind::While ||
      op->getBlock() != &WhileView(loop).getBody().front())
    return std::nullopt;
  std::optional<unsigned> carried = invariantCarried(loop, op->getOperand(0));
  if (!carried)
    return std::nullopt;
  return InvariantSolve{op, loop, *carried, *side == 'L'};
}

/// The n x n identity of `et`.
Value identity(OpBuilder &b, Location loc, Type et, int64_t n) {
  auto it = RankedTensorType::get({n, n}, b.getI32Type());
  Value rows = buildIota(b, loc, it, 0);
  Value cols = buildIota(b, loc, it, 1);
  Value eq = buildCompare(b, loc, rows, cols, "EQ", "SIGNED");
  return buildConvert(b, loc, RankedTensorType::get({n, n}, et), eq);
}

/// op(L)^-1: the solve itself against the identity, before the loop.
Value inverseBefore(OpBuilder &b, const InvariantSolve &m) {
  Location loc = m.solve->getLoc();
  Value factor = m.loop->getOperand(m.carried);
  auto a = llvm::cast<RankedTensorType>(factor.getType());
  Value eye = identity(b, loc, a.getElementType(), a.getDimSize(0));
  Operation *inv = b.clone(*m.solve);
  inv->setOperands({factor, eye});
  inv->getResult(0).setType(a);
  inv->removeAttr("sdy.sharding_rule"); // names the chunk's sizes
  return inv->getResult(0);
}

/// The loop with `extra` carried unchanged after its own values.
Operation *carryOneMore(OpBuilder &b, Operation *loop, Value extra) {
  SmallVector<Value> operands(loop->getOperands());
  operands.push_back(extra);
  Operation *wider = buildGenericOp(b, loop->getLoc(), "stablehlo.while", operands,
                                    ValueRange(operands).getTypes(), {}, /*numRegions=*/2);
  wider->setAttrs(loop->getAttrs());
  for (unsigned r = 0; r < 2; ++r) {
    wider->getRegion(r).takeBody(loop->getRegion(r));
    wider->getRegion(r).front().addArgument(extra.getType(), loop->getLoc());
  }
  Operation *ret = WhileView(wider).getBody().front().getTerminator();
  ret->insertOperands(ret->getNumOperands(), WhileView(wider).getBody().front().getArguments().back());
  for (unsigned i = 0; i < loop->getNumResults(); ++i)
    loop->getResult(i).replaceAllUsesWith(wider->getResult(i));
  return wider;
}

} // namespace

bool memfit::rewriteLoopInvariantSolve(Operation *op) {
  auto m = matchInvariantSolve(op);
  if (!m)
    return false;
  OpBuilder b(m->loop);
  Value inv = inverseBefore(b, *m);
  Operation *wider = carryOneMore(b, m->loop, inv);
  Value carriedInv = WhileView(wider).getBody().front().getArguments().back();

  b.setInsertionPoint(m->solve);
  Value rhs = m->solve->getOperand(1);
  DotDims dd;
  dd.lhsContract = {1};
  dd.rhsContract = {0};
  auto xt = llvm::cast<RankedTensorType>(m->solve->getResult(0).getType());
  Value x = m->leftSide ? buildDotGeneral(b, m->solve->getLoc(), xt, carriedInv, rhs, dd)
                        : buildDotGeneral(b, m->solve->getLoc(), xt, rhs, carriedInv, dd);
  m->solve->getResult(0).replaceAllUsesWith(x);
  m->solve->erase();
  m->loop->erase();
  return true;
}
