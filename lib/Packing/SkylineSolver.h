//===- SkylineSolver.h - The skyline search's state ------------*- C++ -*-===//
//
// Internal to MemfitPacking: the branch-and-bound search of SkylineSearch.cpp
// (the search itself) and SkylinePortfolio.cpp (set-up, candidate orders and
// the portfolio that runs it with the time-order searches). See the comment
// at the top of SkylineSearch.cpp for the method.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFIT_LIB_PACKING_SKYLINESOLVER_H
#define MEMFIT_LIB_PACKING_SKYLINESOLVER_H

#include "KeySet.h"
#include "SkylineSearch.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace memfit {
namespace packing {
namespace detail {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
// Independent parts are solved by nested calls; deeper than this, a node
// with several parts is searched as one (the search stays complete).
constexpr int kMaxNesting = 256;

class SkylineSolver {
public:
  SkylineSolver(const Problem &problem, int64_t capacity, const SearchConfig &config,
         SearchBudget &searchBudget)
      : P(problem), C(capacity), cfg(config), budget(searchBudget),
        n(int(problem.size.size())), S(problem.numSegs),
        failMemo(config.useMemo ? config.memoMaxEntries : 0),
        okMemo(config.useMemo ? config.memoMaxEntries / 4 : 0) {}

  SearchOutcome run(std::vector<int64_t> &offsets);

private:
  struct Frame {
    int seg;
    int64_t m;
    int candBegin, candEnd, next;
    bool triedRaise;
    int64_t discAtEntry;
    size_t trailMark;
    uint64_t key1, key2;     // state of the frame
    uint64_t entry1, entry2; // state before forced raises led to it
  };
  struct Undo {
    int idx;       // buffer (place) or ~segment (raise)
    int64_t old;   // previous floor
    size_t mfMark; // mfTrail size before the change
  };
  struct Range {
    int a, c; // segments [a, c)
    uint64_t ctx1, ctx2;
    std::vector<int> bufs; // buffers living in [a, c) that were unplaced
    bool releaseBound;     // worth its cost here
  };
  enum class Enter { Pushed, Found, Failed, Limit };

  void setup();
  void applyOrder(CandidateOrder order, uint64_t shuffle = 0);
  SearchOutcome runStrategy(size_t index, int64_t nodes);
  SearchOutcome dive(const Strategy &st, uint64_t shuffle, int64_t limit);

  bool limitReached();
  bool outOfBudget() const {
    return (budget.nodeLimit > 0 && budget.nodesUsed >= budget.nodeLimit) ||
           Clock::now() >= budget.deadline;
  }
  SearchOutcome solveRange(int a, int c);
  Enter enterNode(const Range &r);
  Enter solveParts(const Range &r, uint64_t key1, uint64_t key2);
  void place(int b, int64_t m);
  void unplace(int b, int64_t m);
  void raise(int s, int64_t v);
  void rollback(size_t mark);
  void localHash(int a, int c, uint64_t &k1, uint64_t &k2) const;
  int64_t raiseLevel(int t, int64_t m);
  bool releaseBoundFits(const Range &r);

  // Symmetry: two buffers with the same lifetime stacked directly on each
  // other can swap places. When o sits right below offset m and b was tried
  // before o in the node that placed o, placing b on o only repeats that
  // earlier branch with the two exchanged.
  bool stackedOutOfOrder(int b, int64_t m) const {
    if (!cfg.useSwapSymmetry)
      return false;
    for (int o : sameLifeLater[b])
      if (placed[o] && off[o] + P.size[o] == m)
        return true;
    return false;
  }
  // Gravity: a buffer placed at m > 0 must rest on a placed buffer that
  // overlaps it in time. One held up by raised floors alone could drop
  // below the raise, which the siblings of that raise cover.
  bool floating(int b, int64_t m) const {
    if (m == 0 || !cfg.useGravity)
      return false;
    for (int s = P.segLo[b], e = P.segHi[b]; s < e; ++s)
      if (realTop[s] == m)
        return false;
    return true;
  }
  // b may be placed at m (its floor is m everywhere) in this node; needs
  // mf[] to be up to date.
  bool isCandidate(int b, int64_t m) const {
    if (placed[b] || mf[b] != m ||
        (classPrev[b] >= 0 && !placed[classPrev[b]]))
      return false;
    return !stackedOutOfOrder(b, m) && !floating(b, m);
  }

