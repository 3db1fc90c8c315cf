// memfit-split{minor-contraction} inside a layer loop's body: the chunked
// loop reads k whole as computed, with no copy carried in another layout
// (that copy is a whole [S, H, D] value beside the body's own, where the
// floor is what no chunk shrinks).
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=700KB minor-contraction=true})' | FileCheck %s

// CHECK-LABEL: func.func public @layers
// CHECK: "stablehlo.while"
// CHECK-NOT: permutation = array<i64: 1, 2, 0>
// CHECK: memfit.split
// CHECK-NOT: permutation = array<i64: 1, 2, 0>
// CHECK: return
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<512x2x8xf32>, tensor<512x2x8xf32>, tensor<8x8xf32>) -> tensor<512x2x8xf32>, sym_name = "layers", sym_visibility = "public"}> ({
  ^bb0(%q: tensor<512x2x8xf32>, %x: tensor<512x2x8xf32>, %w: tensor<8x8xf32>):
    %zero = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %r:2 = "stablehlo.while"(%zero, %x) ({
    ^bb0(%i: tensor<i64>, %h: tensor<512x2x8xf32>):
      %two = "stablehlo.constant"() <{value = dense<2> : tensor<i64>}> : () -> tensor<i64>
      %c = "stablehlo.compare"(%i, %two) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%c) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i64>, %h: tensor<512x2x8xf32>):
      %k = "stablehlo.dot_general"(%h, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>}> : (tensor<512x2x8xf32>, tensor<8x8xf32>) -> tensor<512x2x8xf32>
      %1 = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>}> : (tensor<512x2x8xf32>, tensor<512x2x8xf32>) -> tensor<2x512x512xf32>
      %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 2>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %9 = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%9) : (tensor<f32>) -> ()
      }) : (tensor<2x512x512xf32>, tensor<f32>) -> tensor<2x512xf32>
      %5 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x512xf32>) -> tensor<2x512x512xf32>
      %6 = "stablehlo.subtract"(%1, %5) : (tensor<2x512x512xf32>, tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
      %7 = "stablehlo.exponential"(%6) : (tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
      %8 = "stablehlo.dot_general"(%7, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>}> : (tensor<2x512x512xf32>, tensor<512x2x8xf32>) -> tensor<2x512x8xf32>
      %t = "stablehlo.transpose"(%8) <{permutation = array<i64: 1, 0, 2>}> : (tensor<2x512x8xf32>) -> tensor<512x2x8xf32>
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
      %n = "stablehlo.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%n, %t) : (tensor<i64>, tensor<512x2x8xf32>) -> ()
    }) : (tensor<i64>, tensor<512x2x8xf32>) -> (tensor<i64>, tensor<512x2x8xf32>)
    "func.return"(%r#1) : (tensor<512x2x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
