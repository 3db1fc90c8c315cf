// RUN: memfit-opt %s --memfit-export-buffers="function=fused capacity=100%" -o /dev/null | FileCheck %s --check-prefix=FUSED
// RUN: memfit-opt %s --memfit-export-buffers="function=dot capacity=50%" -o /dev/null | FileCheck %s --check-prefix=DOT
// RUN: memfit-opt %s --memfit-export-buffers="function=in_place capacity=1KiB" -o /dev/null | FileCheck %s --check-prefix=INPLACE
// RUN: memfit-opt %s --memfit-export-buffers="function=in_place_through_barrier" -o /dev/null | FileCheck %s --check-prefix=BARRIER
// RUN: memfit-opt %s --memfit-export-buffers="function=several_uses" -o /dev/null | FileCheck %s --check-prefix=USES
// RUN: memfit-opt %s --memfit-export-buffers="function=bitcast" -o /dev/null | FileCheck %s --check-prefix=BITCAST
// RUN: memfit-opt %s --memfit-export-buffers="function=dot output=%t.json" | FileCheck %s --check-prefix=UNCHANGED
// RUN: FileCheck %s --check-prefix=DOT < %t.json
// RUN: mlir-opt --load-pass-plugin=%plugin --allow-unregistered-dialect --pass-pipeline="builtin.module(memfit-export-buffers{function=dot capacity=50%})" %s -o /dev/null | FileCheck %s --check-prefix=DOT
//
// memfit-export-buffers writes a function as a memory-space-assignment
// instance: one schedule entry per op XLA materialises (fused producers and
// their FLOPs folded in), every buffer with its interval and uses, the device
// preset and the capacity. Each function below shows one behaviour.

// A broadcast/subtract/multiply chain fuses into its reduce: one entry, its
// FLOPs the chain's (64*64*8 elements x 2 ops) plus the reduce's (64*64*8),
// and no buffer for the 64x64x8 intermediates. Capacity 100% is the peak.
// FUSED:       "function": "fused",
// FUSED:       "capacity": 20480,
// FUSED:       "ops": [
// FUSED-NEXT:   {
// FUSED-NEXT:    "id": 0,
// FUSED-NEXT:    "name": "stablehlo.reduce",
// FUSED:         "flops": 98304,
// FUSED-NEXT:    "weight": 1,
// FUSED:         "operands": [0, 1],
// FUSED-NEXT:    "results": [2]
// FUSED:       "buffers": [
// FUSED:         "name": "arg0:64x8xf32",
// FUSED-NEXT:    "size": 2048,
// FUSED-NEXT:    "start": 0,
// FUSED-NEXT:    "end": 0,
// FUSED-NEXT:    "uses": [0],
// FUSED-NEXT:    "kind": "argument",
// FUSED:         "name": "reduce:64x64xf32",
// FUSED-NEXT:    "size": 16384,
// FUSED-NEXT:    "start": 0,
// FUSED-NEXT:    "end": 0,
// FUSED-NEXT:    "uses": [],
// FUSED-NEXT:    "kind": "output",
// FUSED-NOT:     "name":
func.func @fused(%x: tensor<64x8xf32>, %y: tensor<64x8xf32>) -> tensor<64x64xf32> {
  %bx = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<64x8xf32>) -> tensor<64x64x8xf32>
  %by = "stablehlo.broadcast_in_dim"(%y) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xf32>) -> tensor<64x64x8xf32>
  %d = "stablehlo.subtract"(%bx, %by) : (tensor<64x64x8xf32>, tensor<64x64x8xf32>) -> tensor<64x64x8xf32>
  %s = "stablehlo.multiply"(%d, %d) : (tensor<64x64x8xf32>, tensor<64x64x8xf32>) -> tensor<64x64x8xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %r = "stablehlo.reduce"(%s, %z) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<64x64x8xf32>, tensor<f32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// dot_general FLOPs are 2*M*N*K*batch (2*4*32*16*8 = 32768); the h200
// preset's numbers (lib/Analysis/CostModel.cpp) with the FP32 rate for an
// f32 program; capacity 50% of the peak (4*(32*8+8*16+32*16)*4 B = 14336).
// DOT:         "program": "{{.*}}",
// DOT-NEXT:    "function": "dot",
// DOT-NEXT:    "mode": "offload",
// DOT-NEXT:    "device": {
// DOT-NEXT:     "name": "h200",
// DOT-NEXT:     "fast_capacity": 141000000000,
// DOT-NEXT:     "fast_bandwidth": 4800000000000,
// DOT-NEXT:     "slow_bandwidth": 55000000000,
// DOT-NEXT:     "copy_bandwidth": 55000000000,
// DOT-NEXT:     "flops": 67000000000000,
// DOT-NEXT:     "copy_overlaps_compute": true
// DOT-NEXT:    },
// DOT-NEXT:    "capacity": 7168,
// DOT:          "name": "stablehlo.dot_general",
// DOT:          "flops": 32768,
// DOT:          "bytes": 14336,
// DOT-NEXT:     "operands": [0, 1],
// DOT-NEXT:     "results": [2]
func.func @dot(%a: tensor<4x32x8xf32>, %b: tensor<4x8x16xf32>) -> tensor<4x32x16xf32> {
  %c = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<4x32x8xf32>, tensor<4x8x16xf32>) -> tensor<4x32x16xf32>
  return %c : tensor<4x32x16xf32>
}

