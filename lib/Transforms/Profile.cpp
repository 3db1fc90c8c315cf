//===- Profile.cpp - memfit-profile ----------------------------------------===//
//
// An analysis pass: writes the fusion-aware memory profile of every function
// (see MemoryProfile.h) as a table or JSON, and leaves the IR unchanged.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/ProfileReport.h"
#include "memfit/IR/OpViews.h"
#include "memfit/Support/Output.h"
#include "memfit/Transforms/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

namespace memfit {
#define GEN_PASS_DEF_MEMFITPROFILE
#include "memfit/Transforms/Passes.h.inc"
} // namespace memfit

using namespace mlir;

namespace {

struct MemfitProfilePass : memfit::impl::MemfitProfileBase<MemfitProfilePass> {
  using MemfitProfileBase::MemfitProfileBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (format != "table" && format != "json") {
      module.emitError() << "memfit-profile: unknown format '" << format
                         << "' (expected 'table' or 'json')";
      return signalPassFailure();
    }
    if (failed(memfit::verifyOpInvariants(module)))
      return signalPassFailure();
    FailureOr<std::vector<memfit::FunctionProfile>> profiles =
        memfit::profileModule(module);
    if (failed(profiles))
      return signalPassFailure();
    memfit::ProfileReportOptions opts{top, timeline};
    std::string text = format == "json"
                           ? memfit::renderProfileJson(*profiles, opts) + "\n"
                           : memfit::renderProfileTable(*profiles, opts);
    if (failed(write(text)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }

  LogicalResult write(llvm::StringRef text) {
    return memfit::writeReport(getOperation(), "memfit-profile", output, text);
  }
};

} // namespace
