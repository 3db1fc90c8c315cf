//===- ProfileReport.cpp - memory profiles as tables and JSON --------------===//
#include "memfit/Analysis/ProfileReport.h"

#include "memfit/Support/ByteSize.h"
#include "memfit/Support/Diagnostics.h"

#include "mlir/IR/AsmState.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace memfit;

FailureOr<std::vector<FunctionProfile>> memfit::profileModule(ModuleOp module) {
  std::vector<FunctionProfile> out;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal())
      continue;
    FailureOr<FunctionProfile> p = profileFunction(f);
    if (failed(p))
      return failure();
    out.push_back(std::move(*p));
  }
  return out;
}

namespace {

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// "%arg0" / "%3 = stablehlo.dot_general" style description of a value.
std::string describeValue(const LiveTensor &t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (t.isArgument) {
    os << "argument #" << llvm::cast<BlockArgument>(t.value).getArgNumber();
    return s;
  }
  Operation *def = t.value.getDefiningOp();
  os << def->getName();
  if (def->getNumResults() > 1)
    os << "#" << llvm::cast<OpResult>(t.value).getResultNumber();
  return s;
}

std::string where(Value v) {
  Location loc = v.getDefiningOp() ? v.getDefiningOp()->getLoc()
                                   : llvm::cast<BlockArgument>(v).getLoc();
  return getUserSourceLine(loc);
}

std::string where(Operation *op) { return op ? getUserSourceLine(op->getLoc()) : ""; }

/// The step of the memfit-split loop that is or holds `op` (the `step` of its
/// `memfit.split` attribute), or -1: reports shade the loops memfit made.
int64_t splitStep(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto note = op->getAttrOfType<DictionaryAttr>("memfit.split"))
      if (auto step = note.getAs<IntegerAttr>("step"))
        return step.getInt();
  return -1;
}

} // namespace

std::string memfit::renderProfileTable(const std::vector<FunctionProfile> &profiles,
                                       const ProfileReportOptions &options) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (const FunctionProfile &p : profiles) {
    os << "memfit-profile: @" << p.name
       << (p.perDevice ? " (sharded: bytes per device)" : "") << "\n";
    os << "  arguments: " << formatBytes(p.argumentBytes) << " (" << p.argumentBytes
       << " B)\n";
    os << "  outputs:   " << formatBytes(p.outputBytes) << " (" << p.outputBytes << " B)\n";
    os << "  peak:      " << formatBytes(p.peakBytes) << " (" << p.peakBytes << " B)";
    if (p.peakOp) {
      os << " at " << p.peakOp->getName();
      std::string w = where(p.peakOp);
      if (!w.empty())
        os << " (" << w << ")";
    }
    os << "\n";
    os << "  largest tensors live at the peak:\n";
    unsigned n = 0;
    for (const LiveTensor &t : p.liveAtPeak) {
      if (n++ == options.top)
        break;
      os << "    " << llvm::format("%12s", formatBytes(t.bytes).c_str()) << "  "
         << typeText(t.value.getType()) << "  " << describeValue(t);
      std::string w = where(t.value);
      if (!w.empty())
        os << "  " << w;
      os << "\n";
    }
    if (options.timeline) {
      os << "  timeline:\n";
      for (const TimelinePoint &tp : p.timeline)
        os << "    " << llvm::format("%12s", formatBytes(tp.liveBytes).c_str()) << "  "
           << std::string(2 * tp.depth, ' ') << tp.op->getName() << "\n";
    }
  }
  return s;
}

std::string memfit::renderProfileJson(const std::vector<FunctionProfile> &profiles,
                                      const ProfileReportOptions &options) {
  llvm::json::Array functions;
  for (const FunctionProfile &p : profiles) {
    llvm::json::Array largest;
    unsigned n = 0;
    for (const LiveTensor &t : p.liveAtPeak) {
      if (n++ == options.top)
        break;
      largest.push_back(llvm::json::Object{{"bytes", t.bytes},
                                           {"type", typeText(t.value.getType())},
                                           {"value", describeValue(t)},
                                           {"depth", t.depth},
                                           {"location", where(t.value)}});
    }
    llvm::json::Array timeline;
    for (const TimelinePoint &tp : p.timeline)
      timeline.push_back(llvm::json::Object{
          {"op", tp.op->getName().getStringRef().str()},
          {"depth", tp.depth},
          {"live_bytes", tp.liveBytes},
          {"location", where(tp.op)},
          {"split_step", splitStep(tp.op)}});
    functions.push_back(llvm::json::Object{
        {"name", p.name},
        {"per_device", p.perDevice},
        {"argument_bytes", p.argumentBytes},
        {"output_bytes", p.outputBytes},
        {"peak_bytes", p.peakBytes},
        {"peak_op", p.peakOp ? p.peakOp->getName().getStringRef().str() : ""},
        {"peak_location", where(p.peakOp)},
        {"largest_at_peak", std::move(largest)},
        {"timeline", std::move(timeline)}});
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"functions", std::move(functions)}}));
  return s;
}
