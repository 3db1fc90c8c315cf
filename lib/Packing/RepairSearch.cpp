//===- RepairSearch.cpp - Repairing a deep partial packing ---------------===//
//
// One repair: f is the first unplaced buffer in time order (by first
// segment, larger first). Of the placed buffers, the k that live latest
// (largest last segment, ties at random) are unplaced: those live where f
// starts come first, so its column is reopened, then those that end just
// before it. k is drawn from 4 to 64. A time-order search (SweepSearch with
// the other buffers fixed, forwards, limited discrepancy, either candidate
// order) then places the unplaced buffers and those after f, for a node
// budget of a few times their number. Its deepest partial packing replaces
// the current one when it places at least as many buffers: equal moves let
// the window drift.
//
//===----------------------------------------------------------------------===//

#include "RepairSearch.h"

#include <algorithm>
#include <numeric>

namespace memfit {
namespace packing {
namespace detail {

RepairSearch::RepairSearch(const Problem &problem, int64_t capacity)
    : P(problem), C(capacity) {}

uint64_t RepairSearch::draw() { return rng = splitmix64(rng); }

void RepairSearch::offer(const SweepSearch &source) {
  std::vector<int64_t> offs;
  int count = source.deepest(offs);
  if (count > placedCount) {
    current = offs;
    placedCount = count;
  }
}

SweepSearch::Outcome RepairSearch::resume(SearchBudget &budget, int64_t nodes,
                                          std::vector<int64_t> &offsets) {
  const int n = int(P.size.size());
  if (placedCount == 0 || n == 0)
    return SweepSearch::Outcome::Limit;
  const int64_t stopAt = budget.nodesUsed + nodes;
  std::vector<int> placedBufs;
  std::vector<uint64_t> jitter(n);
  std::vector<int64_t> fixed;
  while (budget.nodesUsed < stopAt) {
    if ((budget.nodeLimit > 0 && budget.nodesUsed >= budget.nodeLimit) ||
        Clock::now() >= budget.deadline)
      return SweepSearch::Outcome::Limit;
    // The first unplaced buffer in time order.
    int f = -1;
    for (int b = 0; b < n; ++b)
      if (current[b] < 0 &&
          (f < 0 || P.segLo[b] < P.segLo[f] ||
           (P.segLo[b] == P.segLo[f] && P.size[b] > P.size[f])))
        f = b;
    if (f < 0) { // cannot happen: a full packing is returned when found
      offsets = current;
      return SweepSearch::Outcome::Found;
    }
    // Unplace the k placed buffers that live latest.
    placedBufs.clear();
    for (int b = 0; b < n; ++b)
      if (current[b] >= 0) {
        placedBufs.push_back(b);
        jitter[b] = draw();
      }
    const int k = std::min<int>(int(placedBufs.size()), 4 << (draw() % 5));
    std::partial_sort(placedBufs.begin(), placedBufs.begin() + k,
                      placedBufs.end(), [&](int a, int b) {
                        if (P.segHi[a] != P.segHi[b])
                          return P.segHi[a] > P.segHi[b];
                        return jitter[a] < jitter[b];
                      });
    fixed = current;
    for (int i = 0; i < k; ++i)
      fixed[placedBufs[i]] = -1;
    const int freeCount = n - (placedCount - k);
    // Set-up: the search's tables, about its buffers' lifetimes.
    for (int b = 0; b < n; ++b)
      budget.work += P.segHi[b] - P.segLo[b];
    SweepSearch repair(P, C, /*reversed=*/false, /*discrepancy=*/true,
                       /*alignDeaths=*/(draw() & 1) != 0, &fixed);
    const int64_t limit = std::min<int64_t>(
        stopAt - budget.nodesUsed, int64_t(freeCount) << (2 + draw() % 3));
    ++repairs;
    SweepSearch::Outcome o = repair.resume(budget, std::max<int64_t>(limit, 1),
                                           offsets);
    if (o == SweepSearch::Outcome::Found)
      return o;
    std::vector<int64_t> offs;
    int count = repair.deepest(offs);
    if (count >= placedCount) {
      accepted += count > placedCount || offs != current;
      current.swap(offs);
      placedCount = count;
    }
  }
  return SweepSearch::Outcome::Limit;
}

} // namespace detail
} // namespace packing
} // namespace memfit
