// RUN: memfit-opt %s --memfit-profile -o /dev/null | FileCheck %s
//
// XLA:CPU's DotDecomposer wants a dot_general's batch dimensions leading, in
// order, in memory; an operand read from a buffer laid out otherwise is
// copied transposed while the dot runs (measured: jnp.einsum("bhd,bshd->bhs")
// on a [16, 4096, 8, 64] cache holds a 128 MiB temporary). A producer fused
// only into the dot writes its buffer transposed instead.

// The cache [b, s, h, d] with batch dimensions (0, 2): h is not second in
// memory, so the 4 MiB cache is copied: 4 MiB of arguments + 4 MiB copy (and the 64 KiB output).
// CHECK-LABEL: memfit-profile: @batch_not_leading
// CHECK-NEXT:    arguments: 4.01 MiB (4202496 B)
// CHECK-NEXT:    outputs:   64.00 KiB (65536 B)
// CHECK-NEXT:    peak:      8.07 MiB (8462336 B) at stablehlo.dot_general
func.func @batch_not_leading(%q: tensor<4x8x64xf32>, %k: tensor<4x512x8x64xf32>) -> tensor<4x8x512xf32> {
  %0 = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3]>}> : (tensor<4x8x64xf32>, tensor<4x512x8x64xf32>) -> tensor<4x8x512xf32>
  return %0 : tensor<4x8x512xf32>
}

// The cache laid out [b, h, s, d]: batch dimensions lead, no copy.
// CHECK-LABEL: memfit-profile: @batch_leading
// CHECK-NEXT:    arguments: 4.01 MiB (4202496 B)
// CHECK-NEXT:    outputs:   64.00 KiB (65536 B)
// CHECK-NEXT:    peak:      4.07 MiB (4268032 B) at stablehlo.dot_general
func.func @batch_leading(%q: tensor<4x8x64xf32>, %k: tensor<4x8x512x64xf32>) -> tensor<4x8x512xf32> {
  %0 = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3]>}> : (tensor<4x8x64xf32>, tensor<4x8x512x64xf32>) -> tensor<4x8x512xf32>
  return %0 : tensor<4x8x512xf32>
}

// A transpose folded into the dot that puts the batch dimensions where
// memory has them leading: no copy.
// CHECK-LABEL: memfit-profile: @folded_transpose_to_leading
// CHECK-NEXT:    arguments: 4.01 MiB (4202496 B)
// CHECK-NEXT:    outputs:   64.00 KiB (65536 B)
// CHECK-NEXT:    peak:      4.07 MiB (4268032 B) at stablehlo.dot_general
func.func @folded_transpose_to_leading(%q: tensor<4x8x64xf32>, %k: tensor<4x8x512x64xf32>) -> tensor<4x8x512xf32> {
  %t = "stablehlo.transpose"(%k) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<4x8x512x64xf32>) -> tensor<4x512x8x64xf32>
  %0 = "stablehlo.dot_general"(%q, %t) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3]>}> : (tensor<4x8x64xf32>, tensor<4x512x8x64xf32>) -> tensor<4x8x512xf32>
  return %0 : tensor<4x8x512xf32>
}

// A product fused only into the dot is written transposed: its own 4 MiB
// buffer, no copy beside it.
// CHECK-LABEL: memfit-profile: @fused_producer
// CHECK-NEXT:    arguments: 4.01 MiB (4202496 B)
// CHECK-NEXT:    outputs:   64.00 KiB (65536 B)
// CHECK-NEXT:    peak:      8.07 MiB (8462336 B) at stablehlo.dot_general
func.func @fused_producer(%q: tensor<4x8x64xf32>, %k: tensor<4x512x8x64xf32>) -> tensor<4x8x512xf32> {
  %k2 = "stablehlo.add"(%k, %k) : (tensor<4x512x8x64xf32>, tensor<4x512x8x64xf32>) -> tensor<4x512x8x64xf32>
  %0 = "stablehlo.dot_general"(%q, %k2) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3]>}> : (tensor<4x8x64xf32>, tensor<4x512x8x64xf32>) -> tensor<4x8x512xf32>
  return %0 : tensor<4x8x512xf32>
}
