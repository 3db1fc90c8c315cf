//===- SkylineSearch.cpp - Exact search at a fixed capacity ---------------===//
//
// Branch and bound over "skyline" placements.
//
// State: for every time segment a floor (no unplaced buffer live in that
// segment may start below it) and the bytes of unplaced buffers live there.
// A node takes the active segment t with the lowest floor m (leftmost on
// ties) and branches:
//   (A) for each unplaced buffer b live at t whose floor is m over its whole
//       lifetime: place b at offset m (floors over b's lifetime become
//       m + size(b));
//   (B) otherwise nothing starts at offset m in segment t: raise the floor of
//       t to the lowest offset at which the lowest buffer of t can still sit.
// Every packing can be pushed down until each buffer rests on a floor or on
// another buffer; such a packing is reached by this branching, so the search
// is complete (docs/packing.md has the argument).
//
// Pruning:
//   - per segment, floor + bytes still to place must fit the capacity (with
//     the floor taken as the lowest offset any remaining buffer there can
//     reach);
//   - identical buffers (same lifetime and size) are placed in index order;
//   - states (unplaced set + floors of active segments) that failed are
//     remembered by a 128-bit hash and not searched again.
//
//===----------------------------------------------------------------------===//

#include "SkylineSearch.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace memfit {
namespace packing {
namespace detail {

namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Open-addressing set of 128-bit keys, for failed states. Stops growing at
/// a fixed number of entries (inserts are then dropped, which only costs
/// search time).
class FailMemo {
public:
  explicit FailMemo(int64_t maxEntries) : maxEntries(maxEntries) {}

  bool contains(uint64_t a, uint64_t b) const {
    if (table.empty())
      return false;
    a = fix(a);
    size_t mask = table.size() - 1;
    for (size_t i = a & mask;; i = (i + 1) & mask) {
      const Entry &e = table[i];
      if (e.a == 0)
        return false;
      if (e.a == a && e.b == b)
        return true;
    }
  }

  void insert(uint64_t a, uint64_t b) {
    if (maxEntries <= 0)
      return;
    if ((count + 1) * 2 > int64_t(table.size())) {
      if (int64_t(table.size()) >= 2 * maxEntries)
        return;
      grow();
    }
    a = fix(a);
    size_t mask = table.size() - 1;
    for (size_t i = a & mask;; i = (i + 1) & mask) {
      Entry &e = table[i];
      if (e.a == 0) {
        e.a = a;
        e.b = b;
        ++count;
        return;
      }
      if (e.a == a && e.b == b)
        return;
    }
  }

private:
  struct Entry {
    uint64_t a = 0, b = 0;
  };
  static uint64_t fix(uint64_t a) { return a == 0 ? 1 : a; }

  void grow() {
    std::vector<Entry> old;
    old.swap(table);
    table.assign(old.empty() ? 1024 : old.size() * 2, Entry());
    size_t mask = table.size() - 1;
    for (const Entry &e : old) {
      if (e.a == 0)
        continue;
      for (size_t i = e.a & mask;; i = (i + 1) & mask) {
        if (table[i].a == 0) {
          table[i] = e;
          break;
        }
      }
    }
  }

  std::vector<Entry> table;
  int64_t count = 0;
  int64_t maxEntries;
};

class Solver {
public:
  Solver(const Problem &problem, int64_t capacity, const SearchConfig &config)
      : P(problem), C(capacity), cfg(config), n(int(problem.size.size())),
        S(problem.numSegs), memo(config.useMemo ? config.memoMaxEntries : 0) {}

  SearchOutcome run(SearchBudget &budget, std::vector<int64_t> &offsets);

private:
  struct Frame {
    int seg;
    int64_t m;
    int candBegin, candEnd, next;
    int applied;       // buffer placed in the current child, -1 none, -2 raise
    int64_t raisedTo;  // floor of seg in the raise child
    bool triedRaise;
    uint64_t key1, key2;
  };
  enum class Enter { Pushed, Found, Failed };

