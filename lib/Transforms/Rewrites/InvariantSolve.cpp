//===- InvariantSolve.cpp - loop-invariant triangular solves ----------------===//
//
// A loop that solves every chunk against the same triangular factor,
//
//   while (...) { X_c = op(A)^-1 B_c }      (A carried unchanged)
//
// pays, every iteration, XLA:CPU's layout copies of A, B_c and X_c (jax's
// lapack_?trsm_ffi takes column-major operands) and a substitution that
// runs several times slower per flop than XLA's GEMMs. The loop-invariant
// work is the inverses of op(A)'s diagonal blocks; with them, each chunk is
// solved by blocked substitution, every flop in a GEMM:
//
//   before the loop:  D = the diagonal blocks of op(A)^-1 (one trsm against I)
//   in the loop, recursively over halves (T = op(A), lower, left side):
//     X_1 = solve(T_11, B_1);  X_2 = solve(T_22, B_2 - T_21 X_1)
//   and at a diagonal block i:
//     X_i = D_i B_i;  X_i += D_i (B_i - T_ii X_i)   (one refinement step)
//
// Why this form, measured against float64 on RBF Cholesky factors
// (test_invariant_solve.py): multiplying by the whole inverse op(A)^-1
// measured up to 5.6x the substitution's error on ill-conditioned factors,
// because its error grows with cond(A); blocked substitution's grows with
// the diagonal blocks' conditioning only, and the refinement step makes each
// block's solve as accurate as substitution (fixed-precision refinement of a
// moderately stable solver is componentwise backward stable: Higham,
// "Accuracy and Stability of Numerical Algorithms", §12.2).
//
// Applied to trsm calls (real types, non-unit diagonal, no batch dims) in
// the entry block of a stablehlo.while body whose factor is a loop-carried
// value returned unchanged (how memfit-split and jax's scan carry loop
// invariants).
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"

#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

