//===- ExportBuffers.cpp - memfit-export-buffers ----------------------------===//
//
// Writes one function as a memory-space-assignment instance (the JSON schema
// of python/memfit/msa/instance.py): the schedule, every buffer XLA would
// materialise with its live interval, per-op FLOPs, the device and the
// capacity of fast memory. How the schedule is built: BufferSchedule.h.
// The IR is not changed.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/BufferSchedule.h"
#include "memfit/Analysis/CostModel.h"
#include "memfit/Analysis/MemoryProfile.h"
#include "memfit/IR/OpViews.h"
#include "memfit/Support/ByteSize.h"
#include "memfit/Support/Output.h"
#include "memfit/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include <algorithm>
#include <cmath>

namespace memfit {
#define GEN_PASS_DEF_MEMFITEXPORTBUFFERS
#include "memfit/Transforms/Passes.h.inc"
} // namespace memfit

using namespace mlir;
using namespace memfit;

namespace {

struct MemfitExportBuffersPass
    : memfit::impl::MemfitExportBuffersBase<MemfitExportBuffersPass> {
  using MemfitExportBuffersBase::MemfitExportBuffersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const llvm::Twine &msg) {
      module.emitError() << "memfit-export-buffers: " << msg;
      signalPassFailure();
    };
    std::optional<DeviceModel> device = getDevicePreset(deviceName);
    if (!device)
      return fail("unknown device '" + deviceName + "' (expected one of " +
                  devicePresetNames() + ")");
    if (mode != "offload" && mode != "placement")
      return fail("unknown mode '" + mode + "' (expected 'offload' or 'placement')");
    if (failed(verifyOpInvariants(module)))
      return signalPassFailure();
    func::FuncOp func = findScheduledFunction(module, functionName);
    if (!func)
      return fail(functionName.empty()
                      ? llvm::Twine("no function with a body to export")
                      : "no function '" + functionName + "' with a body");
    FailureOr<FunctionProfile> profile = profileFunction(func);
    if (failed(profile))
      return signalPassFailure();
    std::optional<int64_t> cap = parseCapacity(profile->peakBytes);
    if (!cap)
      return signalPassFailure();

    BufferSchedule schedule = buildBufferSchedule(func);
    for (Operation *loop : schedule.unknownTripCounts)
      loop->emitWarning("memfit-export-buffers: cannot read this loop's trip "
                        "count from its cond; its body is weighted 1");
    if (schedule.lowPrecisionDotFlops > schedule.otherDotFlops)
      device->flops = device->flopsLowPrecision;
    std::string programName = program;
    if (programName.empty())
      programName = module.getSymName().value_or("module").str();
    std::string text = instanceToJson(schedule, *device, *cap, programName,
                                      func.getSymName(), mode);
    if (failed(write(text)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }

  /// "50%" of the profile's peak, or a byte size ("1GiB", "1048576").
  std::optional<int64_t> parseCapacity(int64_t peakBytes) {
    llvm::StringRef text = llvm::StringRef(capacity).trim();
    if (text.empty())
      text = "100%";
    if (text.consume_back("%")) {
      double pct;
      if (text.trim().getAsDouble(pct) || pct < 0) {
        getOperation().emitError()
            << "memfit-export-buffers: capacity '" << capacity
            << "' is not a percentage (e.g. 50%)";
        return std::nullopt;
      }
      return static_cast<int64_t>(std::floor(peakBytes * pct / 100.0));
    }
    std::string error;
    std::optional<int64_t> bytes = parseByteSize(text, error);
    if (!bytes)
      getOperation().emitError() << "memfit-export-buffers: capacity: " << error;
    return bytes;
  }

  LogicalResult write(llvm::StringRef text) {
    return memfit::writeReport(getOperation(), "memfit-export-buffers", output, text);
  }
};

} // namespace