  void setup();
  bool limitReached(SearchBudget &budget);
  Enter enterNode();
  void place(int b, int64_t m);
  void unplace(int b, int64_t m);
  void setFloor(int s, int64_t v);
  int64_t maxFloor(int b) const {
    int64_t r = 0;
    for (int s = P.segLo[b], e = P.segHi[b]; s < e; ++s)
      r = std::max(r, floor_[s]);
    return r;
  }
  bool flatAt(int b, int64_t m) const {
    for (int s = P.segLo[b], e = P.segHi[b]; s < e; ++s)
      if (floor_[s] != m)
        return false;
    return true;
  }
  int64_t raiseLevel(int t, int64_t m) const;
  bool effectiveFloorsFit();

  uint64_t segHash1(int s, int64_t v) const {
    return splitmix64(uint64_t(v) ^ segSalt1[s]);
  }
  uint64_t segHash2(int s, int64_t v) const {
    return splitmix64(uint64_t(v) * 0xD6E8FEB86659FD93ULL ^ segSalt2[s]);
  }

  const Problem &P;
  int64_t C;
  SearchConfig cfg;
  int n, S;

  std::vector<std::vector<int>> live;      // buffers live per segment
  std::vector<std::vector<int>> neighbors; // time-overlapping buffers
  std::vector<int> classPrev;              // previous identical buffer
  std::vector<int64_t> floor_, rem;
  std::vector<char> placed;
  std::vector<int64_t> off;
  int numPlaced = 0;

  uint64_t h1 = 0, h2 = 0;
  std::vector<uint64_t> bufSalt1, bufSalt2, segSalt1, segSalt2;
  FailMemo memo;

  std::vector<Frame> stack;
  std::vector<int> pool;
  std::vector<int64_t> scratchMf, scratchEff;
};

void Solver::setup() {
  floor_.assign(S, 0);
  rem.assign(S, 0);
  live.assign(S, {});
  placed.assign(n, 0);
  off.assign(n, 0);
  for (int b = 0; b < n; ++b)
    for (int s = P.segLo[b]; s < P.segHi[b]; ++s)
      rem[s] += P.size[b];

  // Candidate order: longer lifetimes first, then larger buffers, then index.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    int la = P.segHi[a] - P.segLo[a], lb = P.segHi[b] - P.segLo[b];
    if (la != lb)
      return la > lb;
    if (P.size[a] != P.size[b])
      return P.size[a] > P.size[b];
    return a < b;
  });
  for (int b : order)
    for (int s = P.segLo[b]; s < P.segHi[b]; ++s)
      live[s].push_back(b);

  // Identical buffers: placed in index order.
  classPrev.assign(n, -1);
  std::vector<int> byKey(n);
  std::iota(byKey.begin(), byKey.end(), 0);
  auto keyLess = [&](int a, int b) {
    if (P.segLo[a] != P.segLo[b])
      return P.segLo[a] < P.segLo[b];
    if (P.segHi[a] != P.segHi[b])
      return P.segHi[a] < P.segHi[b];
    if (P.size[a] != P.size[b])
      return P.size[a] < P.size[b];
    return a < b;
  };
  std::sort(byKey.begin(), byKey.end(), keyLess);
  for (int i = 1; i < n; ++i) {
    int a = byKey[i - 1], b = byKey[i];
    if (P.segLo[a] == P.segLo[b] && P.segHi[a] == P.segHi[b] &&
        P.size[a] == P.size[b])
      classPrev[b] = a;
  }

  // Time-overlap neighbours.
  neighbors.assign(n, {});
  std::vector<int> byLo(n);
  std::iota(byLo.begin(), byLo.end(), 0);
  std::sort(byLo.begin(), byLo.end(),
            [&](int a, int b) { return P.segLo[a] < P.segLo[b]; });
  for (int i = 0; i < n; ++i) {
    int a = byLo[i];
    for (int k = i + 1; k < n; ++k) {
      int b = byLo[k];
      if (P.segLo[b] >= P.segHi[a])
        break;
      neighbors[a].push_back(b);
      neighbors[b].push_back(a);
    }
  }

