// Bindings for the buffer packer (memfit/Packing/Packer.h). The packer is
// plain C++ that never throws; this layer only converts lists and dicts.
#include "memfit/Packing/Packer.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

namespace nb = nanobind;
using memfit::packing::Buffer;

namespace {

std::vector<Buffer> makeBuffers(const std::vector<int64_t> &ids,
                                const std::vector<int64_t> &lower,
                                const std::vector<int64_t> &upper,
                                const std::vector<int64_t> &size) {
  size_t n = ids.size();
  if (lower.size() != n || upper.size() != n || size.size() != n)
    throw nb::value_error(
        ("ids, lower, upper and size must have the same length (got " +
         std::to_string(n) + ", " + std::to_string(lower.size()) + ", " +
         std::to_string(upper.size()) + ", " + std::to_string(size.size()) +
         ")")
            .c_str());
  std::vector<Buffer> buffers(n);
  for (size_t i = 0; i < n; ++i)
    buffers[i] = Buffer{ids[i], lower[i], upper[i], size[i]};
  return buffers;
}

nb::dict resultToPython(const memfit::packing::PackResult &r) {
  nb::dict d;
  d["status"] = std::string(memfit::packing::statusName(r.status));
  d["offsets"] = r.offsets;
  d["peak"] = r.peak;
  d["lower_bound"] = r.lowerBound;
  d["proven_lower_bound"] = r.provenLowerBound;
  d["optimal"] = r.optimal;
  d["message"] = r.message;
  d["proof"] = std::string(memfit::packing::proofName(r.proof));
  d["seconds"] = r.seconds;
  d["nodes"] = r.nodesExplored;
  return d;
}

} // namespace

void memfitBindPacking(nb::module_ &m) {
  m.def(
      "pack",
      [](const std::vector<int64_t> &ids, const std::vector<int64_t> &lower,
         const std::vector<int64_t> &upper, const std::vector<int64_t> &size,
         std::optional<int64_t> capacity, double time_limit,
         int64_t node_limit, bool cpu_time,
         std::optional<int64_t> max_table_entries) {
        std::vector<Buffer> buffers = makeBuffers(ids, lower, upper, size);
        memfit::packing::PackOptions options;
        options.capacity = capacity;
        options.timeLimitSeconds = time_limit;
        options.nodeLimit = node_limit;
        options.cpuTime = cpu_time;
        if (max_table_entries)
          options.maxTableEntries = *max_table_entries;
        memfit::packing::PackResult r;
        {
          nb::gil_scoped_release release;
          r = memfit::packing::pack(buffers, options);
        }
        return resultToPython(r);
      },
      nb::arg("ids"), nb::arg("lower"), nb::arg("upper"), nb::arg("size"),
      nb::arg("capacity") = nb::none(), nb::arg("time_limit") = 60.0,
      nb::arg("node_limit") = 0, nb::arg("cpu_time") = false,
      nb::arg("max_table_entries") = nb::none(),
      "Place buffers live over [lower, upper) at offsets so that buffers live "
      "at the same time do not overlap. With a capacity: find offsets within "
      "it or prove there are none; without: minimise the peak. Returns a dict "
      "{status: 'packed'|'infeasible'|'timeout'|'invalid', offsets, peak, "
      "lower_bound, proven_lower_bound, optimal, message, proof, seconds, nodes}.");
  m.def(
      "pack_best_fit",
      [](const std::vector<int64_t> &ids, const std::vector<int64_t> &lower,
         const std::vector<int64_t> &upper, const std::vector<int64_t> &size) {
        std::vector<Buffer> buffers = makeBuffers(ids, lower, upper, size);
        int64_t peak = 0;
        std::vector<int64_t> offsets;
        {
          nb::gil_scoped_release release;
          offsets = memfit::packing::bestFit(buffers, peak);
        }
        nb::dict d;
        d["offsets"] = offsets;
        d["peak"] = peak;
        return d;
      },
      nb::arg("ids"), nb::arg("lower"), nb::arg("upper"), nb::arg("size"),
      "Best-fit baseline (larger buffers first, each in the smallest gap "
      "that holds it). Inputs must be valid (check with pack first). Returns "
      "{offsets, peak}.");
}
