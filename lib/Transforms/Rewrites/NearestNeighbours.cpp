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
//     iterations when every row is certified).
//
// Only the rank-2 form is handled (q: M x D, x: N x D, top_k over N), for
// f32 and f64; anything else keeps the program's own (exact) formula.
//
//===----------------------------------------------------------------------===//
#include "Rewrites.h"

#include "memfit/IR/OpViews.h"

#include <cmath>

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
  if (!neg || neg->getName().getStringRef() != "stablehlo.negate" ||
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
  auto xt = llvm::cast<RankedTensorType>(x.getType());
  Type et = qt.getElementType();
  int64_t m = qt.getDimSize(0), n = xt.getDimSize(0), d = qt.getDimSize(1);
  // Centre on the mean row of x: distances are unchanged, norms shrink.
  Value sum = buildReduce(b, loc, x, splat(b, loc, et, {}, 0.0), {0}, "stablehlo.add");
  Value centre = bin(b, loc, "stablehlo.divide", sum,
                     splat(b, loc, et, {d}, static_cast<double>(n)));
  Value qc = bin(b, loc, "stablehlo.subtract", q,
                 buildBroadcastInDim(b, loc, qt, centre, {1}));
  Value xc = bin(b, loc, "stablehlo.subtract", x,
                 buildBroadcastInDim(b, loc, xt, centre, {1}));
  Value qn = squaredNorm(b, loc, qc, 1), xn = squaredNorm(b, loc, xc, 1);
  DotDims dd;
  dd.lhsContract = {1};
  dd.rhsContract = {1};
  auto mn = tensorOf({m, n}, et);
  Value g = buildDotGeneral(b, loc, mn, qc, xc, dd);
  Value norms = bin(b, loc, "stablehlo.add", buildBroadcastInDim(b, loc, mn, qn, {0}),
                    buildBroadcastInDim(b, loc, mn, xn, {1}));
  Value twice = bin(b, loc, "stablehlo.multiply", splat(b, loc, et, {m, n}, 2.0), g);
  Value expanded = bin(b, loc, "stablehlo.subtract", norms, twice);
  Value negated = buildGenericOp(b, loc, "stablehlo.negate", {expanded}, {mn})->getResult(0);
  auto [vals, idx] = buildTopK(b, loc, negated, kp);
  Value kth = buildGenericOp(b, loc, "stablehlo.negate", {column(b, loc, vals, kp - 1)},
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

/// Per row: can no non-candidate be among the k nearest?
Value certify(OpBuilder &b, Location loc, const Candidates &c, const Ranked &r,
              Value candidateDist, int64_t k, int64_t features) {
  auto t = llvm::cast<RankedTensorType>(r.distances.getType());
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
  Value kth = column(b, loc, r.distances, k - 1);
  Value separated = buildCompare(b, loc, lower, kth, "GT", "FLOAT");
  // A NaN among the candidates' distances: leave the row to the exact loop.
  Value notNaN = buildCompare(b, loc, candidateDist, candidateDist, "EQ", "FLOAT");
  auto i1 = b.getI1Type();
  Value allNumbers = buildReduce(b, loc, notNaN,
                                 buildConstantSplat(b, loc, tensorOf({}, i1), 1.0), {1},
                                 "stablehlo.and");
  return bin(b, loc, "stablehlo.and", separated, allNumbers);
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
  Operation *loop = buildWhile(b, loc, init);
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
  auto [v, ix] = buildTopK(b, loc, neg, k);
  Value newVals = buildDynamicUpdateSlice(b, loc, arg(5), v, {row, zero});
  Value newIdx = buildDynamicUpdateSlice(b, loc, arg(6), ix, {row, zero});
  Value next = bin(b, loc, "stablehlo.add", arg(0), buildConstantSplat(b, loc, scalarI, 1.0));
  buildReturn(b, loc, {next, arg(1), arg(2), arg(3), arg(4), newVals, newIdx});
  return {loop->getResult(5), loop->getResult(6)};
}

} // namespace

bool memfit::rewriteNearestNeighbours(Operation *op) {
  auto match = matchKnn(op);
  if (!match)
    return false;
  OpBuilder b(op);
  Location loc = op->getLoc();
  const ContractionPlan &plan = match->dist.plan;
  int64_t feature = plan.reduced[0];
  Value q = rowsByFeatures(b, loc, plan, match->queriesOnLhs, feature);
  Value x = rowsByFeatures(b, loc, plan, !match->queriesOnLhs, feature);
  int64_t k = match->k, kp = 2 * k + 8;
  int64_t m = llvm::cast<RankedTensorType>(q.getType()).getDimSize(0);
  int64_t features = llvm::cast<RankedTensorType>(q.getType()).getDimSize(1);
  Type et = elementTypeOf(q);

  Candidates cand = selectCandidates(b, loc, q, x, kp);
  Value candDist = directDistances(b, loc, q, gatherRows(b, loc, x, cand.indices));
  Ranked ranked = rankCandidates(b, loc, candDist, cand.indices);
  Value certified = certify(b, loc, cand, ranked, candDist, k, features);
  Value nearest = buildSlice(b, loc, ranked.distances, {0, 0}, {m, k}, {1, 1});
  Value vals = buildGenericOp(b, loc, "stablehlo.negate", {nearest},
                              {tensorOf({m, k}, et)})
                   ->getResult(0);
  Value idx = buildSlice(b, loc, ranked.indices, {0, 0}, {m, k}, {1, 1});
  auto [exactVals, exactIdx] = repairUncertified(b, loc, q, x, certified, vals, idx);

  op->getResult(0).replaceAllUsesWith(exactVals);
  op->getResult(1).replaceAllUsesWith(exactIdx);
  Operation *neg = match->negate;
  const SquaredDistance &dist = match->dist;
  op->erase();
  eraseIfDead({neg, dist.reduce, dist.square, dist.sub});
  return true;
}
