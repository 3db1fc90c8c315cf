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

// An in-place update reads its operand's buffer through a barrier (a
// split's remainder step updates its loop's accumulator behind one): the
// scatter writes exp(x)'s buffer. XLA (jax: exp(x) behind
// lax.optimization_barrier, .at[idx].add(upd), a sum over rows): 9.13 MiB
// (arguments 5, temporaries 4.13: exp(x) and the scatter share one buffer).
// Counted as a buffer of its own beside exp(x): 13 MiB.
// CHECK-LABEL: memfit-profile: @update_in_place_through_barrier
// CHECK-NEXT:    arguments: 5.00 MiB (5243904 B)
// CHECK-NEXT:    outputs:   4.00 KiB (4096 B)
// CHECK-NEXT:    peak:      9.00 MiB (9442304 B) at stablehlo.reduce
func.func @update_in_place_through_barrier(%x: tensor<1024x1024xf32>, %idx: tensor<256x1xi32>, %upd: tensor<256x1024xf32>) -> tensor<1024xf32> {
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
