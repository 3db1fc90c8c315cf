//===- SkylineSearch.cpp - Exact search at a fixed capacity ---------------===//
//
// Branch and bound over "skyline" placements.
//
// State: for every time segment a floor (no unplaced buffer live in that
// segment may start below it) and the bytes of unplaced buffers live there.
// A node takes an active segment t whose floor m is the lowest and branches:
//   (A) for each unplaced buffer b live at t whose floor is m over its whole
//       lifetime: place b at offset m (floors over b's lifetime become
//       m + size(b));
//   (B) otherwise nothing starts at offset m in segment t: raise the floor of
//       t to the lowest offset at which the lowest buffer of t can still sit.
// Every packing can be pushed down until each buffer rests on another
// buffer or on offset 0; such a packing is reached by this branching, so the
// search is complete (docs/packing.md has the argument). Placements happen in
// nondecreasing offset order.
//
// Pruning and reductions:
//   - per segment, bytes still to place must fit above the floor; with
//     release dates (each buffer's current lowest possible offset) this is a
//     single-machine scheduling bound per segment;
//   - identical buffers are placed in index order; two same-lifetime buffers
//     stacked directly on each other are placed in candidate order;
//   - a raise is skipped when a candidate could drop into the space it leaves
//     empty; a buffer may not rest on raised floors alone (gravity);
//   - when the unplaced buffers fall into parts that are never live at the
//     same time, each part is solved on its own;
//   - failed states (unplaced set + floors of active segments) are remembered
//     by a 128-bit hash.
// Several candidate orders, depth-first and limited-discrepancy, take turns
// with doubling node budgets, sharing the table of failed states.
//
//===----------------------------------------------------------------------===//

