//===- NearestNeighbours.cpp - exact k nearest neighbours through a GEMM ---===//
//
// top_k(-d, k) with d = sum((q - x)^2) over the feature dimension: the k
// nearest rows of x for each row of q. Expanding d into |q|^2 + |x|^2 - 2 q.x
// turns the M x N x D broadcast into one GEMM, but its rounding error grows
// with |q|^2 + |x|^2, not with d: points far from the origin or close
// together (map coordinates, low dimensions) lose their nearest neighbours.
// This rewrite keeps the GEMM and returns what the program returns:
//
//  1. candidates: the data is centred on the mean row of x (which shrinks
//     |q|^2 + |x|^2 to the spread of the data), and top_k of the expanded
//     distances keeps k' = 2k + 8 candidates per row;
//  2. their distances are recomputed as the program writes them (gather the
//     candidate rows, subtract, square, sum) and ordered like lax.top_k
//     (ascending distance, ties to the lower index);
//  3. a certificate per row: with E a bound on the rounding error of the
//     expanded form (Higham-style, times 2 for safety), every non-candidate
//     has an expanded distance >= the k'-th candidate's, so its true distance
//     is >= that minus E. When this exceeds the k-th recomputed distance, no
//     non-candidate can be among the k nearest: the row is exact. NaN or
//     infinity anywhere in the row's inputs fails the certificate;
//  4. rows whose certificate fails are recomputed one by one with the
//     program's own formula against all of x in a stablehlo.while (zero
//     iterations when every row is certified), with one top_k that the
//     two-stage rewrite leaves as it is.
//
// Long rows take their candidates from block maxima instead, in a two-level
// loop that never holds a [M, N] matrix (the sizes from Analysis/KnnTiles):
//
//  1'. per chunk of C queries, a loop over tiles of NB points (the data
//     centred per tile: no centred copy of x) computes the [C, NB] expanded
//     distances, small enough to stay in L2, and keeps only the maximum of
//     -expanded of every block of B points (integer keys of lax.top_k's
//     order); then top_k of a row's N / B maxima picks KB = k + 8 blocks
//     (itself in two stages when TwoStageTopK's model says so: XLA:CPU's
//     TopK runs on one core, the maxima of maxima on both);
//  2'. every point of the picked blocks (and the last N mod B points) gets
//     its distance by the program's own formula, and top_k of those, taken
//     in increasing position, orders them as lax.top_k (ties to the lower
//     index);
//  3'. the certificate of step 3 with the KB-th block maximum in place of
//     the k'-th candidate: every point of an unpicked block has an expanded
//     distance at least that maximum's. The picked blocks' distances are
//     recomputed, not taken from the tile: a re-evaluated dot may round
//     differently from the one that produced the maxima;
//  3''. rows that fail get 2'-3' again with 2 KB blocks, fewer rows at a
//     time (Analysis/KnnTiles), before step 4: tight clusters put more than
//     KB blocks' maxima within the rounding bound of the k-th distance.
// The last query chunk and the last point tile start early when C or NB
// does not divide: they recompute rows and blocks another iteration wrote,
// with the same guarantees.
//
// Only the rank-2 form is handled (q: M x D, x: N x D, top_k over N), for
// f32 and f64; anything else keeps the program's own (exact) formula.
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"
#include "TopKKeys.h"

#include "memfit/Analysis/KnnTiles.h"
#include "memfit/Analysis/Sharding.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "memfit/IR/OpViews.h"

#include <cmath>
#include <tuple>

using namespace mlir;
using namespace memfit;

