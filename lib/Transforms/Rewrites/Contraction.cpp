//===- Contraction.cpp - broadcast products as dot_general -----------------===//
#include "Contraction.h"

#include "memfit/IR/OpViews.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace memfit;

namespace {

/// The source without its broadcast unit dims, and the product dim carried
/// by each remaining dim.
Value squeeze(OpBuilder &b, Location loc, const BroadcastSource &s,
              SmallVectorImpl<int64_t> *dims) {
  auto type = llvm::cast<RankedTensorType>(s.source.getType());
  SmallVector<int64_t> shape;
  for (auto [i, m] : llvm::enumerate(s.dimMap))
    if (m >= 0) {
      shape.push_back(type.getDimSize(i));
      if (dims)
        dims->push_back(m);
    }
  if (static_cast<int64_t>(shape.size()) == type.getRank())
    return s.source;
  return buildReshape(b, loc, RankedTensorType::get(shape, type.getElementType()),
                      s.source);
}

SmallVector<int64_t> carriedDims(const BroadcastSource &s) {
  SmallVector<int64_t> dims;
  for (int64_t m : s.dimMap)
    if (m >= 0)
      dims.push_back(m);
  return dims;
}

/// Position of product dim `d` in the reduce result (dims not reduced, in
/// order).
int64_t resultPosition(int64_t d, ArrayRef<int64_t> reduced) {
  int64_t pos = 0;
  for (int64_t i = 0; i < d; ++i)
    if (!llvm::is_contained(reduced, i))
      ++pos;
  return pos;
}

/// Transposes `v` (whose dims carry product dims `dims`) into increasing
/// result order, then broadcasts it to `resultType`.
Value placeInto(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> dims,
                ArrayRef<int64_t> reduced, RankedTensorType resultType) {
  SmallVector<int64_t> positions;
  for (int64_t d : dims)
    positions.push_back(resultPosition(d, reduced));
  SmallVector<int64_t> perm(positions.size());
  std::iota(perm.begin(), perm.end(), 0);
  llvm::stable_sort(perm, [&](int64_t x, int64_t y) { return positions[x] < positions[y]; });
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto p) {
    return static_cast<int64_t>(p.index()) == p.value();
  });
  if (!identity)
    v = buildTranspose(b, loc, v, perm);
  SmallVector<int64_t> sorted;
  for (int64_t p : perm)
    sorted.push_back(positions[p]);
  if (v.getType() == resultType)
    return v;
  return buildBroadcastInDim(b, loc, resultType, v, sorted);
}

} // namespace

std::optional<ContractionPlan> ContractionPlan::make(Value a, Value b,
                                                     ArrayRef<int64_t> reduced) {
  ContractionPlan plan;
  plan.lhs = traceBroadcast(a);
  plan.rhs = traceBroadcast(b);
  plan.reduced.assign(reduced.begin(), reduced.end());
  plan.rank = llvm::cast<RankedTensorType>(a.getType()).getRank();
  auto et = [](Value v) {
    return llvm::cast<RankedTensorType>(v.getType()).getElementType();
  };
  if (et(plan.lhs.source) != et(a) || et(plan.rhs.source) != et(b) || et(a) != et(b))
    return std::nullopt;
  for (int64_t d : reduced)
    if (!plan.lhs.covers(d) || !plan.rhs.covers(d))
      return std::nullopt;
  // A rewrite is only worth it when the product really was a broadcast.
  if (plan.lhs.source == a && plan.rhs.source == b)
    return std::nullopt;
  plan.lhsDims = carriedDims(plan.lhs);
  plan.rhsDims = carriedDims(plan.rhs);
  return plan;
}

Value ContractionPlan::buildDot(OpBuilder &b, Location loc,
                                RankedTensorType resultType) const {
  SmallVector<int64_t> lDims, rDims;
  Value l = squeeze(b, loc, lhs, &lDims);
  Value r = squeeze(b, loc, rhs, &rDims);
  auto pos = [](ArrayRef<int64_t> dims, int64_t d) {
    return static_cast<int64_t>(llvm::find(dims, d) - dims.begin());
  };
  DotDims dd;
  SmallVector<int64_t> outDims; // product dim carried by each dot result dim
  for (int64_t d : reduced) {
    dd.lhsContract.push_back(pos(lDims, d));
    dd.rhsContract.push_back(pos(rDims, d));
  }
  for (int64_t d : lDims)
    if (!llvm::is_contained(reduced, d) && llvm::is_contained(rDims, d)) {
      dd.lhsBatch.push_back(pos(lDims, d));
      dd.rhsBatch.push_back(pos(rDims, d));
      outDims.push_back(d);
    }
  auto isFree = [&](int64_t d) {
    return !llvm::is_contained(reduced, d) &&
           !(llvm::is_contained(lDims, d) && llvm::is_contained(rDims, d));
  };
  for (int64_t d : lDims)
    if (isFree(d))
      outDims.push_back(d);
  for (int64_t d : rDims)
    if (isFree(d))
      outDims.push_back(d);
  auto lt = llvm::cast<RankedTensorType>(l.getType());
  auto rt = llvm::cast<RankedTensorType>(r.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : outDims) {
    int64_t li = pos(lDims, d);
    shape.push_back(li < static_cast<int64_t>(lDims.size()) ? lt.getDimSize(li)
                                                           : rt.getDimSize(pos(rDims, d)));
  }
  auto dotType = RankedTensorType::get(shape, resultType.getElementType());
  Value dot = buildDotGeneral(b, loc, dotType, l, r, dd);
  return placeInto(b, loc, dot, outDims, reduced, resultType);
}

Value ContractionPlan::squeezedSource(OpBuilder &b, Location loc, bool lhsSide,
                                      SmallVectorImpl<int64_t> &dims) const {
  return squeeze(b, loc, lhsSide ? lhs : rhs, &dims);
}

Value ContractionPlan::buildSquaredNorm(OpBuilder &b, Location loc, bool lhsSide,
                                        RankedTensorType resultType) const {
  SmallVector<int64_t> dims;
  Value v = squeeze(b, loc, lhsSide ? lhs : rhs, &dims);
  Value sq = buildElementwise(b, loc, "stablehlo.multiply", {v, v});
  SmallVector<int64_t> reduceDims, kept;
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (llvm::is_contained(reduced, d))
      reduceDims.push_back(i);
    else
      kept.push_back(d);
  }
  auto scalar = RankedTensorType::get({}, resultType.getElementType());
  Value zero = buildConstantSplat(b, loc, scalar, 0.0);
  Value norm = buildReduce(b, loc, sq, zero, reduceDims, "stablehlo.add");
  return placeInto(b, loc, norm, kept, reduced, resultType);
}
