//===- Packer.cpp - Buffer packing entry points ---------------------------===//
//
// Input checks, splitting into independent components, the capacity mode,
// the peak-minimising mode, and the baseline heuristics.
//
//===----------------------------------------------------------------------===//

#include "memfit/Packing/Packer.h"

#include "SkylineSearch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

namespace memfit {
namespace packing {

using detail::Clock;
using detail::Problem;
using detail::SearchBudget;
using detail::SearchOutcome;

const char *statusName(PackResult::Status status) {
  switch (status) {
  case PackResult::Status::Packed:
    return "packed";
  case PackResult::Status::Infeasible:
    return "infeasible";
  case PackResult::Status::Timeout:
    return "timeout";
  case PackResult::Status::InvalidInput:
    return "invalid";
  }
  return "invalid";
}

const char *proofName(PackResult::Proof proof) {
  switch (proof) {
  case PackResult::Proof::None:
    return "";
  case PackResult::Proof::LiveBytes:
    return "live-bytes";
  case PackResult::Proof::BufferTooLarge:
    return "buffer-too-large";
  case PackResult::Proof::SearchExhausted:
    return "search-exhausted";
  case PackResult::Proof::Section:
    return "section";
  }
  return "";
}

namespace {

// Largest total of sizes we accept, so that sums never overflow.
constexpr int64_t kMaxTotal = int64_t(1) << 62;

std::string str(int64_t v) { return std::to_string(v); }

/// Returns an empty string when the buffers are well formed.
std::string validateBuffers(const std::vector<Buffer> &buffers) {
  std::unordered_set<int64_t> ids;
  ids.reserve(buffers.size() * 2);
  int64_t total = 0;
  for (const Buffer &b : buffers) {
    if (!ids.insert(b.id).second)
      return "duplicate buffer id " + str(b.id);
    if (b.upper <= b.lower)
      return "buffer " + str(b.id) + ": upper (" + str(b.upper) +
             ") must be greater than lower (" + str(b.lower) + ")";
    if (b.size < 0)
      return "buffer " + str(b.id) + ": negative size " + str(b.size);
    if (b.size > kMaxTotal - total)
      return "buffer " + str(b.id) +
             ": sizes add up to more than 2^62 bytes, which is not supported";
    total += b.size;
  }
  return std::string();
}

struct Event {
  int64_t time;
  int64_t delta;
};

int64_t maxLive(const std::vector<Buffer> &buffers,
                const std::vector<int> &which) {
  std::vector<Event> events;
  events.reserve(which.size() * 2);
  for (int i : which) {
    if (buffers[i].size == 0)
      continue;
    events.push_back({buffers[i].lower, buffers[i].size});
    events.push_back({buffers[i].upper, -buffers[i].size});
  }
  // Half-open lifetimes: at equal times, ends come before starts.
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    if (a.time != b.time)
      return a.time < b.time;
    return a.delta < b.delta;
  });
  int64_t cur = 0, best = 0;
  for (const Event &e : events) {
    cur += e.delta;
    best = std::max(best, cur);
  }
  return best;
}

/// One independent part of the problem: no buffer of one component is live
/// at the same time as a buffer of another.
struct Component {
  std::vector<int> members; // indices into the caller's buffers
  Problem problem;
  std::vector<int64_t> times; // segment s is [times[s], times[s + 1])
  int64_t lowerBound = 0;
  // Peak mode bookkeeping.
  int64_t bestPeak = 0;
  std::vector<int64_t> bestOffsets; // per member
  int64_t infeasibleUpTo = -1;      // largest capacity proven infeasible
};

std::vector<Component> splitComponents(const std::vector<Buffer> &buffers) {
  std::vector<int> order;
  for (int i = 0; i < int(buffers.size()); ++i)
    if (buffers[i].size > 0)
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return buffers[a].lower < buffers[b].lower;
  });
  std::vector<Component> comps;
  int64_t end = std::numeric_limits<int64_t>::min();
  for (int i : order) {
    if (comps.empty() || buffers[i].lower >= end) {
      comps.emplace_back();
      end = buffers[i].upper;
    }
    comps.back().members.push_back(i);
    end = std::max(end, buffers[i].upper);
  }
  for (Component &c : comps) {
    std::sort(c.members.begin(), c.members.end());
    std::vector<int64_t> coords;
    for (int i : c.members) {
      coords.push_back(buffers[i].lower);
      coords.push_back(buffers[i].upper);
    }
    std::sort(coords.begin(), coords.end());
    coords.erase(std::unique(coords.begin(), coords.end()), coords.end());
    Problem &p = c.problem;
    p.numSegs = int(coords.size()) - 1;
    c.times = coords;
    for (int i : c.members) {
      p.segLo.push_back(int(std::lower_bound(coords.begin(), coords.end(),
                                             buffers[i].lower) -
                            coords.begin()));
      p.segHi.push_back(int(std::lower_bound(coords.begin(), coords.end(),
                                             buffers[i].upper) -
                            coords.begin()));
      p.size.push_back(buffers[i].size);
    }
    c.lowerBound = maxLive(buffers, c.members);
  }
  return comps;
}

