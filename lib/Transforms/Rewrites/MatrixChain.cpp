//===- MatrixChain.cpp - re-associate chains of matrix products ------------===//
//
// `(A @ B) @ v` costs 2*n^3 + 2*n^2 FLOPs and an n x n intermediate;
// `A @ (B @ v)` costs 4*n^2 and an n-vector. A chain of plain matrix products
// (rank <= 2, one contracting dim, no batch dims; transposes folded in) is
// collected from its last product, re-associated by the classic
// matrix-chain dynamic program on FLOPs (ties: the smaller largest
// intermediate), and rebuilt only when that is strictly cheaper.
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"

#include "memfit/IR/OpViews.h"

#include <limits>

using namespace mlir;
using namespace memfit;

namespace {

/// A logical matrix: `value` (rank 2, or rank 1 read as a row or column),
/// possibly read transposed.
struct Leaf {
  Value value;
  bool transposed = false;
  bool rowVector = false; // a rank-1 value on the left of a product
  int64_t rows = 0, cols = 0;
};

struct Chain {
  SmallVector<Leaf> leaves;
  SmallVector<Operation *> replaced; // inner products and transposes
  Operation *root = nullptr;
};

bool isPlainMatmul(Operation *op) {
  auto dot = DotGeneralView::match(op);
  if (!dot)
    return false;
  DotDims d = dot->getDims();
  auto rank = [](Value v) { return llvm::cast<RankedTensorType>(v.getType()).getRank(); };
  return d.lhsBatch.empty() && d.lhsContract.size() == 1 &&
         rank(dot->getLhs()) <= 2 && rank(dot->getRhs()) <= 2;
}

Leaf makeLeaf(Value v, bool transposed, bool onLeft) {
  auto t = llvm::cast<RankedTensorType>(v.getType());
  Leaf leaf{v, transposed, false, 1, 1};
  if (t.getRank() == 1) {
    leaf.rowVector = onLeft;
    (onLeft ? leaf.cols : leaf.rows) = t.getDimSize(0);
    leaf.transposed = false;
    return leaf;
  }
  leaf.rows = t.getDimSize(transposed ? 1 : 0);
  leaf.cols = t.getDimSize(transposed ? 0 : 1);
  return leaf;
}

/// Appends the logical factors of `v` (read transposed if `transposed`).
void collect(Value v, bool transposed, bool onLeft, Chain &chain) {
  Operation *def = v.getDefiningOp();
  auto rank = llvm::cast<RankedTensorType>(v.getType()).getRank();
  if (def && v.hasOneUse() && rank == 2) {
    if (auto t = TransposeView::match(def)) {
      chain.replaced.push_back(def);
      return collect(t->getOperand(), !transposed, onLeft, chain);
    }
    if (isPlainMatmul(def)) {
      auto dot = *DotGeneralView::match(def);
      DotDims d = dot.getDims();
      auto lr = llvm::cast<RankedTensorType>(dot.getLhs().getType()).getRank();
      auto rr = llvm::cast<RankedTensorType>(dot.getRhs().getType()).getRank();
      if (lr == 2 && rr == 2) {
        chain.replaced.push_back(def);
        bool lt = d.lhsContract[0] == 0, rt = d.rhsContract[0] == 1;
        if (!transposed) {
          collect(dot.getLhs(), lt, true, chain);
          collect(dot.getRhs(), rt, false, chain);
        } else { // (L R)^T = R^T L^T
          collect(dot.getRhs(), !rt, true, chain);
          collect(dot.getLhs(), !lt, false, chain);
        }
        return;
      }
    }
  }
  chain.leaves.push_back(makeLeaf(v, transposed, onLeft));
}

/// Cost of a product tree over leaves [i, j] given a split table.
struct Plan {
  std::vector<std::vector<double>> flops;
  std::vector<std::vector<double>> peak; // largest intermediate (elements)
  std::vector<std::vector<int>> split;
};

Plan solve(ArrayRef<int64_t> dims) {
  int n = dims.size() - 1;
  Plan p;
  p.flops.assign(n, std::vector<double>(n, 0));
  p.peak.assign(n, std::vector<double>(n, 0));
  p.split.assign(n, std::vector<int>(n, -1));
  for (int len = 2; len <= n; ++len)
    for (int i = 0; i + len - 1 < n; ++i) {
      int j = i + len - 1;
      p.flops[i][j] = std::numeric_limits<double>::infinity();
      for (int k = i; k < j; ++k) {
        double f = p.flops[i][k] + p.flops[k + 1][j] +
                   2.0 * dims[i] * dims[k + 1] * dims[j + 1];
        double size = static_cast<double>(dims[i]) * dims[j + 1];
        double pk = std::max({p.peak[i][k], p.peak[k + 1][j], size});
        if (f < p.flops[i][j] || (f == p.flops[i][j] && pk < p.peak[i][j])) {
          p.flops[i][j] = f;
          p.peak[i][j] = pk;
          p.split[i][j] = k;
        }
      }
    }
  return p;
}

/// FLOPs of the chain's products as the program wrote them: the root and
/// the inner products that the rebuild replaces. A product feeding a leaf
/// (an intermediate with several uses) stays in the program whichever order
/// the chain takes, so it is not counted: counting it made the rebuilt chain
/// look cheaper than itself, and the rewrite re-fired on its own output.
double chainFlops(const Chain &chain) {
  double total = 0;
  auto add = [&](Operation *op) {
    if (auto dot = DotGeneralView::match(op)) {
      auto lt = llvm::cast<RankedTensorType>(dot->getLhs().getType());
      int64_t k = lt.getDimSize(dot->getDims().lhsContract[0]);
      total += 2.0 * dot->getResultType().getNumElements() * k;
    }
  };
  add(chain.root);
  for (Operation *op : chain.replaced)
    add(op);
  return total;
}

/// The physical 2-D value of a leaf and whether it is read transposed.
std::pair<Value, bool> materialise(OpBuilder &b, Location loc, const Leaf &leaf) {
  auto t = llvm::cast<RankedTensorType>(leaf.value.getType());
  if (t.getRank() == 2)
    return {leaf.value, leaf.transposed};
  auto type = RankedTensorType::get({leaf.rows, leaf.cols}, t.getElementType());
  return {buildReshape(b, loc, type, leaf.value), false};
}

std::pair<Value, bool> build(OpBuilder &b, Location loc, const Chain &chain,
                             const Plan &plan, int i, int j, Type elementType) {
  if (i == j)
    return materialise(b, loc, chain.leaves[i]);
  int k = plan.split[i][j];
  auto [l, lt] = build(b, loc, chain, plan, i, k, elementType);
  auto [r, rt] = build(b, loc, chain, plan, k + 1, j, elementType);
  DotDims d;
  d.lhsContract = {lt ? 0 : 1};
  d.rhsContract = {rt ? 1 : 0};
  auto type = RankedTensorType::get({chain.leaves[i].rows, chain.leaves[j].cols},
                                    elementType);
  return {buildDotGeneral(b, loc, type, l, r, d), false};
}

} // namespace

