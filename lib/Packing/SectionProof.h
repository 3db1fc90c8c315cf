//===- SectionProof.h - Infeasibility from one time section ----*- C++ -*-===//
//
// Internal to MemfitPacking. The buffers live in a window of segments
// [a, c), each cut to the window, are a relaxation of the whole problem: any
// packing of the whole, restricted to the window, packs them. So a window
// with no packing proves the whole infeasible, and its search is far
// smaller. This is the member of the portfolio that proves what a
// time section cannot hold; the skyline search over the whole problem would
// have to refute the section again under every choice made outside it.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFIT_LIB_PACKING_SECTIONPROOF_H
#define MEMFIT_LIB_PACKING_SECTIONPROOF_H

#include "SkylineSearch.h"

#include <cstdint>
#include <vector>

namespace memfit {
namespace packing {
namespace detail {

class SectionProver {
public:
  SectionProver(const Problem &problem, int64_t capacity);

  /// Searches windows, most loaded first, for about `nodes` more nodes
  /// (counted in budget.nodesUsed). Infeasible: a window has no packing, and
  /// budget.sectionBegin/End name it. Limit: nothing proven yet (also when
  /// every window packs: then there is nothing this member can prove).
  SearchOutcome resume(SearchBudget &budget, int64_t nodes);

private:
  struct Window {
    int a, c;             // segments [a, c)
    double load;          // live bytes summed over its segments / (C x width)
    int64_t nodes;        // budget of its next search; doubles after each
    bool open;            // not yet packed
  };

  SearchOutcome searchWindow(Window &w, SearchBudget &budget);

  const Problem &P;
  int64_t C;
  std::vector<Window> windows;
  size_t next = 0;
};

} // namespace detail
} // namespace packing
} // namespace memfit

#endif // MEMFIT_LIB_PACKING_SECTIONPROOF_H
