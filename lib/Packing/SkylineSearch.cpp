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
  for (size_t i = 0; i < sortBuf.size(); ++i) {
    int b = sortBuf[i].second;
    budget.work += P.segHi[b] - P.segLo[b];
    int64_t limit = C - sortBuf[i].first;
    for (int s = P.segLo[b], end = P.segHi[b]; s < end; ++s) {
      acc[s] += P.size[b];
      if (acc[s] > limit) {
        bump(s);
        // The bound read the release dates of the buffers taken so far
        // that live at s. In a state that agrees on one segment of each
        // life where its floor is that high, and has these buffers (and
        // maybe more) unplaced, the same level overflows s.
        lastWhy = Why();
        if (explaining())
          for (size_t k = 0; k <= i; ++k) {
            int o = sortBuf[k].second;
            if (P.segLo[o] <= s && s < P.segHi[o])
              addRelease(lastWhy, o);
          }
        return false;
      }
    }
  }
  return true;
}

// Unplaced b lives at t, whose floor is m. A state that agrees with this
// one on t has b unplaced, with a release date of at most mf(b) and at
// least m there. For the branching there to have no more children, b must
// stay out when it is out here: a release date above m (one segment where
// the floor is that high keeps it so), or gravity (the placed tops over its
// life). The other rules read buffers with b's lifetime, which agree.
// Candidates read nothing: in such a state they are candidates or not.
void SkylineSolver::addCandidateReads(Why &w, int b, int64_t m) const {
  if (mf[b] > m)
    addRelease(w, b);
  else if (classPrev[b] >= 0 && !placed[classPrev[b]])
    return;
  else if (stackedOutOfOrder(b, m) || floating(b, m))
    addLifetime(w, b);
}

// The state restricted to a pattern's segments: floors (or that nothing is
// left there), placed tops, and which buffers living there are unplaced.
void SkylineSolver::localKey(int pattern, uint64_t &k1, uint64_t &k2) {
  const Pattern &pt = patterns[pattern];
  k1 = splitmix64(uint64_t(pattern) + 0x10CA1ULL);
  k2 = splitmix64(k1 ^ 0x5A5A5A5AULL);
  budget.work += int64_t(pt.segs.size() + pt.bufs.size());
  for (int s : pt.segs) {
    int64_t f = rem[s] > 0 ? floor_[s] : int64_t(1) << 50;
    int64_t top = realTop[s] + (int64_t(1) << 52);
    k1 ^= segHash1(s, f) ^ segHash1(s, top);
    k2 ^= segHash2(s, f) ^ segHash2(s, top);
  }
  for (int b : pt.bufs)
    if (!placed[b]) {
      k1 ^= bufSalt1[b];
      k2 ^= bufSalt2[b];
    }
}

// A frame at segment t failed and its refutation read only w: remember its
// state there.
void SkylineSolver::rememberLocal(int t, const Why &w) {
  if (!cfg.localNogoods || w.all)
    return;
  int id = -1;
  for (int k : patternsAt[t])
    if (std::equal(w.bits, w.bits + kWhyWords, patterns[k].segsRead.bits)) {
      id = k;
      break;
    }
  if (id < 0) {
    if (int(patterns.size()) >= cfg.maxPatterns ||
        int(patternsAt[t].size()) >= cfg.maxPatternsPerSegment)
      return;
    Pattern pt;
    pt.segsRead = w;
    for (int s = 0; s < S; ++s)
      if (w.has(s))
        pt.segs.push_back(s);
    for (int b = 0; b < n; ++b)
      if (w.meets(P.segLo[b], P.segHi[b]))
        pt.bufs.push_back(b);
    budget.work += S + n;
    id = int(patterns.size());
    patterns.push_back(std::move(pt));
    patternsAt[t].push_back(id);
  }
  uint64_t k1, k2;
  localKey(id, k1, k2);
  localMemo.insert(k1, k2);
}

// Whether the state agrees, on the segments of a pattern of t, with a frame
// refuted there (lastWhy: that pattern).
bool SkylineSolver::knownLocalFailure(int t) {
  if (!cfg.localNogoods)
    return false;
  for (int k : patternsAt[t]) {
    uint64_t k1, k2;
    localKey(k, k1, k2);
    if (localMemo.contains(k1, k2)) {
      lastWhy = patterns[k].segsRead;
      return true;
    }
  }
  return false;
}

// What branching at t (floor m) reads: t's plateau and the segments on
// either side (that t lies in a valley, which keeps the branching complete
// in any state that agrees there), which unplaced buffers of t are
// candidates, and, when the raise was considered, the lives of the buffers
// that raiseLevel looked at.
void SkylineSolver::branchReads(const Range &r, int t, int64_t m,
                                bool raiseRead, Why &w) {
  int p = t, q = t;
  while (p > r.a && rem[p - 1] > 0 && floor_[p - 1] == m)
    --p;
  while (q + 1 < r.c && rem[q + 1] > 0 && floor_[q + 1] == m)
    ++q;
  w.add(std::max(0, p - 1), std::min(S, q + 2));
  budget.work += int64_t(live[t].size());
  for (int b : live[t]) {
    if (placed[b])
      continue;
    addCandidateReads(w, b, m);
    if (!raiseRead)
      continue;
    // The raise's level reads these release dates exactly.
    if (mf[b] > m) {
      addLifetime(w, b);
      continue;
    }
    budget.work += int64_t(neighbors[b].size());
    for (int j : neighbors[b])
      if (!placed[j])
        addLifetime(w, j);
  }
}

