// A split program's top-level reduce whose input XLA:CPU would materialise
// only for it (a reduced dimension longer than 32: TreeReductionRewriter's
// reduce-window fuses no producer) first reduces a reduced dimension of at
// most 32 elements, which XLA fuses with the input's producer, then, behind
// an optimization_barrier, the rest (Split/ShortReduceFirst.cpp): the loss
// sum(agg ** 2) of a split GNN layer holds 256 partial sums, not agg ** 2.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=300KB})' | FileCheck %s

// CHECK-LABEL: func.func public @sum_of_squares_after_loop
// CHECK: "stablehlo.while"
// CHECK: %[[SQ:.*]] = "stablehlo.multiply"(%[[AGG:.*]], %[[AGG]]) : (tensor<256x32xf32>, tensor<256x32xf32>)
// CHECK: %[[P:.*]] = "stablehlo.reduce"(%[[SQ]], %{{.*}}) <{dimensions = array<i64: 1>}>
// CHECK: }) : (tensor<256x32xf32>, tensor<f32>) -> tensor<256xf32>
// CHECK: %[[K:.*]] = "stablehlo.optimization_barrier"(%[[P]]) : (tensor<256xf32>) -> tensor<256xf32>
// CHECK: "stablehlo.reduce"(%[[K]], %{{.*}}) <{dimensions = array<i64: 0>}>
// CHECK: }) : (tensor<256xf32>, tensor<f32>) -> tensor<f32>
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<256x32xf32>, tensor<32x32xf32>, tensor<8192xf32>, tensor<8192xi32>, tensor<8192xi32>) -> tensor<f32>, sym_name = "sum_of_squares_after_loop", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x32xf32>, %arg1: tensor<32x32xf32>, %arg2: tensor<8192xf32>, %arg3: tensor<8192xi32>, %arg4: tensor<8192xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8192xi32>
    %2 = "stablehlo.compare"(%arg3, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<8192xi32>, tensor<8192xi32>) -> tensor<8192xi1>
    %3 = "stablehlo.constant"() <{value = dense<256> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8192xi32>
    %5 = "stablehlo.add"(%arg3, %4) : (tensor<8192xi32>, tensor<8192xi32>) -> tensor<8192xi32>
    %6 = "stablehlo.select"(%2, %5, %arg3) : (tensor<8192xi1>, tensor<8192xi32>, tensor<8192xi32>) -> tensor<8192xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8192xi32>) -> tensor<8192x1xi32>
    %8 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<256x32xf32>, tensor<8192x1xi32>) -> tensor<8192x32xf32>
    %9 = "stablehlo.dot_general"(%8, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8192x32xf32>, tensor<32x32xf32>) -> tensor<8192x32xf32>
    %10 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8192xf32>) -> tensor<8192x1xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8192x1xf32>) -> tensor<8192x32xf32>
    %12 = "stablehlo.multiply"(%9, %11) : (tensor<8192x32xf32>, tensor<8192x32xf32>) -> tensor<8192x32xf32>
    %13 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x32xf32>
    %15 = "stablehlo.broadcast_in_dim"(%arg4) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8192xi32>) -> tensor<8192x1xi32>
    %16 = "stablehlo.scatter"(%14, %15, %12) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %21 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%21) : (tensor<f32>) -> ()
    }) : (tensor<256x32xf32>, tensor<8192x1xi32>, tensor<8192x32xf32>) -> tensor<256x32xf32>
    %17 = "stablehlo.multiply"(%16, %16) : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x32xf32>
    %18 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %19 = "stablehlo.reduce"(%17, %18) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %20 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%20) : (tensor<f32>) -> ()
    }) : (tensor<256x32xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%19) : (tensor<f32>) -> ()
  }) : () -> ()

// Left alone: the square is also returned, so it is materialised anyway.
// CHECK-LABEL: func.func public @square_also_returned
// CHECK: "stablehlo.while"
// CHECK-NOT: "stablehlo.optimization_barrier"({{.*}}) : (tensor<256xf32>)
// CHECK: "stablehlo.reduce"({{.*}}) <{dimensions = array<i64: 0, 1>}>
// CHECK: return
  "func.func"() <{function_type = (tensor<256x32xf32>, tensor<32x32xf32>, tensor<8192xf32>, tensor<8192xi32>, tensor<8192xi32>) -> (tensor<f32>, tensor<256x32xf32>), sym_name = "square_also_returned", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x32xf32>, %arg1: tensor<32x32xf32>, %arg2: tensor<8192xf32>, %arg3: tensor<8192xi32>, %arg4: tensor<8192xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8192xi32>
    %2 = "stablehlo.compare"(%arg3, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<8192xi32>, tensor<8192xi32>) -> tensor<8192xi1>
    %3 = "stablehlo.constant"() <{value = dense<256> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8192xi32>
    %5 = "stablehlo.add"(%arg3, %4) : (tensor<8192xi32>, tensor<8192xi32>) -> tensor<8192xi32>
    %6 = "stablehlo.select"(%2, %5, %arg3) : (tensor<8192xi1>, tensor<8192xi32>, tensor<8192xi32>) -> tensor<8192xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8192xi32>) -> tensor<8192x1xi32>
    %8 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<256x32xf32>, tensor<8192x1xi32>) -> tensor<8192x32xf32>
    %9 = "stablehlo.dot_general"(%8, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8192x32xf32>, tensor<32x32xf32>) -> tensor<8192x32xf32>
    %10 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8192xf32>) -> tensor<8192x1xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8192x1xf32>) -> tensor<8192x32xf32>
    %12 = "stablehlo.multiply"(%9, %11) : (tensor<8192x32xf32>, tensor<8192x32xf32>) -> tensor<8192x32xf32>
    %13 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x32xf32>
    %15 = "stablehlo.broadcast_in_dim"(%arg4) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8192xi32>) -> tensor<8192x1xi32>
    %16 = "stablehlo.scatter"(%14, %15, %12) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %21 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%21) : (tensor<f32>) -> ()
    }) : (tensor<256x32xf32>, tensor<8192x1xi32>, tensor<8192x32xf32>) -> tensor<256x32xf32>
    %17 = "stablehlo.multiply"(%16, %16) : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x32xf32>
    %18 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %19 = "stablehlo.reduce"(%17, %18) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %20 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%20) : (tensor<f32>) -> ()
    }) : (tensor<256x32xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%19, %17) : (tensor<f32>, tensor<256x32xf32>) -> ()
  }) : () -> ()

// Left alone: a program that fits is not split, and keeps jax's reduce.
// CHECK-LABEL: func.func public @fits
// CHECK-NOT: "stablehlo.optimization_barrier"
// CHECK: "stablehlo.reduce"({{.*}}) <{dimensions = array<i64: 0, 1>}>
// CHECK: return
  "func.func"() <{function_type = (tensor<256x32xf32>) -> tensor<f32>, sym_name = "fits", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x32xf32>):
    %0 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x32xf32>
    %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %3 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%3) : (tensor<f32>) -> ()
    }) : (tensor<256x32xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%2) : (tensor<f32>) -> ()
  }) : () -> ()
}) : () -> ()
