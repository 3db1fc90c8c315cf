//===- Pipeline.h - memfit's plain C++ entry points -------------*- C++ -*-===//
//
// The API the Python extension (and any other embedder) calls. It takes and
// returns text and never throws: MLIR frames must not unwind, and every
// failure is reported through `Diagnostic`s with their locations.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_API_PIPELINE_H
#define MEMFIT_API_PIPELINE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memfit {

struct Diagnostic {
  std::string severity; // "error", "warning", "note", "remark"
  std::string message;
  std::string location;   // MLIR's location, e.g. loc("-":3:5)
  std::string sourceLine; // the user's file:line:col when recorded, else ""
  std::string str() const;
};

struct PipelineOptions {
  /// Print the result in generic form (what jaxlib and memfit read).
  bool printGeneric = true;
  /// Keep locations in the printed result (jax's Python lines).
  bool debugInfo = true;
  /// Record the pipeline as the `memfit.pipeline` module attribute.
  bool recordPipeline = true;
};

struct PipelineResult {
  bool ok = false;
  std::string output; // the transformed module (empty on failure)
  std::vector<Diagnostic> diagnostics;
  /// All diagnostics, one per line.
  std::string diagnosticsText() const;
};

/// Parses `moduleText` (generic or pretty form of func/arith; StableHLO ops
/// in generic form), runs `pipeline` (e.g. "memfit-inline,memfit-profile";
/// empty = no passes) on the module, and prints it. On any failure the
/// result has ok=false, no output, and diagnostics saying why.
PipelineResult runPipeline(const std::string &moduleText,
                           const std::string &pipeline,
                           const PipelineOptions &options = {});

/// The fusion-aware memory profile of every function, as JSON (see
/// ProfileReport.h), after inlining calls. `output` holds the JSON.
PipelineResult profileModuleText(const std::string &moduleText, unsigned top,
                                 bool timeline);

/// Parses a memory size ("256MiB", "1GB", "1048576"); sets `error` when it
/// cannot.
std::optional<int64_t> parseMemorySize(const std::string &text, std::string &error);

} // namespace memfit

#endif
