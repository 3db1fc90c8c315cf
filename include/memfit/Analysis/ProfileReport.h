//===- ProfileReport.h - memory profiles as tables and JSON -----*- C++ -*-===//
#ifndef MEMFIT_ANALYSIS_PROFILEREPORT_H
#define MEMFIT_ANALYSIS_PROFILEREPORT_H

#include "memfit/Analysis/MemoryProfile.h"
#include "mlir/IR/BuiltinOps.h"

namespace memfit {

struct ProfileReportOptions {
  unsigned top = 5;
  bool timeline = false;
};

/// Profiles every function with a body; failure if any cannot be profiled.
mlir::FailureOr<std::vector<FunctionProfile>> profileModule(mlir::ModuleOp module);

std::string renderProfileTable(const std::vector<FunctionProfile> &profiles,
                               const ProfileReportOptions &options);
/// JSON: {"functions": [{"name", "argument_bytes", "output_bytes",
/// "peak_bytes", "peak_op", "peak_location", "largest_at_peak": [...],
/// "timeline": [{"op", "depth", "live_bytes", "location", "split_step"}]}]}
/// (split_step: the memfit-split loop the op is or is in, -1 if none).
std::string renderProfileJson(const std::vector<FunctionProfile> &profiles,
                              const ProfileReportOptions &options);

} // namespace memfit

#endif