  // Hash salts, fixed seeds: the search is deterministic.
  bufSalt1.resize(n);
  bufSalt2.resize(n);
  for (int b = 0; b < n; ++b) {
    bufSalt1[b] = splitmix64(0x1234567ULL + uint64_t(b) * 2);
    bufSalt2[b] = splitmix64(0x89ABCDEFULL + uint64_t(b) * 2 + 1);
  }
  segSalt1.resize(S);
  segSalt2.resize(S);
  for (int s = 0; s < S; ++s) {
    segSalt1[s] = splitmix64(0xC0FFEEULL ^ (uint64_t(s) << 20));
    segSalt2[s] = splitmix64(0xFACADEULL ^ (uint64_t(s) << 21) ^ 0x5555ULL);
  }
  h1 = h2 = 0;
  for (int s = 0; s < S; ++s)
    if (rem[s] > 0) {
      h1 ^= segHash1(s, 0);
      h2 ^= segHash2(s, 0);
    }
  scratchMf.assign(n, 0);
  scratchEff.assign(S, kInf);
}

void Solver::place(int b, int64_t m) {
  int64_t sz = P.size[b];
  for (int s = P.segLo[b], e = P.segHi[b]; s < e; ++s) {
    h1 ^= segHash1(s, floor_[s]);
    h2 ^= segHash2(s, floor_[s]);
    floor_[s] = m + sz;
    rem[s] -= sz;
    if (rem[s] > 0) {
      h1 ^= segHash1(s, floor_[s]);
      h2 ^= segHash2(s, floor_[s]);
    }
  }
  h1 ^= bufSalt1[b];
  h2 ^= bufSalt2[b];
  placed[b] = 1;
  off[b] = m;
  ++numPlaced;
}

void Solver::unplace(int b, int64_t m) {
  int64_t sz = P.size[b];
  for (int s = P.segLo[b], e = P.segHi[b]; s < e; ++s) {
    if (rem[s] > 0) {
      h1 ^= segHash1(s, floor_[s]);
      h2 ^= segHash2(s, floor_[s]);
    }
    rem[s] += sz;
    floor_[s] = m;
    h1 ^= segHash1(s, m);
    h2 ^= segHash2(s, m);
  }
  h1 ^= bufSalt1[b];
  h2 ^= bufSalt2[b];
  placed[b] = 0;
  --numPlaced;
}

void Solver::setFloor(int s, int64_t v) {
  // Only called on active segments.
  h1 ^= segHash1(s, floor_[s]) ^ segHash1(s, v);
  h2 ^= segHash2(s, floor_[s]) ^ segHash2(s, v);
  floor_[s] = v;
}

// Branch (B): nothing starts at offset m in segment t. Returns the lowest
// offset at which the lowest remaining buffer of t can then sit, or kInf.
int64_t Solver::raiseLevel(int t, int64_t m) const {
  int64_t level = kInf;
  for (int b : live[t]) {
    if (placed[b])
      continue;
    int64_t mf = maxFloor(b);
    if (mf > m) {
      level = std::min(level, mf);
      continue;
    }
    // b could only rise above m by resting on a remaining buffer j that
    // overlaps it in time. If b is the lowest buffer of t, j is not live at t.
    for (int j : neighbors[b]) {
      if (placed[j] || (P.segLo[j] <= t && t < P.segHi[j]))
        continue;
      int64_t top = maxFloor(j) + P.size[j];
      level = std::min(level, top);
    }
  }
  return level;
}

// For every active segment, the lowest offset any remaining buffer there can
// reach, plus the bytes remaining there, must fit.
bool Solver::effectiveFloorsFit() {
  for (int b = 0; b < n; ++b)
    if (!placed[b])
      scratchMf[b] = maxFloor(b);
  for (int s = 0; s < S; ++s) {
    if (rem[s] == 0)
      continue;
    int64_t lo = kInf;
    for (int b : live[s])
      if (!placed[b] && scratchMf[b] < lo) {
        lo = scratchMf[b];
        if (lo == floor_[s])
          break;
      }
    if (lo + rem[s] > C)
      return false;
  }
  return true;
}

