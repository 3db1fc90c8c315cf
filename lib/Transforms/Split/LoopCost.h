//===- LoopCost.h - what a split loop costs in time -------------*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_LOOPCOST_H
#define MEMFIT_TRANSFORMS_SPLIT_LOOPCOST_H

#include "Plan.h"

namespace memfit::split {

/// Modelled ns of what differs between the feasible plans of a region: the
/// loop's iterations, and the top_k sinks whose rows the loop cuts. Such a
/// top_k runs on every chunk and merges its running k each iteration,
/// instead of running once on whole rows, where the two-stage rewrite makes
/// it several times cheaper (Analysis/TopKCost.h). The rest of a region's
/// work (its FLOPs and bytes) is the same whichever dimension is chunked.
double modelledLoopNanos(const Plan &plan, int64_t chunk);

} // namespace memfit::split

#endif
