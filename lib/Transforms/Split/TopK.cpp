//===- TopK.cpp - running top-k accumulators -------------------------------===//
//
// chlo.top_k keeps a running (values, indices): the chunk's top-k with
// indices offset by the chunk start is concatenated after the running set
// and a stable descending sort keeps the first k, so ties go to the lower
// index exactly as lax.top_k.
// A sort-based top-k (sort along the split dimension, every result read only
// through slices [0:k], as jnp.argsort(d)[:, :k] and torch-mlir write it)
// keeps a running sorted prefix the same way with the sort's own comparator:
// the chunk is sorted and its first k kept, appended after the running k
// and sorted again (stably, so earlier chunks win ties as in the full stable
// sort); after the loop the slices read the running prefix.
//
//===----------------------------------------------------------------------===//
#include "TopK.h"

#include "Reductions.h"

using namespace mlir;

namespace memfit::split {

std::optional<int64_t> sortPrefixLength(Operation *sort) {
  int64_t sd = SortView(sort).getDimension();
  int64_t k = 0;
  for (Value r : sort->getResults())
    for (Operation *u : r.getUsers()) {
      if (getOpKind(u) != OpKind::Slice)
        return std::nullopt;
      SliceView s(u);
      if (s.getStartIndices()[sd] != 0 || s.getStrides()[sd] != 1)
        return std::nullopt;
      k = std::max(k, s.getLimitIndices()[sd]);
    }
  if (k == 0)
    return std::nullopt;
  return k;
}

namespace {

/// A stable sort of (values, indices) along `dim`, largest value first.
Operation *sortDescending(OpBuilder &b, Location loc, Value values, Value indices,
                          int64_t dim) {
  Operation *sort = buildGenericOp(
      b, loc, "stablehlo.sort", {values, indices},
      {values.getType(), indices.getType()},
      {b.getNamedAttr("dimension", b.getI64IntegerAttr(dim)),
       b.getNamedAttr("is_stable", b.getBoolAttr(true))},
      /*numRegions=*/1);
  auto vs = RankedTensorType::get({}, tensorType(values).getElementType());
  auto is = RankedTensorType::get({}, tensorType(indices).getElementType());
  Block *body = b.createBlock(&sort->getRegion(0), {}, {vs, vs, is, is},
                              {loc, loc, loc, loc});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(body);
    Value gt = buildCompare(b, loc, body->getArgument(0), body->getArgument(1), "GT",
                            orderedCompareType(vs.getElementType()));
    buildReturn(b, loc, gt);
  }
  b.setInsertionPointAfter(sort);
  return sort;
}

/// The first `len` entries of `v` along `dim`.
Value prefixAlong(OpBuilder &b, Location loc, Value v, int64_t dim, int64_t len) {
  auto t = tensorType(v);
  SmallVector<int64_t> lo(t.getRank(), 0), hi(t.getShape()), st(t.getRank(), 1);
  hi[dim] = len;
  return buildSlice(b, loc, v, lo, hi, st);
}

/// `sort` (with its comparator) applied to `operands`, whose extent along
/// the sort dimension is `len`; always stable, so that among equal keys the
/// operands' order (running prefix first) decides, as in one stable sort.
Operation *cloneSortOn(OpBuilder &b, Operation *sort, ValueRange operands, int64_t len) {
  int64_t sd = SortView(sort).getDimension();
  Operation *y = b.clone(*sort);
  y->setOperands(operands);
  for (OpResult r : y->getResults())
    r.setType(withDim(tensorType(r), sd, len));
  setInherentAttr(y, "is_stable", b.getBoolAttr(true));
  return y;
}

/// The running top-k's next state (chlo.top_k and sort-based top-k alike):
/// the first k along `dim` of `merged` (a stable sort of the running k
/// followed by the chunk's best, `top`); on the first iteration, when the
/// chunk holds k, the chunk's own (the running state starts as zeros).
void keepFirstK(OpBuilder &b, Location loc, Operation *merged, ValueRange top, int64_t dim,
                int64_t k, Value isFirst, SmallVectorImpl<Value> &next) {
  for (auto [r, t] : llvm::zip(merged->getResults(), top)) {
    Value m = prefixAlong(b, loc, r, dim, k);
    if (isFirst && tensorType(t).getDimSize(dim) == k)
      m = buildSelect(b, loc, isFirst, t, m);
    next.push_back(m);
  }
}

class TopKAccumulator : public Accumulator {
public:
  using Accumulator::Accumulator;
  bool needsFirstFlag() const override { return true; }

