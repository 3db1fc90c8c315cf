//===- SweepSearch.h - Placement in time order ----------------*- C++ -*-===//
//
// Internal to MemfitPacking. The second search of the portfolio: buffers are
// placed in order of their first segment, each at the bottom or the top of a
// free gap of the column of buffers placed and live when it starts. It looks
// at a packing the way an allocator builds one over time, so a wrong choice
// shows up within a few births, where the skyline search (which builds the
// packing bottom-up over all times at once) may only notice it near the top.
// It only tries gap ends, so it is incomplete: it finds packings but never
// proves that none exist.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFIT_LIB_PACKING_SWEEPSEARCH_H
#define MEMFIT_LIB_PACKING_SWEEPSEARCH_H

#include "KeySet.h"
#include "SkylineSearch.h"

#include <cstdint>
#include <vector>

namespace memfit {
namespace packing {
namespace detail {

class SweepSearch {
public:
  enum class Outcome { Found, Limit, Exhausted };

  /// With `reversed`, time runs backwards (buffers in order of their last
  /// segment); the offsets found are the same kind either way.
  /// With `discrepancy`, limited discrepancy search: passes that allow 0,
  /// 1, 2, ... steps away from the preferred candidates on a path (taking a
  /// node's i-th candidate costs i), instead of plain depth-first search.
  /// With `alignDeaths`, of a gap's two ends the one whose neighbour's life
  /// ends nearer to the buffer's own end comes first (else the bottom).
  /// With `fixed` (an offset per buffer, -1 for free), the buffers with an
  /// offset stay where they are and only the free ones are searched (the
  /// repair step of RepairSearch.h); candidates then also avoid the fixed
  /// buffers that start later in a buffer's life, and sit next to them.
  SweepSearch(const Problem &problem, int64_t capacity, bool reversed,
              bool discrepancy = false, bool alignDeaths = false,
              const std::vector<int64_t> *fixed = nullptr);

  /// The deepest partial packing reached so far: offsets of every buffer
  /// (fixed or placed in it; -1 for the others) and how many are placed.
  int deepest(std::vector<int64_t> &offsets) const;

  /// Continues the search where it stopped, for at most `nodes` more nodes
  /// (each also counted in budget.nodesUsed). On Found, `offsets` holds a
  /// packing; Exhausted means its restricted moves ran out (nothing proven).
  Outcome resume(SearchBudget &budget, int64_t nodes,
                 std::vector<int64_t> &offsets);

private:
  struct Level {
    int buf;
    int candBegin, candEnd, next; // candidate offsets in `cands`
    bool holding;                 // buf is placed at cands[next - 1]
    uint64_t key1, key2;          // the state this level starts from
    int64_t disc;                 // discrepancies spent above this level
    uint64_t plain1, plain2;      // the state alone, without discrepancies
    bool cut;                     // a child below was skipped for the limit
  };

  void pushLevel(int64_t disc);
  /// A free gap [begin, end) of a column, and the segments where the lives
  /// of the buffers right below and above it end.
  struct Gap {
    int64_t begin, end;
    int below, above;
  };
  void gapsAt(int b, std::vector<Gap> &out);
  bool columnFits(int s);
  bool futureFits(int b);
  void stateKey(int b, uint64_t &k1, uint64_t &k2) const;
  void place(int b, int64_t o);
  void unplace(int b);

  int n = 0, S = 0;
  int64_t C = 0;
  int64_t discLimit = -1; // -1: depth-first search
  bool discCut = false;   // this pass skipped a child for the limit
  std::vector<int> lo, hi;       // segments [lo, hi), possibly reversed
  std::vector<int64_t> size;
  std::vector<int> order;        // by first segment, larger first
  std::vector<int> byLo, firstAt; // buffers grouped by first segment
  std::vector<std::vector<int>> live;
  std::vector<int> sameAsPrev;   // previous identical buffer in order, or -1
  std::vector<char> placed;
  std::vector<int64_t> off;
  std::vector<Level> levels;
  std::vector<int64_t> cands;
  std::vector<std::pair<int64_t, int64_t>> busy;
  std::vector<std::pair<int64_t, int>> column; // (offset, buffer), gapsAt's
  std::vector<Gap> gaps;
  std::vector<int64_t> items, glen;
  bool exhausted = false;
  bool alignDeaths = false;
  int numFixed = 0;
  std::vector<char> isFree; // searched here, not fixed
  // Per free buffer, the fixed buffers that start later within its life
  // (only with `fixed`): a gap of its first column may still hit them.
  std::vector<std::vector<int>> laterFixed;
  bool clashes(int b, int64_t o) const;
  int bestDepth = -1;             // levels placed in the deepest partial
  std::vector<int64_t> bestOff;   // its offsets
  mutable int64_t work = 0; // added to the budget's by resume()
  // Levels whose every candidate failed, by state: the next buffer in order,
  // the column of placed buffers live where it starts and (in discrepancy
  // passes) the discrepancies left. Later buffers only meet placed buffers
  // through that column, so the placed buffers that have ended, and where
  // they were, do not matter.
  KeySet failed{int64_t(1) << 19};
};

/// The time-order members of the portfolio alone (SkylinePortfolio.cpp),
/// for problems too large for the skyline search's tables: Found or Limit,
/// never Infeasible.
SearchOutcome searchInTimeOrder(const Problem &problem, int64_t capacity,
                                SearchBudget &budget,
                                std::vector<int64_t> &offsets,
                                const SearchConfig &config = SearchConfig());

} // namespace detail
} // namespace packing
} // namespace memfit

#endif // MEMFIT_LIB_PACKING_SWEEPSEARCH_H
