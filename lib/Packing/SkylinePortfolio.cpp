//===- SkylinePortfolio.cpp - Set-up and the portfolio of searches -------===//
//
// Prepares the skyline search (segment tables, identical buffers, hash
// salts), orders its candidates, and runs the portfolio: the time-order
// searches (SweepSearch.cpp) and the skyline searches in several candidate
// orders, depth-first and limited-discrepancy, take turns with doubling node
// budgets. solveAtCapacity picks how much of this a problem's size allows.
//
//===----------------------------------------------------------------------===//

#include "RepairSearch.h"
#include "SectionProof.h"
#include "SkylineSolver.h"
#include "SweepSearch.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace memfit {
namespace packing {
namespace detail {

void SkylineSolver::setup() {
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

  peakLoad.assign(n, 0);
  for (int b = 0; b < n; ++b)
    for (int s = P.segLo[b]; s < P.segHi[b]; ++s)
      peakLoad[b] = std::max(peakLoad[b], rem[s]);

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

// With `shuffle` != 0, each buffer's first key is scaled by a factor in
// [1/2, 2) drawn from (shuffle, buffer): a restart in a nearby order.
void SkylineSolver::applyOrder(CandidateOrder order, uint64_t shuffle) {
  std::vector<int> ord(n);
  std::iota(ord.begin(), ord.end(), 0);
  std::vector<double> scale(n, 1.0);
  if (shuffle != 0)
    for (int b = 0; b < n; ++b)
      scale[b] = 0.5 + 1.5 * double(splitmix64(shuffle * 0x9E3779B97F4A7C15ULL +
                                               uint64_t(b)) >> 11) /
                           double(uint64_t(1) << 53);
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
    case CandidateOrder::LoadFirst:
      k1 = peakLoad[b];
      k2 = P.size[b] > kInf / std::max<int64_t>(len, 1) ? kInf
                                                        : P.size[b] * len;
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
    if (shuffle != 0) {
      a1 = int64_t(double(a1) * scale[a]);
      b1 = int64_t(double(b1) * scale[b]);
    }
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

namespace {
// The Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ... (i from 1).
int64_t luby(int64_t i) {
  for (int64_t k = 1;; ++k) {
    int64_t full = (int64_t(1) << k) - 1;
    if (i == full)
      return int64_t(1) << (k - 1);
    if (i < full)
      return luby(i - (int64_t(1) << (k - 1)) + 1);
  }
}
} // namespace

// One depth-first run from the root in the member's order, scaled by
// `shuffle` (0: the plain order), until `limit` nodes in all.
SearchOutcome SkylineSolver::dive(const Strategy &st, uint64_t shuffle,
                                  int64_t limit) {
  applyOrder(st.order, shuffle);
  runLimit = limit;
  discLimit = -1;
  discUsed = 0;
  SearchOutcome o = solveRange(0, S);
  if (o != SearchOutcome::Found) {
    rollback(0);
    stack.clear();
    pool.clear();
  }
  return o;
}

SearchOutcome SkylineSolver::runStrategy(size_t index, int64_t nodes) {
  const Strategy &st = cfg.portfolio[index];
  strategyIndex = index;
  const int64_t turnEnd = budget.nodesUsed + nodes;
  const int64_t turnNo = turnsRun[index]++;
  if (!st.discrepancy) {
    // A depth-first member's turn is a restart from the root. In its plain
    // order it skips every subtree already refuted (the table of failed
    // states stays), so plain turns resume where the last one stopped; the
    // others may use nearby orders (SearchConfig::shuffleRestarts,
    // alternatePlain, restartUnit).
    const int kinds = cfg.alternatePlain ? (cfg.restartUnit > 0 ? 3 : 2) : 1;
    const int kind = kinds == 1 ? (cfg.restartUnit > 0 ? 2 : 1) : int(turnNo % kinds);
    const bool plain = turnNo == 0 || !cfg.shuffleRestarts || kind == 0;
    if (plain)
      return dive(st, 0, turnEnd);
    if (cfg.restartUnit <= 0 || kind == 1)
      return dive(st,
                  splitmix64(uint64_t(index) * 0x10001ULL + uint64_t(turnNo)) | 1,
                  turnEnd);
    // Runs of restartUnit x luby(k) nodes, each in another nearby order.
    SearchOutcome o = SearchOutcome::Limit;
    do {
      int64_t runNo = ++lubyRuns[index];
      uint64_t shuffle =
          splitmix64(uint64_t(index) * 0x10001ULL + 0x51ULL * uint64_t(runNo)) | 1;
      valleyRun = cfg.valleyRuns && (runNo & 1) == 0 &&
                  (cfg.valleyRuns > 1 || !st.leftmost);
      o = dive(st, shuffle,
               std::min(turnEnd, budget.nodesUsed + cfg.restartUnit * luby(runNo)));
      valleyRun = false;
      if (o != SearchOutcome::Limit || outOfBudget())
        return o;
    } while (budget.nodesUsed < turnEnd);
    return o;
  }
  // Limited discrepancy passes build on one order.
  applyOrder(st.order, 0);
  runLimit = turnEnd;
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

namespace {
/// What one turn of a portfolio member ended with.
enum class Turn {
  Found,      ///< a packing (the member wrote it)
  Infeasible, ///< proven: the whole search ends
  Limit,      ///< out of its nodes or of the whole budget
  Exhausted,  ///< it has nothing left to try (nothing proven)
};

/// A member of the portfolio: one turn of at most `nodes` nodes, resuming
/// where its last turn stopped. Its turns get `weight` times the round's
/// share.
struct Member {
  std::function<Turn(int64_t nodes)> turn;
  int64_t weight = 1;
};

/// The members take turns, in rounds whose budgets double, until one finds
/// a packing or proves infeasibility, the budget runs out, or none has
/// anything left to try (then Limit: nothing proven).
///
/// Members differ in cost per node by up to 20x (ResNet-50: a time-order
/// node checks columns ahead, 28k nodes/s; a leftmost skyline node 640k/s;
/// a fail-first one 53k/s). Equal node turns would hand most of the time to
/// the costliest members, so with `workShares` turns are equal shares of
/// work (SearchBudget::work, table entries looked at, which tracks time but
/// is deterministic): after a first round of short turns that measures each
/// member's work per node, a turn is a work slice (doubling each round)
/// converted into nodes at the member's own rate.
SearchOutcome takeTurns(std::vector<Member> &members, SearchBudget &budget,
                        int64_t turn, bool workShares) {
  const size_t count = members.size();
  std::vector<int64_t> spent(count, 0), used(count, 0);
  double slice = 0; // work per member and turn, once measured
  auto allot = [&](size_t i, int64_t nodes) -> int64_t {
    if (!workShares)
      return nodes;
    if (slice <= 0) // the first round measures the rates on short turns
      return std::max<int64_t>(64, nodes / 16);
    if (used[i] == 0 || spent[i] <= 0)
      return nodes;
    double want = slice * double(used[i]) / double(spent[i]) * double(nodes) /
                  double(turn);
    return std::max<int64_t>(64, want >= double(kInf / 4) ? kInf / 4
                                                          : int64_t(want));
  };
  auto outOfBudget = [&]() {
    return (budget.nodeLimit > 0 && budget.nodesUsed >= budget.nodeLimit) ||
           Clock::now() >= budget.deadline;
  };
  for (int round = 0;; ++round) {
    bool open = false;
    for (size_t i = 0; i < count; ++i) {
      const int64_t w0 = budget.work, n0 = budget.nodesUsed;
      Turn t = members[i].turn(allot(i, members[i].weight * turn));
      spent[i] += budget.work - w0;
      used[i] += budget.nodesUsed - n0;
      if (t == Turn::Found)
        return SearchOutcome::Found;
      if (t == Turn::Infeasible)
        return SearchOutcome::Infeasible;
      if (outOfBudget())
        return SearchOutcome::Limit;
      open |= t == Turn::Limit;
    }
    if (!open)
      return SearchOutcome::Limit;
    if (workShares && round == 0) {
      // The work a member of median cost does in `turn` nodes.
      std::vector<double> perNode;
      for (size_t k = 0; k < count; ++k)
        if (used[k] > 0)
          perNode.push_back(double(spent[k]) / double(used[k]));
      if (!perNode.empty()) {
        std::nth_element(perNode.begin(), perNode.begin() + perNode.size() / 2,
                         perNode.end());
        slice = std::max(1.0, perNode[perNode.size() / 2] * double(turn));
      }
      continue; // the same turn again, now in shares of time
    }
    if (turn < kInf / 4) {
      turn *= 2;
      slice *= 2;
    }
  }
}

Turn fromSweep(SweepSearch::Outcome o) {
  switch (o) {
  case SweepSearch::Outcome::Found:
    return Turn::Found;
  case SweepSearch::Outcome::Exhausted:
    return Turn::Exhausted;
  default:
    return Turn::Limit;
  }
}

/// The time-order searches, forwards and backwards in time (incomplete:
/// they find packings, only the skyline searches prove infeasibility), in
/// their plain candidate order and, with sweepAlignDeaths, again with the
/// gap end next to the neighbour that dies nearer first; and the repair
/// member, on what the forwards ones reached. Used by the full portfolio
/// and, alone, on problems too large for the skyline search.
class TimeOrderMembers {
public:
  TimeOrderMembers(const Problem &P, int64_t C, const SearchConfig &cfg) {
    for (int align = 0; align <= int(cfg.sweepAlignDeaths); ++align)
      for (int i = 0; i < cfg.sweepSearches && i < 2; ++i) {
        sweeps.emplace_back(P, C, /*reversed=*/i == 1, cfg.sweepDiscrepancy,
                            /*alignDeaths=*/align == 1);
        forwards.push_back(i == 0);
      }
    if (cfg.repairSearch && cfg.sweepSearches > 0)
      repairs.emplace_back(P, C);
  }
  /// Adds them to `members` (this object must outlive the turns).
  void addTo(std::vector<Member> &members, SearchBudget &budget,
             std::vector<int64_t> &offsets) {
    for (SweepSearch &sweep : sweeps)
      members.push_back({[&sweep, &budget, &offsets](int64_t nodes) {
        return fromSweep(sweep.resume(budget, nodes, offsets));
      }});
    for (RepairSearch &repair : repairs)
      members.push_back({[this, &repair, &budget, &offsets](int64_t nodes) {
        for (size_t k = 0; k < sweeps.size(); ++k)
          if (forwards[k])
            repair.offer(sweeps[k]);
        if (!repair.hasPartial())
          return Turn::Exhausted;
        return fromSweep(repair.resume(budget, nodes, offsets));
      }});
  }

private:
  std::vector<SweepSearch> sweeps;
  std::vector<char> forwards;
  std::vector<RepairSearch> repairs;
};
} // namespace

SearchOutcome SkylineSolver::run(std::vector<int64_t> &offsets) {
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
  turnsRun.assign(cfg.portfolio.size(), 0);
  lubyRuns.assign(cfg.portfolio.size(), 0);
  if (cfg.portfolio.size() == 1 && !cfg.portfolio[0].discrepancy) {
    // A single depth-first search: no turns.
    applyOrder(cfg.portfolio[0].order);
    SearchOutcome o = solveRange(0, S);
    if (o == SearchOutcome::Found)
      offsets = off;
    return o;
  }
  std::vector<Member> members;
  TimeOrderMembers timeOrder(P, C, cfg);
  timeOrder.addTo(members, budget, offsets);
  for (size_t k = 0; k < cfg.portfolio.size(); ++k)
    members.push_back({[this, k, &offsets](int64_t nodes) {
      SearchOutcome o = runStrategy(k, nodes);
      if (o == SearchOutcome::Found)
        offsets = off;
      return o == SearchOutcome::Found        ? Turn::Found
             : o == SearchOutcome::Infeasible ? Turn::Infeasible
                                              : Turn::Limit;
    }});
  // Three turns' nodes: a section proof ends the whole search, and when
  // every window packs the member stops costing anything.
  std::vector<SectionProver> sections;
  if (cfg.sectionProofs)
    sections.emplace_back(P, C);
  for (SectionProver &section : sections)
    members.push_back({[&section, this](int64_t nodes) {
                         return section.resume(budget, nodes) ==
                                        SearchOutcome::Infeasible
                                    ? Turn::Infeasible
                                    : Turn::Limit;
                       },
                       3});
  // A first turn long enough for a few dives to the bottom of the tree.
  int64_t turn = std::max<int64_t>({cfg.firstRunNodes, 16 * int64_t(n), 1});
  return takeTurns(members, budget, turn, cfg.workShares);
}

SearchOutcome searchInTimeOrder(const Problem &problem, int64_t capacity,
                                SearchBudget &budget,
                                std::vector<int64_t> &offsets,
                                const SearchConfig &config) {
  std::vector<Member> members;
  TimeOrderMembers timeOrder(problem, capacity, config);
  timeOrder.addTo(members, budget, offsets);
  if (members.empty())
    return SearchOutcome::Limit;
  int64_t turn = std::max<int64_t>(
      {config.firstRunNodes, 16 * int64_t(problem.size.size()), 1});
  return takeTurns(members, budget, turn, config.workShares);
}

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
    SkylineSolver solver(problem, capacity, config, budget);
    return solver.run(offsets);
  }
  if (work <= config.maxTableEntries) {
    budget.scope = std::max(budget.scope, SearchScope::SweepOnly);
    return searchInTimeOrder(problem, capacity, budget, offsets, config);
  }
  budget.scope = SearchScope::None;
  return SearchOutcome::Limit;
}

} // namespace detail
} // namespace packing
} // namespace memfit
