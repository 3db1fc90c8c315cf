//===- SweepSearch.cpp - Placement in time order --------------------------===//
//
// Buffers are taken in order of their first segment (larger first on ties).
// Every buffer placed before b starts no later than b, so the placed buffers
// that overlap b in time are exactly those live in b's first segment: the
// free gaps of that column are where b can go. A node tries b at the bottom
// and at the top of each gap that holds it, tightest gap first (best-fit);
// with alignDeaths, the end next to the neighbour whose life ends nearer to
// b's first, so that space frees up in larger pieces.
// After a placement, the segments of b's life where buffers start must still
// hold their unplaced buffers in their gaps (a bin-packing relaxation, see
// columnFits): a wrong order of neighbours in the column fails at the next
// birth that needs the space they leave, not at the end. The search runs in
// limited discrepancy passes (or depth-first) and remembers failed states.
//
//===----------------------------------------------------------------------===//

#include "SweepSearch.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace memfit {
namespace packing {
namespace detail {

// Work per buffer looked at in a column: it is sorted, and its entries are
// scattered in memory, about 10 times the cost of a step of the skyline
// search's scans over segments (measured on ResNet-50 and sweep instances).
constexpr int64_t kSortWeight = 20;

SweepSearch::SweepSearch(const Problem &p, int64_t capacity, bool reversed,
                         bool discrepancy, bool alignDeaths,
                         const std::vector<int64_t> *fixed)
    : n(int(p.size.size())), S(p.numSegs), C(capacity),
      discLimit(discrepancy ? 0 : -1), size(p.size), alignDeaths(alignDeaths) {
  lo.resize(n);
  hi.resize(n);
  for (int b = 0; b < n; ++b) {
    lo[b] = reversed ? S - p.segHi[b] : p.segLo[b];
    hi[b] = reversed ? S - p.segLo[b] : p.segHi[b];
  }
  // As in the skyline search: offsets of a packing pushed down are sums of
  // sizes, so the capacity can be rounded down to a multiple of their gcd.
  int64_t unit = 0;
  for (int b = 0; b < n; ++b)
    unit = std::gcd(unit, size[b]);
  if (unit > 0)
    C = C / unit * unit;

  order.clear();
  for (int b = 0; b < n; ++b)
    if (!fixed || (*fixed)[b] < 0)
      order.push_back(b);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (lo[a] != lo[b])
      return lo[a] < lo[b];
    if (size[a] != size[b])
      return size[a] > size[b];
    return hi[a] > hi[b];
  });
  sameAsPrev.assign(n, -1);
  for (size_t k = 1; k < order.size(); ++k) {
    int a = order[k - 1], b = order[k];
    if (lo[a] == lo[b] && hi[a] == hi[b] && size[a] == size[b])
      sameAsPrev[b] = a;
  }
  // Buffers grouped by first segment (fixed ones too: their columns hold
  // the free ones).
  byLo.resize(n);
  std::iota(byLo.begin(), byLo.end(), 0);
  std::stable_sort(byLo.begin(), byLo.end(),
                   [&](int a, int b) { return lo[a] < lo[b]; });
  firstAt.assign(S + 1, n);
  for (int k = n - 1; k >= 0; --k)
    firstAt[lo[byLo[k]]] = k;
  for (int s = S - 1; s >= 0; --s)
    firstAt[s] = std::min(firstAt[s], firstAt[s + 1]);
  live.assign(S, {});
  for (int b = 0; b < n; ++b)
    for (int s = lo[b]; s < hi[b]; ++s)
      live[s].push_back(b);
  placed.assign(n, 0);
  off.assign(n, 0);
  isFree.assign(n, 0);
  for (int b : order)
    isFree[b] = 1;
  if (fixed) {
    laterFixed.assign(n, {});
    for (int j = 0; j < n; ++j)
      if ((*fixed)[j] >= 0) {
        place(j, (*fixed)[j]);
        ++numFixed;
      }
    for (int b : order)
      for (int k = firstAt[lo[b] + 1]; k < firstAt[hi[b]]; ++k)
        if (placed[byLo[k]])
          laterFixed[b].push_back(byLo[k]);
  }
  for (int b = 0; b < n; ++b)
    if (size[b] > C)
      exhausted = true;
  if (!exhausted && !order.empty())
    pushLevel(0);
}

int SweepSearch::deepest(std::vector<int64_t> &offsets) const {
  offsets.assign(n, -1);
  for (int j = 0; j < n; ++j)
    if (!isFree[j])
      offsets[j] = off[j];
  for (int k = 0; k < bestDepth; ++k)
    offsets[order[k]] = bestOff[order[k]];
  return numFixed + std::max(bestDepth, 0);
}

