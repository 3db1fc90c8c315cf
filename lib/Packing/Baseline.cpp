//===- Baseline.cpp - Best-fit and the packing check ---------------------===//
//
// The classic best-fit allocator (the baseline the search is compared with,
// and the first thing tried at a capacity) and the check of a packing.
//
//===----------------------------------------------------------------------===//

#include "memfit/Packing/Packer.h"

#include "SkylineSearch.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <numeric>

namespace memfit {
namespace packing {

namespace {
std::string str(int64_t v) { return std::to_string(v); }
} // namespace

namespace {

/// The placed buffers, indexed for "which placed buffers are live at some
/// time in [lo, hi)": a max-tree of `upper` over the buffers sorted by
/// `lower`, holding only placed ones.
class PlacedIndex {
public:
  explicit PlacedIndex(const std::vector<Buffer> &all) : buffers(all) {
    for (int i = 0; i < int(all.size()); ++i)
      if (all[i].size > 0)
        byLower.push_back(i);
    std::stable_sort(byLower.begin(), byLower.end(), [&](int a, int b) {
      return all[a].lower < all[b].lower;
    });
    position.assign(all.size(), -1);
    for (int k = 0; k < int(byLower.size()); ++k)
      position[byLower[k]] = k;
    leaves = 1;
    while (leaves < int(byLower.size()))
      leaves *= 2;
    maxUpper.assign(2 * size_t(leaves), std::numeric_limits<int64_t>::min());
  }

  void insert(int i) {
    size_t k = size_t(leaves) + size_t(position[i]);
    maxUpper[k] = buffers[i].upper;
    for (k /= 2; k >= 1; k /= 2)
      maxUpper[k] = std::max(maxUpper[2 * k], maxUpper[2 * k + 1]);
  }

  template <typename F> void forOverlapping(int64_t lo, int64_t hi, F f) {
    // Buffers with lower < hi form a prefix of byLower.
    int end = int(std::lower_bound(byLower.begin(), byLower.end(), hi,
                                   [&](int a, int64_t v) {
                                     return buffers[a].lower < v;
                                   }) -
                  byLower.begin());
    if (end == 0)
      return;
    stack.clear();
    stack.push_back({1, 0, leaves});
    while (!stack.empty()) {
      Node nd = stack.back();
      stack.pop_back();
      if (nd.begin >= end || maxUpper[nd.k] <= lo)
        continue;
      if (nd.end - nd.begin == 1) {
        f(byLower[nd.begin]);
        continue;
      }
      int mid = (nd.begin + nd.end) / 2;
      stack.push_back({2 * nd.k + 1, mid, nd.end});
      stack.push_back({2 * nd.k, nd.begin, mid});
    }
  }

private:
  struct Node {
    size_t k;
    int begin, end;
  };
  const std::vector<Buffer> &buffers;
  std::vector<int> byLower, position;
  int leaves;
  std::vector<int64_t> maxUpper;
  std::vector<Node> stack;
};

} // namespace

std::vector<int64_t> bestFit(const std::vector<Buffer> &buffers,
                             int64_t &peak) {
  bool finished = true;
  return bestFit(buffers, peak, std::chrono::steady_clock::time_point::max(),
                 finished);
}

std::vector<int64_t> bestFit(const std::vector<Buffer> &buffers, int64_t &peak,
                             std::chrono::steady_clock::time_point deadline,
                             bool &finished) {
  int n = int(buffers.size());
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    int64_t la = buffers[a].upper - buffers[a].lower;
    int64_t lb = buffers[b].upper - buffers[b].lower;
    return la > lb;
  });
  std::vector<int64_t> offsets(n, 0);
  PlacedIndex index(buffers);
  std::vector<std::pair<int64_t, int64_t>> busy; // [begin, end)
  peak = 0;
  finished = true;
  // A placement costs up to O(n log n) when every buffer overlaps every
  // other, so the clock is read often enough that a long trace stops close
  // to the deadline.
  int64_t work = 0;
  for (int i : order) {
    if (work > 4096) {
      work = 0;
      if (detail::Clock::now() >= deadline) {
        finished = false;
        return {};
      }
    }
    const Buffer &b = buffers[i];
    if (b.size <= 0 || b.upper <= b.lower) {
      offsets[i] = 0;
      continue;
    }
    busy.clear();
    index.forOverlapping(b.lower, b.upper, [&](int j) {
      busy.push_back({offsets[j], offsets[j] + buffers[j].size});
    });
    work += int64_t(busy.size()) + 1;
    std::sort(busy.begin(), busy.end());
    int64_t bestOff = -1, bestGap = std::numeric_limits<int64_t>::max();
    int64_t cursor = 0;
    for (const auto &iv : busy) {
      if (iv.first > cursor) {
        int64_t gap = iv.first - cursor;
        if (gap >= b.size && gap < bestGap) {
          bestGap = gap;
          bestOff = cursor;
        }
      }
      cursor = std::max(cursor, iv.second);
    }
    if (bestOff < 0)
      bestOff = cursor;
    offsets[i] = bestOff;
    peak = std::max(peak, bestOff + b.size);
    index.insert(i);
  }
  return offsets;
}

std::string checkPacking(const std::vector<Buffer> &buffers,
                         const std::vector<int64_t> &offsets,
                         std::optional<int64_t> capacity) {
  if (offsets.size() != buffers.size())
    return "expected " + str(int64_t(buffers.size())) + " offsets, got " +
           str(int64_t(offsets.size()));
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (offsets[i] < 0)
      return "buffer " + str(buffers[i].id) + " has a negative offset";
    if (capacity && offsets[i] + buffers[i].size > *capacity)
      return "buffer " + str(buffers[i].id) + " ends at " +
             str(offsets[i] + buffers[i].size) + ", beyond the capacity " +
             str(*capacity);
  }
  // Sweep over time; live buffers are kept ordered by offset.
  std::vector<int> idx;
  for (int i = 0; i < int(buffers.size()); ++i)
    if (buffers[i].size > 0)
      idx.push_back(i);
  std::vector<std::pair<int64_t, int>> events; // (time, +1+i start / -1-i end)
  for (int i : idx) {
    events.push_back({buffers[i].lower, i + 1});
    events.push_back({buffers[i].upper, -(i + 1)});
  }
  std::sort(events.begin(), events.end());
  std::map<std::pair<int64_t, int>, int> active; // (offset, index) -> index
  for (const auto &ev : events) {
    if (ev.second < 0) {
      int i = -ev.second - 1;
      active.erase({offsets[i], i});
      continue;
    }
    int i = ev.second - 1;
    auto it = active.insert({{offsets[i], i}, i}).first;
    if (it != active.begin()) {
      int j = std::prev(it)->second;
      if (offsets[j] + buffers[j].size > offsets[i])
        return "buffers " + str(buffers[j].id) + " and " + str(buffers[i].id) +
               " are live at the same time and overlap in memory";
    }
    auto nx = std::next(it);
    if (nx != active.end()) {
      int j = nx->second;
      if (offsets[i] + buffers[i].size > offsets[j])
        return "buffers " + str(buffers[i].id) + " and " + str(buffers[j].id) +
               " are live at the same time and overlap in memory";
    }
  }
  return std::string();
}

} // namespace packing
} // namespace memfit