  uint64_t segHash1(int s, int64_t v) const {
    return splitmix64(uint64_t(v) ^ segSalt1[s]);
  }
  uint64_t segHash2(int s, int64_t v) const {
    return splitmix64(uint64_t(v) * 0xD6E8FEB86659FD93ULL ^ segSalt2[s]);
  }
  // Failures under a discrepancy limit depend on the limit left and on the
  // candidate order; their keys are salted so they never meet other keys.
  uint64_t salt1() const {
    if (discLimit < 0)
      return 0;
    return splitmix64(uint64_t(discLimit - discUsed) * 0x10000 +
                      uint64_t(discLimit) * 0x100 + strategyIndex + 0x5EED);
  }
  uint64_t salt2() const {
    return discLimit < 0 ? 0 : splitmix64(salt1() ^ 0xABCDEF12345ULL);
  }

  const Problem &P;
  int64_t C;
  SearchConfig cfg;
  SearchBudget &budget;
  int n, S;

  std::vector<std::vector<int>> live;      // buffers live per segment
  std::vector<std::vector<int>> neighbors; // time-overlapping buffers
  std::vector<int> classPrev;              // previous identical buffer
  std::vector<std::vector<int>> sameLifeLater;
  std::vector<int> rank; // position in the candidate order
  std::vector<int> bySegLo, firstAt; // buffers grouped by first segment
  std::vector<int64_t> floor_, rem;
  // Per buffer, the most bytes live in one segment of its life (LoadFirst).
  std::vector<int64_t> peakLoad;
  // Highest top of a placed buffer per segment, and its old values (undone
  // in step with the trail).
  std::vector<int64_t> realTop, topTrail;
  std::vector<int> cross; // unplaced buffers live in both s and s + 1
  std::vector<char> placed;
  std::vector<int64_t> off;

  // Hash of the state: XOR over unplaced buffers and over (segment, floor) of
  // active segments.
  uint64_t h1 = 0, h2 = 0;
  std::vector<uint64_t> bufSalt1, bufSalt2, segSalt1, segSalt2;
  KeySet failMemo, okMemo;

  std::vector<Frame> stack;
  std::vector<int> pool;
  std::vector<Undo> trail;
  std::vector<int64_t> acc;
  // Per unplaced buffer: the highest floor over its life, kept up to date
  // by place() and raise(); old values are undone in step with the trail.
  std::vector<int64_t> mf;
  std::vector<std::pair<int, int64_t>> mfTrail;
  void liftMf(int b, int64_t v) {
    if (mf[b] < v) {
      mfTrail.push_back({b, mf[b]});
      mf[b] = v;
    }
  }
  std::vector<std::pair<int64_t, int>> sortBuf;

  int nesting = 0; // solveRange calls on the C++ stack

  // Portfolio state.
  size_t strategyIndex = 0;
  std::vector<int64_t> nextPass; // per strategy: next discrepancy limit
  std::vector<int64_t> turnsRun; // per strategy: turns taken so far
  std::vector<int64_t> lubyRuns; // per strategy: restarts within turns
  int64_t runLimit = 0;          // node count at which this run stops
  bool valleyRun = false;        // this run branches in valleys
  // Limited discrepancy search: taking any child but the first of a node is
  // a discrepancy; a pass allows at most discLimit on a path (-1: any).
  int64_t discLimit = -1;
  int64_t discUsed = 0;
  bool discCut = false; // some child was skipped for the limit
};

} // namespace detail
} // namespace packing
} // namespace memfit

#endif // MEMFIT_LIB_PACKING_SKYLINESOLVER_H