// Whether b at offset o overlaps a fixed buffer that starts later in b's
// life (the column at b's first segment does not show those).
bool SweepSearch::clashes(int b, int64_t o) const {
  if (laterFixed.empty())
    return false;
  for (int j : laterFixed[b])
    if (o < off[j] + size[j] && off[j] < o + size[b])
      return true;
  return false;
}

// Free gaps of the column of placed buffers overlapping b, each with the
// segments where its neighbours' lives end (S at the column's bottom and
// top, which never free up).
void SweepSearch::gapsAt(int b, std::vector<Gap> &out) {
  column.clear();
  work += kSortWeight * int64_t(live[lo[b]].size());
  for (int j : live[lo[b]])
    if (placed[j])
      column.push_back({off[j], j});
  std::sort(column.begin(), column.end());
  out.clear();
  int64_t cursor = 0;
  int below = S;
  for (const auto &[o, j] : column) {
    if (o > cursor)
      out.push_back({cursor, o, below, hi[j]});
    if (o + size[j] >= cursor) {
      cursor = o + size[j];
      below = hi[j];
    }
  }
  if (cursor < C)
    out.push_back({cursor, C, below, S});
}

// The unplaced buffers live in segment s lie, disjoint, in the free gaps of
// the column of placed buffers live there: a bin packing problem. Checks a
// relaxation of it: sorting gaps and items by decreasing length, the items
// longer than the (k+1)-th gap all go into the k longest gaps, so they must
// not add up to more than those gaps.
bool SweepSearch::columnFits(int s) {
  busy.clear();
  work += kSortWeight * int64_t(live[s].size());
  items.clear();
  for (int j : live[s]) {
    if (placed[j])
      busy.push_back({off[j], off[j] + size[j]});
    else
      items.push_back(size[j]);
  }
  if (items.empty())
    return true;
  std::sort(busy.begin(), busy.end());
  glen.clear();
  int64_t cursor = 0;
  for (const auto &iv : busy) {
    if (iv.first > cursor)
      glen.push_back(iv.first - cursor);
    cursor = std::max(cursor, iv.second);
  }
  if (cursor < C)
    glen.push_back(C - cursor);
  std::sort(glen.begin(), glen.end(), std::greater<int64_t>());
  std::sort(items.begin(), items.end(), std::greater<int64_t>());
  size_t i = 0;
  int64_t room = 0, need = 0;
  for (size_t k = 0; k < glen.size() && i < items.size(); ++k) {
    room += glen[k];
    int64_t next = k + 1 < glen.size() ? glen[k + 1] : 0;
    while (i < items.size() && items[i] > next)
      need += items[i++];
    if (need > room)
      return false;
  }
  return i == items.size();
}

// Forward check: after placing b, the next segments of b's life can still
// hold the unplaced buffers live there. Only segments where a buffer starts
// need a look: from one segment to the next with no start, the items only
// leave and the gaps only grow, and the relaxation stays satisfied. The
// look ahead stops after kLookaheadWork buffers looked at, which bounds the
// cost of a node on long traces (the challenge-sized ones are checked in
// full); later segments are checked as the sweep reaches them.
bool SweepSearch::futureFits(int b) {
  constexpr size_t kLookaheadWork = 2048;
  size_t work = 0;
  for (int s = lo[b]; s < hi[b] && work < kLookaheadWork; ++s) {
    if (firstAt[s] == firstAt[s + 1])
      continue;
    work += live[s].size();
    if (!columnFits(s))
      return false;
  }
  return true;
}

void SweepSearch::stateKey(int b, uint64_t &k1, uint64_t &k2) const {
  k1 = splitmix64(uint64_t(levels.size()) + 0x51EE7ULL);
  k2 = splitmix64(k1 ^ 0xC0DEULL);
  work += kSortWeight / 2 * int64_t(live[lo[b]].size());
  for (int j : live[lo[b]])
    if (placed[j]) {
      uint64_t x = uint64_t(j) * 0x9E3779B97F4A7C15ULL ^ uint64_t(off[j]);
      k1 ^= splitmix64(x);
      k2 ^= splitmix64(x + 0x632BE59BD9B4E019ULL);
    }
}

void SweepSearch::place(int b, int64_t o) {
  placed[b] = 1;
  off[b] = o;
}

void SweepSearch::unplace(int b) { placed[b] = 0; }