Clock::time_point deadlineAfter(Clock::time_point start, double seconds) {
  if (!(seconds > 0))
    return start;
  double capped = std::min(seconds, 1e7);
  return start + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(capped));
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<Buffer> componentBuffers(const std::vector<Buffer> &buffers,
                                     const Component &c) {
  std::vector<Buffer> out;
  out.reserve(c.members.size());
  for (int i : c.members)
    out.push_back(buffers[i]);
  return out;
}

int64_t peakOf(const Problem &p, const std::vector<int64_t> &offsets) {
  int64_t peak = 0;
  for (size_t i = 0; i < offsets.size(); ++i)
    peak = std::max(peak, offsets[i] + p.size[i]);
  return peak;
}

void scatter(const Component &c, const std::vector<int64_t> &compOffsets,
             std::vector<int64_t> &offsets) {
  for (size_t k = 0; k < c.members.size(); ++k)
    offsets[c.members[k]] = compOffsets[k];
}

int64_t gcdOfSizes(const std::vector<Buffer> &buffers) {
  int64_t g = 0;
  for (const Buffer &b : buffers)
    g = std::gcd(g, b.size);
  return g == 0 ? 1 : g;
}

/// What a capacity run that ran out of time can still say: what was proven
/// (only the live-bytes bound), how far the search got, and why its scope
/// was narrowed on a large problem.
detail::SearchConfig searchConfig(const PackOptions &options) {
  detail::SearchConfig config;
  config.maxTableEntries = options.maxTableEntries;
  return config;
}

std::string timeoutMessage(int64_t capacity, int64_t lowerBound,
                           const SearchBudget &budget, int64_t bfPeak) {
  std::string m = "timeout: no packing within " + str(capacity) +
                  " bytes found, and none ruled out, within the limit (" +
                  str(budget.nodesUsed) + " search nodes; proven only that " +
                  str(lowerBound) + " bytes are live at one time; best-fit "
                  "needs " + str(bfPeak) + " bytes)";
  if (budget.scope == detail::SearchScope::SweepOnly)
    m += "; the problem was too large for the exhaustive search, so only "
         "the time-order searches ran";
  else if (budget.scope == detail::SearchScope::None)
    m += "; the problem was too large to search at all";
  return m;
}