// Frame fi failed, and its refutation read only the segments of w. Every
// ancestor frame whose state agrees with it there (nothing placed over
// those segments, no floor raised in them since) is refuted by the same
// argument. Returns the highest such frame (fi itself if none above).
size_t SkylineSolver::backjumpTarget(size_t base, size_t fi, const Why &w) {
  if (w.all || fi == base)
    return fi;
  size_t k = stack[fi].trailMark;
  const size_t stop = stack[base].trailMark;
  while (k > stop) {
    const Undo &u = trail[k - 1];
    ++budget.work;
    bool touches = u.idx >= 0 ? w.meets(P.segLo[u.idx], P.segHi[u.idx])
                              : w.has(~u.idx);
    if (touches)
      break;
    --k;
  }
  // Frame i's state is trail[0, trailMark_i): it agrees on w when every
  // entry from trailMark_i on leaves w alone, i.e. trailMark_i >= k.
  size_t i = fi;
  while (i > base && stack[i - 1].trailMark >= k)
    --i;
  return i;
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
      partWhy(r, p.a, p.c);
      failed(key1, key2, lastWhy);
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
      partWhy(r, p.a, p.c);
      failed(key1, key2, lastWhy);
      return Enter::Failed;
    }
  }
  return Enter::Found;
}

SkylineSolver::Enter SkylineSolver::enterNode(const Range &r) {
  const uint64_t entry1 = h1 ^ r.ctx1 ^ salt1();
  const uint64_t entry2 = h2 ^ r.ctx2 ^ salt2();
  uint64_t key1 = entry1, key2 = entry2;
  // What the forced raises taken below read (see Why).
  Why forced;
  auto fail = [&]() {
    failed(key1, key2, lastWhy);
    if (key1 != entry1 || key2 != entry2)
      failed(entry1, entry2, lastWhy);
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
      lastWhy = explaining() ? unpackWhy(whyMemo.find(key1, key2, kAllWhy))
                             : Why();
      lastWhy.add(forced);
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
    if (r.releaseBound && !releaseBoundFits(r)) {
      lastWhy.add(forced);
      return fail();
    }
    if (numParts > 1 && cfg.useDecomposition && nesting < kMaxNesting) {
      Enter e = solveParts(r, key1, key2);
      if (e == Enter::Failed) {
        lastWhy.add(forced);
        return fail();
      }
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
    // Valley runs of the fail-first members branch by activity: among the
    // segments with two or more children, the most active one
    // (SearchConfig::activityBranching).
    const bool byActivity = cfg.activityBranching && failFirst && valleyRun;
    double bestActivity = -1;
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
            ++children;
            if (byActivity ? std::min(children, 2) > std::min(bestChildren, 2)
                           : (children > bestChildren ||
                              (children == bestChildren && fs >= bestFloor)))
              break;
          }
        }
        if (byActivity ? activityBetter(children, fs, activity[s], bestChildren,
                                        bestFloor, bestActivity)
                       : (children < bestChildren ||
                          (children == bestChildren && fs < bestFloor))) {
          bestActivity = activity[s];
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
    if (bestChildren == 0) {
      bump(t);
      // Nothing starts at the floor of t and t has no slack: this reads
      // only t and the lives of its unplaced buffers.
      lastWhy = forced;
      if (explaining()) {
        lastWhy.seg(t);
        for (int b : live[t])
          if (!placed[b])
            addCandidateReads(lastWhy, b, bestFloor);
      }
      return fail();
    }
    if (int(pool.size()) == begin && cfg.compressForcedRaises) {
      // Only the raise: take it now.
      int64_t level = raiseLevel(t, bestFloor);
      if (explaining())
        branchReads(r, t, bestFloor, true, forced);
      if (level >= kInf || level + rem[t] > C) {
        bump(t);
        lastWhy = forced;
        return fail();
      }
      if (limitReached())
        return Enter::Limit;
      raise(t, level);
      continue;
    }
    if (explaining() && knownLocalFailure(t)) {
      pool.resize(begin);
      lastWhy.add(forced);
      return fail();
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
    f.before = forced;
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
      stack[fi].why.add(lastWhy);
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
          stack[fi].why.add(lastWhy);
          rollback(stack[fi].trailMark);
        }
      }
    }
    // Every child failed.
    Why why;
    size_t top = fi;
    if (explaining()) {
      why = stack[fi].why;
      branchReads(r, stack[fi].seg, stack[fi].m,
                  stack[fi].m + rem[stack[fi].seg] < C, why);
      rememberLocal(stack[fi].seg, why);
      top = backjumpTarget(base, fi, why);
    } else {
      why.all = true;
    }
    // Frames top..fi fail alike (backjumpTarget).
    for (size_t k = fi + 1; k-- > top;) {
      Frame &f = stack[k];
      failed(f.key1, f.key2, why);
      Why entryWhy = why;
      entryWhy.add(f.before);
      failed(f.entry1, f.entry2, entryWhy);
    }
    why.add(stack[top].before);
    rollback(stack[top].trailMark);
    pool.resize(stack[top].candBegin);
    stack.resize(top);
    lastWhy = why;
    if (stack.size() > base)
      stack.back().why.add(why);
  }
  return done(SearchOutcome::Infeasible);
}

// One turn of strategy `index` with a budget of `nodes` search nodes.
// Infeasible means proven.
} // namespace detail
} // namespace packing
} // namespace memfit
