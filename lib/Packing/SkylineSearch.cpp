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
// with doubling node budgets, sharing the table of failed states, and with
// the time-order searches (SkylinePortfolio.cpp, SweepSearch.cpp).
//
//===----------------------------------------------------------------------===//

#include "SkylineSolver.h"

#include <algorithm>

namespace memfit {
namespace packing {
namespace detail {

void SkylineSolver::place(int b, int64_t m) {
  int64_t sz = P.size[b];
  budget.work += P.segHi[b] - P.segLo[b] + int64_t(neighbors[b].size());
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

void SkylineSolver::unplace(int b, int64_t m) {
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

void SkylineSolver::raise(int s, int64_t v) {
  // Only called on active segments.
  trail.push_back({~s, floor_[s], mfTrail.size()});
  h1 ^= segHash1(s, floor_[s]) ^ segHash1(s, v);
  h2 ^= segHash2(s, floor_[s]) ^ segHash2(s, v);
  floor_[s] = v;
  for (int b : live[s])
    if (!placed[b])
      liftMf(b, v);
}

void SkylineSolver::rollback(size_t mark) {
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
void SkylineSolver::localHash(int a, int c, uint64_t &k1, uint64_t &k2) const {
  k1 = k2 = 0;
  budget.work += (c - a) + (firstAt[c] - firstAt[a]);
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
int64_t SkylineSolver::raiseLevel(int t, int64_t m) {
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
    budget.work += int64_t(neighbors[b].size());
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
bool SkylineSolver::releaseBoundFits(const Range &r) {
  sortBuf.clear();
  for (int b : r.bufs)
    if (!placed[b])
      sortBuf.push_back({mf[b], b});
  std::sort(sortBuf.begin(), sortBuf.end(),
            [](const std::pair<int64_t, int> &x,
               const std::pair<int64_t, int> &y) { return x.first > y.first; });
  for (int s = r.a; s < r.c; ++s)
    acc[s] = 0;
  budget.work += 2 * int64_t(sortBuf.size()) + (r.c - r.a);
  for (const auto &e : sortBuf) {
    int b = e.second;
    budget.work += P.segHi[b] - P.segLo[b];
    int64_t limit = C - e.first;
    for (int s = P.segLo[b], end = P.segHi[b]; s < end; ++s) {
      acc[s] += P.size[b];
      if (acc[s] > limit)
        return false;
    }
  }
  return true;
}

bool SkylineSolver::limitReached() {
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
SkylineSolver::Enter SkylineSolver::solveParts(const Range &r, uint64_t key1,
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

SkylineSolver::Enter SkylineSolver::enterNode(const Range &r) {
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
    budget.work += 2 * int64_t(r.c - r.a);
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

    // Any active segment at the lowest floor may be branched on; with
    // `valleys`, any segment of a valley (Strategy::valleys). Take the one
    // with the fewest children (fail first; lower floor, then leftmost, on
    // ties), or the leftmost one.
    int t = -1;
    const Strategy &st = cfg.portfolio[strategyIndex];
    const bool failFirst = cfg.failFirstSegment && !st.leftmost;
    const int begin = int(pool.size());
    int bestChildren = std::numeric_limits<int>::max();
    int64_t bestFloor = kInf;
    bool stop = false;
    for (int p = r.a; p < r.c && !stop; ++p) {
      if (rem[p] == 0)
        continue;
      // The plateau [p, q]: a run of active segments at one floor.
      const int64_t fs = floor_[p];
      int q = p;
      while (q + 1 < r.c && rem[q + 1] > 0 && floor_[q + 1] == fs)
        ++q;
      const bool eligible =
          (st.valleys || valleyRun)
              ? (p == r.a || rem[p - 1] == 0 || floor_[p - 1] > fs) &&
                    (q + 1 == r.c || rem[q + 1] == 0 || floor_[q + 1] > fs)
              : fs == m;
      for (int s = p; s <= q && eligible; ++s) {
        int mark = int(pool.size());
        int children = (fs + rem[s] < C) ? 1 : 0;
        budget.work += int64_t(live[s].size());
        for (int b : live[s]) {
          if (isCandidate(b, fs)) {
            pool.push_back(b);
            if (++children > bestChildren ||
                (children == bestChildren && fs >= bestFloor))
              break;
          }
        }
        if (children < bestChildren ||
            (children == bestChildren && fs < bestFloor)) {
          bestChildren = children;
          bestFloor = fs;
          t = s;
          // Keep this segment's candidates at the front of the frame's range.
          std::copy(pool.begin() + mark, pool.end(), pool.begin() + begin);
          pool.resize(begin + (pool.size() - mark));
          if (children == 0 || !failFirst) {
            stop = true;
            break;
          }
        } else {
          pool.resize(mark);
        }
      }
      p = q;
    }
    if (bestChildren == 0)
      return fail();
    if (int(pool.size()) == begin && cfg.compressForcedRaises) {
      // Only the raise: take it now.
      int64_t level = raiseLevel(t, bestFloor);
      if (level >= kInf || level + rem[t] > C)
        return fail();
      if (limitReached())
        return Enter::Limit;
      raise(t, level);
      continue;
    }
    Frame f;
    f.seg = t;
    f.m = bestFloor;
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
SearchOutcome SkylineSolver::solveRange(int a, int c) {
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
} // namespace detail
} // namespace packing
} // namespace memfit
