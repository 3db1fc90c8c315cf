//===- TopK.h - running top-k accumulators ----------------------*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_TOPK_H
#define MEMFIT_TRANSFORMS_SPLIT_TOPK_H

#include "Accumulator.h"

namespace memfit::split {

/// For a sort whose results are read only through slices starting at 0 with
/// stride 1 along its sort dimension (a sort-based top-k), the longest such
/// prefix; nullopt otherwise.
std::optional<int64_t> sortPrefixLength(Operation *sort);

/// chlo.top_k along the split dimension (a running (values, indices)), or a
/// sort along it read only through prefix slices (a running sorted prefix).
std::unique_ptr<Accumulator> makeTopKAccumulator(Operation *sink);

} // namespace memfit::split

#endif
