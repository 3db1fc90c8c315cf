//===- GatherSelect.cpp - a gather along the split dimension --------------===//
//
// take_along_axis (optax's cross-entropy picks each token's label logit
// with it) gathers one element per row along the dimension a vocabulary
// split chunks. Each index lies in exactly one chunk: the chunk gathers at
// index - start and keeps the result where the index falls in it. The
// index is first clamped to the whole dimension, as the gather itself
// clamps it, so an index past either end takes the same end element as
// the gather on the whole operand would.
//
//===----------------------------------------------------------------------===//
#include "GatherSelect.h"

#include "Reductions.h"

#include "memfit/IR/OpViews.h"

using namespace mlir;

namespace memfit::split {
namespace {

RankedTensorType scalarOf(RankedTensorType t) {
  return RankedTensorType::get({}, t.getElementType());
}

Value splatLike(OpBuilder &b, Location loc, RankedTensorType t, int64_t v) {
  return buildBroadcastInDim(b, loc, t, buildConstantSplat(b, loc, scalarOf(t), double(v)), {});
}

class GatherSelectAccumulator : public Accumulator {
public:
  GatherSelectAccumulator(Operation *sink, int64_t size) : Accumulator(sink), size(size) {}

  void init(OpBuilder &b, Location loc, SmallVectorImpl<Value> &state) const override {
    state.push_back(zerosLike(b, loc, tensorType(sink->getResult(0))));
  }

  void step(ChunkStep &s, ValueRange operands, ValueRange state,
            SmallVectorImpl<Value> &next) override {
    OpBuilder &b = s.b;
    Value idx = operands[1];
    auto it = tensorType(idx);
    StringRef cmp = orderedCompareType(it.getElementType());
    Value clamped = buildElementwise(
        b, s.loc, "stablehlo.minimum",
        {buildElementwise(b, s.loc, "stablehlo.maximum", {idx, splatLike(b, s.loc, it, 0)}),
         splatLike(b, s.loc, it, size - 1)});
    Value local =
        buildElementwise(b, s.loc, "stablehlo.subtract",
                         {clamped, broadcastStart(b, s.loc, s.start, it)});
    Value inChunk = buildElementwise(
        b, s.loc, "stablehlo.and",
        {buildCompare(b, s.loc, local, splatLike(b, s.loc, it, 0), "GE", cmp),
         buildCompare(b, s.loc, local, splatLike(b, s.loc, it, s.chunk), "LT", cmp)});
    Operation *g = applyToChunk(b, sink, {operands[0], local});
    next.push_back(buildSelect(b, s.loc, toResultShape(b, s.loc, inChunk), g->getResult(0),
                               state[0]));
  }

private:
  /// The indices' mask (one element per index vector) broadcast to the
  /// gather's result: the result's non-offset dimensions are the indices'
  /// batch dimensions, in order.
  Value toResultShape(OpBuilder &b, Location loc, Value mask) const {
    std::string text = attrToText(sink->getAttr("dimension_numbers"));
    SmallVector<int64_t> offsetDims = readAttrField(text, "offset_dims");
    int64_t ivd = readAttrField(text, "index_vector_dim").front();
    auto mt = tensorType(mask);
    if (ivd < mt.getRank()) {
      SmallVector<int64_t> shape(mt.getShape());
      shape.erase(shape.begin() + ivd);
      mask = buildReshape(b, loc, RankedTensorType::get(shape, mt.getElementType()), mask);
    }
    auto rt = tensorType(sink->getResult(0));
    SmallVector<int64_t> batchDims;
    for (int64_t d = 0; d < rt.getRank(); ++d)
      if (!llvm::is_contained(offsetDims, d))
        batchDims.push_back(d);
    auto pt = RankedTensorType::get(rt.getShape(), tensorType(mask).getElementType());
    return buildBroadcastInDim(b, loc, pt, mask, batchDims);
  }

  int64_t size; // the split dimension's whole extent
};

} // namespace

std::unique_ptr<Accumulator> makeGatherSelectAccumulator(Operation *sink, int64_t size) {
  return std::make_unique<GatherSelectAccumulator>(sink, size);
}

} // namespace memfit::split
