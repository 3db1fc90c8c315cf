// The chunk rule's last step: a chunk that divides the dimension, down to
// 3/4 of the aligned chunk, replaces it (no remainder step, a second copy of
// the body). Both functions compute exp(q k^T - rowmax) * 0.125 @ v, split
// by query rows at 256 KB, where the aligned chunk is 40 rows.
// RUN: memfit-opt %s --split-input-file --pass-pipeline='builtin.module(memfit-split{memory-limit=256KB})' | FileCheck %s

"builtin.module"() ({
// 512 rows: 32 divides them (40 would leave 32 in a remainder step).
// CHECK-LABEL: func.func public @divides
// CHECK: "stablehlo.while"
// CHECK: memfit.split = {chunk = 32 : i64, chunks = 16 : i64
// CHECK-SAME: remainder = 0 : i64
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: return
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "divides", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>, %arg2: tensor<512x8xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %12 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x1xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<512x1xf32>) -> tensor<512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = "stablehlo.constant"() <{value = dense<1.250000e-01> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<512x512xf32>
    %10 = "stablehlo.multiply"(%7, %9) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %11 = "stablehlo.dot_general"(%10, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x512xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>
    "func.return"(%11) : (tensor<512x8xf32>) -> ()
  }) : () -> ()
// 504 rows (8 x 63): no multiple of 8 in [30, 40] divides them; the chunk
// keeps its remainder step.
// CHECK-LABEL: func.func public @no_divisor_near
// CHECK: "stablehlo.while"
// CHECK: memfit.split = {chunk = 40 : i64, chunks = 12 : i64
// CHECK-SAME: remainder = 24 : i64
// CHECK: "stablehlo.dot_general"
// CHECK: return
  "func.func"() <{function_type = (tensor<504x8xf32>, tensor<504x8xf32>, tensor<504x8xf32>) -> tensor<504x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "no_divisor_near", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<504x8xf32>, %arg1: tensor<504x8xf32>, %arg2: tensor<504x8xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<504x8xf32>) -> tensor<8x504xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<504x8xf32>, tensor<8x504xf32>) -> tensor<504x504xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %12 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<504x504xf32>, tensor<f32>) -> tensor<504xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<504xf32>) -> tensor<504x1xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<504x1xf32>) -> tensor<504x504xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<504x504xf32>, tensor<504x504xf32>) -> tensor<504x504xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<504x504xf32>) -> tensor<504x504xf32>
    %8 = "stablehlo.constant"() <{value = dense<1.250000e-01> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<504x504xf32>
    %10 = "stablehlo.multiply"(%7, %9) : (tensor<504x504xf32>, tensor<504x504xf32>) -> tensor<504x504xf32>
    %11 = "stablehlo.dot_general"(%10, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<504x504xf32>, tensor<504x8xf32>) -> tensor<504x8xf32>
    "func.return"(%11) : (tensor<504x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// The same 504 rows in a layer loop's body: there a chunk down to half the
// aligned one replaces it when it divides (a remainder step there also
// makes XLA copy whole operands of its dots beside the loop), so 24 rows
// (21 chunks), no remainder step.
// CHECK-LABEL: func.func public @in_layer_loop
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.while"
// CHECK: memfit.split = {chunk = 24 : i64, chunks = 21 : i64
// CHECK-SAME: remainder = 0 : i64
// CHECK: return
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<504x8xf32>, tensor<504x8xf32>, tensor<504x8xf32>) -> tensor<504x8xf32>, sym_name = "in_layer_loop", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<504x8xf32>, %arg1: tensor<504x8xf32>, %arg2: tensor<504x8xf32>):
    %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %r:4 = "stablehlo.while"(%c0, %arg0, %arg1, %arg2) ({
    ^bb0(%i: tensor<i32>, %x: tensor<504x8xf32>, %kk: tensor<504x8xf32>, %vv: tensor<504x8xf32>):
      %n = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
      %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %x: tensor<504x8xf32>, %kk: tensor<504x8xf32>, %vv: tensor<504x8xf32>):
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
        %0 = "stablehlo.transpose"(%kk) <{permutation = array<i64: 1, 0>}> : (tensor<504x8xf32>) -> tensor<8x504xf32>
        %1 = "stablehlo.dot_general"(%x, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<504x8xf32>, tensor<8x504xf32>) -> tensor<504x504xf32>
        %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
        %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
        ^bb0(%p3: tensor<f32>, %p4: tensor<f32>):
          %12 = "stablehlo.maximum"(%p3, %p4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
          "stablehlo.return"(%12) : (tensor<f32>) -> ()
        }) : (tensor<504x504xf32>, tensor<f32>) -> tensor<504xf32>
        %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<504xf32>) -> tensor<504x1xf32>
        %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<504x1xf32>) -> tensor<504x504xf32>
        %6 = "stablehlo.subtract"(%1, %5) : (tensor<504x504xf32>, tensor<504x504xf32>) -> tensor<504x504xf32>
        %7 = "stablehlo.exponential"(%6) : (tensor<504x504xf32>) -> tensor<504x504xf32>
        %8 = "stablehlo.constant"() <{value = dense<1.250000e-01> : tensor<f32>}> : () -> tensor<f32>
        %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<504x504xf32>
        %10 = "stablehlo.multiply"(%7, %9) : (tensor<504x504xf32>, tensor<504x504xf32>) -> tensor<504x504xf32>
        %11 = "stablehlo.dot_general"(%10, %vv) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<504x504xf32>, tensor<504x8xf32>) -> tensor<504x8xf32>
      "stablehlo.return"(%i1, %11, %kk, %vv) : (tensor<i32>, tensor<504x8xf32>, tensor<504x8xf32>, tensor<504x8xf32>) -> ()
    }) : (tensor<i32>, tensor<504x8xf32>, tensor<504x8xf32>, tensor<504x8xf32>) -> (tensor<i32>, tensor<504x8xf32>, tensor<504x8xf32>, tensor<504x8xf32>)
    "func.return"(%r#1) : (tensor<504x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