bool memfit::rewriteMatrixChain(Operation *op, RewriterBase &rewriter) {
  if (!isPlainMatmul(op))
    return false;
  // Only start at the last product of a chain.
  if (op->hasOneUse()) {
    Operation *user = *op->getUsers().begin();
    if (isPlainMatmul(user) || (TransposeView::match(user) && user->hasOneUse() &&
                                isPlainMatmul(*user->getUsers().begin())))
      return false;
  }
  auto dot = *DotGeneralView::match(op);
  DotDims d = dot.getDims();
  Chain chain;
  chain.root = op;
  auto lhsRank = llvm::cast<RankedTensorType>(dot.getLhs().getType()).getRank();
  auto rhsRank = llvm::cast<RankedTensorType>(dot.getRhs().getType()).getRank();
  collect(dot.getLhs(), lhsRank == 2 && d.lhsContract[0] == 0, true, chain);
  collect(dot.getRhs(), rhsRank == 2 && d.rhsContract[0] == 1, false, chain);
  if (chain.leaves.size() < 3)
    return false;
  SmallVector<int64_t> dims{chain.leaves[0].rows};
  for (size_t i = 0; i < chain.leaves.size(); ++i) {
    if (i > 0 && chain.leaves[i].rows != chain.leaves[i - 1].cols)
      return false; // not a chain memfit understands
    dims.push_back(chain.leaves[i].cols);
  }
  Plan plan = solve(dims);
  int n = chain.leaves.size();
  if (!(plan.flops[0][n - 1] < chainFlops(chain)))
    return false;
  rewriter.setInsertionPoint(op);
  auto resultType = dot.getResultType();
  auto [v, transposed] = build(rewriter, op->getLoc(), chain, plan, 0, n - 1,
                               resultType.getElementType());
  (void)transposed; // products are built untransposed
  if (v.getType() != resultType)
    v = buildReshape(rewriter, op->getLoc(), resultType, v);
  rewriter.replaceAllUsesWith(op->getResult(0), v);
  SmallVector<Operation *> dead{op};
  dead.append(chain.replaced.begin(), chain.replaced.end());
  eraseIfDead(rewriter, dead);
  return true;
}
