// RUN: memfit-opt %s --memfit-profile -o /dev/null | FileCheck %s
//
// XLA forwards an optimization_barrier's operands as its results (its
// dataflow analysis treats the barrier like a tuple): no buffer of its own,
// no copy. Measured with lax.optimization_barrier on [1024, 1024] f32
// (XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=): exp(x) behind a
// barrier with x, then tanh(a @ w) + b, holds 4 MiB of temporaries, as
// the same program without the barrier does.

// XLA: 16 MiB (arguments 8, output 4, temporaries 4). Arguments, exp(x)
// (materialised: the barrier fuses nothing) and the dot's result: 16 MiB;
// the barrier's two results add nothing (counted as buffers of their own,
// 20 MiB).
// CHECK-LABEL: memfit-profile: @results_alias_operands
// CHECK-NEXT:    arguments: 8.00 MiB (8388608 B)
// CHECK-NEXT:    outputs:   4.00 MiB (4194304 B)
// CHECK-NEXT:    peak:      16.00 MiB (16777216 B) at stablehlo.dot_general
func.func @results_alias_operands(%x: tensor<1024x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %y = "stablehlo.exponential"(%x) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %b:2 = "stablehlo.optimization_barrier"(%y, %x) : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>)
  %d = "stablehlo.dot_general"(%b#0, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %t = "stablehlo.tanh"(%d) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = "stablehlo.add"(%t, %b#1) : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

// A barrier's result read late keeps its operand's buffer live: exp(x)
// (4 MiB, computed first) is still held when the dot writes its 4 MiB, read
// by the final add through the barrier. XLA (b + x @ w): 16 MiB.
// CHECK-LABEL: memfit-profile: @result_read_late_keeps_operand
// CHECK-NEXT:    arguments: 8.00 MiB (8388608 B)
// CHECK-NEXT:    outputs:   4.00 MiB (4194304 B)
// CHECK-NEXT:    peak:      16.00 MiB (16777216 B) at stablehlo.dot_general
// CHECK-NEXT:    largest tensors live at the peak:
// CHECK-DAG:       4.00 MiB  tensor<1024x1024xf32>  stablehlo.exponential
// CHECK-DAG:       4.00 MiB  tensor<1024x1024xf32>  stablehlo.dot_general
func.func @result_read_late_keeps_operand(%x: tensor<1024x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %y = "stablehlo.exponential"(%x) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %b = "stablehlo.optimization_barrier"(%y) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %d = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = "stablehlo.add"(%b, %d) : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}