  void init(OpBuilder &b, Location loc, SmallVectorImpl<Value> &state) const override {
    for (Value res : sink->getResults())
      state.push_back(zerosLike(b, loc, tensorType(res)));
  }

  /// The chunk's top-min(k, c) with indices offset by the chunk start,
  /// merged after the running k.
  void step(ChunkStep &s, ValueRange operands, ValueRange state,
            SmallVectorImpl<Value> &next) override {
    OpBuilder &b = s.b;
    int64_t k = TopKView(sink).getK();
    int64_t kk = std::min(k, s.chunk);
    Operation *y = applyToChunk(b, sink, operands);
    auto vt = tensorType(sink->getResult(0)), it = tensorType(sink->getResult(1));
    int64_t last = vt.getRank() - 1;
    y->getResult(0).setType(withDim(vt, last, kk));
    y->getResult(1).setType(withDim(it, last, kk));
    y->setAttr("k", b.getI64IntegerAttr(kk));
    Value vals = y->getResult(0);
    Value idx = buildElementwise(
        b, s.loc, "stablehlo.add",
        {y->getResult(1), broadcastStart(b, s.loc, s.start, tensorType(y->getResult(1)))});
    Value catV = buildConcatenate(b, s.loc, {state[0], vals}, last);
    Value catI = buildConcatenate(b, s.loc, {state[1], idx}, last);
    Operation *merged = sortDescending(b, s.loc, catV, catI, last);
    keepFirstK(b, s.loc, merged, {vals, idx}, last, k, s.isFirst, next);
  }
};

class SortPrefixAccumulator : public Accumulator {
public:
  using Accumulator::Accumulator;
  bool needsFirstFlag() const override { return true; }

  void init(OpBuilder &b, Location loc, SmallVectorImpl<Value> &state) const override {
    int64_t sd = SortView(sink).getDimension(), k = *sortPrefixLength(sink);
    for (Value res : sink->getResults())
      state.push_back(zerosLike(b, loc, withDim(tensorType(res), sd, k)));
  }

  /// Sorts the chunk, keeps its first kk, appends them after the running
  /// prefix and sorts again; the first iteration takes the chunk's own.
  void step(ChunkStep &s, ValueRange operands, ValueRange state,
            SmallVectorImpl<Value> &next) override {
    int64_t sd = SortView(sink).getDimension(), k = *sortPrefixLength(sink);
    int64_t kk = std::min(k, s.chunk);
    Operation *y = cloneSortOn(s.b, sink, operands, s.chunk);
    SmallVector<Value> tops, cat;
    for (auto [j, r] : llvm::enumerate(y->getResults())) {
      tops.push_back(prefixAlong(s.b, s.loc, r, sd, kk));
      cat.push_back(buildConcatenate(s.b, s.loc, {state[j], tops.back()}, sd));
    }
    Operation *merged = cloneSortOn(s.b, sink, cat, k + kk);
    keepFirstK(s.b, s.loc, merged, tops, sd, k, s.isFirst, next);
  }

  /// The readers are prefix slices: the same slices of the running prefix.
  void deliver(OpBuilder &b, Location, ValueRange state, ReplaceOutside,
               SmallVectorImpl<Operation *> &dead) override {
    for (auto [v, prefix] : llvm::zip(sink->getResults(), state)) {
      for (Operation *u : llvm::to_vector(v.getUsers())) {
        Value same = prefix;
        if (u->getResult(0).getType() != prefix.getType() ||
            llvm::any_of(SliceView(u).getStartIndices(), [](int64_t i) { return i != 0; })) {
          Operation *s = b.clone(*u);
          s->setOperand(0, prefix);
          same = s->getResult(0);
        }
        u->getResult(0).replaceAllUsesWith(same);
        dead.push_back(u); // erased last: `b` may insert before it
      }
    }
  }
};

} // namespace

std::unique_ptr<Accumulator> makeTopKAccumulator(Operation *sink) {
  bool sortPrefix = getOpKind(sink) == OpKind::Sort;
  return sortPrefix ? std::unique_ptr<Accumulator>(new SortPrefixAccumulator(sink))
                    : std::unique_ptr<Accumulator>(new TopKAccumulator(sink));
}

} // namespace memfit::split