namespace {

/// Rows per diagonal block: 64 keeps the GEMMs efficient and, with the
/// refinement step, the error that of substitution (README: measured).
constexpr int64_t kSolveBlock = 64;

struct InvariantSolve {
  Operation *solve, *loop;
  unsigned carried; // the factor's position among the loop's values
  bool leftSide;    // op(A) X = B, else X op(A) = B
  bool transposed;  // op(A) = A^T
  bool lowerT;      // op(A) is lower triangular
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

/// side / uplo / trans_x / diag of jax's trsm, when this rewrite handles them.
std::optional<InvariantSolve> readSolveConfig(const CustomCallView &call) {
  auto side = call.getBackendConfigInt("side"), uplo = call.getBackendConfigInt("uplo");
  auto trans = call.getBackendConfigInt("trans_x"), diag = call.getBackendConfigInt("diag");
  if (!side || !uplo || !trans || !diag || *diag != 'N')
    return std::nullopt; // a unit diagonal is implied, not stored: not handled
  if ((*side != 'L' && *side != 'R') || (*uplo != 'L' && *uplo != 'U') ||
      (*trans != 'N' && *trans != 'T' && *trans != 'C'))
    return std::nullopt;
  InvariantSolve m{};
  m.leftSide = *side == 'L';
  m.transposed = *trans != 'N';
  m.lowerT = (*uplo == 'L') != m.transposed;
  return m;
}

std::optional<InvariantSolve> matchInvariantSolve(Operation *op) {
  auto call = CustomCallView::match(op);
  if (!call || !call->isTriangularSolve() || call->getNumBatchDims() != 0)
    return std::nullopt;
  auto a = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  if (a.getRank() != 2 || !a.hasStaticShape() ||
      !llvm::isa<FloatType>(a.getElementType())) // 'C' is 'T' for real types only
    return std::nullopt;
  std::optional<InvariantSolve> m = readSolveConfig(*call);
  Operation *loop = op->getParentOp();
  if (!m || !loop || getOpKind(loop) != OpKind::While ||
      op->getBlock() != &WhileView(loop).getBody().front())
    return std::nullopt;
  std::optional<unsigned> carried = invariantCarried(loop, op->getOperand(0));
  if (!carried)
    return std::nullopt;
  m->solve = op;
  m->loop = loop;
  m->carried = *carried;
  return m;
}

/// [start, end) of each diagonal block of an n x n factor.
SmallVector<std::pair<int64_t, int64_t>> diagonalBlocks(int64_t n) {
  SmallVector<std::pair<int64_t, int64_t>> blocks;
  for (int64_t s = 0; s < n; s += kSolveBlock)
    blocks.push_back({s, std::min(n, s + kSolveBlock)});
  return blocks;
}

/// The n x n identity of `et`.
Value identity(OpBuilder &b, Location loc, Type et, int64_t n) {
  auto it = RankedTensorType::get({n, n}, b.getI32Type());
  Value rows = buildIota(b, loc, it, 0);
  Value cols = buildIota(b, loc, it, 1);
  Value eq = buildCompare(b, loc, rows, cols, "EQ", "SIGNED");
  return buildConvert(b, loc, RankedTensorType::get({n, n}, et), eq);
}

/// Before the loop: op(A)^-1 by the solve itself against the identity, and
/// its diagonal blocks stacked into an n x min(n, block) matrix (the last
/// block padded with zero columns). A block of the inverse of a triangular
/// matrix is the inverse of its block, computed by substitution within it.
Value diagonalInversesBefore(OpBuilder &b, const InvariantSolve &m) {
  Location loc = m.solve->getLoc();
  Value factor = m.loop->getOperand(m.carried);
  auto a = llvm::cast<RankedTensorType>(factor.getType());
  int64_t n = a.getDimSize(0), width = std::min(n, kSolveBlock);
  Type et = a.getElementType();
  Value eye = identity(b, loc, et, n); // before the clone that reads it
  Operation *inv = b.clone(*m.solve);
  inv->setOperands({factor, eye});
  inv->getResult(0).setType(a);
  inv->removeAttr("sdy.sharding_rule"); // names the chunk's sizes
  Value zero = buildConstantSplat(b, loc, tensorOf({}, et), 0.0);
  SmallVector<Value> blocks;
  for (auto [s, e] : diagonalBlocks(n)) {
    Value d = buildSlice(b, loc, inv->getResult(0), {s, s}, {e, e}, {1, 1});
    if (e - s < width)
      d = buildPad(b, loc, d, zero, {0, 0}, {0, width - (e - s)}, {0, 0});
    blocks.push_back(d);
  }
  return blocks.size() == 1 ? blocks[0] : buildConcatenate(b, loc, blocks, 0);
}

/// The loop with `extra` carried unchanged after its own values.
Operation *carryOneMore(RewriterBase &rewriter, Operation *loop, Value extra) {
  SmallVector<Value> operands(loop->getOperands());
  operands.push_back(extra);
  Operation *wider = buildGenericOp(rewriter, loop->getLoc(), "stablehlo.while", operands,
                                    ValueRange(operands).getTypes(), {}, /*numRegions=*/2);
  wider->setAttrs(loop->getAttrs());
  for (unsigned r = 0; r < 2; ++r) {
    wider->getRegion(r).takeBody(loop->getRegion(r));
    wider->getRegion(r).front().addArgument(extra.getType(), loop->getLoc());
  }
  Operation *ret = WhileView(wider).getBody().front().getTerminator();
  rewriter.modifyOpInPlace(ret, [&] {
    ret->insertOperands(ret->getNumOperands(),
                        WhileView(wider).getBody().front().getArguments().back());
  });
  for (unsigned i = 0; i < loop->getNumResults(); ++i)
    rewriter.replaceAllUsesWith(loop->getResult(i), wider->getResult(i));
  return wider;
}

/// Builds the blocked substitution inside the loop body.
class BlockedSolver {
public:
  BlockedSolver(OpBuilder &b, const InvariantSolve &m, Value factor, Value inverses)
      : b(b), m(m), loc(m.solve->getLoc()), a(factor), d(inverses),
        rhs(m.solve->getOperand(1)),
        et(llvm::cast<RankedTensorType>(factor.getType()).getElementType()) {
    auto bt = llvm::cast<RankedTensorType>(rhs.getType());
    chunk = bt.getDimSize(m.leftSide ? 1 : 0);
  }

  Value solve() {
    int64_t n = llvm::cast<RankedTensorType>(a.getType()).getDimSize(0);
    return solveRange(0, n, rhs);
  }

private:
  OpBuilder &b;
  const InvariantSolve &m;
  Location loc;
  Value a, d, rhs;
  Type et;
  int64_t chunk = 0;

  /// The dimension of X (and B) that runs along op(A).
  int64_t xDim() const { return m.leftSide ? 0 : 1; }

  /// X for op(A)'s rows/columns [s, e), from `r`, the right-hand side's
  /// part for them with every solved block's contribution subtracted:
  /// recursively, the half substitution reaches first, then the other half
  /// less the first's contribution (one GEMM), down to diagonal blocks.
  /// Halving keeps the GEMMs large and copies of X to O(log) per element.
  Value solveRange(int64_t s, int64_t e, Value r) {
    if (e - s <= kSolveBlock)
      return solveDiagonal(s, e, r);
    int64_t blocks = (e - s + kSolveBlock - 1) / kSolveBlock;
    int64_t mid = s + kSolveBlock * ((blocks + 1) / 2);
    // Forward when op(A)'s known entries of a block row (left side) or
    // block column (right side) precede it.
    bool forward = m.lowerT == m.leftSide;
    auto [fs, fe] = forward ? std::pair{s, mid} : std::pair{mid, e};
    auto [ls, le] = forward ? std::pair{mid, e} : std::pair{s, mid};
    Value first = solveRange(fs, fe, part(r, fs - s, fe - s));
    Value known = m.leftSide ? timesT(factorSlice(ls, le, fs, fe), first)
                             : timesT(factorSlice(fs, fe, ls, le), first);
    Value rest = buildElementwise(b, loc, "stablehlo.subtract", {part(r, ls - s, le - s), known});
    Value last = solveRange(ls, le, rest);
    return forward ? buildConcatenate(b, loc, {first, last}, xDim())
                   : buildConcatenate(b, loc, {last, first}, xDim());
  }

