//===- BroadcastSource.cpp - see through broadcasts ------------------------===//
#include "memfit/Analysis/BroadcastSource.h"

#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

bool BroadcastSource::covers(int64_t d) const { return sourceDimOf(d) >= 0; }

int64_t BroadcastSource::sourceDimOf(int64_t d) const {
  for (auto [i, m] : llvm::enumerate(dimMap))
    if (m == d)
      return i;
  return -1;
}

/// For a reshape that only inserts or removes unit dimensions, the map from
/// operand dims to result dims (-1 for a dropped unit dim); nullopt otherwise.
static std::optional<SmallVector<int64_t>> unitReshapeMap(RankedTensorType in,
                                                          RankedTensorType out) {
  SmallVector<int64_t> map;
  int64_t j = 0;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    int64_t size = in.getDimSize(i);
    while (j < out.getRank() && out.getDimSize(j) == 1 && size != 1)
      ++j;
    if (j < out.getRank() && out.getDimSize(j) == size) {
      map.push_back(j++);
    } else if (size == 1) {
      map.push_back(-1);
    } else {
      return std::nullopt;
    }
  }
  for (; j < out.getRank(); ++j)
    if (out.getDimSize(j) != 1)
      return std::nullopt;
  return map;
}

BroadcastSource memfit::traceBroadcast(Value v) {
  auto type = llvm::cast<RankedTensorType>(v.getType());
  BroadcastSource result{v, {}};
  for (int64_t i = 0; i < type.getRank(); ++i)
    result.dimMap.push_back(i);
  while (Operation *def = result.source.getDefiningOp()) {
    auto outType = llvm::cast<RankedTensorType>(def->getResult(0).getType());
    SmallVector<int64_t> step; // operand dim -> def result dim
    Value operand;
    if (auto b = BroadcastInDimView::match(def)) {
      operand = b->getOperand();
      auto inType = llvm::cast<RankedTensorType>(operand.getType());
      for (auto [i, d] : llvm::enumerate(b->getBroadcastDimensions()))
        step.push_back(inType.getDimSize(i) == outType.getDimSize(d) ? d : -1);
    } else if (auto r = ReshapeView::match(def)) {
      operand = r->getOperand();
      auto m = unitReshapeMap(llvm::cast<RankedTensorType>(operand.getType()), outType);
      if (!m)
        break;
      step = *m;
    } else {
      break;
    }
    SmallVector<int64_t> composed;
    for (int64_t s : step)
      composed.push_back(s < 0 ? -1 : result.dimMap[s]);
    result = {operand, composed};
  }
  return result;
}
