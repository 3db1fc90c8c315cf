//===- CostModel.cpp - device presets and per-op FLOPs ----------------------===//
//
// The one place that holds device numbers. Every number says where it comes
// from; numbers that are assumptions say so.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/CostModel.h"

#include "memfit/IR/OpTable.h"
#include "memfit/IR/OpViews.h"

#include "mlir/IR/BuiltinTypes.h"
#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace memfit;

//===-- devices ------------------------------------------------------------===//

double DeviceModel::opSeconds(double opFlops, double bytes) const {
  return std::max(opFlops / flops, bytes / fastBandwidth);
}

namespace {

DeviceModel h200() {
  DeviceModel d;
  d.name = "h200";
  // NVIDIA H200 Tensor Core GPU datasheet: 141 GB HBM3e at 4.8 TB/s.
  d.fastCapacity = 141'000'000'000LL;
  d.fastBandwidth = 4.8e12;
  // Host memory is reached over PCIe Gen5 x16: 64 GB/s per direction in
  // theory (PCI-SIG), ~55 GB/s per direction measured-typical for pinned
  // host memory (cudaMemcpy / nvbandwidth on H100/H200 hosts). Both direct
  // (zero-copy) access and DMA copies go through that link.
  d.slowBandwidth = 55e9;
  d.copyBandwidth = 55e9;
  // H200 datasheet: BF16 Tensor Core 1,979 TFLOPS *with sparsity*, i.e.
  // ~989 TFLOP/s dense; FP32 (CUDA cores) 67 TFLOP/s.
  d.flopsLowPrecision = 989e12;
  d.flopsF32 = 67e12;
  d.flops = d.flopsF32;
  // Copies run on the copy engines, concurrently with kernels (CUDA streams).
  d.copyOverlapsCompute = true;
  return d;
}

DeviceModel tpuLike() {
  DeviceModel d;
  d.name = "tpu-like";
  // Jouppi et al., "TPU v4: An Optically Reconfigurable Supercomputer for
  // Machine Learning with Hardware Support for Embeddings", ISCA 2023:
  // 128 MiB on-chip CMEM, 32 GiB HBM2 at 1.2 TB/s, 275 TFLOP/s peak BF16.
  d.fastCapacity = 128LL << 20;
  d.slowBandwidth = 1.2e12;
  // Copies CMEM <-> HBM are bounded by the HBM side.
  d.copyBandwidth = 1.2e12;
  // ASSUMPTION (not in the paper): on-chip SRAM streams at ~4x HBM.
  d.fastBandwidth = 4.8e12;
  // 275 TFLOP/s BF16 (paper). jax's default precision on TPU runs f32 dots
  // as one bf16 pass on the MXU, so f32 programs get the same peak.
  d.flopsLowPrecision = 275e12;
  d.flopsF32 = 275e12;
  d.flops = d.flopsF32;
  // DMA engines move data while the cores compute.
  d.copyOverlapsCompute = true;
  return d;
}

DeviceModel cpu() {
  DeviceModel d;
  d.name = "cpu";
  // This machine image (lscpu): AMD EPYC, 2 cores, 32 MiB L3. The "fast"
  // memory is the last-level cache, the "slow" one DRAM.
  d.fastCapacity = 32LL << 20;
  // ASSUMPTIONS (typical figures for one or two server cores, not measured
  // here): L3 ~100 GB/s, DRAM stream ~20 GB/s; copies are loads/stores
  // through the same cores, so they do not overlap compute.
  d.fastBandwidth = 100e9;
  d.slowBandwidth = 20e9;
  d.copyBandwidth = 20e9;
  // ASSUMPTION: 2 cores x 3 GHz x 32 f32 FLOP/cycle (two 8-wide FMA units).
  d.flopsF32 = 192e9;
  d.flopsLowPrecision = 192e9;
  d.flops = d.flopsF32;
  d.copyOverlapsCompute = false;
  return d;
}

} // namespace

std::optional<DeviceModel> memfit::getDevicePreset(llvm::StringRef name) {
  if (name == "h200")
    return h200();
  if (name == "tpu-like")
    return tpuLike();
  if (name == "cpu")
    return cpu();
  return std::nullopt;
}

std::string memfit::devicePresetNames() { return "h200, tpu-like, cpu"; }

bool memfit::isLowPrecisionFloat(Type t) {
  return t.isBF16() || t.isF16();
}

//===-- FLOPs --------------------------------------------------------------===//

