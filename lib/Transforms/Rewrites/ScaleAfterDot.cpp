//===- ScaleAfterDot.cpp - scale a dot's result, not its operand ----------===//
//
//   dot(x * broadcast(c), y)  ->  dot(x, y) * broadcast'(c)
//   dot(x / broadcast(c), y)  ->  dot(x, y) / broadcast'(c)
//
// when c varies only along dimensions of x that survive into the dot's
// result (batch or free dimensions; c may also be a scalar, or have extent 1
// along contracted ones), and the result is smaller than x. Each output
// element is a sum of products that all carry the same factor, so the
// factor moves out of the sum. In a split attention's backward, dS = P *
// (dP - rowsum) * scale is [chunk, S] and dS k is [chunk, d]: the scale
// then costs a pass over [chunk, d] instead of [chunk, S].
//
// Applied only in split loops (a stablehlo.while that memfit-split made:
// it carries `memfit.split`), so that a program that fits is compiled
// exactly as jax wrote it, and only when every reader of the scaled value
// is such a dot (otherwise the scaled tensor stays and nothing is saved).
// Rounding: the product of the sum and c instead of the sum of products
// with c, a change of the order of one rounding; like the other rewrites it
// is checked against float64 by the numerics oracle.
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"

#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

namespace {

/// x * broadcast(c) or x / broadcast(c): the scaled value, the factor and
/// how c's dimensions map onto x's.
struct Scaled {
  Operation *scale; // the multiply or divide
  Value x, c;
  SmallVector<int64_t> cDims; // x's dimension of each of c's
  bool divide;
};

/// `v` as broadcast_in_dim(c, dims), or a splat constant (c a scalar).
std::optional<std::pair<Value, SmallVector<int64_t>>> asBroadcast(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto bc = BroadcastInDimView::match(def))
    return std::make_pair(bc->getOperand(), bc->getBroadcastDimensions());
  if (DenseElementsAttr dense = def ? getConstantElements(def) : nullptr)
    if (dense.isSplat() && getOpKind(def) == OpKind::Constant)
      return std::make_pair(v, SmallVector<int64_t>{}); // built as a scalar later
  return std::nullopt;
}

std::optional<Scaled> matchScaled(Value operand) {
  Operation *def = operand.getDefiningOp();
  if (!def || def->getNumOperands() != 2)
    return std::nullopt;
  ElementwiseFn fn = getElementwiseFn(def);
  bool divide = fn == ElementwiseFn::Divide;
  if (!divide && fn != ElementwiseFn::Multiply)
    return std::nullopt;
  // For a divide only the divisor can be the factor.
  for (unsigned side : divide ? SmallVector<unsigned>{1} : SmallVector<unsigned>{1, 0}) {
    auto bc = asBroadcast(def->getOperand(side));
    if (!bc)
      continue;
    Scaled s{def, def->getOperand(1 - side), bc->first, bc->second, divide};
    if (s.x.getDefiningOp() && asBroadcast(s.x))
      continue; // both factors broadcasts: nothing big to avoid
    return s;
  }
  return std::nullopt;
}

/// Where each dimension of `dot`'s operand `side` lands in its result
/// (-1: contracted).
SmallVector<int64_t> resultPositions(const DotDims &d, unsigned side, int64_t lhsRank,
                                     int64_t rank) {
  const auto &batch = side == 0 ? d.lhsBatch : d.rhsBatch;
  const auto &contract = side == 0 ? d.lhsContract : d.rhsContract;
  int64_t nb = batch.size();
  // The result is (batch, lhs free, rhs free).
  int64_t next = nb;
  if (side == 1)
    next += lhsRank - nb - static_cast<int64_t>(d.lhsContract.size());
  SmallVector<int64_t> pos(rank, -1);
  for (int64_t i = 0; i < rank; ++i) {
    if (const auto *b = llvm::find(batch, i); b != batch.end())
      pos[i] = b - batch.begin();
    else if (!llvm::is_contained(contract, i))
      pos[i] = next++;
  }
  return pos;
}

/// How c reaches the result of `dot` (operand `side` is s.scale's result):
/// the broadcast dimensions into the result, and c's dimensions to drop
/// (extent 1 along a contracted dimension). False when c varies along a
/// contracted dimension.
bool mapFactor(Operation *dot, unsigned side, const Scaled &s, SmallVector<int64_t> &dims,
               SmallVector<int64_t> &drop) {
  DotGeneralView v(dot);
  auto lt = llvm::cast<RankedTensorType>(v.getLhs().getType());
  auto xt = llvm::cast<RankedTensorType>(s.x.getType());
  SmallVector<int64_t> pos = resultPositions(v.getDims(), side, lt.getRank(), xt.getRank());
  auto ct = llvm::cast<RankedTensorType>(s.c.getType());
  if (s.cDims.empty() && ct.getRank() != 0)
    return true; // a splat constant: rebuilt as a scalar
  for (auto [i, xd] : llvm::enumerate(s.cDims)) {
    if (pos[xd] >= 0)
      dims.push_back(pos[xd]);
    else if (ct.getDimSize(i) == 1)
      drop.push_back(i);
    else
      return false;
  }
  return true;
}

