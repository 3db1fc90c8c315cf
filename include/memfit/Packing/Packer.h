//===- Packer.h - Buffer packing (dynamic storage allocation) ---*- C++ -*-===//
//
// Places buffers with fixed, known lifetimes at byte offsets so that no two
// buffers that are live at the same time overlap in memory.
//
// This is the dynamic storage allocation problem (NP-hard). The packer runs an
// exact branch-and-bound search over "skyline" placements (see
// docs/packing.md) and either finds offsets within the capacity, proves that
// none exist, or stops at a time limit. Without a capacity it minimises the
// peak (largest offset + size).
//
// The library is plain C++17: no exceptions are thrown and no RTTI is needed.
// Every error is reported through PackResult::status and PackResult::message.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFIT_PACKING_PACKER_H
#define MEMFIT_PACKING_PACKER_H

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memfit {
namespace packing {

/// One buffer: live over the half-open time range [lower, upper), needing
/// `size` bytes. Ids must be unique; they are only used in messages.
struct Buffer {
  int64_t id = 0;
  int64_t lower = 0;
  int64_t upper = 0;
  int64_t size = 0;
};

struct PackOptions {
  /// Capacity in bytes. When set, find offsets with offset + size <= capacity
  /// for every buffer, or prove that none exist. When unset, minimise the
  /// peak.
  std::optional<int64_t> capacity;
  /// Wall-clock budget for the whole call.
  double timeLimitSeconds = 60.0;
  /// Stop after this many search nodes (0: no limit). Makes runs
  /// reproducible independently of machine speed; reported as Timeout.
  int64_t nodeLimit = 0;
  /// Count timeLimitSeconds (and PackResult::seconds) in CPU time of the
  /// calling thread instead of wall-clock time: on a loaded machine, the
  /// same limit then buys the same search.
  bool cpuTime = false;
  /// Memory bound of the search, in table entries (4 to 8 bytes each). The
  /// exhaustive (skyline) search keeps (sum of lifetimes in time segments)
  /// + 2 x (pairs of buffers live at the same time) entries; a problem
  /// over the bound is searched by the time-order searches alone, which
  /// find packings but prove nothing; one whose lifetimes alone exceed it
  /// is not searched (docs/packing.md, "Limits").
  int64_t maxTableEntries = int64_t(1) << 26;
};

struct PackResult {
  enum class Status {
    /// Offsets were found (within the capacity, when one was given).
    Packed,
    /// Proven: no placement fits the capacity.
    Infeasible,
    /// The time or node limit ran out before a packing or a proof was found.
    Timeout,
    /// The input is malformed (see message).
    InvalidInput,
  };
  Status status = Status::InvalidInput;
  /// Why an Infeasible result holds.
  enum class Proof {
    None,
    /// More bytes are live at one time than the capacity holds (rounded
    /// down to a multiple of the gcd of the sizes, which every offset of a
    /// packing pushed down is).
    LiveBytes,
    /// One buffer alone is larger than the capacity.
    BufferTooLarge,
    /// The exhaustive search ruled out every canonical placement.
    SearchExhausted,
    /// The buffers live in one time section, each cut to it, have no
    /// packing (the search ruled out every canonical placement of that
    /// section): a relaxation of the whole, so the whole has none either.
    Section,
  };
  Proof proof = Proof::None;
  /// offsets[i] belongs to buffers[i]; empty unless status == Packed.
  std::vector<int64_t> offsets;
  /// max(offset + size) of the packing returned (0 when none).
  int64_t peak = 0;
  /// The most bytes live at any one time: no packing has a smaller peak.
  int64_t lowerBound = 0;
  /// Peak-minimising mode: the largest capacity proven infeasible plus one,
  /// and at least lowerBound. Equal to peak when the peak is proven minimal.
  int64_t provenLowerBound = 0;
  /// True when the packing's peak is proven minimal (peak-minimising mode),
  /// or trivially when peak == lowerBound.
  bool optimal = false;
  /// Human-readable summary or error.
  std::string message;
  double seconds = 0.0;
  int64_t nodesExplored = 0;
};

/// Pack `buffers`. Never throws.
PackResult pack(const std::vector<Buffer> &buffers, const PackOptions &options);

/// A simple best-fit heuristic (the classic allocator baseline): buffers in
/// order of decreasing size, then decreasing lifetime, each placed in the
/// smallest gap between already placed, time-overlapping buffers that holds
/// it (or on top). Returns the offsets; `peak` receives max(offset + size).
/// Inputs must already be valid.
std::vector<int64_t> bestFit(const std::vector<Buffer> &buffers, int64_t &peak);

/// Best-fit that stops at `deadline`: `finished` is false (and the result
/// empty) when it ran out of time before placing every buffer.
std::vector<int64_t> bestFit(const std::vector<Buffer> &buffers, int64_t &peak,
                             std::chrono::steady_clock::time_point deadline,
                             bool &finished);

/// The most bytes live at any one time (0 for no buffers). Inputs must be
/// valid.
int64_t maxLiveBytes(const std::vector<Buffer> &buffers);

/// Checks an assignment of offsets. Returns an empty string when it is valid,
/// otherwise a description of the first problem found.
std::string checkPacking(const std::vector<Buffer> &buffers,
                         const std::vector<int64_t> &offsets,
                         std::optional<int64_t> capacity);

/// "packed", "infeasible", "timeout" or "invalid".
const char *statusName(PackResult::Status status);

/// "", "live-bytes", "buffer-too-large", "search-exhausted" or "section".
const char *proofName(PackResult::Proof proof);

} // namespace packing
} // namespace memfit

#endif // MEMFIT_PACKING_PACKER_H