namespace {

double numElements(Type t) {
  auto rt = llvm::dyn_cast<RankedTensorType>(t);
  if (!rt || !rt.hasStaticShape())
    return 0;
  return static_cast<double>(rt.getNumElements());
}

double resultElements(Operation *op) {
  double n = 0;
  for (Type t : op->getResultTypes())
    n += numElements(t);
  return n;
}

double dotFlops(DotGeneralView dot) {
  auto lhs = llvm::dyn_cast<RankedTensorType>(dot.getLhs().getType());
  if (!lhs || !lhs.hasStaticShape())
    return 0;
  double k = 1;
  for (int64_t d : dot.getDims().lhsContract)
    k *= static_cast<double>(lhs.getDimSize(d));
  // The result holds batch x M x N elements.
  return 2.0 * resultElements(dot.getOperation()) * k;
}

/// 2 * outputs * (window x input features per group): the kernel's element
/// count divided by its output-feature dimension. The kernel dimension
/// order is read from `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[...]>`.
double convolutionFlops(Operation *op) {
  if (op->getNumOperands() < 2)
    return 0;
  auto kernel = llvm::dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  if (!kernel || !kernel.hasStaticShape())
    return 0;
  int64_t outFeatureDim = kernel.getRank() - 1;
  if (Attribute a = op->getAttr("dimension_numbers")) {
    std::string text = attrToText(a);
    size_t x = text.find("]x[");
    size_t close = x == std::string::npos ? x : text.find(']', x + 3);
    if (close != std::string::npos) {
      llvm::StringRef kernelDims(text.data() + x + 3, close - x - 3);
      llvm::SmallVector<llvm::StringRef> parts;
      kernelDims.split(parts, ',');
      for (auto [i, p] : llvm::enumerate(parts))
        if (p.trim() == "o")
          outFeatureDim = i;
    }
  }
  double window = numElements(kernel) /
                  std::max<double>(1, kernel.getDimSize(outFeatureDim));
  return 2.0 * resultElements(op) * window;
}

} // namespace

double memfit::opFlops(Operation *op) {
  OpKind kind = getOpKind(op);
  switch (kind) {
  case OpKind::DotGeneral:
    return dotFlops(DotGeneralView(op));
  case OpKind::ElementwiseUnary:
  case OpKind::ElementwiseBinary:
  case OpKind::Compare:
  case OpKind::Select:
  case OpKind::Clamp:
    return resultElements(op);
  case OpKind::Reduce: {
    ReduceView r(op);
    double n = 0;
    for (Value v : r.getInputs())
      n += numElements(v.getType());
    return n;
  }
  case OpKind::Sort: {
    // ~n log2 n comparisons along the sorted dimension, per row.
    double n = op->getNumOperands() ? numElements(op->getOperand(0).getType()) : 0;
    auto t = op->getNumOperands()
                 ? llvm::dyn_cast<RankedTensorType>(op->getOperand(0).getType())
                 : RankedTensorType();
    double len = t && t.getRank() ? t.getDimSize(SortView(op).getDimension()) : 1;
    return n * std::max(1.0, std::log2(std::max(1.0, len)));
  }
  case OpKind::TopK:
    return numElements(op->getOperand(0).getType());
  case OpKind::CustomCall: {
    // LAPACK-style factorisations jax emits as custom calls: n^3/3 for a
    // Cholesky, n^2 * nrhs for a triangular solve, per batch element.
    std::string target = CustomCallView(op).getTarget();
    auto t = op->getNumOperands()
                 ? llvm::dyn_cast<RankedTensorType>(op->getOperand(0).getType())
                 : RankedTensorType();
    if (!t || !t.hasStaticShape() || t.getRank() < 2)
      return 0;
    double n = t.getDimSize(t.getRank() - 1);
    double batch = numElements(t) / (n * t.getDimSize(t.getRank() - 2));
    if (llvm::StringRef(target).contains("potrf"))
      return batch * n * n * n / 3.0;
    if (llvm::StringRef(target).contains("trsm") && op->getNumOperands() > 1)
      return n * numElements(op->getOperand(1).getType());
    return 0;
  }
  case OpKind::Convolution:
    return convolutionFlops(op);
  case OpKind::Cholesky: {
    auto t = llvm::dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (t && t.hasStaticShape() && t.getRank() >= 2) {
      double n = t.getDimSize(t.getRank() - 1);
      return numElements(t) / n * n * n / 3.0;
    }
    return 0;
  }
  case OpKind::TriangularSolve: {
    auto a = llvm::dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (a && a.hasStaticShape() && a.getRank() >= 2)
      return a.getDimSize(a.getRank() - 1) * numElements(op->getOperand(1).getType());
    return 0;
  }
  case OpKind::ReduceWindow:
  case OpKind::SelectAndScatter:
  case OpKind::Scatter: {
    double n = 0;
    for (Value v : op->getOperands())
      n += numElements(v.getType());
    return n;
  }
  default:
    return 0;
  }
}