namespace {

/// What the rewrite needs of a matched kNN.
struct KnnMatch {
  Operation *topK, *negate;
  SquaredDistance dist;
  bool queriesOnLhs; // which side of the subtract carries the query rows
  int64_t k;
};

Type elementTypeOf(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getElementType();
}

/// Unit roundoff of the float types the certificate is derived for.
std::optional<double> unitRoundoff(Type et) {
  if (et.isF32())
    return std::ldexp(1.0, -24);
  if (et.isF64())
    return std::ldexp(1.0, -53);
  return std::nullopt;
}

/// chlo.top_k(negate(d)) with d a rank-2 squared distance over one feature
/// dimension, read by nothing else.
std::optional<KnnMatch> matchKnn(Operation *op) {
  auto topK = TopKView::match(op);
  if (!topK)
    return std::nullopt;
  Operation *neg = op->getOperand(0).getDefiningOp();
  if (getElementwiseFn(neg) != ElementwiseFn::Negate ||
      !neg->getResult(0).hasOneUse())
    return std::nullopt;
  Operation *reduce = neg->getOperand(0).getDefiningOp();
  if (!reduce || !reduce->getResult(0).hasOneUse())
    return std::nullopt;
  auto dist = matchSquaredDistance(reduce);
  if (!dist || dist->plan.rank != 3 || dist->plan.reduced.size() != 1)
    return std::nullopt;
  if (!unitRoundoff(elementTypeOf(reduce->getResult(0))))
    return std::nullopt;
  // Each side must carry the feature dim and exactly one of the two others.
  int64_t feature = dist->plan.reduced[0];
  auto carries = [](ArrayRef<int64_t> dims, int64_t d) { return llvm::is_contained(dims, d); };
  const auto &l = dist->plan.lhsDims, &r = dist->plan.rhsDims;
  if (l.size() != 2 || r.size() != 2 || !carries(l, feature) || !carries(r, feature))
    return std::nullopt;
  // The database dim is the result's last (top_k reads the last dim), i.e.
  // the larger of the two non-feature product dims.
  int64_t rowDim = feature == 0 ? 1 : 0;
  int64_t dbDim = feature == 2 ? 1 : 2;
  bool queriesOnLhs = carries(l, rowDim) && carries(r, dbDim);
  if (!queriesOnLhs && !(carries(r, rowDim) && carries(l, dbDim)))
    return std::nullopt;
  auto dType = llvm::cast<RankedTensorType>(reduce->getResult(0).getType());
  int64_t k = topK->getK();
  // Two stages only pay when the candidates are fewer than the points.
  if (2 * k + 8 >= dType.getDimSize(1))
    return std::nullopt;
  return KnnMatch{op, neg, *dist, queriesOnLhs, k};
}

/// One side's source as a [rows, features] matrix.
Value rowsByFeatures(OpBuilder &b, Location loc, const ContractionPlan &plan,
                     bool lhsSide, int64_t feature) {
  SmallVector<int64_t> dims;
  Value v = plan.squeezedSource(b, loc, lhsSide, dims);
  if (dims[0] == feature)
    v = buildTranspose(b, loc, v, {1, 0});
  return v;
}

Value splat(OpBuilder &b, Location loc, Type et, ArrayRef<int64_t> shape, double x) {
  return buildConstantSplat(b, loc, tensorOf(shape, et), x);
}

Value bin(OpBuilder &b, Location loc, StringRef name, Value x, Value y) {
  return buildElementwise(b, loc, name, {x, y});
}

/// sum over `dim` of v*v.
Value squaredNorm(OpBuilder &b, Location loc, Value v, int64_t dim) {
  Type et = elementTypeOf(v);
  Value sq = bin(b, loc, "stablehlo.multiply", v, v);
  return buildReduce(b, loc, sq, splat(b, loc, et, {}, 0.0), {dim}, "stablehlo.add");
}

/// Drops a [n, 1] column to [n].
Value column(OpBuilder &b, Location loc, Value m, int64_t col) {
  auto t = llvm::cast<RankedTensorType>(m.getType());
  int64_t rows = t.getDimSize(0);
  Value s = buildSlice(b, loc, m, {0, col}, {rows, col + 1}, {1, 1});
  return buildReshape(b, loc, tensorOf({rows}, t.getElementType()), s);
}

/// The last (smallest) of each row of top_k's values [n, j], as [n]. A
/// reduce, not a slice at j - 1: XLA:CPU's TopkRewriter gives a top_k its
/// TopK kernel only when every user of the sort it decomposes into is a
/// slice from 0, and a second slice at j - 1 left the candidates' top_k a
/// full stable sort of each row (31 of 290 ms at bench_race's kNN, README).
/// Rows holding NaN fail their certificate whatever this returns.
Value lastOfTopK(OpBuilder &b, Location loc, Value vals) {
  Type et = elementTypeOf(vals);
  return buildReduce(b, loc, vals, splat(b, loc, et, {}, INFINITY), {1}, "stablehlo.minimum");
}

/// The mean row of x [N, D]: centring on it leaves distances unchanged and
/// shrinks the norms that the expanded form's rounding error grows with.
Value meanRow(OpBuilder &b, Location loc, Value x) {
  auto xt = llvm::cast<RankedTensorType>(x.getType());
  Type et = xt.getElementType();
  Value sum = buildReduce(b, loc, x, splat(b, loc, et, {}, 0.0), {0}, "stablehlo.add");
  return bin(b, loc, "stablehlo.divide", sum,
             splat(b, loc, et, {xt.getDimSize(1)}, static_cast<double>(xt.getDimSize(0))));
}

/// rows - broadcast(centre) for rows [R, D].
Value centred(OpBuilder &b, Location loc, Value rows, Value centre) {
  auto rt = llvm::cast<RankedTensorType>(rows.getType());
  return bin(b, loc, "stablehlo.subtract", rows, buildBroadcastInDim(b, loc, rt, centre, {1}));
}

/// 2 q.x for rows qc [R, D] against rows xc [C, D]: [R, C].
Value twiceDot(OpBuilder &b, Location loc, Value qc, Value xc) {
  auto qt = llvm::cast<RankedTensorType>(qc.getType());
  Type et = qt.getElementType();
  int64_t m = qt.getDimSize(0), n = llvm::cast<RankedTensorType>(xc.getType()).getDimSize(0);
  DotDims dd;
  dd.lhsContract = {1};
  dd.rhsContract = {1};
  auto mn = tensorOf({m, n}, et);
  Value g = buildDotGeneral(b, loc, mn, qc, xc, dd);
  return bin(b, loc, "stablehlo.multiply", splat(b, loc, et, {m, n}, 2.0), g);
}

/// -(|q|^2 + |x|^2 - 2 q.x) for centred rows qc [R, D], xc [C, D] and their
/// squared norms: [R, C], the order top_k reads.
Value negatedExpanded(OpBuilder &b, Location loc, Value qc, Value qn, Value xc, Value xn) {
  Value twice = twiceDot(b, loc, qc, xc);
  auto mn = llvm::cast<RankedTensorType>(twice.getType());
  Value norms = bin(b, loc, "stablehlo.add", buildBroadcastInDim(b, loc, mn, qn, {0}),
                    buildBroadcastInDim(b, loc, mn, xn, {1}));
  Value expanded = bin(b, loc, "stablehlo.subtract", norms, twice);
  return buildGenericOp(b, loc, "stablehlo.negate", {expanded}, {mn})->getResult(0);
}

struct Candidates {
  Value expandedKth; // [M]: the k'-th smallest expanded distance
  Value indices;     // [M, k'] i32
  Value queryNorms;  // [M]: |q - c|^2
  Value maxDbNorm;   // scalar: max |x - c|^2
};

/// Stage 1: top_k of the expanded distances of the centred data.
Candidates selectCandidates(OpBuilder &b, Location loc, Value q, Value x,
                            int64_t kp) {
  auto qt = llvm::cast<RankedTensorType>(q.getType());
  Type et = qt.getElementType();
  int64_t m = qt.getDimSize(0);
  Value centre = meanRow(b, loc, x);
  Value qc = centred(b, loc, q, centre), xc = centred(b, loc, x, centre);
  Value qn = squaredNorm(b, loc, qc, 1), xn = squaredNorm(b, loc, xc, 1);
  auto [vals, idx] = buildTopK(b, loc, negatedExpanded(b, loc, qc, qn, xc, xn), kp);
  Value kth = buildGenericOp(b, loc, "stablehlo.negate", {lastOfTopK(b, loc, vals)},
                             {tensorOf({m}, et)})
                  ->getResult(0);
  Value maxNorm = buildReduce(b, loc, xn, splat(b, loc, et, {}, -INFINITY), {0},
                              "stablehlo.maximum");
  return {kth, idx, qn, maxNorm};
}

/// x[idx] for idx [M, k'] i32: [M, k', D].
Value gatherRows(OpBuilder &b, Location loc, Value x, Value idx) {
  auto it = llvm::cast<RankedTensorType>(idx.getType());
  auto xt = llvm::cast<RankedTensorType>(x.getType());
  int64_t m = it.getDimSize(0), kp = it.getDimSize(1), d = xt.getDimSize(1);
  Value idx3 = buildReshape(b, loc, tensorOf({m, kp, 1}, it.getElementType()), idx);
  MLIRContext *ctx = b.getContext();
  Attribute dims = attrFromText(
      ctx, "#stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], "
           "start_index_map = [0], index_vector_dim = 2>");
  return buildGenericOp(b, loc, "stablehlo.gather", {x, idx3},
                        {tensorOf({m, kp, d}, xt.getElementType())},
                        {b.getNamedAttr("dimension_numbers", dims),
                         b.getNamedAttr("indices_are_sorted", b.getBoolAttr(false)),
                         b.getNamedAttr("slice_sizes", b.getDenseI64ArrayAttr({1, d}))})
      ->getResult(0);
}

/// The program's own formula, sum((q - x)^2) over the last dim, for q [R, D]
/// against rows [R, C, D]: [R, C]. Marked so that no rewrite (this one in
/// the repair loop, fast-distance anywhere) expands it again.
Value directDistances(OpBuilder &b, Location loc, Value q, Value rows) {
  auto rt = llvm::cast<RankedTensorType>(rows.getType());
  Value qb = buildBroadcastInDim(b, loc, rt, q, {0, 2});
  Value diff = bin(b, loc, "stablehlo.subtract", qb, rows);
  Value dist = squaredNorm(b, loc, diff, 2);
  dist.getDefiningOp()->setAttr(kExactDistanceAttr, b.getUnitAttr());
  return dist;
}

struct Ranked {
  Value distances; // [M, k'] ascending, ties by index
  Value indices;   // [M, k'] i32
};

/// Orders candidates as lax.top_k orders -d: ascending distance, equal
/// distances by the lower index (a sort by index, then a stable sort).
Ranked rankCandidates(OpBuilder &b, Location loc, Value dist, Value idx) {
  Operation *byIndex = buildSort(b, loc, {idx, dist}, 1);
  Operation *byDist = buildSort(b, loc, {byIndex->getResult(1), byIndex->getResult(0)},
                                1, /*isStable=*/true);
  return {byDist->getResult(0), byDist->getResult(1)};
}

/// Per row: can no non-candidate be among the k nearest? `expandedKth` [M]
/// bounds every non-candidate's expanded distance from below, `kth` [M] is
/// the k-th smallest recomputed distance, `candidateDist` [M, c] all of them.
Value certify(OpBuilder &b, Location loc, const Candidates &c, Value kth,
              Value candidateDist, int64_t features) {
  auto t = llvm::cast<RankedTensorType>(kth.getType());
  Type et = t.getElementType();
  int64_t m = t.getDimSize(0);
  double u = *unitRoundoff(et);
  // Expanded form: 2 gamma_D (norms and cross term) + 4u (the final adds)
  // + 4u (centring), times (|q-c|^2 + |x-c|^2); the program's own sum of D
  // squares: gamma_{D+1}, relative. Both doubled for safety.
  double expandedBound = 2.0 * (2.0 * features + 9.0) * u;
  double directBound = 2.0 * (features + 3.0) * u;
  Value norms = bin(b, loc, "stablehlo.add", c.queryNorms,
                    buildBroadcastInDim(b, loc, tensorOf({m}, et), c.maxDbNorm, {}));
  Value err = bin(b, loc, "stablehlo.multiply", splat(b, loc, et, {m}, expandedBound), norms);
  Value lower = bin(b, loc, "stablehlo.multiply",
                    bin(b, loc, "stablehlo.subtract", c.expandedKth, err),
                    splat(b, loc, et, {m}, 1.0 - directBound));
  Value separated = buildCompare(b, loc, lower, kth, "GT", "FLOAT");
  // A NaN among the candidates' distances: leave the row to the exact loop.
  Value notNaN = buildCompare(b, loc, candidateDist, candidateDist, "EQ", "FLOAT");
  auto i1 = b.getI1Type();
  Value allNumbers = buildReduce(b, loc, notNaN,
                                 buildConstantSplat(b, loc, tensorOf({}, i1), 1.0), {1},
                                 "stablehlo.and");
  return bin(b, loc, "stablehlo.and", separated, allNumbers);
}

/// Marks the loops this rewrite makes: memfit.jit's calibration tells
/// them from memfit-split's.
constexpr llvm::StringLiteral kKnnLoopAttr = "memfit.knn_loop";

Operation *knnLoop(OpBuilder &b, Location loc, ValueRange init) {
  Operation *loop = buildWhile(b, loc, init);
  loop->setAttr(kKnnLoopAttr, b.getUnitAttr());
  return loop;
}

Value scalarI32(OpBuilder &b, Location loc, int64_t v) {
  return buildConstantSplat(b, loc, tensorOf({}, b.getI32Type()), static_cast<double>(v));
}

/// min(i * step, last): the start of iteration i's slice, the last one
/// moved back so that it stays inside.
Value clampedStart(OpBuilder &b, Location loc, Value i, int64_t step, int64_t last) {
  Value s = bin(b, loc, "stablehlo.multiply", i, scalarI32(b, loc, step));
  return bin(b, loc, "stablehlo.minimum", s, scalarI32(b, loc, last));
}

/// cond: counter (block argument 0) < trips.
void countTo(OpBuilder &b, Location loc, Operation *loop, int64_t trips) {
  OpBuilder::InsertionGuard guard(b);
  Block &cond = loop->getRegion(0).front();
  b.setInsertionPointToStart(&cond);
  buildReturn(b, loc, buildCompare(b, loc, cond.getArgument(0), scalarI32(b, loc, trips),
                                   "LT", "SIGNED"));
}

Value nextCount(OpBuilder &b, Location loc, Value i) {
  return bin(b, loc, "stablehlo.add", i, scalarI32(b, loc, 1));
}

/// 2 q.x - |x|^2 for centred rows qc [R, D] against a centred tile xc
/// [C, D] with norms xn: the expanded distance minus |q|^2 with its sign
/// turned, [R, C]. A row's |q|^2 is the same for every point, so block
/// maxima of this order blocks as -expanded does, and |q|^2 is taken off
/// the few kept maxima only: one subtraction per element instead of four
/// operations. Its two roundings stay within the certificate's 4u for the
/// final adds (|2 q.x - |x|^2| and the result are both <= 2 (|q|^2 + |x|^2)).
Value foldedExpanded(OpBuilder &b, Location loc, Value qc, Value xc, Value xn) {
  Value twice = twiceDot(b, loc, qc, xc);
  auto mn = llvm::cast<RankedTensorType>(twice.getType());
  return bin(b, loc, "stablehlo.subtract", twice, buildBroadcastInDim(b, loc, mn, xn, {1}));
}

/// Stage 1': the maxima of 2 q.x - |x|^2 (foldedExpanded) over every block
/// of B points for the centred query chunk qc [C, D], in a loop over point
/// tiles: [C, N / B] keys, and the largest |x - centre|^2 (the
/// certificate's; from the tiles, so that no [N, D] temporary is made).
std::pair<Value, Value> tileMaxima(OpBuilder &b, Location loc, const KnnTiles &t, Value qc,
                                   Value x, Value centre) {
  auto qt = llvm::cast<RankedTensorType>(qc.getType());
  Type et = qt.getElementType(), kt = b.getIntegerType(et.getIntOrFloatBitWidth());
  int64_t c = qt.getDimSize(0), d = qt.getDimSize(1), nb = t.tileBlocks * t.block;
  auto maximaT = tensorOf({c, t.blocks}, kt);
  Value init = buildBroadcastInDim(b, loc, maximaT, lowestKey(b, loc, kt), {});
  Value noNorm = splat(b, loc, et, {}, -INFINITY);
  Operation *loop = knnLoop(b, loc, {scalarI32(b, loc, 0), init, qc, x, centre, noNorm});
  countTo(b, loc, loop, (t.blocks + t.tileBlocks - 1) / t.tileBlocks);
  OpBuilder::InsertionGuard guard(b);
  Block &body = loop->getRegion(1).front();
  b.setInsertionPointToStart(&body);
  auto arg = [&](unsigned i) { return body.getArgument(i); };
  Value first = clampedStart(b, loc, arg(0), t.tileBlocks, t.blocks - t.tileBlocks);
  Value start = bin(b, loc, "stablehlo.multiply", first, scalarI32(b, loc, t.block));
  Value xc = centred(b, loc, buildDynamicSlice(b, loc, arg(3), {start, scalarI32(b, loc, 0)},
                                               {nb, d}),
                     arg(4));
  // The centred tile and its norms computed once: left to fusion, XLA:CPU's
  // ynn fusion of the GEMM recomputes them for every row block of its
  // output (1.6x slower, README).
  Value xn = squaredNorm(b, loc, xc, 1);
  Operation *once = buildOptimizationBarrier(b, loc, {xc, xn});
  Value s = foldedExpanded(b, loc, arg(2), once->getResult(0), once->getResult(1));
  Value keys = buildReshape(b, loc, tensorOf({c, t.tileBlocks, t.block}, et), s);
  Value mx = buildReduce(b, loc, orderKeys(b, loc, keys), lowestKey(b, loc, kt), {2},
                         "stablehlo.maximum");
  // The block maxima made on their own before they are stored: fused with
  // the in-place update, XLA:CPU runs the reduction on one thread (measured
  // 0.89x the loop's time with the barrier, README).
  Value maxima = buildDynamicUpdateSlice(b, loc, arg(1),
                                         buildOptimizationBarrier(b, loc, {mx})->getResult(0),
                                         {scalarI32(b, loc, 0), first});
  // stablehlo.maximum propagates NaN: a NaN point fails every certificate
  Value maxNorm = bin(b, loc, "stablehlo.maximum", arg(5),
                      buildReduce(b, loc, once->getResult(1), noNorm, {0}, "stablehlo.maximum"));
  buildReturn(b, loc, {nextCount(b, loc, arg(0)), maxima, arg(2), arg(3), arg(4), maxNorm});
  return {loop->getResult(1), loop->getResult(5)};
}

struct ChunkResult {
  Value vals, idx, certified; // [C, k], [C, k] i32, [C] i1
};

/// Stages 2'-3' from the `kept` blocks with the largest maxima, for the rows
/// q0 [S, D] whose block maxima (foldedExpanded's keys) are `maxima`
/// [S, N / B] and centred norms `qn` [S].
ChunkResult candidatesOf(OpBuilder &b, Location loc, const KnnTiles &t, int64_t kept,
                         Value maxima, Value q0, Value qn, Value x, Value maxNorm, int64_t k) {
  auto qt = llvm::cast<RankedTensorType>(q0.getType());
  Type et = qt.getElementType();
  int64_t c = qt.getDimSize(0), d = qt.getDimSize(1);
  int64_t n = llvm::cast<RankedTensorType>(x.getType()).getDimSize(0);
  // The `kept` blocks with the largest maxima, in increasing block order.
  auto [top, blocks] = topKOfRows(b, loc, fastImage(b, loc, maxima, et), kept);
  Value picked = buildSort(b, loc, {blocks}, 1)->getResult(0);
  Value pos = blockPositions(b, loc, picked, t.block, t.blocks * t.block,
                             n - t.blocks * t.block);
  Value dist = directDistances(b, loc, q0, gatherRows(b, loc, x, pos));
  auto [vals, at] = markedTopK(
      b, loc, buildGenericOp(b, loc, "stablehlo.negate", {dist}, {dist.getType()})->getResult(0),
      k);
  // f32/f64 keys' image is the value itself: the kept-th largest block maximum
  // of 2 q.x - |x|^2, so |q|^2 minus it is the kept-th smallest expanded one.
  Value kthBlock = bin(b, loc, "stablehlo.subtract", qn, lastOfTopK(b, loc, top));
  Value kth = buildGenericOp(b, loc, "stablehlo.negate", {lastOfTopK(b, loc, vals)},
                             {tensorOf({c}, et)})
                  ->getResult(0);
  Candidates bound{kthBlock, pos, qn, maxNorm};
  return {vals, takeAlongRows(b, loc, pos, at, {}), certify(b, loc, bound, kth, dist, d)};
}

/// The [M, k] values and indices and [M] certificates of the whole program,
/// carried through the loops that fill them row range by row range.
struct Outputs {
  Value vals, idx, certified;
};

/// `out` with the rows from `row` on replaced by `r`'s.
Outputs storeRows(OpBuilder &b, Location loc, const Outputs &out, const ChunkResult &r,
                  Value row) {
  Value zero = scalarI32(b, loc, 0);
  return {buildDynamicUpdateSlice(b, loc, out.vals, r.vals, {row, zero}),
          buildDynamicUpdateSlice(b, loc, out.idx, r.idx, {row, zero}),
          buildDynamicUpdateSlice(b, loc, out.certified, r.certified, {row})};
}

/// Rows [first, first + n) of a chunk's block maxima [S, blocks], queries
/// q0 [S, D] and their norms qn [S]: what a part of the chunk's rows reads.
struct RowsPart {
  Value maxima, rows, norms;
};

RowsPart sliceRows(OpBuilder &b, Location loc, Value maxima, Value q0, Value qn, Value first,
                   int64_t n, int64_t blocks) {
  Value zero = scalarI32(b, loc, 0);
  int64_t d = llvm::cast<RankedTensorType>(q0.getType()).getDimSize(1);
  return {buildDynamicSlice(b, loc, maxima, {first, zero}, {n, blocks}),
          buildDynamicSlice(b, loc, q0, {first, zero}, {n, d}),
          buildDynamicSlice(b, loc, qn, {first}, {n})};
}

/// The rows of `r` (for the rows q0 [S, D] with block maxima `maxima`) whose
/// certificate failed, made again from t.widerBlocks blocks, t.widerPart
/// rows at a time: clustered data puts more than KB blocks' maxima above a
/// row's k-th distance, and this pass costs a fraction of the row-by-row
/// repair against all points. The loop runs no iteration when every row of
/// `r` is certified; a part's certified rows keep their first answer.
ChunkResult widenFailed(OpBuilder &b, Location loc, const KnnTiles &t, Value maxima, Value q0,
                        Value qn, Value x, Value maxNorm, int64_t k, const ChunkResult &r) {
  if (t.widerBlocks <= t.keptBlocks)
    return r;
  auto qt = llvm::cast<RankedTensorType>(q0.getType());
  int64_t s = qt.getDimSize(0), p = std::min(t.widerPart, s);
  auto i1 = b.getI1Type();
  Value allCertified = buildReduce(b, loc, r.certified,
                                   buildConstantSplat(b, loc, tensorOf({}, i1), 1.0), {0},
                                   "stablehlo.and");
  Value trips = buildSelect(b, loc, allCertified, scalarI32(b, loc, 0),
                            scalarI32(b, loc, (s + p - 1) / p));
  Operation *loop = knnLoop(b, loc, {scalarI32(b, loc, 0), trips, maxima, q0, qn, x, maxNorm,
                                     r.vals, r.idx, r.certified});
  OpBuilder::InsertionGuard guard(b);
  Block &cond = loop->getRegion(0).front();
  b.setInsertionPointToStart(&cond);
  buildReturn(b, loc, buildCompare(b, loc, cond.getArgument(0), cond.getArgument(1), "LT",
                                   "SIGNED"));
  Block &body = loop->getRegion(1).front();
  b.setInsertionPointToStart(&body);
  auto arg = [&](unsigned i) { return body.getArgument(i); };
  Value zero = scalarI32(b, loc, 0);
  Value first = clampedStart(b, loc, arg(0), p, s - p);
  RowsPart part = sliceRows(b, loc, arg(2), arg(3), arg(4), first, p, t.blocks);
  ChunkResult w = candidatesOf(b, loc, t, t.widerBlocks, part.maxima, part.rows, part.norms,
                               arg(5), arg(6), k);
  Value oldVals = buildDynamicSlice(b, loc, arg(7), {first, zero}, {p, k});
  Value oldIdx = buildDynamicSlice(b, loc, arg(8), {first, zero}, {p, k});
  Value oldCert = buildDynamicSlice(b, loc, arg(9), {first}, {p});
  Value keep = buildBroadcastInDim(b, loc, tensorOf({p, k}, i1), oldCert, {0});
  ChunkResult merged{buildSelect(b, loc, keep, oldVals, w.vals),
                     buildSelect(b, loc, keep, oldIdx, w.idx),
                     bin(b, loc, "stablehlo.or", oldCert, w.certified)};
  Outputs stored = storeRows(b, loc, {arg(7), arg(8), arg(9)}, merged, first);
  buildReturn(b, loc, {nextCount(b, loc, arg(0)), arg(1), arg(2), arg(3), arg(4), arg(5), arg(6),
                       stored.vals, stored.idx, stored.certified});
  return {loop->getResult(7), loop->getResult(8), loop->getResult(9)};
}

/// Stages 2'-3' and the wider pass for the rows q0 [S, D].
ChunkResult certifiedCandidates(OpBuilder &b, Location loc, const KnnTiles &t, Value maxima,
                                Value q0, Value qn, Value x, Value maxNorm, int64_t k) {
  ChunkResult r = candidatesOf(b, loc, t, t.keptBlocks, maxima, q0, qn, x, maxNorm, k);
  return widenFailed(b, loc, t, maxima, q0, qn, x, maxNorm, k, r);
}

/// Stages 2'-3' for a chunk's rows, S at a time (t.subChunk): the gathered
/// candidates of S rows, not of all C, are live at once, so that the memory
/// goes to the chunk's tiles (the GEMM's efficiency) rather than to them.
Outputs candidatesInParts(OpBuilder &b, Location loc, const KnnTiles &t, Value maxima,
                          Value q0, Value qn, Value x, Value maxNorm, int64_t k,
                          const Outputs &out, Value chunkStart) {
  auto qt = llvm::cast<RankedTensorType>(q0.getType());
  int64_t c = qt.getDimSize(0), s = t.subChunk;
  if (s >= c)
    return storeRows(b, loc, out,
                     certifiedCandidates(b, loc, t, maxima, q0, qn, x, maxNorm, k), chunkStart);
  Operation *loop = knnLoop(b, loc, {scalarI32(b, loc, 0), maxima, q0, qn, x, maxNorm,
                                     out.vals, out.idx, out.certified, chunkStart});
  countTo(b, loc, loop, (c + s - 1) / s);
  OpBuilder::InsertionGuard guard(b);
  Block &body = loop->getRegion(1).front();
  b.setInsertionPointToStart(&body);
  auto arg = [&](unsigned i) { return body.getArgument(i); };
  Value first = clampedStart(b, loc, arg(0), s, c - s);
  RowsPart part = sliceRows(b, loc, arg(1), arg(2), arg(3), first, s, t.blocks);
  ChunkResult r = certifiedCandidates(b, loc, t, part.maxima, part.rows, part.norms, arg(4),
                                      arg(5), k);
  Outputs stored = storeRows(b, loc, {arg(6), arg(7), arg(8)}, r,
                             bin(b, loc, "stablehlo.add", arg(9), first));
  buildReturn(b, loc, {nextCount(b, loc, arg(0)), arg(1), arg(2), arg(3), arg(4), arg(5),
                       stored.vals, stored.idx, stored.certified, arg(9)});
  return {loop->getResult(6), loop->getResult(7), loop->getResult(8)};
}

/// Stages 1'-3' over all queries: a loop over chunks of C (the last one
/// moved back to end at M), [M, k] values and indices and [M] certificates.
ChunkResult tiledNearest(OpBuilder &b, Location loc, const KnnTiles &t, Value q, Value x,
                         int64_t k) {
  auto qt = llvm::cast<RankedTensorType>(q.getType());
  Type et = qt.getElementType(), i32 = b.getI32Type();
  int64_t m = qt.getDimSize(0), d = qt.getDimSize(1);
  Value centre = meanRow(b, loc, x);
  SmallVector<Value> init{scalarI32(b, loc, 0), q, x, centre,
                          splat(b, loc, et, {m, k}, 0.0),
                          buildConstantSplat(b, loc, tensorOf({m, k}, i32), 0.0),
                          buildConstantSplat(b, loc, tensorOf({m}, b.getI1Type()), 0.0)};
  Operation *loop = knnLoop(b, loc, init);
  countTo(b, loc, loop, (m + t.chunk - 1) / t.chunk);
  OpBuilder::InsertionGuard guard(b);
  Block &body = loop->getRegion(1).front();
  b.setInsertionPointToStart(&body);
  auto arg = [&](unsigned i) { return body.getArgument(i); };
  Value zero = scalarI32(b, loc, 0);
  Value start = clampedStart(b, loc, arg(0), t.chunk, m - t.chunk);
  Value q0 = buildDynamicSlice(b, loc, arg(1), {start, zero}, {t.chunk, d});
  Value qc = centred(b, loc, q0, arg(3)), qn = squaredNorm(b, loc, qc, 1);
  auto [maxima, maxNorm] = tileMaxima(b, loc, t, qc, arg(2), arg(3));
  Outputs out = candidatesInParts(b, loc, t, maxima, q0, qn, arg(2), maxNorm, k,
                                  {arg(4), arg(5), arg(6)}, start);
  buildReturn(b, loc, {nextCount(b, loc, arg(0)), arg(1), arg(2), arg(3), out.vals, out.idx,
                       out.certified});
  return {loop->getResult(4), loop->getResult(5), loop->getResult(6)};
}

/// Stage 4: rows whose certificate failed, recomputed exactly one by one.
std::pair<Value, Value> repairUncertified(OpBuilder &b, Location loc, Value q, Value x,
                                          Value certified, Value vals, Value idx) {
  auto qt = llvm::cast<RankedTensorType>(q.getType());
  auto xt = llvm::cast<RankedTensorType>(x.getType());
  Type et = qt.getElementType(), i32 = b.getI32Type();
  int64_t m = qt.getDimSize(0), n = xt.getDimSize(0), d = qt.getDimSize(1);
  int64_t k = llvm::cast<RankedTensorType>(vals.getType()).getDimSize(1);
  auto rowsT = tensorOf({m}, i32), scalarI = tensorOf({}, i32);
  // Failed rows first (key 0), in increasing row order (stable sort).
  Value keys = buildConvert(b, loc, rowsT, certified);
  Operation *order = buildSort(b, loc, {keys, buildIota(b, loc, rowsT, 0)}, 0,
                               /*isStable=*/true);
  Value good = buildReduce(b, loc, keys, buildConstantSplat(b, loc, scalarI, 0.0), {0},
                           "stablehlo.add");
  Value failed = bin(b, loc, "stablehlo.subtract",
                     buildConstantSplat(b, loc, scalarI, static_cast<double>(m)), good);
  Value zero = buildConstantSplat(b, loc, scalarI, 0.0);
  SmallVector<Value> init{zero, failed, order->getResult(1), q, x, vals, idx};
  Operation *loop = knnLoop(b, loc, init);
  OpBuilder::InsertionGuard guard(b);
  Block &cond = loop->getRegion(0).front();
  b.setInsertionPointToStart(&cond);
  buildReturn(b, loc, buildCompare(b, loc, cond.getArgument(0), cond.getArgument(1),
                                   "LT", "SIGNED"));
  Block &body = loop->getRegion(1).front();
  b.setInsertionPointToStart(&body);
  auto arg = [&](unsigned i) { return body.getArgument(i); };
  Value row = buildReshape(b, loc, scalarI, buildDynamicSlice(b, loc, arg(2), {arg(0)}, {1}));
  Value qRow = buildDynamicSlice(b, loc, arg(3), {row, zero}, {1, d});
  Value all = buildBroadcastInDim(b, loc, tensorOf({1, n, d}, et), arg(4), {1, 2});
  Value dist = directDistances(b, loc, qRow, all);
  Value neg = buildGenericOp(b, loc, "stablehlo.negate", {dist}, {dist.getType()})
                  ->getResult(0);
  // One top_k, marked so that the two-stage rewrite leaves it: the loop
  // runs only for rows the certificate fails, and the two-stage form's
  // dozen kernels here (keys, block maxima, a second top_k, gathers) were a
  // quarter of the whole rewritten program's XLA compile.
  auto [v, ix] = markedTopK(b, loc, neg, k);
  Value newVals = buildDynamicUpdateSlice(b, loc, arg(5), v, {row, zero});
  Value newIdx = buildDynamicUpdateSlice(b, loc, arg(6), ix, {row, zero});
  Value next = bin(b, loc, "stablehlo.add", arg(0), buildConstantSplat(b, loc, scalarI, 1.0));
  buildReturn(b, loc, {next, arg(1), arg(2), arg(3), arg(4), newVals, newIdx});
  return {loop->getResult(5), loop->getResult(6)};
}

} // namespace

