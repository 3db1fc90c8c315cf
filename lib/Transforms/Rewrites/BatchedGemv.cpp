//===- BatchedGemv.cpp - batched matrix-vector dots as multiply + reduce ---===//
//
//   dot_general(x, m)  ->  reduce(add, broadcast(x) * m)   (then a transpose
//                                                           of the small result)
//
// when x (the "vector") has only batch and contracting dimensions, m (the
// "matrix") has free dimensions too, and m's batch dimensions are not its
// leading ones. A decode step's attention over a [B, S, H, D] cache is such
// a dot twice: q [B, H, D] against a cache chunk (batch B, H; contracted D)
// and the probabilities [B, H, S] against the other (contracted S).
//
// Why: XLA:CPU runs a dot with its batch dimensions leading, so it copies
// m, a cache chunk as big as the chunk itself, into [B, H, S, D] before a
// matrix-vector product where a GEMM library has nothing to gain (one
// multiply-add per element read). The multiply + reduce reads m where it
// lies. On XLA:CPU (bench/bench_batched_gemv.py, numbers in
// docs/rewrites.md) both dots of the decode step on 34 chunks of 120
// positions take about 5x longer as dots than as multiply + reduce, with or
// without ynn fusions; on the whole [16, 4096, 8, 64] caches the dots are
// the faster with ynn fusions off. So the rewrite applies only in split
// loops (inSplitLoop), and a program that fits compiles as jax wrote it.
//
// The reduce carries kBatchedGemvAttr so that reduce-to-dot leaves it as
// it is. Rounding: each output element is the same sum of the same
// products, in the reduce's order instead of the library's.
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"

#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

namespace {

/// Whether `dims` lists 0, 1, ..., n-1.
bool isLeading(ArrayRef<int64_t> dims) {
  return llvm::equal(dims, llvm::seq<int64_t>(0, static_cast<int64_t>(dims.size())));
}

/// A batched matrix-vector dot: which operand is the vector.
struct BatchedGemv {
  unsigned vectorSide;
  SmallVector<int64_t> vectorBatch, vectorContract, matrixBatch, matrixContract;
};

/// `dot` as a batched matrix-vector product whose matrix operand XLA would
/// transpose; nullopt otherwise (also for element types other than f32 and
/// f64, mixed ones, and a dot tied to its form by its annotations).
std::optional<BatchedGemv> matchBatchedGemv(Operation *dot) {
  auto v = DotGeneralView::match(dot);
  if (!v || v->hasOrderedAnnotations())
    return std::nullopt;
  auto lt = llvm::dyn_cast<RankedTensorType>(v->getLhs().getType());
  auto rt = llvm::dyn_cast<RankedTensorType>(v->getRhs().getType());
  auto out = v->getResultType();
  if (!lt || !rt || !out)
    return std::nullopt;
  Type et = out.getElementType();
  if (!(et.isF32() || et.isF64()) || lt.getElementType() != et || rt.getElementType() != et)
    return std::nullopt;
  DotDims d = v->getDims();
  int64_t bound = static_cast<int64_t>(d.lhsBatch.size() + d.lhsContract.size());
  bool lhsVector = lt.getRank() == bound, rhsVector = rt.getRank() == bound;
  if (lhsVector == rhsVector || d.lhsBatch.empty())
    return std::nullopt; // a matrix product, or a batched dot product
  BatchedGemv g;
  g.vectorSide = lhsVector ? 0 : 1;
  g.vectorBatch = lhsVector ? d.lhsBatch : d.rhsBatch;
  g.vectorContract = lhsVector ? d.lhsContract : d.rhsContract;
  g.matrixBatch = lhsVector ? d.rhsBatch : d.lhsBatch;
  g.matrixContract = lhsVector ? d.rhsContract : d.lhsContract;
  if (isLeading(g.matrixBatch))
    return std::nullopt; // XLA reads the matrix as it lies
  return g;
}

/// The vector broadcast to the matrix's shape: transposed first (it is the
/// small operand) so that its dimensions land in increasing order.
Value broadcastVector(OpBuilder &b, Location loc, Value vector, RankedTensorType matrixType,
                      const BatchedGemv &g) {
  auto vt = llvm::cast<RankedTensorType>(vector.getType());
  SmallVector<int64_t> target(vt.getRank());
  for (auto [vd, md] : llvm::zip(g.vectorBatch, g.matrixBatch))
    target[vd] = md;
  for (auto [vd, md] : llvm::zip(g.vectorContract, g.matrixContract))
    target[vd] = md;
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, vt.getRank()));
  llvm::sort(perm, [&](int64_t a, int64_t c) { return target[a] < target[c]; });
  SmallVector<int64_t> dims;
  for (int64_t p : perm)
    dims.push_back(target[p]);
  if (!isLeading(perm))
    vector = buildTranspose(b, loc, vector, perm);
  auto full = RankedTensorType::get(matrixType.getShape(), vt.getElementType());
  return buildBroadcastInDim(b, loc, full, vector, dims);
}

/// The permutation taking the reduce's result (the matrix's kept dimensions
/// in order) to the dot's (batch dimensions as listed, then the matrix's
/// free ones in order).
SmallVector<int64_t> toDotOrder(int64_t matrixRank, const BatchedGemv &g) {
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < matrixRank; ++i)
    if (!llvm::is_contained(g.matrixContract, i))
      kept.push_back(i);
  SmallVector<int64_t> order(g.matrixBatch);
  for (int64_t i : kept)
    if (!llvm::is_contained(g.matrixBatch, i))
      order.push_back(i);
  SmallVector<int64_t> perm;
  for (int64_t dim : order)
    perm.push_back(llvm::find(kept, dim) - kept.begin());
  return perm;
}

} // namespace

bool memfit::rewriteBatchedGemv(Operation *dot, RewriterBase &rewriter) {
  if (!inSplitLoop(dot))
    return false;
  std::optional<BatchedGemv> g = matchBatchedGemv(dot);
  if (!g)
    return false;
  OpBuilder &b = rewriter;
  b.setInsertionPoint(dot);
  Location loc = dot->getLoc();
  Value vector = dot->getOperand(g->vectorSide), matrix = dot->getOperand(1 - g->vectorSide);
  auto mt = llvm::cast<RankedTensorType>(matrix.getType());
  Value spread = broadcastVector(b, loc, vector, mt, *g);
  Value product = buildElementwise(b, loc, "stablehlo.multiply", {matrix, spread});
  auto scalar = RankedTensorType::get({}, mt.getElementType());
  Value zero = buildConstantSplat(b, loc, scalar, 0.0);
  Value sum = buildReduce(b, loc, product, zero, g->matrixContract, "stablehlo.add");
  sum.getDefiningOp()->setAttr(kBatchedGemvAttr, b.getUnitAttr());
  SmallVector<int64_t> perm = toDotOrder(mt.getRank(), *g);
  Value result = isLeading(perm) ? sum : buildTranspose(b, loc, sum, perm);
  rewriter.replaceAllUsesWith(dot->getResult(0), result);
  rewriter.eraseOp(dot);
  return true;
}
