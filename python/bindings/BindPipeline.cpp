// Bindings for running pass pipelines and profiles over module text.
#include "memfit/API/Pipeline.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace {

nb::list diagnosticsToPython(const memfit::PipelineResult &r) {
  nb::list out;
  for (const memfit::Diagnostic &d : r.diagnostics) {
    nb::dict item;
    item["severity"] = d.severity;
    item["message"] = d.message;
    item["location"] = d.location;
    item["source_line"] = d.sourceLine;
    out.append(item);
  }
  return out;
}

nb::dict resultToPython(const memfit::PipelineResult &r) {
  nb::dict d;
  d["ok"] = r.ok;
  d["output"] = r.output;
  d["diagnostics"] = diagnosticsToPython(r);
  return d;
}

} // namespace

void memfitBindPipeline(nb::module_ &m) {
  m.def(
      "run_pipeline",
      [](const std::string &text, const std::string &pipeline, bool generic,
         bool debug_info, bool record) {
        memfit::PipelineOptions opts;
        opts.printGeneric = generic;
        opts.debugInfo = debug_info;
        opts.recordPipeline = record;
        memfit::PipelineResult r;
        {
          nb::gil_scoped_release release;
          r = memfit::runPipeline(text, pipeline, opts);
        }
        return resultToPython(r);
      },
      nb::arg("text"), nb::arg("pipeline"), nb::arg("generic") = true,
      nb::arg("debug_info") = true, nb::arg("record_pipeline") = true,
      "Run a pass pipeline over module text. Returns {ok, output, diagnostics}.");
  m.def(
      "profile",
      [](const std::string &text, unsigned top, bool timeline) {
        memfit::PipelineResult r;
        {
          nb::gil_scoped_release release;
          r = memfit::profileModuleText(text, top, timeline);
        }
        return resultToPython(r);
      },
      nb::arg("text"), nb::arg("top") = 5, nb::arg("timeline") = true,
      "Fusion-aware memory profile of every function, as JSON text in 'output'.");
  m.def(
      "parse_memory_size",
      [](const std::string &text) {
        std::string error;
        std::optional<int64_t> v = memfit::parseMemorySize(text, error);
        if (!v)
          throw nb::value_error(error.c_str());
        return *v;
      },
      nb::arg("text"), "Parse '256MiB', '1GB', '1048576' into bytes.");
}
