// The profile of a loop's peak, which memfit-split budgets a split inside
// the loop's body against: what lives around the loop (arguments, the
// carried state, the stacked outputs), plus the body's own peak. jax's
// lax.scan of a step that returns h' = tanh(exp(h h^T) h w + x) and stacks
// exp(h h^T):
//   arguments: xs [4, 128, 64] 128 KiB + w [64, 64] 16 KiB       = 144 KiB
//   the loop's operands, carried in place: h 32 KiB, ys [4, 128, 128]
//     256 KiB (the broadcast zeros jax starts them from)        = 288 KiB
//   the body: exp(h h^T) 64 KiB (written over the dot's buffer) and the
//     two [128, 64] dots after it, 32 KiB each                  = 128 KiB
//   (+ 8 B of counters)                                          = 573448 B
// The row the body stores into ys is written into the carried buffer
// (dynamic_update_slice in place; the [1, 128, 128] broadcast is a
// reshape of exp's buffer): neither counts as a buffer of the body.
// XLA:CPU's memory_analysis() for the jax program: 540820 B.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-profile{top=8})' -o /dev/null | FileCheck %s

// CHECK-LABEL: memfit-profile: @scan_stacked_outputs
// CHECK-NEXT:    arguments: 144.00 KiB (147456 B)
// CHECK-NEXT:    outputs:   288.00 KiB (294912 B)
// CHECK-NEXT:    peak:      560.01 KiB (573448 B) at stablehlo.while
// CHECK-NEXT:    largest tensors live at the peak:
// CHECK-NEXT:      256.00 KiB  tensor<4x128x128xf32>  stablehlo.broadcast_in_dim
// CHECK-NEXT:      128.00 KiB  tensor<4x128x64xf32>  argument #0
// CHECK-NEXT:       64.00 KiB  tensor<128x128xf32>  stablehlo.exponential
// CHECK-NOT:     dynamic_update_slice
// CHECK-NOT:     tensor<1x128x128xf32>
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x128x64xf32>, tensor<64x64xf32>) -> (tensor<128x64xf32>, tensor<4x128x128xf32>), sym_name = "scan_stacked_outputs", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x128x64xf32>, %arg1: tensor<64x64xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<128x64xf32>
    %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x128x128xf32>
    %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %5:5 = "stablehlo.while"(%arg0, %arg1, %4, %1, %3) ({
    ^bb0(%arg7: tensor<4x128x64xf32>, %arg8: tensor<64x64xf32>, %arg9: tensor<i32>, %arg10: tensor<128x64xf32>, %arg11: tensor<4x128x128xf32>):
      %23 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %24 = "stablehlo.compare"(%arg9, %23) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%24) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<4x128x64xf32>, %arg3: tensor<64x64xf32>, %arg4: tensor<i32>, %arg5: tensor<128x64xf32>, %arg6: tensor<4x128x128xf32>):
      %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %8 = "stablehlo.dynamic_slice"(%arg2, %arg4, %6, %7) <{slice_sizes = array<i64: 1, 128, 64>}> : (tensor<4x128x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x64xf32>
      %9 = "stablehlo.reshape"(%8) : (tensor<1x128x64xf32>) -> tensor<128x64xf32>
      %10 = "stablehlo.transpose"(%arg5) <{permutation = array<i64: 1, 0>}> : (tensor<128x64xf32>) -> tensor<64x128xf32>
      %11 = "stablehlo.dot_general"(%arg5, %10) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
      %12 = "stablehlo.exponential"(%11) : (tensor<128x128xf32>) -> tensor<128x128xf32>
      %13 = "stablehlo.dot_general"(%12, %arg5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %14 = "stablehlo.dot_general"(%13, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
      %15 = "stablehlo.add"(%14, %9) : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
      %16 = "stablehlo.tanh"(%15) : (tensor<128x64xf32>) -> tensor<128x64xf32>
      %17 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<128x128xf32>) -> tensor<1x128x128xf32>
      %18 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %19 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %20 = "stablehlo.dynamic_update_slice"(%arg6, %17, %arg4, %18, %19) : (tensor<4x128x128xf32>, tensor<1x128x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x128x128xf32>
      %21 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %22 = "stablehlo.add"(%arg4, %21) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg2, %arg3, %22, %16, %20) : (tensor<4x128x64xf32>, tensor<64x64xf32>, tensor<i32>, tensor<128x64xf32>, tensor<4x128x128xf32>) -> ()
    }) : (tensor<4x128x64xf32>, tensor<64x64xf32>, tensor<i32>, tensor<128x64xf32>, tensor<4x128x128xf32>) -> (tensor<4x128x64xf32>, tensor<64x64xf32>, tensor<i32>, tensor<128x64xf32>, tensor<4x128x128xf32>)
    "func.return"(%5#3, %5#4) : (tensor<128x64xf32>, tensor<4x128x128xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