  /// Rows (left side) or columns [s, e) of a right-hand side.
  Value part(Value r, int64_t s, int64_t e) {
    if (m.leftSide)
      return buildSlice(b, loc, r, {s, 0}, {e, chunk}, {1, 1});
    return buildSlice(b, loc, r, {0, s}, {chunk, e}, {1, 1});
  }

  /// The entries of A that hold op(A)[r0:r1, c0:c1] (transposed for A^T).
  Value factorSlice(int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    if (m.transposed)
      return buildSlice(b, loc, a, {c0, r0}, {c1, r1}, {1, 1});
    return buildSlice(b, loc, a, {r0, c0}, {r1, c1}, {1, 1});
  }

  /// op(A)-block * X (left side) or X * op(A)-block (right side), for a
  /// block `t` as factorSlice returned it.
  Value timesT(Value t, Value xs) {
    auto tt = llvm::cast<RankedTensorType>(t.getType());
    int64_t tRows = tt.getDimSize(m.transposed ? 1 : 0), tCols = tt.getDimSize(m.transposed ? 0 : 1);
    DotDims dd;
    if (m.leftSide) { // sum_k T[i, k] X[k, j]
      dd.lhsContract = {m.transposed ? 0 : 1};
      dd.rhsContract = {0};
      return buildDotGeneral(b, loc, tensorOf({tRows, chunk}, et), t, xs, dd);
    }
    dd.lhsContract = {1}; // sum_k X[i, k] T[k, j]
    dd.rhsContract = {m.transposed ? 1 : 0};
    return buildDotGeneral(b, loc, tensorOf({chunk, tCols}, et), xs, t, dd);
  }

  /// D_i r (left side) or r D_i (right side).
  Value timesInverse(Value di, Value r) {
    DotDims dd;
    dd.lhsContract = {1};
    dd.rhsContract = {0};
    return buildDotGeneral(b, loc, llvm::cast<RankedTensorType>(r.getType()),
                           m.leftSide ? di : r, m.leftSide ? r : di, dd);
  }

  /// op(A)'s diagonal block [s, e) with the triangle the solve does not
  /// read set to zero (LAPACK ignores it; it may hold anything).
  Value diagonalOfT(int64_t s, int64_t e) {
    Value blk = buildSlice(b, loc, a, {s, s}, {e, e}, {1, 1});
    auto it = RankedTensorType::get({e - s, e - s}, b.getI32Type());
    bool lowerA = m.lowerT != m.transposed;
    Value keep = buildCompare(b, loc, buildIota(b, loc, it, 0), buildIota(b, loc, it, 1),
                              lowerA ? "GE" : "LE", "SIGNED");
    Value zero = buildConstantSplat(b, loc, tensorOf({e - s, e - s}, et), 0.0);
    return buildSelect(b, loc, keep, blk, zero);
  }

  /// X_i = D_i r, then one refinement step against op(A)'s diagonal block.
  Value solveDiagonal(int64_t s, int64_t e, Value r) {
    Value di = buildSlice(b, loc, d, {s, 0}, {e, e - s}, {1, 1});
    Value x = timesInverse(di, r);
    Value residual = buildElementwise(b, loc, "stablehlo.subtract",
                                      {r, timesT(diagonalOfT(s, e), x)});
    return buildElementwise(b, loc, "stablehlo.add", {x, timesInverse(di, residual)});
  }
};

} // namespace

bool memfit::rewriteLoopInvariantSolve(Operation *op, RewriterBase &rewriter) {
  auto m = matchInvariantSolve(op);
  if (!m)
    return false;
  OpBuilder &b = rewriter;
  b.setInsertionPoint(m->loop);
  Value inverses = diagonalInversesBefore(b, *m);
  Operation *wider = carryOneMore(rewriter, m->loop, inverses);
  Block &body = WhileView(wider).getBody().front();

  b.setInsertionPoint(m->solve);
  BlockedSolver solver(b, *m, body.getArgument(m->carried), body.getArguments().back());
  Value x = solver.solve();
  rewriter.replaceAllUsesWith(m->solve->getResult(0), x);
  rewriter.eraseOp(m->solve);
  rewriter.eraseOp(m->loop);
  return true;
}
