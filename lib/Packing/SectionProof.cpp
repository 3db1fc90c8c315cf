//===- SectionProof.cpp - Infeasibility from one time section -------------===//
//
// Windows of 2, 3, 4, 6, 9, ... segments (narrower than the problem) at
// strides of half their width. The most loaded are searched first: a section that
// cannot be packed is one where the bytes leave little room to move. Each
// window gets a depth-first skyline search with a node budget that doubles
// every time it comes round undecided; a window that packs is closed.
//
//===----------------------------------------------------------------------===//

#include "SectionProof.h"

#include <algorithm>

namespace memfit {
namespace packing {
namespace detail {

SectionProver::SectionProver(const Problem &problem, int64_t capacity)
    : P(problem), C(capacity) {
  const int S = P.numSegs;
  std::vector<int64_t> live(S + 1, 0); // bytes live per segment
  for (size_t b = 0; b < P.size.size(); ++b) {
    live[P.segLo[b]] += P.size[b];
    live[P.segHi[b]] -= P.size[b];
  }
  for (int s = 1; s <= S; ++s)
    live[s] += live[s - 1];
  std::vector<int64_t> prefix(S + 1, 0); // sums of live bytes
  for (int s = 0; s < S; ++s)
    prefix[s + 1] = prefix[s] + live[s];
  // Widths grow by half (not doubling) and windows overlap by half: a
  // section that cannot be packed is then inside a window not much wider
  // than itself, whose search stays small. (Measured on blocked-large-0:
  // its core, cut to its 32 segments, is refuted in 3.7k nodes; in a first
  // version of this member, doubling widths needed 1M nodes of the
  // portfolio to prove the instance, widths x 1.5 36k.)
  for (int w = 2; w < S; w = w * 3 / 2)
    for (int a = 0; a + w <= S; a += w / 2) {
      double load = double(prefix[a + w] - prefix[a]) / (double(C) * w);
      windows.push_back({a, a + w, load, 256, true});
    }
  std::stable_sort(windows.begin(), windows.end(),
                   [](const Window &x, const Window &y) {
                     return x.load > y.load;
                   });
}

// The buffers that overlap [w.a, w.c), cut to it, searched at C.
SearchOutcome SectionProver::searchWindow(Window &w, SearchBudget &budget) {
  Problem sub;
  sub.numSegs = w.c - w.a;
  for (size_t b = 0; b < P.size.size(); ++b) {
    if (P.segHi[b] <= w.a || P.segLo[b] >= w.c)
      continue;
    sub.segLo.push_back(std::max(P.segLo[b], w.a) - w.a);
    sub.segHi.push_back(std::min(P.segHi[b], w.c) - w.a);
    sub.size.push_back(P.size[b]);
  }
  SearchConfig cfg;
  cfg.portfolio = {{CandidateOrder::AreaFirst, false, false}};
  cfg.sweepSearches = 0;
  cfg.sectionProofs = false; // no windows of windows
  cfg.memoMaxEntries = int64_t(1) << 16;
  SearchBudget inner;
  inner.deadline = budget.deadline;
  // Its own budget, even past the turn's end: a window cut short restarts
  // from scratch next time, so cutting it to the turn would waste it. The
  // overshoot is one window's budget, small against a cycle of all.
  inner.nodeLimit = w.nodes;
  if (budget.nodeLimit > 0)
    inner.nodeLimit = std::min(inner.nodeLimit,
                               budget.nodeLimit - budget.nodesUsed);
  std::vector<int64_t> offsets;
  SearchOutcome o = solveAtCapacity(sub, C, inner, offsets, cfg);
  budget.nodesUsed += inner.nodesUsed;
  // Each window's search sets up its own tables (the failed-state table
  // alone is 2^17 slots): as much work as a hundred thousand scan steps.
  budget.work += inner.work + (int64_t(1) << 17);
  return o;
}

SearchOutcome SectionProver::resume(SearchBudget &budget, int64_t nodes) {
  const int64_t stopAt = budget.nodesUsed + nodes;
  // Cycles through the open windows until the turn's nodes are spent: one
  // cycle over mostly packed windows costs far less than a turn.
  size_t closedInARow = 0;
  while (closedInARow < windows.size()) {
    if (budget.nodesUsed >= stopAt || Clock::now() >= budget.deadline ||
        (budget.nodeLimit > 0 && budget.nodesUsed >= budget.nodeLimit))
      return SearchOutcome::Limit;
    Window &w = windows[next];
    next = (next + 1) % windows.size();
    if (!w.open) {
      ++closedInARow;
      continue;
    }
    closedInARow = 0;
    SearchOutcome o = searchWindow(w, budget);
    if (o == SearchOutcome::Infeasible) {
      budget.sectionBegin = w.a;
      budget.sectionEnd = w.c;
      return o;
    }
    if (o == SearchOutcome::Found)
      w.open = false;
    else
      w.nodes *= 2;
  }
  return SearchOutcome::Limit; // every window packs: nothing to prove here
}

} // namespace detail
} // namespace packing
} // namespace memfit