Solver::Enter Solver::enterNode() {
  if (numPlaced == n)
    return Enter::Found;
  if (cfg.useMemo && memo.contains(h1, h2))
    return Enter::Failed;
  if (cfg.useEffectiveFloorBound && !effectiveFloorsFit()) {
    if (cfg.useMemo)
      memo.insert(h1, h2);
    return Enter::Failed;
  }
  int64_t m = kInf;
  for (int s = 0; s < S; ++s)
    if (rem[s] > 0 && floor_[s] < m)
      m = floor_[s];
  // Any active segment at the lowest floor may be branched on; take the one
  // with the fewest children (fail first), leftmost on ties.
  int t = -1;
  int bestChildren = std::numeric_limits<int>::max();
  int begin = int(pool.size());
  for (int s = 0; s < S; ++s) {
    if (rem[s] == 0 || floor_[s] != m)
      continue;
    int mark = int(pool.size());
    int children = (m + rem[s] < C) ? 1 : 0;
    for (int b : live[s]) {
      if (placed[b])
        continue;
      if (classPrev[b] >= 0 && !placed[classPrev[b]])
        continue;
      if (flatAt(b, m)) {
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
  Frame f;
  f.seg = t;
  f.m = m;
  f.candBegin = begin;
  f.candEnd = int(pool.size());
  f.next = f.candBegin;
  f.applied = -1;
  f.raisedTo = 0;
  f.triedRaise = false;
  f.key1 = h1;
  f.key2 = h2;
  stack.push_back(f);
  return Enter::Pushed;
}

bool Solver::limitReached(SearchBudget &budget) {
  ++budget.nodesUsed;
  if (budget.nodeLimit > 0 && budget.nodesUsed >= budget.nodeLimit)
    return true;
  if ((budget.nodesUsed & 255) == 0 && Clock::now() >= budget.deadline)
    return true;
  return false;
}

SearchOutcome Solver::run(SearchBudget &budget,
                          std::vector<int64_t> &offsets) {
  setup();
  for (int s = 0; s < S; ++s)
    if (rem[s] > C)
      return SearchOutcome::Infeasible;
  for (int b = 0; b < n; ++b)
    if (P.size[b] > C)
      return SearchOutcome::Infeasible;

  auto finish = [&]() {
    offsets = off;
    return SearchOutcome::Found;
  };

  Enter e = enterNode();
  if (e == Enter::Found)
    return finish();
  if (e == Enter::Failed)
    return SearchOutcome::Infeasible;

  while (!stack.empty()) {
    size_t fi = stack.size() - 1;
    // Undo the child explored last.
    {
      Frame &f = stack[fi];
      if (f.applied >= 0)
        unplace(f.applied, f.m);
      else if (f.applied == -2)
        setFloor(f.seg, f.m);
      f.applied = -1;
    }
    bool descended = false;
    while (stack[fi].next < stack[fi].candEnd) {
      Frame &f = stack[fi];
      int b = pool[f.next++];
      if (limitReached(budget))
        return SearchOutcome::Limit;
      place(b, f.m);
      f.applied = b;
      Enter r = enterNode();
      if (r == Enter::Found)
        return finish();
      if (r == Enter::Pushed) {
        descended = true;
        break;
      }
      Frame &g = stack[fi];
      unplace(g.applied, g.m);
      g.applied = -1;
    }
    if (descended)
      continue;
    {
      Frame &f = stack[fi];
      if (!f.triedRaise) {
        f.triedRaise = true;
        int t = f.seg;
        // Raising wastes bytes in segment t; with no slack it cannot work.
        if (f.m + rem[t] < C) {
          int64_t level = raiseLevel(t, f.m);
          if (level < kInf && level + rem[t] <= C) {
            if (limitReached(budget))
              return SearchOutcome::Limit;
            setFloor(t, level);
            f.applied = -2;
            f.raisedTo = level;
            Enter r = enterNode();
            if (r == Enter::Found)
              return finish();
            if (r == Enter::Pushed)
              continue;
            Frame &g = stack[fi];
            setFloor(g.seg, g.m);
            g.applied = -1;
          }
        }
      }
    }
    // Every child failed.
    Frame &f = stack[fi];
    if (cfg.useMemo)
      memo.insert(f.key1, f.key2);
    pool.resize(f.candBegin);
    stack.pop_back();
  }
  return SearchOutcome::Infeasible;
}

} // namespace

SearchOutcome solveAtCapacity(const Problem &problem, int64_t capacity,
                              SearchBudget &budget,
                              std::vector<int64_t> &offsets,
                              const SearchConfig &config) {
  Solver solver(problem, capacity, config);
  return solver.run(budget, offsets);
}

} // namespace detail
} // namespace packing
} // namespace memfit
