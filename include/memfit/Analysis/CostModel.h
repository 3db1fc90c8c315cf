//===- CostModel.h - devices, FLOPs and bytes for memory-space assignment -===//
//
// What memory-space assignment needs to know about time: the device (how
// big and how fast its fast and slow memories are, how fast it computes, how
// fast it copies between the two), and for each op how many floating-point
// operations it performs. The device presets live in CostModel.cpp, one
// place, each number with its source.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_ANALYSIS_COSTMODEL_H
#define MEMFIT_ANALYSIS_COSTMODEL_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>

namespace memfit {

/// A device with a fast memory (device HBM, or an on-chip scratchpad) and a
/// slow one (host memory, or HBM behind the scratchpad). Bandwidths in
/// bytes/s, compute in FLOP/s.
struct DeviceModel {
  std::string name;
  int64_t fastCapacity = 0;   // bytes of fast memory
  double fastBandwidth = 0;   // fast memory <-> compute units
  double slowBandwidth = 0;   // slow memory <-> compute units (direct access)
  double copyBandwidth = 0;   // fast <-> slow copies, each direction
  double flops = 0;           // FLOP/s for the program's dominant dot type
  double flopsLowPrecision = 0; // FLOP/s for 16-bit floats (bf16/f16)
  double flopsF32 = 0;          // FLOP/s for f32
  bool copyOverlapsCompute = true;

  /// Seconds an op takes with its operands and results in fast memory: the
  /// roofline max of compute and memory traffic.
  double opSeconds(double opFlops, double bytes) const;
  /// Seconds to move `bytes` between fast and slow memory.
  double copySeconds(double bytes) const { return bytes / copyBandwidth; }
};

/// The preset devices: "h200", "tpu-like", "cpu". nullopt for other names.
std::optional<DeviceModel> getDevicePreset(llvm::StringRef name);
/// The preset names, for error messages: "h200, tpu-like, cpu".
std::string devicePresetNames();

/// Floating-point operations of one op on its own (not counting fused
/// producers or nested regions): dot_general 2*M*N*K*batch, convolution
/// 2*outputs*window*input-features, elementwise one per result element,
/// reduce one per input element, layout and data-movement ops zero.
double opFlops(mlir::Operation *op);

/// The element type's width class of a dot/convolution: true when the
/// operands are 16-bit floats (bf16, f16), where tensor cores run fastest.
bool isLowPrecisionFloat(mlir::Type elementType);

} // namespace memfit

#endif
