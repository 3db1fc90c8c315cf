//===- Scatter.h - the accumulator of a scatter into a running result -*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_SCATTER_H
#define MEMFIT_TRANSFORMS_SPLIT_SCATTER_H

#include "Accumulator.h"

namespace memfit::split {

/// A scatter split along its updates' scatter dimension (a ScatterInto
/// factor, DimMapping.h): the state is the scatter's result, starting as
/// its input; each chunk scatters its indices and updates into it.
std::unique_ptr<Accumulator> makeScatterAccumulator(Operation *sink);

} // namespace memfit::split

#endif
