//===- Planner.h - which region a split along one dimension takes -*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_SPLIT_PLANNER_H
#define MEMFIT_TRANSFORMS_SPLIT_PLANNER_H

#include "Plan.h"

namespace memfit::split {

struct PlanFailure {
  std::string why;
  Operation *blocker = nullptr;
};

class Planner {
public:
  /// `stashBytes`: what a first pass may assemble for its second pass
  /// (Stash.h).
  Planner(int64_t limit, int64_t stashBytes) : limit(limit), stashBytes(stashBytes) {}

  /// Plans splitting `seed` along `dim`; on failure fills `fail`.
  /// Ops that need a sink's result are left for a second pass (see
  /// Plan::later) and the region is planned again without them.
  std::optional<Plan> build(Value seed, int64_t dim, PlanFailure &fail) const;

private:
  int64_t limit; // producers of a quarter of it or more are pulled in
  int64_t stashBytes;
};

/// In a clone measured for the chunk size, the second pass is cut off: the
/// function returns splat constants (not counted) in its place and what
/// only it read is erased, so the originals it keeps alive until a later
/// split recomputes them do not count against this loop.
void detachSecondPass(const Plan &q);

} // namespace memfit::split

#endif
