//===- GatherSelect.h - a gather along the split dimension ------*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_GATHERSELECT_H
#define MEMFIT_TRANSFORMS_SPLIT_GATHERSELECT_H

#include "Accumulator.h"

namespace memfit::split {

/// A gather whose only index component addresses the split dimension of its
/// operand (an IndexedSelect factor, DimMapping.h): the state is the
/// gather's result; each chunk gathers at the indices less its start and
/// keeps the elements whose index falls in it.
std::unique_ptr<Accumulator> makeGatherSelectAccumulator(Operation *sink, int64_t size);

} // namespace memfit::split

#endif