/// Whether `dot` reads s.scale's result as one operand, in a form the
/// rewrite handles; `side` says which.
bool qualifies(Operation *dot, const Scaled &s, unsigned &side) {
  auto v = DotGeneralView::match(dot);
  if (!v || !inSplitLoop(dot))
    return false;
  Value r = s.scale->getResult(0);
  if ((v->getLhs() == r) == (v->getRhs() == r))
    return false; // not read, or read as both operands
  side = v->getLhs() == r ? 0 : 1;
  auto out = v->getResultType();
  auto ct = llvm::cast<RankedTensorType>(s.c.getType());
  if (!out || ct.getElementType() != out.getElementType())
    return false; // a mixed-precision dot: the factor would need a convert
  if (getTensorBytes(out).value_or(0) >= getTensorBytes(r.getType()).value_or(0))
    return false;
  SmallVector<int64_t> dims, drop;
  return mapFactor(dot, side, s, dims, drop);
}

/// dot(x, y) op broadcast'(c), replacing `dot`.
void rewriteOne(RewriterBase &rewriter, Operation *dot, unsigned side, const Scaled &s) {
  OpBuilder &b = rewriter;
  b.setInsertionPoint(dot);
  Location loc = dot->getLoc();
  SmallVector<int64_t> dims, drop;
  mapFactor(dot, side, s, dims, drop);
  auto out = llvm::cast<RankedTensorType>(dot->getResult(0).getType());
  auto ct = llvm::cast<RankedTensorType>(s.c.getType());
  Value c = s.c;
  if (s.cDims.empty() && ct.getRank() != 0) { // a splat constant
    auto scalar = RankedTensorType::get({}, ct.getElementType());
    c = buildConstant(b, loc, getConstantElements(s.c.getDefiningOp()).resizeSplat(scalar));
  } else if (!drop.empty()) {
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < ct.getRank(); ++i)
      if (!llvm::is_contained(drop, i))
        shape.push_back(ct.getDimSize(i));
    c = buildReshape(b, loc, RankedTensorType::get(shape, ct.getElementType()), c);
  }
  Operation *y = b.clone(*dot);
  y->setOperand(side, s.x);
  Value factor = buildBroadcastInDim(b, loc, out, c, dims);
  Value r = buildElementwise(b, loc, s.divide ? "stablehlo.divide" : "stablehlo.multiply",
                             {y->getResult(0), factor});
  rewriter.replaceAllUsesWith(dot->getResult(0), r);
  rewriter.eraseOp(dot);
}

} // namespace

bool memfit::rewriteScaleAfterDot(Operation *dot, RewriterBase &rewriter) {
  auto v = DotGeneralView::match(dot);
  if (!v || !inSplitLoop(dot))
    return false;
  for (Value operand : {v->getLhs(), v->getRhs()}) {
    std::optional<Scaled> s = matchScaled(operand);
    if (!s)
      continue;
    // Every reader must be a dot the rewrite takes: then the scaled tensor
    // is never formed.
    SmallVector<std::pair<Operation *, unsigned>> readers;
    bool all = true;
    for (Operation *u : s->scale->getUsers()) {
      unsigned side = 0;
      if (!qualifies(u, *s, side) ||
          llvm::any_of(readers, [&](auto &p) { return p.first == u; })) {
        all = false;
        break;
      }
      readers.push_back({u, side});
    }
    if (!all || readers.empty())
      continue;
    Operation *scaleOp = s->scale;
    SmallVector<Operation *> maybeDead; // the broadcast of c, or the splat constant
    for (Value o : scaleOp->getOperands())
      if (Operation *d = o.getDefiningOp())
        maybeDead.push_back(d);
    for (auto [u, side] : readers)
      rewriteOne(rewriter, u, side, *s);
    rewriter.eraseOp(scaleOp);
    eraseIfDead(rewriter, maybeDead);
    return true;
  }
  return false;
}

bool memfit::inSplitLoop(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (getOpKind(p) == OpKind::While && p->getAttr("memfit.split"))
      return true;
  return false;
}
