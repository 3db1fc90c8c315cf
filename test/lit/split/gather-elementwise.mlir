// A gather of an elementwise value whose other operands are splats reads
// the varying operand's rows and applies the op to the gathered chunk
// (Split/GatherElementwise.cpp): jax's gradient of sum(segment_sum(..)**2)
// gathers 2 * agg by the receivers, and a loop operand is a buffer, so the
// scaled copy would live beside agg for the whole loop.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=300KB})' | FileCheck %s

// The loop carries x, not 2 * x: each chunk gathers x's rows, then scales.
// CHECK-LABEL: func.func public @scaled_rows_gathered
// CHECK-NOT: "stablehlo.multiply"({{.*}}) : (tensor<256x32xf32>, tensor<256x32xf32>)
// CHECK: "stablehlo.while"
// CHECK: ^bb0({{.*}}%[[X:.*]]: tensor<256x32xf32>{{.*}}):
// CHECK: %[[G:.*]] = "stablehlo.gather"(%[[X]], %{{.*}})
// CHECK: %[[TWO:.*]] = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}>
// CHECK: %[[B:.*]] = "stablehlo.broadcast_in_dim"(%[[TWO]])
// CHECK: "stablehlo.multiply"(%[[B]], %[[G]])
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<256x32xf32>, tensor<8192xi32>, tensor<32x32xf32>) -> tensor<8192xf32>, sym_name = "scaled_rows_gathered", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x32xf32>, %arg1: tensor<8192xi32>, %w: tensor<32x32xf32>):
    %0 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x32xf32>
    %2 = "stablehlo.multiply"(%1, %arg0) : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x32xf32>
    %3 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8192xi32>) -> tensor<8192x1xi32>
    %4 = "stablehlo.gather"(%2, %3) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<256x32xf32>, tensor<8192x1xi32>) -> tensor<8192x32xf32>
    %d = "stablehlo.dot_general"(%4, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8192x32xf32>, tensor<32x32xf32>) -> tensor<8192x32xf32>
    %5 = "stablehlo.exponential"(%d) : (tensor<8192x32xf32>) -> tensor<8192x32xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %8 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%8) : (tensor<f32>) -> ()
    }) : (tensor<8192x32xf32>, tensor<f32>) -> tensor<8192xf32>
    "func.return"(%7) : (tensor<8192xf32>) -> ()
  }) : () -> ()

// A chain of such ops commutes op by op (jax's cotangent 1 * (2 * agg)).
// CHECK-LABEL: func.func public @chain_gathered
// CHECK: "stablehlo.while"
// CHECK: ^bb0({{.*}}%[[X:.*]]: tensor<256x32xf32>{{.*}}):
// CHECK: %[[G:.*]] = "stablehlo.gather"(%[[X]], %{{.*}})
// CHECK: %[[M:.*]] = "stablehlo.multiply"(%{{.*}}, %[[G]])
// CHECK: "stablehlo.negate"(%[[M]])
  "func.func"() <{function_type = (tensor<256x32xf32>, tensor<8192xi32>, tensor<32x32xf32>) -> tensor<8192xf32>, sym_name = "chain_gathered", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x32xf32>, %arg1: tensor<8192xi32>, %w: tensor<32x32xf32>):
    %0 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x32xf32>
    %2 = "stablehlo.multiply"(%1, %arg0) : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x32xf32>
    %n = "stablehlo.negate"(%2) : (tensor<256x32xf32>) -> tensor<256x32xf32>
    %3 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8192xi32>) -> tensor<8192x1xi32>
    %4 = "stablehlo.gather"(%n, %3) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<256x32xf32>, tensor<8192x1xi32>) -> tensor<8192x32xf32>
    %d = "stablehlo.dot_general"(%4, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8192x32xf32>, tensor<32x32xf32>) -> tensor<8192x32xf32>
    %5 = "stablehlo.exponential"(%d) : (tensor<8192x32xf32>) -> tensor<8192x32xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %8 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%8) : (tensor<f32>) -> ()
    }) : (tensor<8192x32xf32>, tensor<f32>) -> tensor<8192xf32>
    "func.return"(%7) : (tensor<8192xf32>) -> ()
  }) : () -> ()

// Left alone: 2 * x is also returned, so it is materialised anyway, and the
// loop gathers from it.
// CHECK-LABEL: func.func public @scaled_value_also_returned
// CHECK: %[[S:.*]] = "stablehlo.multiply"({{.*}}) : (tensor<256x32xf32>, tensor<256x32xf32>)
// CHECK: "stablehlo.while"({{.*}}%[[S]]
// CHECK: ^bb0({{.*}}%[[C:.*]]: tensor<256x32xf32>{{.*}}):
// CHECK: "stablehlo.gather"(%[[C]], %{{.*}})
  "func.func"() <{function_type = (tensor<256x32xf32>, tensor<8192xi32>, tensor<32x32xf32>) -> (tensor<8192xf32>, tensor<256x32xf32>), sym_name = "scaled_value_also_returned", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x32xf32>, %arg1: tensor<8192xi32>, %w: tensor<32x32xf32>):
    %0 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x32xf32>
    %2 = "stablehlo.multiply"(%1, %arg0) : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x32xf32>
    %3 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8192xi32>) -> tensor<8192x1xi32>
    %4 = "stablehlo.gather"(%2, %3) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<256x32xf32>, tensor<8192x1xi32>) -> tensor<8192x32xf32>
    %d = "stablehlo.dot_general"(%4, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8192x32xf32>, tensor<32x32xf32>) -> tensor<8192x32xf32>
    %5 = "stablehlo.exponential"(%d) : (tensor<8192x32xf32>) -> tensor<8192x32xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %8 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%8) : (tensor<f32>) -> ()
    }) : (tensor<8192x32xf32>, tensor<f32>) -> tensor<8192xf32>
    "func.return"(%7, %2) : (tensor<8192xf32>, tensor<256x32xf32>) -> ()
  }) : () -> ()
}) : () -> ()