PackResult packAtCapacity(const std::vector<Buffer> &buffers,
                          std::vector<Component> &comps, int64_t capacity,
                          const PackOptions &options,
                          Clock::time_point start) {
  PackResult r;
  int64_t g = gcdOfSizes(buffers);
  // In a packing pushed down as far as it goes every offset is a sum of
  // sizes, hence a multiple of g: rounding the capacity down loses nothing.
  int64_t cap = capacity / g * g;
  for (const Component &c : comps) {
    r.lowerBound = std::max(r.lowerBound, c.lowerBound);
  }
  r.provenLowerBound = r.lowerBound;
  if (r.lowerBound > cap) {
    r.status = PackResult::Status::Infeasible;
    r.proof = PackResult::Proof::LiveBytes;
    r.message = "infeasible: " + str(r.lowerBound) +
                " bytes are live at one time, more than the capacity " +
                str(capacity);
    if (r.lowerBound <= capacity)
      r.message += " holds: every offset is a multiple of " + str(g) +
                   " (the gcd of the sizes), so only " + str(cap) +
                   " bytes of it are usable";
    return r;
  }
  SearchBudget budget;
  budget.deadline = deadlineAfter(start, options.timeLimitSeconds);
  budget.nodeLimit = options.nodeLimit;
  r.offsets.assign(buffers.size(), 0);
  // Smallest components first: each is decided quickly, and a proof that
  // one does not fit ends the call. Largest first let one hard component
  // that fits use up the whole limit before a small one that does not was
  // looked at (blocked-large-5: 133 and 48 buffers, the 48 proven
  // infeasible in 0.05 s alone, a timeout behind the 133).
  std::vector<int> order(comps.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return comps[a].members.size() < comps[b].members.size();
  });
  for (int ci : order) {
    Component &c = comps[ci];
    // Best-fit first: when it fits, no search is needed.
    int64_t bfPeak = 0;
    bool bfFinished = true;
    std::vector<int64_t> offs = bestFit(componentBuffers(buffers, c), bfPeak,
                                        budget.deadline, bfFinished);
    if (!bfFinished) {
      r.offsets.clear();
      r.status = PackResult::Status::Timeout;
      r.message = "timeout: best-fit did not finish within the limit (" +
                  str(int64_t(c.members.size())) + " buffers in one part; "
                  "proven only that " + str(r.lowerBound) +
                  " bytes are live at one time)";
      return r;
    }
    if (bfPeak <= cap) {
      scatter(c, offs, r.offsets);
      continue;
    }
    SearchOutcome o = detail::solveAtCapacity(c.problem, cap, budget, offs,
                                              searchConfig(options));
    if (o == SearchOutcome::Found) {
      scatter(c, offs, r.offsets);
      continue;
    }
    r.offsets.clear();
    r.nodesExplored = budget.nodesUsed;
    if (o == SearchOutcome::Infeasible && budget.sectionBegin >= 0) {
      r.status = PackResult::Status::Infeasible;
      r.proof = PackResult::Proof::Section;
      r.message = "infeasible: the buffers live between times " +
                  str(c.times[budget.sectionBegin]) + " and " +
                  str(c.times[budget.sectionEnd]) + ", each cut to that "
                  "section, have no packing in " + str(capacity) +
                  " bytes (the search ruled out every canonical placement "
                  "of the section; " + str(budget.nodesUsed) + " nodes in "
                  "all), although at most " + str(r.lowerBound) +
                  " bytes are live at one time";
    } else if (o == SearchOutcome::Infeasible) {
      r.status = PackResult::Status::Infeasible;
      r.proof = PackResult::Proof::SearchExhausted;
      r.message = "infeasible: the search ruled out every canonical "
                  "placement (" + str(budget.nodesUsed) + " nodes): none fits "
                  "in " + str(capacity) + " bytes, although at most " +
                  str(r.lowerBound) + " bytes are live at one time";
    } else {
      r.status = PackResult::Status::Timeout;
      r.message = timeoutMessage(capacity, r.lowerBound, budget, bfPeak);
    }
    return r;
  }
  r.nodesExplored = budget.nodesUsed;
  r.status = PackResult::Status::Packed;
  for (size_t i = 0; i < buffers.size(); ++i)
    r.peak = std::max(r.peak, r.offsets[i] + buffers[i].size);
  r.optimal = r.peak == r.lowerBound;
  r.message = "packed within " + str(capacity) + " bytes (peak " +
              str(r.peak) + ")";
  return r;
}

