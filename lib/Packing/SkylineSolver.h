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

#include <algorithm>
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
        okMemo(config.useMemo ? config.memoMaxEntries / 4 : 0),
        whyMemo(config.useMemo && config.localBackjumps
                    ? config.memoMaxEntries / 2
                    : 0),
        localMemo(config.useMemo && config.localNogoods
                      ? config.memoMaxEntries / 2
                      : 0) {}

  SearchOutcome run(std::vector<int64_t> &offsets);

private:
  // Why a node failed: the segments whose floors, placed buffers and
  // unplaced buffers its refutation read, or the whole state (`all`). See
  // "Local backjumps" in docs/packing.md. A set of at most kWhySegs
  // segments (explaining() is off on larger problems).
  static constexpr int kWhyWords = 8, kWhySegs = 64 * kWhyWords;
  struct Why {
    uint64_t bits[kWhyWords] = {0};
    bool all = false;
    void seg(int s) { bits[s >> 6] |= uint64_t(1) << (s & 63); }
    // Bits [x, y) of word i, as a mask.
    static uint64_t mask(int i, int x, int y) {
      int lo = std::max(x - 64 * i, 0), hi = std::min(y - 64 * i, 64);
      if (lo >= hi)
        return 0;
      uint64_t m = hi == 64 ? ~uint64_t(0) : (uint64_t(1) << hi) - 1;
      return m & ~((uint64_t(1) << lo) - 1);
    }
    void add(int x, int y) { // segments [x, y)
      for (int i = x >> 6; i < kWhyWords && 64 * i < y; ++i)
        bits[i] |= mask(i, x, y);
    }
    void add(const Why &w) {
      all = all || w.all;
      for (int i = 0; i < kWhyWords; ++i)
        bits[i] |= w.bits[i];
    }
    bool has(int s) const { return bits[s >> 6] >> (s & 63) & 1; }
    bool meets(int x, int y) const { // any segment of [x, y)
      for (int i = x >> 6; i < kWhyWords && 64 * i < y; ++i)
        if (bits[i] & mask(i, x, y))
          return true;
      return false;
    }
  };
  struct Frame {
    int seg;
    int64_t m;
    int candBegin, candEnd, next;
    bool triedRaise;
    int64_t discAtEntry;
    size_t trailMark;
    uint64_t key1, key2;     // state of the frame
    uint64_t entry1, entry2; // state before forced raises led to it
    Why why;    // what the refutations of the children tried so far read
    Why before; // what the forced raises that led to the frame read
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
  // Local backjumps (SearchConfig::localBackjumps).
  bool explaining() const {
    return cfg.localBackjumps && discLimit < 0 && S <= kWhySegs;
  }
  // Adds to w a segment of b's life where the floor is mf(b): b's release
  // date stays as high in any state that agrees there.
  void addRelease(Why &w, int b) const {
    for (int s = P.segLo[b]; s < P.segHi[b]; ++s)
      if (floor_[s] >= mf[b]) {
        w.seg(s);
        return;
      }
    addLifetime(w, b);
  }
  // Adds why unplaced b, live at t, is not a candidate at floor m (or is).
  void addCandidateReads(Why &w, int b, int64_t m) const;
  void addLifetime(Why &w, int b) const { w.add(P.segLo[b], P.segHi[b]); }
  void branchReads(const Range &r, int t, int64_t m, bool raiseRead, Why &w);
  size_t backjumpTarget(size_t base, size_t fi, const Why &w);
  // Local nogoods (SearchConfig::localNogoods): a refuted frame's state
  // restricted to the segments its refutation read, remembered per pattern
  // of segments, and looked up where a frame at the same segment is made.
  struct Pattern {
    Why segsRead;
    std::vector<int> segs, bufs; // the segments; the buffers living there
  };
  void localKey(int pattern, uint64_t &k1, uint64_t &k2);
  void rememberLocal(int t, const Why &w);
  bool knownLocalFailure(int t);
  // An independent part [a, c) of r failed: that reads the part and where
  // it ends on either side.
  void partWhy(const Range &, int a, int c) {
    lastWhy = Why();
    lastWhy.add(a, c);
  }
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
  // For failed states whose refutation read only a range of segments, that
  // range (packed by packWhy), so that a later hit explains itself too.
  KeyMap whyMemo;
  KeySet localMemo;
  std::vector<Pattern> patterns;
  std::vector<std::vector<int>> patternsAt; // per segment: pattern ids
  static constexpr uint32_t kAllWhy = 0xFFFFFFFFu;
  static uint32_t packWhy(const Why &w) { // the segments' hull
    int a = -1, c = -1;
    for (int s = 0; s < kWhySegs && !w.all; ++s)
      if (w.has(s)) {
        if (a < 0)
          a = s;
        c = s + 1;
      }
    if (w.all || a < 0)
      return kAllWhy;
    return uint32_t(a) << 16 | uint32_t(c);
  }
  static Why unpackWhy(uint32_t v) {
    Why w;
    if (v == kAllWhy)
      w.all = true;
    else
      w.add(int(v >> 16), int(v & 0xFFFF));
    return w;
  }
  // Remembers a failed state with what its refutation read.
  void failed(uint64_t k1, uint64_t k2, const Why &w) {
    failMemo.insert(k1, k2);
    if (explaining() && !w.all)
      whyMemo.insert(k1, k2, packWhy(w));
  }

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

  // Activity (SearchConfig::activityBranching): per segment, the dead ends
  // found there (a segment with no child, a raise that cannot fit, the
  // release-date bound overflowing it), each counted with a weight that
  // grows by 0.1% per dead end, so recent ones count more (as the variable
  // activity of conflict-driven SAT solvers). Kept across turns.
  std::vector<double> activity;
  double activityInc = 1;
  void bump(int s) {
    activity[s] += activityInc;
    activityInc *= 1.001;
    if (activityInc > 1e100) {
      for (double &a : activity)
        a *= 1e-100;
      activityInc *= 1e-100;
    }
  }
  // Branching by activity: a segment with no child fails the node and one
  // with one child is forced, so those go first (lower floor, then
  // leftmost, on ties); among the others, the most active (leftmost on
  // ties).
  static bool activityBetter(int children, int64_t floor, double act,
                             int bestChildren, int64_t bestFloor,
                             double bestAct) {
    const int c = std::min(children, 2), cb = std::min(bestChildren, 2);
    if (c != cb)
      return c < cb;
    return c < 2 ? floor < bestFloor : act > bestAct;
  }
  Why lastWhy;     // set by enterNode and solveParts when they fail

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