#include "SkylineSearch.h"
#include "KeySet.h"
#include "SweepSearch.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace memfit {
namespace packing {
namespace detail {

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
// Independent parts are solved by nested calls; deeper than this, a node
// with several parts is searched as one (the search stays complete).
constexpr int kMaxNesting = 256;

class Solver {
public:
  Solver(const Problem &problem, int64_t capacity, const SearchConfig &config,
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
  void applyOrder(CandidateOrder order);
  SearchOutcome runStrategy(size_t index, int64_t nodes);

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
  int64_t runLimit = 0;          // node count at which this run stops
  // Limited discrepancy search: taking any child but the first of a node is
  // a discrepancy; a pass allows at most discLimit on a path (-1: any).
  int64_t discLimit = -1;
  int64_t discUsed = 0;
  bool discCut = false; // some child was skipped for the limit
};

void Solver::setup() {
  floor_.assign(S, 0);
  rem.assign(S, 0);
  realTop.assign(S, 0);
  topTrail.clear();
  cross.assign(S, 0);
  placed.assign(n, 0);
  off.assign(n, 0);
  for (int b = 0; b < n; ++b) {
    for (int s = P.segLo[b]; s < P.segHi[b]; ++s)
      rem[s] += P.size[b];
    for (int s = P.segLo[b]; s + 1 < P.segHi[b]; ++s)
      ++cross[s];
  }

  // Identical buffers: placed in index order.
  classPrev.assign(n, -1);
  std::vector<int> byKey(n);
  std::iota(byKey.begin(), byKey.end(), 0);
  std::sort(byKey.begin(), byKey.end(), [&](int a, int b) {
    if (P.segLo[a] != P.segLo[b])
      return P.segLo[a] < P.segLo[b];
    if (P.segHi[a] != P.segHi[b])
      return P.segHi[a] < P.segHi[b];
    if (P.size[a] != P.size[b])
      return P.size[a] < P.size[b];
    return a < b;
  });
  for (int i = 1; i < n; ++i) {
    int a = byKey[i - 1], b = byKey[i];
    if (P.segLo[a] == P.segLo[b] && P.segHi[a] == P.segHi[b] &&
        P.size[a] == P.size[b])
      classPrev[b] = a;
  }

  // Buffers grouped by first segment, and time-overlap neighbours.
  bySegLo.resize(n);
  std::iota(bySegLo.begin(), bySegLo.end(), 0);
  std::stable_sort(bySegLo.begin(), bySegLo.end(),
                   [&](int a, int b) { return P.segLo[a] < P.segLo[b]; });
  firstAt.assign(S + 1, n);
  for (int i = n - 1; i >= 0; --i)
    firstAt[P.segLo[bySegLo[i]]] = i;
  for (int s = S - 1; s >= 0; --s)
    firstAt[s] = std::min(firstAt[s], firstAt[s + 1]);
  neighbors.assign(n, {});
  for (int i = 0; i < n; ++i) {
    int a = bySegLo[i];
    for (int k = i + 1; k < n; ++k) {
      int b = bySegLo[k];
      if (P.segLo[b] >= P.segHi[a])
        break;
      neighbors[a].push_back(b);
      neighbors[b].push_back(a);
    }
  }

  // Hash salts, fixed seeds: the search is deterministic.
  bufSalt1.resize(n);
  bufSalt2.resize(n);
  h1 = h2 = 0;
  for (int b = 0; b < n; ++b) {
    bufSalt1[b] = splitmix64(0x1234567ULL + uint64_t(b) * 2);
    bufSalt2[b] = splitmix64(0x89ABCDEFULL + uint64_t(b) * 2 + 1);
    h1 ^= bufSalt1[b];
    h2 ^= bufSalt2[b];
  }
  segSalt1.resize(S);
  segSalt2.resize(S);
  for (int s = 0; s < S; ++s) {
    segSalt1[s] = splitmix64(0xC0FFEEULL ^ (uint64_t(s) << 20));
    segSalt2[s] = splitmix64(0xFACADEULL ^ (uint64_t(s) << 21) ^ 0x5555ULL);
  }
  for (int s = 0; s < S; ++s)
    if (rem[s] > 0) {
      h1 ^= segHash1(s, 0);
      h2 ^= segHash2(s, 0);
    }
  acc.assign(S, 0);
  mf.assign(n, 0);
  mfTrail.clear();

  // Offsets of a packing pushed down are sums of sizes, multiples of their
  // gcd: the capacity can be rounded down to one.
  int64_t unit = 0;
  for (int b = 0; b < n; ++b)
    unit = std::gcd(unit, P.size[b]);
  if (unit > 0)
    C = C / unit * unit;
}

void Solver::applyOrder(CandidateOrder order) {
  std::vector<int> ord(n);
  std::iota(ord.begin(), ord.end(), 0);
  auto key = [&](int b, int64_t &k1, int64_t &k2) {
    int64_t len = P.segHi[b] - P.segLo[b];
    switch (order) {
    case CandidateOrder::LongestFirst:
      k1 = len;
      k2 = P.size[b];
      break;
    case CandidateOrder::LargestFirst:
      k1 = P.size[b];
      k2 = len;
      break;
    case CandidateOrder::AreaFirst:
    default:
      // Saturating: sizes are below 2^62, lengths below 2^31.
      k1 = P.size[b] > kInf / std::max<int64_t>(len, 1) ? kInf
                                                        : P.size[b] * len;
      k2 = len;
      break;
    }
  };
  std::stable_sort(ord.begin(), ord.end(), [&](int a, int b) {
    int64_t a1, a2, b1, b2;
    key(a, a1, a2);
    key(b, b1, b2);
    if (a1 != b1)
      return a1 > b1;
    if (a2 != b2)
      return a2 > b2;
    return a < b; // identical buffers keep index order
  });
  rank.assign(n, 0);
  for (int i = 0; i < n; ++i)
    rank[ord[i]] = i;
  live.assign(S, {});
  for (int b : ord)
    for (int s = P.segLo[b]; s < P.segHi[b]; ++s)
      live[s].push_back(b);

  // Same-lifetime buffers of other sizes that the order tries later.
  sameLifeLater.assign(n, {});
  std::vector<int> byLife(n);
  std::iota(byLife.begin(), byLife.end(), 0);
  std::sort(byLife.begin(), byLife.end(), [&](int a, int b) {
    if (P.segLo[a] != P.segLo[b])
      return P.segLo[a] < P.segLo[b];
    if (P.segHi[a] != P.segHi[b])
      return P.segHi[a] < P.segHi[b];
    return a < b;
  });
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && P.segLo[byLife[j]] == P.segLo[byLife[i]] &&
           P.segHi[byLife[j]] == P.segHi[byLife[i]])
      ++j;
    for (int x = i; x < j; ++x)
      for (int y = i; y < j; ++y) {
        int a = byLife[x], b = byLife[y];
        if (rank[b] > rank[a] && P.size[a] != P.size[b])
          sameLifeLater[a].push_back(b);
      }
    i = j;
  }
}

void Solver::place(int b, int64_t m) {
  int64_t sz = P.size[b];
  for (int s = P.segLo[b], e = P.segHi[b]; s < e; ++s) {
    h1 ^= segHash1(s, floor_[s]);
    h2 ^= segHash2(s, floor_[s]);
    floor_[s] = m + sz;
    rem[s] -= sz;
    topTrail.push_back(realTop[s]);
    realTop[s] = m + sz;
    if (rem[s] > 0) {
      h1 ^= segHash1(s, floor_[s]);
      h2 ^= segHash2(s, floor_[s]);
    }
  }
  for (int s = P.segLo[b], e = P.segHi[b] - 1; s < e; ++s)
    --cross[s];
  h1 ^= bufSalt1[b];
  h2 ^= bufSalt2[b];
  placed[b] = 1;
  off[b] = m;
  trail.push_back({b, m, mfTrail.size()});
  for (int j : neighbors[b])
    if (!placed[j])
      liftMf(j, m + sz);
}

void Solver::unplace(int b, int64_t m) {
  int64_t sz = P.size[b];
  for (int s = P.segHi[b] - 1, e = P.segLo[b]; s >= e; --s) {
    realTop[s] = topTrail.back();
    topTrail.pop_back();
    if (rem[s] > 0) {
      h1 ^= segHash1(s, floor_[s]);
      h2 ^= segHash2(s, floor_[s]);
    }
    rem[s] += sz;
    floor_[s] = m;
    h1 ^= segHash1(s, m);
    h2 ^= segHash2(s, m);
  }
  for (int s = P.segLo[b], e = P.segHi[b] - 1; s < e; ++s)
    ++cross[s];
  h1 ^= bufSalt1[b];
  h2 ^= bufSalt2[b];
  placed[b] = 0;
}

void Solver::raise(int s, int64_t v) {
  // Only called on active segments.
  trail.push_back({~s, floor_[s], mfTrail.size()});
  h1 ^= segHash1(s, floor_[s]) ^ segHash1(s, v);
  h2 ^= segHash2(s, floor_[s]) ^ segHash2(s, v);
  floor_[s] = v;
  for (int b : live[s])
    if (!placed[b])
      liftMf(b, v);
}

void Solver::rollback(size_t mark) {
  while (trail.size() > mark) {
    Undo u = trail.back();
    trail.pop_back();
    while (mfTrail.size() > u.mfMark) {
      mf[mfTrail.back().first] = mfTrail.back().second;
      mfTrail.pop_back();
    }
    if (u.idx >= 0) {
      unplace(u.idx, u.old);
    } else {
      int s = ~u.idx;
      h1 ^= segHash1(s, floor_[s]) ^ segHash1(s, u.old);
      h2 ^= segHash2(s, floor_[s]) ^ segHash2(s, u.old);
      floor_[s] = u.old;
      }
  }
}

// The part of the state hash that belongs to segments [a, c) and the
// unplaced buffers living there.
void Solver::localHash(int a, int c, uint64_t &k1, uint64_t &k2) const {
  k1 = k2 = 0;
  for (int i = firstAt[a], e = firstAt[c]; i < e; ++i) {
    int b = bySegLo[i];
    if (!placed[b]) {
      k1 ^= bufSalt1[b];
      k2 ^= bufSalt2[b];
    }
  }
  for (int s = a; s < c; ++s)
    if (rem[s] > 0) {
      k1 ^= segHash1(s, floor_[s]);
      k2 ^= segHash2(s, floor_[s]);
    }
}

// Branch (B): nothing starts at offset m in segment t. Returns the lowest
// offset at which the lowest remaining buffer of t can then sit, or kInf
// when the branch is empty or dominated.
int64_t Solver::raiseLevel(int t, int64_t m) {
  int64_t level = kInf;
  for (int b : live[t]) {
    if (placed[b])
      continue;
    if (mf[b] > m) {
      level = std::min(level, mf[b]);
      continue;
    }
    // b could only rise above m by resting on a remaining buffer j that
    // overlaps it in time. If b is the lowest buffer of t, j is not live at t.
    // Dominance: if no remaining buffer can reach into [m, m + size(b))
    // during b's lifetime, that region stays free in this branch and b could
    // be moved down into it, which branch (A) covers.
    bool blocked = false;
    int64_t support = kInf;
    for (int j : neighbors[b]) {
      if (placed[j])
        continue;
      int64_t mfj = mf[j];
      if (mfj < m + P.size[b])
        blocked = true;
      if (P.segLo[j] <= t && t < P.segHi[j])
        continue;
      support = std::min(support, mfj + P.size[j]);
    }
    if (!blocked && cfg.useDominance)
      return kInf;
    level = std::min(level, support);
  }
  return level;
}

// Every remaining buffer b sits at or above mf(b), the highest floor over its
// life. In a segment the remaining buffers form a stack, so for every r the
// buffers with mf(b) >= r need r + (their total size) <= C (single-machine
// scheduling with release dates). Buffers are taken by decreasing mf, and
// each adds its size to the segments it lives in.
bool Solver::releaseBoundFits(const Range &r) {
  sortBuf.clear();
  for (int b : r.bufs)
    if (!placed[b])
      sortBuf.push_back({mf[b], b});
  std::sort(sortBuf.begin(), sortBuf.end(),
            [](const std::pair<int64_t, int> &x,
               const std::pair<int64_t, int> &y) { return x.first > y.first; });
  for (int s = r.a; s < r.c; ++s)
    acc[s] = 0;
  for (const auto &e : sortBuf) {
    int b = e.second;
    int64_t limit = C - e.first;
    for (int s = P.segLo[b], end = P.segHi[b]; s < end; ++s) {
      acc[s] += P.size[b];
      if (acc[s] > limit)
        return false;
    }
  }
  return true;
}

bool Solver::limitReached() {
  ++budget.nodesUsed;
  if (runLimit > 0 && budget.nodesUsed >= runLimit)
    return true;
  if (budget.nodeLimit > 0 && budget.nodesUsed >= budget.nodeLimit)
    return true;
  // Nodes cost O(segments): look at the clock often enough either way.
  if ((S > 4096 || (budget.nodesUsed & 63) == 0) &&
      Clock::now() >= budget.deadline)
    return true;
  return false;
}

// The remaining buffers of r fall into independent parts (no buffer of one
// is live at the same time as a buffer of another). Solve them one after the
// other; the node fails as soon as one part does.
Solver::Enter Solver::solveParts(const Range &r, uint64_t key1,
                                 uint64_t key2) {
  struct Part {
    int a, c, count;
    bool knownOk;
  };
  std::vector<Part> parts;
  for (int s = r.a; s < r.c; ++s) {
    if (rem[s] == 0)
      continue;
    int a = s;
    while (s + 1 < r.c && cross[s] > 0)
      ++s;
    Part p{a, s + 1, 0, false};
    for (int i = firstAt[p.a], e = firstAt[p.c]; i < e; ++i)
      p.count += !placed[bySegLo[i]];
    uint64_t k1, k2;
    localHash(p.a, p.c, k1, k2);
    k1 ^= salt1();
    k2 ^= salt2();
    if (failMemo.contains(k1, k2)) {
      if (discLimit >= 0)
        discCut = true;
      failMemo.insert(key1, key2);
      return Enter::Failed;
    }
    p.knownOk = okMemo.contains(k1, k2);
    parts.push_back(p);
  }
  // Parts not yet known to fit first, smallest first: cheap refutations.
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Part &x, const Part &y) {
                     if (x.knownOk != y.knownOk)
                       return y.knownOk;
                     return x.count < y.count;
                   });
  size_t mark = trail.size();
  const int64_t disc0 = discUsed;
  for (const Part &p : parts) {
    discUsed = disc0;
    SearchOutcome o = solveRange(p.a, p.c);
    if (o == SearchOutcome::Limit)
      return Enter::Limit;
    if (o == SearchOutcome::Infeasible) {
      rollback(mark);
      failMemo.insert(key1, key2);
      return Enter::Failed;
    }
  }
  return Enter::Found;
}