PackResult minimisePeak(const std::vector<Buffer> &buffers,
                        std::vector<Component> &comps,
                        const PackOptions &options, Clock::time_point start) {
  PackResult r;
  Clock::time_point deadline = deadlineAfter(start, options.timeLimitSeconds);
  int64_t g = gcdOfSizes(buffers);
  int64_t nodes = 0;
  bool nodeLimitHit = false;

  // Upper bounds: best-fit, and the first leaf of a depth-first search with
  // no capacity (skyline greedy) in each candidate order.
  for (Component &c : comps)
    r.lowerBound = std::max(r.lowerBound, c.lowerBound);
  for (Component &c : comps) {
    std::vector<Buffer> cb = componentBuffers(buffers, c);
    int64_t bfPeak = 0;
    bool bfFinished = true;
    c.bestOffsets = bestFit(cb, bfPeak, deadline, bfFinished);
    if (!bfFinished) {
      // No packing at all yet: nothing better to return than the bound.
      r.status = PackResult::Status::Timeout;
      r.provenLowerBound = r.lowerBound;
      r.message = "timeout: best-fit did not finish within the limit (" +
                  str(int64_t(c.members.size())) + " buffers in one part), "
                  "so there is no packing; proven only that " +
                  str(r.lowerBound) + " bytes are live at one time";
      return r;
    }
    c.bestPeak = bfPeak;
    c.infeasibleUpTo = c.lowerBound - 1;
    int64_t total = 0;
    for (int64_t sz : c.problem.size)
      total += sz;
    const detail::CandidateOrder orders[] = {
        detail::CandidateOrder::LargestFirst, detail::CandidateOrder::AreaFirst,
        detail::CandidateOrder::LongestFirst};
    for (detail::CandidateOrder order : orders) {
      if (c.bestPeak <= c.lowerBound)
        break;
      detail::SearchConfig greedy = searchConfig(options);
      greedy.portfolio = {{order, false}};
      SearchBudget budget;
      budget.deadline = deadline;
      if (options.nodeLimit > 0) {
        budget.nodeLimit = options.nodeLimit - nodes;
        if (budget.nodeLimit <= 0)
          break;
      }
      std::vector<int64_t> offs;
      if (detail::solveAtCapacity(c.problem, total, budget, offs, greedy) ==
          SearchOutcome::Found) {
        int64_t p = peakOf(c.problem, offs);
        if (p < c.bestPeak) {
          c.bestPeak = p;
          c.bestOffsets = offs;
        }
      }
      nodes += budget.nodesUsed;
    }
  }

  auto globalPeak = [&]() {
    int64_t p = 0;
    for (const Component &c : comps)
      p = std::max(p, c.bestPeak);
    return p;
  };
  auto provenLow = [&]() {
    int64_t lo = 0;
    for (const Component &c : comps)
      lo = std::max(lo, c.infeasibleUpTo + 1);
    return lo;
  };

  // Binary search for the smallest capacity that fits, in rounds: each
  // round starts with a probe at the lowest capacity not proven infeasible
  // (at the live-bytes bound this proves optimality when it fits), then
  // halves [lo, hi). A probe that runs out of time is skipped over; when a
  // round ends with such probes and time is left, the next round retries
  // them with more time each. Capacities are multiples of g.
  int64_t hi = globalPeak();
  int64_t lo = provenLow();
  bool newRound = true, anyUnknown = false;
  int round = 0;
  while (true) {
    double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0 || nodeLimitHit || provenLow() >= hi)
      break;
    if (lo >= hi) {
      if (!anyUnknown)
        break;
      lo = provenLow();
      anyUnknown = false;
      newRound = true;
      ++round;
    }
    int64_t loU = (lo + g - 1) / g, hiU = hi / g; // capacities k*g in [lo, hi)
    if (hiU * g >= hi)
      --hiU;
    if (loU > hiU) {
      lo = hi;
      continue;
    }
    int64_t capU = newRound ? loU : loU + (hiU - loU) / 2;
    int64_t cap = capU * g;
    double share;
    if (newRound) {
      share = round == 0 ? 0.3 : 0.5;
    } else {
      int probesLeft = 1;
      for (int64_t span = hiU - loU + 1; span > 1; span = (span + 1) / 2)
        ++probesLeft;
      share = 1.0 / probesLeft;
    }
    newRound = false;
    SearchBudget budget;
    budget.deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(left * share));
    if (options.nodeLimit > 0) {
      budget.nodeLimit = options.nodeLimit - nodes;
      if (budget.nodeLimit <= 0)
        break;
    }
    // Probe: does every component fit `cap`?
    enum { Fits, DoesNot, Unknown } verdict = Fits;
    std::vector<int> order(comps.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return comps[a].bestPeak > comps[b].bestPeak;
    });
    for (int ci : order) {
      Component &c = comps[ci];
      if (c.bestPeak <= cap)
        continue;
      if (cap <= c.infeasibleUpTo) {
        verdict = DoesNot;
        break;
      }
      std::vector<int64_t> offs;
      SearchOutcome o = detail::solveAtCapacity(c.problem, cap, budget, offs,
                                                searchConfig(options));
      if (o == SearchOutcome::Found) {
        c.bestOffsets = offs;
        c.bestPeak = peakOf(c.problem, offs);
      } else if (o == SearchOutcome::Infeasible) {
        c.infeasibleUpTo = std::max(c.infeasibleUpTo, cap);
        verdict = DoesNot;
        break;
      } else {
        verdict = Unknown;
        break;
      }
    }
    nodes += budget.nodesUsed;
    if (options.nodeLimit > 0 && nodes >= options.nodeLimit)
      nodeLimitHit = true;
    if (verdict == Fits) {
      hi = globalPeak();
    } else {
      lo = cap + 1;
      if (verdict == Unknown)
        anyUnknown = true;
    }
  }

  r.offsets.assign(buffers.size(), 0);
  for (const Component &c : comps)
    scatter(c, c.bestOffsets, r.offsets);
  r.peak = globalPeak();
  r.provenLowerBound = std::max(r.lowerBound, provenLow());
  // Peaks are multiples of g, so a proof below peak - g + 1 suffices.
  if (r.provenLowerBound > r.peak - g)
    r.provenLowerBound = r.peak;
  r.optimal = r.provenLowerBound >= r.peak;
  r.nodesExplored = nodes;
  r.status = PackResult::Status::Packed;
  r.message = "peak " + str(r.peak) + " bytes; lower bound " +
              str(r.lowerBound) + " (most bytes live at one time)";
  if (r.optimal)
    r.message += "; proven minimal";
  else
    r.message += "; proven lower bound " + str(r.provenLowerBound);
  return r;
}

} // namespace

