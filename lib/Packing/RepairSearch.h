//===- RepairSearch.h - Repairing a deep partial packing -------*- C++ -*-===//
//
// Internal to MemfitPacking. A large-neighbourhood member of the portfolio:
// on hard instances the forwards time-order searches place most buffers
// (44 to 84% on the sweep misses) and then spend their discrepancy passes
// under those prefixes. This member takes the deepest partial packing they
// reached, unplaces the buffers live in a time window that ends where the
// first unplaced buffer starts (the ones it could not get past), and places
// them and the rest again with a small time-order search, the other buffers
// fixed. A repair that places at least as many buffers as before becomes
// the new partial packing. Seeded: deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFIT_LIB_PACKING_REPAIRSEARCH_H
#define MEMFIT_LIB_PACKING_REPAIRSEARCH_H

#include "SweepSearch.h"

namespace memfit {
namespace packing {
namespace detail {

class RepairSearch {
public:
  RepairSearch(const Problem &problem, int64_t capacity);

  /// Takes `source`'s deepest partial packing (a forwards time-order
  /// search) if it places more buffers than the current one.
  void offer(const SweepSearch &source);

  /// Repairs for at most `nodes` more nodes (counted in the budget, with
  /// their work). Found: `offsets` holds a packing. Limit otherwise (also
  /// when no partial packing was offered yet).
  SweepSearch::Outcome resume(SearchBudget &budget, int64_t nodes,
                              std::vector<int64_t> &offsets);

  /// Whether it holds a partial packing to repair (one was offered).
  bool hasPartial() const { return placedCount > 0; }

  /// Repairs tried and accepted so far.
  int64_t repairs = 0, accepted = 0;

private:
  const Problem &P;
  int64_t C;
  std::vector<int64_t> current; // offset per buffer, -1: not placed
  int placedCount = 0;
  uint64_t rng = 0x5EED0F1A5ULL;
  uint64_t draw();
};

} // namespace detail
} // namespace packing
} // namespace memfit

#endif // MEMFIT_LIB_PACKING_REPAIRSEARCH_H