// An elementwise op over a dot result that dies there writes in place (XLA
// shares the buffer): one buffer of two values, read by the second entry.
// Capacity given in bytes.
// INPLACE:       "capacity": 1024,
// INPLACE:        "name": "stablehlo.dot_general",
// INPLACE:        "results": [2]
// INPLACE:        "name": "stablehlo.exponential",
// INPLACE:        "operands": [2],
// INPLACE-NEXT:   "results": []
// INPLACE:        "name": "dot_general:16x16xf32",
// INPLACE-NEXT:   "size": 1024,
// INPLACE-NEXT:   "start": 0,
// INPLACE-NEXT:   "end": 1,
// INPLACE-NEXT:   "uses": [1],
// INPLACE-NEXT:   "kind": "output",
// INPLACE-NEXT:   "values": 2
func.func @in_place(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> tensor<16x16xf32> {
  %c = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  %e = "stablehlo.exponential"(%c) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  return %e : tensor<16x16xf32>
}

// An in-place update behind an optimization_barrier writes the buffer the
// barrier forwards (a split's remainder step updates its loop's accumulator
// so; XLA puts exp(x) and the scatter at one offset): the scatter's entry
// reads and writes exp(x)'s buffer and makes none of its own.
// BARRIER:        "name": "stablehlo.scatter",
// BARRIER:        "operands": [3, 1, 2],
// BARRIER-NEXT:   "results": []
// BARRIER:        "name": "exponential:1024x1024xf32",
// BARRIER:        "values": 2
// BARRIER-NOT:    "name": "scatter:
func.func @in_place_through_barrier(%x: tensor<1024x1024xf32>, %idx: tensor<256x1xi32>, %upd: tensor<256x1024xf32>) -> tensor<1024xf32> {
  %y = "stablehlo.exponential"(%x) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %b = "stablehlo.optimization_barrier"(%y) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %s = "stablehlo.scatter"(%b, %idx, %upd) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a0: tensor<f32>, %a1: tensor<f32>):
    %t = "stablehlo.add"(%a0, %a1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<1024x1024xf32>, tensor<256x1xi32>, tensor<256x1024xf32>) -> tensor<1024x1024xf32>
  %z = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %r = "stablehlo.reduce"(%s, %z) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a0: tensor<f32>, %a1: tensor<f32>):
    %t = "stablehlo.add"(%a0, %a1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// A buffer read by two later entries lives until the last one; an argument
// starts at 0 and ends at its last use.
// USES:         "name": "arg0:8x8xf32",
// USES-NEXT:    "size": 256,
// USES-NEXT:    "start": 0,
// USES-NEXT:    "end": 3,
// USES-NEXT:    "uses": [0, 3],
// USES:         "name": "dot_general:8x8xf32",
// USES-NEXT:    "size": 256,
// USES-NEXT:    "start": 0,
// USES-NEXT:    "end": 2,
// USES-NEXT:    "uses": [1, 2],
// USES-NEXT:    "kind": "temp",
func.func @several_uses(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %d = "stablehlo.dot_general"(%c, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = "stablehlo.dot_general"(%d, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %f = "stablehlo.add"(%e, %a) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %f : tensor<8x8xf32>
}

// A reshape is a bitcast in XLA: no entry, no buffer; the returned reshape
// is the dot's buffer, which becomes an output.
// BITCAST:      "ops": [
// BITCAST-NEXT:  {
// BITCAST-NEXT:   "id": 0,
// BITCAST-NEXT:   "name": "stablehlo.dot_general",
// BITCAST:        "results": [1]
// BITCAST-NEXT:  }
// BITCAST-NEXT: ],
// BITCAST:        "name": "dot_general:8x8xf32",
// BITCAST-NEXT:   "size": 256,
// BITCAST-NEXT:   "start": 0,
// BITCAST-NEXT:   "end": 0,
// BITCAST-NEXT:   "uses": [],
// BITCAST-NEXT:   "kind": "output",
func.func @bitcast(%a: tensor<8x8xf32>) -> tensor<64xf32> {
  %c = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = "stablehlo.reshape"(%c) : (tensor<8x8xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// The pass leaves the IR unchanged.
// UNCHANGED-LABEL: func.func @dot
// UNCHANGED:         "stablehlo.dot_general"
