// XLA counts a function's outputs for its whole run: a layer loop that
// runs before they are written (a scan's forward pass, whose gradients come
// later) has only the room they leave. The split profiles the function
// with its outputs from the start.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=400KiB})' | FileCheck %s

// The loop's body holds [256, 256] scores (305 KiB with the arguments);
// the [256, 256] output is computed after the loop. Counted where it is
// made, nothing exceeds 400 KiB; counted from the start, as XLA counts it,
// the loop holds 561 KiB, and its body is split by rows.
// CHECK-LABEL: func.func public @forward_before_outputs
// CHECK:       "stablehlo.while"(%{{.*}}, %arg0, %arg1) ({
// CHECK:         "stablehlo.while"
// CHECK:         "stablehlo.exponential"{{.*}}-> tensor<32x256xf32>
// CHECK:       memfit.split = {chunk = 32 : i64{{.*}}dim = 0 : i64{{.*}}remainder = 0 : i64
// CHECK:       "stablehlo.dot_general"{{.*}}-> tensor<256x256xf32>
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<256x16xf32>, tensor<16x256xf32>) -> tensor<256x256xf32>, sym_name = "forward_before_outputs", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<256x16xf32>, %k0: tensor<16x256xf32>):
    %i0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %w:3 = "stablehlo.while"(%i0, %x, %k0) ({
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %k: tensor<16x256xf32>):
      %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %k: tensor<16x256xf32>):
      %s = "stablehlo.dot_general"(%h, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x16xf32>, tensor<16x256xf32>) -> tensor<256x256xf32>
      %e = "stablehlo.exponential"(%s) : (tensor<256x256xf32>) -> tensor<256x256xf32>
      %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
      %r = "stablehlo.reduce"(%e, %z) <{dimensions = array<i64: 1>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%t) : (tensor<f32>) -> ()
      }) : (tensor<256x256xf32>, tensor<f32>) -> tensor<256xf32>
      %br = "stablehlo.broadcast_in_dim"(%r) <{broadcast_dimensions = array<i64: 0>}> : (tensor<256xf32>) -> tensor<256x16xf32>
      %h2 = "stablehlo.divide"(%h, %br) : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x16xf32>
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i2 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%i2, %h2, %k) : (tensor<i32>, tensor<256x16xf32>, tensor<16x256xf32>) -> ()
    }) : (tensor<i32>, tensor<256x16xf32>, tensor<16x256xf32>) -> (tensor<i32>, tensor<256x16xf32>, tensor<16x256xf32>)
    %o = "stablehlo.dot_general"(%w#1, %w#1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x256xf32>
    "func.return"(%o) : (tensor<256x256xf32>) -> ()
  }) : () -> ()
}) : () -> ()