Solver::Enter Solver::enterNode(const Range &r) {
  const uint64_t entry1 = h1 ^ r.ctx1 ^ salt1();
  const uint64_t entry2 = h2 ^ r.ctx2 ^ salt2();
  uint64_t key1 = entry1, key2 = entry2;
  auto fail = [&]() {
    failMemo.insert(key1, key2);
    if (key1 != entry1 || key2 != entry2)
      failMemo.insert(entry1, entry2);
    return Enter::Failed;
  };
  // Segments with nothing to place at their floor are raised on the spot
  // (a node with a single child), then the state is looked at again.
  for (;;) {
    key1 = h1 ^ r.ctx1 ^ salt1();
    key2 = h2 ^ r.ctx2 ^ salt2();
    if (failMemo.contains(key1, key2)) {
      // A failure under a discrepancy limit may have been cut short.
      if (discLimit >= 0)
        discCut = true;
      key1 = entry1;
      key2 = entry2;
      return fail();
    }

    // Lowest floor among active segments; count the independent parts.
    int64_t m = kInf;
    int numParts = 0;
    bool inPart = false;
    for (int s = r.a; s < r.c; ++s) {
      if (rem[s] > 0) {
        m = std::min(m, floor_[s]);
        if (!inPart)
          ++numParts;
        inPart = cross[s] > 0;
      } else {
        inPart = false;
      }
    }
    if (numParts == 0)
      return Enter::Found;
    if (r.releaseBound && !releaseBoundFits(r))
      return fail();
    if (numParts > 1 && cfg.useDecomposition && nesting < kMaxNesting) {
      Enter e = solveParts(r, key1, key2);
      if (e == Enter::Failed)
        return fail();
      return e;
    }

    // Any active segment at the lowest floor may be branched on; take the
    // one with the fewest children (fail first), leftmost on ties.
    int t = -1;
    const int begin = int(pool.size());
    int bestChildren = std::numeric_limits<int>::max();
    for (int s = r.a; s < r.c; ++s) {
      if (rem[s] == 0 || floor_[s] != m)
        continue;
      int mark = int(pool.size());
      int children = (m + rem[s] < C) ? 1 : 0;
      for (int b : live[s]) {
        if (isCandidate(b, m)) {
          pool.push_back(b);
          if (++children >= bestChildren)
            break;
        }
      }
      if (children < bestChildren) {
        bestChildren = children;
        t = s;
        // Keep this segment's candidates at the front of the frame's range.
        std::copy(pool.begin() + mark, pool.end(), pool.begin() + begin);
        pool.resize(begin + (pool.size() - mark));
        if (children == 0 || !cfg.failFirstSegment)
          break;
      } else {
        pool.resize(mark);
      }
    }
    if (bestChildren == 0)
      return fail();
    if (int(pool.size()) == begin && cfg.compressForcedRaises) {
      // Only the raise: take it now.
      int64_t level = raiseLevel(t, m);
      if (level >= kInf || level + rem[t] > C)
        return fail();
      if (limitReached())
        return Enter::Limit;
      raise(t, level);
      continue;
    }
    Frame f;
    f.seg = t;
    f.m = m;
    f.candBegin = begin;
    f.candEnd = int(pool.size());
    f.next = f.candBegin;
    f.triedRaise = false;
    f.discAtEntry = discUsed;
    f.trailMark = trail.size();
    f.key1 = key1;
    f.key2 = key2;
    f.entry1 = entry1;
    f.entry2 = entry2;
    stack.push_back(f);
    return Enter::Pushed;
  }
}