int64_t maxLiveBytes(const std::vector<Buffer> &buffers) {
  std::vector<int> all(buffers.size());
  std::iota(all.begin(), all.end(), 0);
  return maxLive(buffers, all);
}

PackResult pack(const std::vector<Buffer> &buffers,
                const PackOptions &options) {
  struct ClockMode {
    bool old = detail::clockReadsCpuTime();
    explicit ClockMode(bool cpu) { detail::clockReadsCpuTime() = cpu; }
    ~ClockMode() { detail::clockReadsCpuTime() = old; }
  } clockMode(options.cpuTime);
  Clock::time_point start = Clock::now();
  PackResult r;
  std::string err = validateBuffers(buffers);
  if (err.empty() && options.capacity && *options.capacity < 0)
    err = "capacity must not be negative (got " + str(*options.capacity) + ")";
  if (err.empty() && std::isnan(options.timeLimitSeconds))
    err = "time limit is not a number";
  if (err.empty() && options.timeLimitSeconds < 0)
    err = "time limit must not be negative";
  if (err.empty() && options.maxTableEntries < 0)
    err = "max table entries must not be negative (got " +
          str(options.maxTableEntries) + ")";
  if (!err.empty()) {
    r.status = PackResult::Status::InvalidInput;
    r.message = err;
    r.seconds = secondsSince(start);
    return r;
  }
  if (options.capacity) {
    for (const Buffer &b : buffers)
      if (b.size > *options.capacity) {
        r.status = PackResult::Status::Infeasible;
        r.proof = PackResult::Proof::BufferTooLarge;
        r.lowerBound = r.provenLowerBound = maxLiveBytes(buffers);
        r.message = "infeasible: buffer " + str(b.id) + " needs " +
                    str(b.size) + " bytes, more than the capacity " +
                    str(*options.capacity);
        r.seconds = secondsSince(start);
        return r;
      }
  }
  std::vector<Component> comps = splitComponents(buffers);
  if (options.capacity)
    r = packAtCapacity(buffers, comps, *options.capacity, options, start);
  else
    r = minimisePeak(buffers, comps, options, start);
  r.seconds = secondsSince(start);
  return r;
}

} // namespace packing
} // namespace memfit