namespace {

/// Bytes of `func`'s arguments and results: what a memory limit leaves the
/// rest of the program after them. In a sharded program the limit is one
/// device's, and so are these bytes.
int64_t argumentAndResultBytes(func::FuncOp func, const ShardingModel &sharding) {
  int64_t total = 0;
  for (BlockArgument a : func.front().getArguments())
    total += sharding.deviceBytes(a);
  for (Value v : func.getBody().back().getTerminator()->getOperands())
    total += sharding.deviceBytes(v);
  return total;
}

/// Whether devices split the rows of `q` or `x`. The two-level loop slices
/// both by rows, which XLA's partitioner can only do on whole copies: every
/// device would hold all of x and search all of it. The one-level GEMM keeps
/// the rows as they are sharded (each device computes its own columns of the
/// distances), and memfit-split chunks the dimension that is not.
bool rowsSharded(const ShardingModel &sharding, Value q, Value x) {
  return sharding.shardsAlong(q, 0) > 1 || sharding.shardsAlong(x, 0) > 1;
}

/// The two-level loop's sizes, when rows are long enough for block maxima,
/// neither q's nor x's rows are sharded, and one query's chunk fits what the
/// limit leaves (divided by the margin memfit-split budgets temporaries
/// with, at least 1).
std::optional<KnnTiles> planTiles(Operation *op, const KnnMatch &match, Value q, Value x,
                                  const NearestNeighbourOptions &opts) {
  auto qt = llvm::cast<RankedTensorType>(q.getType());
  int64_t n = llvm::cast<RankedTensorType>(x.getType()).getDimSize(0);
  auto func = op->getParentOfType<func::FuncOp>();
  std::optional<ShardingModel> sharding;
  if (func)
    sharding.emplace(func);
  if (sharding && rowsSharded(*sharding, q, x))
    return std::nullopt;
  KnnTileOptions tiling{opts.cacheBytes, -1};
  if (opts.memoryLimit > 0) {
    int64_t room = opts.memoryLimit - (sharding ? argumentAndResultBytes(func, *sharding) : 0);
    // A margin below 1 (memfit.jit's calibration, when XLA holds less than
    // memfit's model) is the split's: above the room, memfit-split would
    // cut this loop's body again.
    double margin = std::max(1.0, opts.tempMargin);
    tiling.budgetBytes = std::max<int64_t>(0, static_cast<int64_t>(room / margin));
  }
  return chooseKnnTiles(qt.getElementType(), qt.getDimSize(0), n, qt.getDimSize(1), match.k,
                        tiling);
}

/// The one-level form: one GEMM of all queries, top_k of 2k + 8 candidates,
/// ranked and certified (steps 1-3).
std::tuple<Value, Value, Value> gemmNearest(OpBuilder &b, Location loc, Value q, Value x,
                                            int64_t k) {
  int64_t m = llvm::cast<RankedTensorType>(q.getType()).getDimSize(0);
  int64_t features = llvm::cast<RankedTensorType>(q.getType()).getDimSize(1);
  Type et = elementTypeOf(q);
  Candidates cand = selectCandidates(b, loc, q, x, 2 * k + 8);
  Value candDist = directDistances(b, loc, q, gatherRows(b, loc, x, cand.indices));
  Ranked ranked = rankCandidates(b, loc, candDist, cand.indices);
  Value kth = column(b, loc, ranked.distances, k - 1);
  Value certified = certify(b, loc, cand, kth, candDist, features);
  Value nearest = buildSlice(b, loc, ranked.distances, {0, 0}, {m, k}, {1, 1});
  Value vals = buildGenericOp(b, loc, "stablehlo.negate", {nearest},
                              {tensorOf({m, k}, et)})
                   ->getResult(0);
  Value idx = buildSlice(b, loc, ranked.indices, {0, 0}, {m, k}, {1, 1});
  return {vals, idx, certified};
}

} // namespace