// Decides the unplaced buffers living in segments [a, c), all of which lie
// within it. On Found their placements stay on the trail.
SearchOutcome Solver::solveRange(int a, int c) {
  // Parts nest as C++ calls; the depth is bounded (see kMaxNesting).
  struct Nest {
    int &depth;
    explicit Nest(int &d) : depth(d) { ++depth; }
    ~Nest() { --depth; }
  } nest(nesting);
  Range r;
  r.a = a;
  r.c = c;
  uint64_t l1, l2;
  localHash(a, c, l1, l2);
  const uint64_t rootSalt1 = salt1(), rootSalt2 = salt2();
  // Keys are local to the range: the rest of the state does not change
  // while the range is searched.
  r.ctx1 = h1 ^ l1;
  r.ctx2 = h2 ^ l2;
  int64_t work = 0;
  for (int i = firstAt[a], e = firstAt[c]; i < e; ++i)
    if (!placed[bySegLo[i]]) {
      r.bufs.push_back(bySegLo[i]);
      work += P.segHi[bySegLo[i]] - P.segLo[bySegLo[i]];
    }
  r.releaseBound = cfg.useReleaseBound && work <= cfg.releaseBoundMaxWork;

  const size_t base = stack.size();
  const size_t poolBase = pool.size();
  auto done = [&](SearchOutcome o) {
    stack.resize(base);
    pool.resize(poolBase);
    if (o == SearchOutcome::Found)
      okMemo.insert(l1 ^ rootSalt1, l2 ^ rootSalt2);
    return o;
  };

  Enter e = enterNode(r);
  if (e == Enter::Found)
    return done(SearchOutcome::Found);
  if (e == Enter::Limit)
    return done(SearchOutcome::Limit);
  if (e == Enter::Failed)
    return done(SearchOutcome::Infeasible);

  while (stack.size() > base) {
    const size_t fi = stack.size() - 1;
    rollback(stack[fi].trailMark);
    bool descended = false;
    while (stack[fi].next < stack[fi].candEnd) {
      Frame &f = stack[fi];
      discUsed = f.discAtEntry + (f.next > f.candBegin ? 1 : 0);
      if (discLimit >= 0 && discUsed > discLimit) {
        // This and every later child would exceed the limit.
        discCut = true;
        f.next = f.candEnd;
        f.triedRaise = true;
        break;
      }
      int b = pool[f.next++];
      if (limitReached())
        return done(SearchOutcome::Limit);
      place(b, f.m);
      e = enterNode(r);
      if (e == Enter::Found)
        return done(SearchOutcome::Found);
      if (e == Enter::Limit)
        return done(SearchOutcome::Limit);
      if (e == Enter::Pushed) {
        descended = true;
        break;
      }
      rollback(stack[fi].trailMark);
    }
    if (descended)
      continue;
    if (!stack[fi].triedRaise) {
      Frame &f = stack[fi];
      f.triedRaise = true;
      discUsed = f.discAtEntry + (f.candEnd > f.candBegin ? 1 : 0);
      int t = f.seg;
      int64_t m = f.m;
      if (discLimit >= 0 && discUsed > discLimit) {
        discCut = true;
      } else if (m + rem[t] < C) {
        // (Raising wastes bytes in segment t; with no slack it cannot work.)
        int64_t level = raiseLevel(t, m);
        if (level < kInf && level + rem[t] <= C) {
          if (limitReached())
            return done(SearchOutcome::Limit);
          raise(t, level);
          e = enterNode(r);
          if (e == Enter::Found)
            return done(SearchOutcome::Found);
          if (e == Enter::Limit)
            return done(SearchOutcome::Limit);
          if (e == Enter::Pushed)
            continue;
          rollback(stack[fi].trailMark);
        }
      }
    }
    // Every child failed.
    Frame &f = stack[fi];
    failMemo.insert(f.key1, f.key2);
    failMemo.insert(f.entry1, f.entry2);
    pool.resize(f.candBegin);
    stack.pop_back();
  }
  return done(SearchOutcome::Infeasible);
}

