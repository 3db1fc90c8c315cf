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
#include <ctime>
#include <vector>

namespace memfit {
namespace packing {
namespace detail {

/// While true on a thread, Clock reads that thread's CPU time
/// (PackOptions::cpuTime).
inline bool &clockReadsCpuTime() {
  static thread_local bool cpu = false;
  return cpu;
}

/// The packer's clock: steady wall-clock time, or the calling thread's CPU
/// time while clockReadsCpuTime() (time points of the two never meet: one
/// pack() call uses one of them throughout).
struct Clock {
  using duration = std::chrono::steady_clock::duration;
  using time_point = std::chrono::steady_clock::time_point;
  static time_point now() {
    if (!clockReadsCpuTime())
      return std::chrono::steady_clock::now();
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(std::chrono::duration_cast<duration>(
        std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
  }
};

/// A packing problem whose buffers all have positive size. Time is
/// compressed: buffer i is live over segments [segLo[i], segHi[i]).
struct Problem {
  int numSegs = 0;
  std::vector<int> segLo;
  std::vector<int> segHi;
  std::vector<int64_t> size;
};

enum class SearchOutcome { Found, Infeasible, Limit };

/// How much of the search a problem's size allowed (see
/// SearchConfig::maxTableEntries).
enum class SearchScope {
  Full,      ///< the skyline portfolio and the time-order searches
  SweepOnly, ///< only the time-order searches: packings, never proofs
  None,      ///< too large to search at all
};

struct SearchBudget {
  Clock::time_point deadline;
  /// Stop when nodesUsed reaches this (0: unlimited).
  int64_t nodeLimit = 0;
  /// Incremented by the search.
  int64_t nodesUsed = 0;
  /// Work done, in steps of the searches' inner loops (table entries looked
  /// at): a node's cost differs by member and problem, its work count is a
  /// deterministic measure of it.
  int64_t work = 0;
  /// Set by solveAtCapacity: the narrowest scope of any call.
  SearchScope scope = SearchScope::Full;
  /// Set on an Infeasible proven by a time section alone (SectionProof.h):
  /// its segments [sectionBegin, sectionEnd); -1 otherwise.
  int sectionBegin = -1;
  int sectionEnd = -1;
};

/// The order in which a node tries its candidate buffers.
enum class CandidateOrder {
  LongestFirst, ///< more segments first, then larger
  LargestFirst, ///< larger first, then more segments
  AreaFirst,    ///< larger segments x size first
  /// in the most loaded segment first (the largest bytes live at one time
  /// over the buffer's life, before any placement), then larger area
  LoadFirst,
};

/// One member of the portfolio of searches that take turns.
struct Strategy {
  CandidateOrder order = CandidateOrder::AreaFirst;
  /// Limited discrepancy passes (0, 1, 2, ... deviations from the preferred
  /// child on a path) instead of plain depth-first search.
  bool discrepancy = false;
  /// Branch at the leftmost segment of the lowest floor, not at the one with
  /// the fewest children. Fail-first jumps between time regions that share
  /// the lowest floor, so a dead end in one region is found again under
  /// every choice made in the others; leftmost finishes the bottom of one
  /// region before the next (measured: docs/packing.md).
  bool leftmost = false;
  /// Branch in any valley of the floors (a run of active segments at one
  /// floor whose neighbours are higher or have nothing to place), not only
  /// at the lowest floor: a buffer placed at a valley's floor cannot reach
  /// beyond the valley, so the search stays complete (docs/packing.md), and
  /// the most constrained valley anywhere can be branched on first.
  bool valleys = false;
};

/// Knobs, for experiments; the defaults are what pack() uses.
struct SearchConfig {
  /// Remember failed states (and solved independent parts).
  bool useMemo = true;
  /// Per-segment bound with release dates (see releaseBoundFits), used on
  /// parts whose buffers span at most releaseBoundMaxWork segments in all
  /// (its cost per node).
  bool useReleaseBound = true;
  int64_t releaseBoundMaxWork = 20000;
  /// Branch at the lowest segment with the fewest children.
  bool failFirstSegment = true;
  /// Every other Luby run (the even ones) branches in valleys
  /// (Strategy::valleys): 1 for the fail-first members, 2 for all members,
  /// 0 none. Valley runs are other early choices that the restarts sample;
  /// with 1, 58 of 72 fresh `cut` instances packed within 5 s of CPU
  /// against 56, none lost; with 2, 37 of 48 against 38; valleys in every
  /// turn of the fail-first members, 56 of 72 (docs/packing.md).
  int valleyRuns = 1;
  /// Skip "raise" children that a "place" child dominates.
  bool useDominance = true;
  /// Solve independent parts separately.
  bool useDecomposition = true;
  /// Place same-lifetime buffers stacked directly in candidate order.
  bool useSwapSymmetry = true;
  /// Every placed buffer rests on another one.
  bool useGravity = true;
  /// Take a raise that is a node's only child without making a node.
  bool compressForcedRaises = true;
  /// Upper bound on the failed-state table, in entries; the table has up to
  /// twice as many 16-byte slots (64 MiB for the default), and the table of
  /// solved parts a quarter of that.
  int64_t memoMaxEntries = int64_t(1) << 21;
  /// The searches take turns with node budgets max(firstRunNodes, 16 x the
  /// number of buffers), then twice as many each round. With one strategy and no discrepancy passes this is a
  /// single depth-first search.
  /// Diverse members because the misses are heavy-tailed: on development
  /// instances one member often packs in 0.01-0.8 s what the others miss in
  /// 5 s, and which member wins varies (docs/packing.md).
  /// The load-first members (MiniMalloc's "total" preordering) replaced
  /// limited-discrepancy area order and leftmost larger-first: on 112
  /// development and fresh instances 104 packed within 5 s of CPU against
  /// 102, in 10% less CPU time (docs/packing.md, "Load-first order").
  std::vector<Strategy> portfolio = {
      {CandidateOrder::LargestFirst, false, false},
      {CandidateOrder::AreaFirst, false, false},
      {CandidateOrder::LongestFirst, false, true},
      {CandidateOrder::AreaFirst, false, true},
      {CandidateOrder::LongestFirst, false, false},
      {CandidateOrder::LoadFirst, false, true},
      {CandidateOrder::LoadFirst, false, false},
  };
  int64_t firstRunNodes = 4096;
  /// A depth-first member's turn is a restart from the root that keeps the
  /// table of failed states. Its turns cycle through three kinds (the first
  /// turn is always the first kind):
  ///   0. its plain order. A restart in the same order skips every subtree
  ///      already refuted (at the cost of re-entering the refuted siblings
  ///      along its path), so these turns resume one search. Turns double,
  ///      so its plain search always has at least an eighth of the member's
  ///      work so far, whatever the restarts do;
  ///   1. one run in a nearby order (shuffleRestarts): each buffer's first
  ///      sort key scaled by a factor in [1/2, 2) drawn from (member, turn);
  ///   2. runs of restartUnit x luby(k) nodes, each in another nearby order
  ///      (k counting the member's runs). The misses are heavy-tailed (a run
  ///      either finds a packing early or not at all), and many short runs
  ///      sample more early choices.
  /// Without alternatePlain every turn after the first is of kind 1 (kind 2
  /// when restartUnit > 0). Luby runs alone left ResNet-50's probe, one run
  /// of ~150k nodes, to long turns of no member: 18 s instead of 2.4
  /// (docs/packing.md). Deterministic.
  bool shuffleRestarts = true;
  int64_t restartUnit = 500;
  bool alternatePlain = true;
  /// Time-order searches (SweepSearch.h) that take turns before the
  /// portfolio, with the same shares: 0 none, 1 forwards in time, 2 also
  /// backwards (each twice with sweepAlignDeaths).
  int sweepSearches = 2;
  /// The time-order searches run limited discrepancy passes rather than
  /// plain depth-first search.
  bool sweepDiscrepancy = true;
  /// Each time-order search runs twice: in its plain candidate order (gap
  /// bottom before top) and with the gap end whose neighbour dies nearer to
  /// the buffer's death first (SweepSearch's alignDeaths). Either order
  /// packs instances the other misses within 5 s (docs/packing.md).
  bool sweepAlignDeaths = true;
  /// A repair member (RepairSearch.h) takes turns too: it unplaces the
  /// buffers around where the forwards time-order searches' deepest partial
  /// packing stops and places them again with a small time-order search.
  bool repairSearch = true;
  /// Time-section proofs (SectionProof.h) take turns too.
  bool sectionProofs = true;
  /// Turns are equal shares of work (SearchBudget::work) rather than of
  /// nodes (see SkylineSolver::run).
  bool workShares = true;
  /// Memory bound, in table entries. The skyline search keeps, per segment,
  /// the buffers live there and, per buffer, the buffers overlapping it:
  /// (sum of lifetimes in segments) + 2 x (overlapping pairs) entries. The
  /// time-order searches keep only the first table. A problem whose skyline
  /// tables would exceed this bound is searched by the time-order searches
  /// alone (they find packings but prove nothing); one whose smaller table
  /// would too is not searched. The cost per node grows with the problem,
  /// there is no bound on it.
  int64_t maxTableEntries = int64_t(1) << 26;
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
