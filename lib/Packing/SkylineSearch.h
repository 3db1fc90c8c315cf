//===- SkylineSearch.h - Exact search at a fixed capacity ------*- C++ -*-===//
//
// Internal to MemfitPacking. One connected component of a packing problem,
// with time compressed into elementary segments, and the branch-and-bound
// search that decides whether it fits a capacity.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFIT_LIB_PACKING_SKYLINESEARCH_H
#define MEMFIT_LIB_PACKING_SKYLINESEARCH_H

#include <chrono>
#include <cstdint>
#include <vector>

namespace memfit {
namespace packing {
namespace detail {

using Clock = std::chrono::steady_clock;

/// A packing problem whose buffers all have positive size. Time is
/// compressed: buffer i is live over segments [segLo[i], segHi[i]).
struct Problem {
  int numSegs = 0;
  std::vector<int> segLo;
  std::vector<int> segHi;
  std::vector<int64_t> size;
};

enum class SearchOutcome { Found, Infeasible, Limit };

struct SearchBudget {
  Clock::time_point deadline;
  /// Stop when nodesUsed reaches this (0: unlimited).
  int64_t nodeLimit = 0;
  /// Incremented by the search.
  int64_t nodesUsed = 0;
};

/// Knobs, for experiments; the defaults are what pack() uses.
struct SearchConfig {
  bool useMemo = true;
  bool useEffectiveFloorBound = true;
  bool failFirstSegment = true;
  /// Upper bound on the failed-state table, in entries (16 bytes each).
  int64_t memoMaxEntries = int64_t(1) << 22;
};

/// Decides whether `problem` fits in `capacity` bytes. On Found, `offsets`
/// holds one offset per buffer, each at most capacity - size.
SearchOutcome solveAtCapacity(const Problem &problem, int64_t capacity,
                              SearchBudget &budget,
                              std::vector<int64_t> &offsets,
                              const SearchConfig &config = SearchConfig());

} // namespace detail
} // namespace packing
} // namespace memfit

#endif // MEMFIT_LIB_PACKING_SKYLINESEARCH_H