bool memfit::rewriteNearestNeighbours(Operation *op, const NearestNeighbourOptions &opts,
                                      RewriterBase &rewriter) {
  auto match = matchKnn(op);
  if (!match)
    return false;
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  Location loc = op->getLoc();
  const ContractionPlan &plan = match->dist.plan;
  int64_t feature = plan.reduced[0];
  Value q = rowsByFeatures(b, loc, plan, match->queriesOnLhs, feature);
  Value x = rowsByFeatures(b, loc, plan, !match->queriesOnLhs, feature);
  int64_t k = match->k;
  Value vals, idx, certified;
  if (std::optional<KnnTiles> tiles = planTiles(op, *match, q, x, opts)) {
    ChunkResult r = tiledNearest(b, loc, *tiles, q, x, k);
    std::tie(vals, idx, certified) = std::make_tuple(r.vals, r.idx, r.certified);
  } else {
    std::tie(vals, idx, certified) = gemmNearest(b, loc, q, x, k);
  }
  auto [exactVals, exactIdx] = repairUncertified(b, loc, q, x, certified, vals, idx);

  rewriter.replaceAllUsesWith(op->getResult(0), exactVals);
  rewriter.replaceAllUsesWith(op->getResult(1), exactIdx);
  Operation *neg = match->negate;
  const SquaredDistance &dist = match->dist;
  rewriter.eraseOp(op);
  eraseIfDead(rewriter, {neg, dist.reduce, dist.square, dist.sub});
  return true;
}