// Opens the level of the next buffer in order, with its candidate offsets:
// both ends of every gap that holds it, tightest gap first.
void SweepSearch::pushLevel(int64_t disc) {
  int b = order[levels.size()];
  Level lv{b, int(cands.size()), 0, 0, false, 0, 0, disc, 0, 0, false};
  stateKey(b, lv.key1, lv.key2);
  lv.plain1 = lv.key1;
  lv.plain2 = lv.key2;
  // A level that failed with no child skipped for the limit failed for its
  // state alone, in every pass: it is remembered by the plain key.
  if (failed.contains(lv.plain1, lv.plain2)) {
    lv.candEnd = lv.next = lv.candBegin;
    levels.push_back(lv);
    return;
  }
  if (discLimit >= 0) {
    // Under a discrepancy limit, a level whose search was cut fails for its
    // state and for the discrepancies it has left: both go into the key.
    uint64_t left = splitmix64(uint64_t(discLimit - disc) + 0xD15CULL);
    lv.key1 ^= left;
    lv.key2 ^= splitmix64(left);
    if (failed.contains(lv.key1, lv.key2)) {
      lv.cut = true;
      lv.candEnd = lv.next = lv.candBegin;
      levels.push_back(lv);
      return;
    }
  }
  gapsAt(b, gaps);
  std::stable_sort(gaps.begin(), gaps.end(), [](const Gap &x, const Gap &y) {
    return x.end - x.begin < y.end - y.begin;
  });
  // Identical buffers go in increasing offsets (they overlap, so strictly).
  int64_t minOff = sameAsPrev[b] >= 0 ? off[sameAsPrev[b]] + 1 : 0;
  for (const Gap &g : gaps) {
    if (g.end - g.begin < size[b])
      continue;
    int64_t top = g.end - size[b];
    bool bottom = g.begin >= minOff;
    bool upper = top != g.begin && top >= minOff;
    // With alignDeaths, the end whose neighbour's life ends nearer to b's
    // first: the two free up at about the same time, and their space merges
    // into one gap for the buffers born then.
    bool upperFirst = alignDeaths &&
                      std::abs(g.above - hi[b]) < std::abs(g.below - hi[b]);
    if (upper && upperFirst && !clashes(b, top))
      cands.push_back(top);
    if (bottom && !clashes(b, g.begin))
      cands.push_back(g.begin);
    if (upper && !upperFirst && !clashes(b, top))
      cands.push_back(top);
    if (!laterFixed.empty())
      // Right above or below a later fixed buffer, inside this gap.
      for (int j : laterFixed[b])
        for (int64_t o : {off[j] + size[j], off[j] - size[b]})
          if (o >= g.begin && o <= top && o >= minOff && o != g.begin &&
              o != top && !clashes(b, o) &&
              std::find(cands.begin() + lv.candBegin, cands.end(), o) ==
                  cands.end())
            cands.push_back(o);
  }
  lv.candEnd = int(cands.size());
  lv.next = lv.candBegin;
  levels.push_back(lv);
}

SweepSearch::Outcome SweepSearch::resume(SearchBudget &budget, int64_t nodes,
                                         std::vector<int64_t> &offsets) {
  if (exhausted)
    return Outcome::Exhausted;
  if (order.empty()) {
    offsets = off;
    return Outcome::Found;
  }
  const int64_t stopAt = budget.nodesUsed + nodes;
  struct Flush {
    int64_t &from;
    int64_t &to;
    ~Flush() {
      to += from;
      from = 0;
    }
  } flush{work, budget.work};
  while (true) {
    if (levels.empty()) {
      if (discLimit < 0 || !discCut)
        break;
      // The pass is over and cut some children: allow one more step away
      // from the preferred children.
      ++discLimit;
      discCut = false;
      pushLevel(0);
      continue;
    }
    Level &lv = levels.back();
    if (lv.holding) {
      unplace(lv.buf);
      lv.holding = false;
    }
    // Limited discrepancy: taking a level's i-th candidate costs i steps.
    if (discLimit >= 0 && lv.next < lv.candEnd &&
        lv.disc + (lv.next - lv.candBegin) > discLimit) {
      discCut = true;
      lv.cut = true;
      lv.next = lv.candEnd;
    }
    if (lv.next == lv.candEnd) {
      if (lv.cut)
        failed.insert(lv.key1, lv.key2);
      else
        failed.insert(lv.plain1, lv.plain2);
      const bool cut = lv.cut;
      cands.resize(lv.candBegin);
      levels.pop_back();
      if (cut && !levels.empty())
        levels.back().cut = true;
      continue;
    }
    if (budget.nodesUsed >= stopAt ||
        (budget.nodeLimit > 0 && budget.nodesUsed >= budget.nodeLimit) ||
        ((budget.nodesUsed & 63) == 0 && Clock::now() >= budget.deadline))
      return Outcome::Limit;
    ++budget.nodesUsed;
    const int64_t disc = lv.disc + (lv.next - lv.candBegin);
    place(lv.buf, cands[lv.next++]);
    lv.holding = true;
    if (!futureFits(lv.buf))
      continue;
    if (int(levels.size()) > bestDepth) {
      bestDepth = int(levels.size());
      bestOff = off;
      work += n;
    }
    if (levels.size() == order.size()) {
      offsets = off;
      return Outcome::Found;
    }
    pushLevel(disc);
  }
  exhausted = true;
  return Outcome::Exhausted;
}

} // namespace detail
} // namespace packing
} // namespace memfit
