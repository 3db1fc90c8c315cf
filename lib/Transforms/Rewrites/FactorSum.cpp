//===- FactorSum.cpp - factor a shared matrix out of a sum of products ----===//
//
// `G1 A + G2 A` costs two GEMMs over A; `(G1 + G2) A` one, plus an add of
// the small factors. jax's gradient of a Gram matrix `A A^T` is exactly this
// sum (`G A + G^T A`), and with A of shape [M, N] and N the data dimension,
// it is the biggest GEMM of the backward pass. The terms of a tree of adds
// are read through transposes as plain matrix products (rank 2, one
// contracting dim, no batch dims); terms that share their right factor (or
// their left) are merged. That always saves FLOPs (an add of m x k factors
// against a GEMM of 2 m k n); the shared factor's free dimension n must also
// be at least as large as both dimensions of the factors being added, so
// that their sum is no bigger a temporary than the products were.
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"

#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

namespace {

/// A logical operand of a product: `value`, read transposed if `transposed`.
struct Factor {
  Value value;
  bool transposed = false;
  bool operator==(const Factor &o) const {
    return value == o.value && transposed == o.transposed;
  }
  int64_t dim(int i) const { // logical dimension i (0 rows, 1 cols)
    auto t = llvm::cast<RankedTensorType>(value.getType());
    return t.getDimSize(transposed ? 1 - i : i);
  }
};

/// An addend: its value in the sum, and when it is a plain product read
/// through transposes, the product's two factors and the ops it replaces.
struct Term {
  Value value;
  bool isProduct = false;
  Factor left, right;
  SmallVector<Operation *> ops; // the dot and transposes above it
};

bool isRank2(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t && t.getRank() == 2;
}

Type elementType(Value v) { return llvm::cast<ShapedType>(v.getType()).getElementType(); }

bool isAdd(Operation *op) { return getElementwiseFn(op) == ElementwiseFn::Add; }

/// `f` with the transposes that produce its value folded into its flag, so
/// that A and transpose(transpose(A)) compare equal.
Factor throughTransposes(Factor f) {
  while (Operation *def = f.value.getDefiningOp()) {
    auto t = TransposeView::match(def);
    if (!t)
      break;
    f = Factor{t->getOperand(), !f.transposed};
  }
  return f;
}

/// Reads `v` as a product through single-use transposes.
Term readTerm(Value v) {
  Term term{v};
  bool transposed = false;
  Value cur = v;
  SmallVector<Operation *> ops;
  while (Operation *def = cur.getDefiningOp()) {
    if (!cur.hasOneUse())
      return term;
    if (auto t = TransposeView::match(def)) {
      ops.push_back(def);
      transposed = !transposed;
      cur = t->getOperand();
      continue;
    }
    auto dot = DotGeneralView::match(def);
    if (!dot)
      return term;
    DotDims d = dot->getDims();
    if (!d.lhsBatch.empty() || d.lhsContract.size() != 1 || !isRank2(dot->getLhs()) ||
        !isRank2(dot->getRhs()))
      return term;
    ops.push_back(def);
    Factor l = throughTransposes({dot->getLhs(), d.lhsContract[0] == 0});
    Factor r = throughTransposes({dot->getRhs(), d.rhsContract[0] == 1});
    term.isProduct = true;
    term.left = transposed ? Factor{r.value, !r.transposed} : l; // (L R)^T = R^T L^T
    term.right = transposed ? Factor{l.value, !l.transposed} : r;
    term.ops = std::move(ops);
    return term;
  }
  return term;
}

/// The addends of the add tree rooted at `root` (through single-use adds).
void collectTerms(Operation *root, SmallVectorImpl<Term> &terms,
                  SmallVectorImpl<Operation *> &adds) {
  adds.push_back(root);
  for (Value v : root->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (isAdd(def) && v.hasOneUse() && def->getBlock() == root->getBlock())
      collectTerms(def, terms, adds);
    else
      terms.push_back(readTerm(v));
  }
}

Value materialise(OpBuilder &b, Location loc, const Factor &f) {
  if (!f.transposed)
    return f.value;
  return buildTranspose(b, loc, f.value, {1, 0});
}

/// Indices of the product terms sharing their right (byRight) or left
/// factor with term `i`, when merging them saves work.
SmallVector<unsigned> groupWith(ArrayRef<Term> terms, unsigned i, bool byRight) {
  SmallVector<unsigned> group;
  const Term &t = terms[i];
  const Factor &shared = byRight ? t.right : t.left;
  int64_t sharedFree = byRight ? shared.dim(1) : shared.dim(0);
  for (unsigned j = i; j < terms.size(); ++j) {
    const Term &u = terms[j];
    if (!u.isProduct || !((byRight ? u.right : u.left) == shared))
      continue;
    const Factor &other = byRight ? u.left : u.right;
    if (sharedFree < std::max(other.dim(0), other.dim(1)) ||
        elementType(other.value) != elementType(u.value))
      continue;
    group.push_back(j);
  }
  return group;
}

} // namespace

bool memfit::rewriteFactorSum(Operation *op, RewriterBase &rewriter) {
  if (!isAdd(op) || !isRank2(op->getResult(0)))
    return false;
  // Start at the root of an add tree only.
  if (op->hasOneUse() && isAdd(*op->getUsers().begin()))
    return false;
  SmallVector<Term> terms;
  SmallVector<Operation *> adds;
  collectTerms(op, terms, adds);
  SmallVector<unsigned> group;
  bool byRight = true;
  for (unsigned i = 0; i < terms.size() && group.size() < 2; ++i) {
    if (!terms[i].isProduct)
      continue;
    for (bool right : {true, false}) {
      group = groupWith(terms, i, right);
      byRight = right;
      if (group.size() >= 2)
        break;
    }
  }
  if (group.size() < 2)
    return false;

  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  Location loc = op->getLoc();
  Value sum;
  for (unsigned j : group) {
    const Term &t = terms[j];
    Value f = materialise(b, loc, byRight ? t.left : t.right);
    sum = sum ? buildElementwise(b, loc, "stablehlo.add", {sum, f}) : f;
  }
  const Term &first = terms[group.front()];
  Factor l = byRight ? Factor{sum, false} : first.left;
  Factor r = byRight ? first.right : Factor{sum, false};
  DotDims d;
  d.lhsContract = {l.transposed ? 0 : 1};
  d.rhsContract = {r.transposed ? 1 : 0};
  auto resultType = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  Value result = buildDotGeneral(b, loc, resultType, l.value, r.value, d);
  for (unsigned j = 0; j < terms.size(); ++j)
    if (!llvm::is_contained(group, j))
      result = buildElementwise(b, loc, "stablehlo.add", {result, terms[j].value});
  rewriter.replaceAllUsesWith(op->getResult(0), result);
  SmallVector<Operation *> dead(adds.begin(), adds.end());
  for (unsigned j : group)
    dead.append(terms[j].ops.begin(), terms[j].ops.end());
  eraseIfDead(rewriter, dead);
  return true;
}
