// RUN: memfit-opt %s --memfit-export-buffers="function=scaled_softmax" -o /dev/null | FileCheck %s
// RUN: memfit-opt %s --memfit-profile -o /dev/null | FileCheck %s --check-prefix=PROFILE
//
// The exporter and memfit-profile read one FusionModel: a cheap value that is
// materialised for one consumer and recomputed by the others is read from
// its buffer by the first and recomputed (its FLOPs counted) by the others.
// Here the scores divided by a constant are cheap; the reduce-max over 64
// elements (longer than 32: XLA:CPU splits it, and the split half does not
// fuse its producer) reads their buffer, while the subtract/exp fusion
// recomputes the division from the argument.

// CHECK:       "ops": [
// CHECK:         "name": "stablehlo.divide",
// CHECK:         "flops": 256,
// CHECK:         "operands": [0],
// CHECK-NEXT:    "results": [1]
// CHECK:         "name": "stablehlo.reduce",
// CHECK:         "flops": 256,
// CHECK:         "operands": [1],
// CHECK-NEXT:    "results": [2]
// CHECK:         "name": "stablehlo.exponential",
// CHECK:         "flops": 768,
// CHECK:         "operands": [0, 2],
// CHECK:       "buffers": [
// CHECK:         "name": "divide:4x64xf32",
// CHECK-NEXT:    "size": 1024,
// CHECK-NEXT:    "start": 0,
// CHECK-NEXT:    "end": 1,
// CHECK-NEXT:    "uses": [1],
// CHECK-NEXT:    "kind": "temp",

// The profile counts the same buffers: at the reduce the argument, the
// divided scores and the row maxima are live (1 KiB + 1 KiB + 16 B).
// PROFILE: peak: 2.02 KiB (2064 B) at stablehlo.reduce
// PROFILE: 1.00 KiB  tensor<4x64xf32>  stablehlo.divide
module {
  func.func @scaled_softmax(%arg0: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %c = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %b = "stablehlo.broadcast_in_dim"(%c) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x64xf32>
    %s = "stablehlo.divide"(%arg0, %b) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    %init = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %m = "stablehlo.reduce"(%s, %init) <{dimensions = array<i64: 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %z = "stablehlo.maximum"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%z) : (tensor<f32>) -> ()
    }) : (tensor<4x64xf32>, tensor<f32>) -> tensor<4xf32>
    %bm = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x64xf32>
    %d = "stablehlo.subtract"(%s, %bm) : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    %e = "stablehlo.exponential"(%d) : (tensor<4x64xf32>) -> tensor<4x64xf32>
    return %e : tensor<4x64xf32>
  }
}