// One turn of strategy `index` with a budget of `nodes` search nodes.
// Infeasible means proven.
SearchOutcome Solver::runStrategy(size_t index, int64_t nodes) {
  const Strategy &st = cfg.portfolio[index];
  strategyIndex = index;
  applyOrder(st.order);
  runLimit = budget.nodesUsed + nodes;
  SearchOutcome o = SearchOutcome::Limit;
  while (true) {
    discLimit = st.discrepancy ? nextPass[index] : -1;
    discUsed = 0;
    discCut = false;
    o = solveRange(0, S);
    if (o != SearchOutcome::Found) {
      rollback(0);
      stack.clear();
      pool.clear();
    }
    if (o == SearchOutcome::Infeasible && discLimit >= 0 && discCut) {
      // Only this pass failed: allow one more discrepancy.
      ++nextPass[index];
      if (nextPass[index] > n + 2LL * S)
        nextPass[index] = -1; // more than any path has: plain search
      continue;
    }
    break;
  }
  return o;
}

SearchOutcome Solver::run(std::vector<int64_t> &offsets) {
  setup();
  for (int s = 0; s < S; ++s)
    if (rem[s] > C)
      return SearchOutcome::Infeasible;
  for (int b = 0; b < n; ++b)
    if (P.size[b] > C)
      return SearchOutcome::Infeasible;
  std::vector<Strategy> defaults(1);
  if (cfg.portfolio.empty())
    cfg.portfolio = defaults;
  nextPass.assign(cfg.portfolio.size(), 0);
  if (cfg.portfolio.size() == 1 && !cfg.portfolio[0].discrepancy) {
    // A single depth-first search: no turns.
    applyOrder(cfg.portfolio[0].order);
    SearchOutcome o = solveRange(0, S);
    if (o == SearchOutcome::Found)
      offsets = off;
    return o;
  }
  // The time-order searches, forwards and backwards in time (incomplete:
  // they find packings, only the skyline searches prove infeasibility).
  std::vector<SweepSearch> sweeps;
  for (int i = 0; i < cfg.sweepSearches && i < 2; ++i)
    sweeps.emplace_back(P, C, /*reversed=*/i == 1);
  // A first turn long enough for a few dives to the bottom of the tree.
  int64_t turn = std::max<int64_t>({cfg.firstRunNodes, 16 * int64_t(n), 1});
  while (true) {
    for (SweepSearch &sweep : sweeps) {
      if (sweep.resume(budget, turn, offsets) == SweepSearch::Outcome::Found)
        return SearchOutcome::Found;
      if (outOfBudget())
        return SearchOutcome::Limit;
    }
    for (size_t i = 0; i < cfg.portfolio.size(); ++i) {
      SearchOutcome o = runStrategy(i, turn);
      if (o == SearchOutcome::Found) {
        offsets = off;
        return o;
      }
      if (o == SearchOutcome::Infeasible)
        return o;
      // Limit: out of this turn's nodes, or out of the whole budget.
      if (outOfBudget())
        return SearchOutcome::Limit;
    }
    if (turn < kInf / 4)
      turn *= 2;
  }
}

} // namespace

SearchOutcome solveAtCapacity(const Problem &problem, int64_t capacity,
                              SearchBudget &budget,
                              std::vector<int64_t> &offsets,
                              const SearchConfig &config) {
  if (Clock::now() >= budget.deadline ||
      (budget.nodeLimit > 0 && budget.nodesUsed >= budget.nodeLimit))
    return SearchOutcome::Limit;
  int n = int(problem.size.size());
  int64_t work = 0;
  for (int b = 0; b < n; ++b)
    work += problem.segHi[b] - problem.segLo[b];
  std::vector<int> lo(problem.segLo);
  std::sort(lo.begin(), lo.end());
  int64_t pairs = 0;
  for (int b = 0; b < n; ++b) // buffers starting within b's life, after it
    pairs += (std::lower_bound(lo.begin(), lo.end(), problem.segHi[b]) -
              std::upper_bound(lo.begin(), lo.end(), problem.segLo[b]));
  if (work + 2 * pairs <= config.maxTableEntries) {
    Solver solver(problem, capacity, config, budget);
    return solver.run(offsets);
  }
  if (work <= config.maxTableEntries) {
    budget.scope = std::max(budget.scope, SearchScope::SweepOnly);
    return searchInTimeOrder(problem, capacity, budget, offsets);
  }
  budget.scope = SearchScope::None;
  return SearchOutcome::Limit;
}

} // namespace detail
} // namespace packing
} // namespace memfit
