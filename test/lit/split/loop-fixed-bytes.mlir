// Inside a layer loop's body the chunk rule's margin multiplies only what
// grows with the chunk: the loop's peak beyond what it holds at any chunk
// (loop_fixed_bytes, extrapolated from its two smallest chunks). Whole
// live-ins, an accumulator and its partial product are full-size buffers
// whatever the chunk.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=250KiB})' | FileCheck %s

// softmax(h k) rows times v, contracted over the rows into a [256, 64]
// accumulator: split by rows, the loop holds 128 KiB (the accumulator, its
// partial product, the row sums) whatever its chunk, beside 112 KiB of
// arguments and outputs. Counted twice, as a temporary of the loop, even
// one row would need 371 KiB; counted once, 3-row chunks fit 250 KiB,
// and 2 rows divide the 256 (in a layer loop's body a chunk down to half
// the one that fits replaces it when it divides: the chunk-size rule).
// CHECK-LABEL: func.func public @accumulator_in_layer_loop
// CHECK:       "stablehlo.while"(%{{.*}}, %arg0, %arg1, %arg2) ({
// CHECK:         "stablehlo.while"
// CHECK:         "stablehlo.exponential"{{.*}}-> tensor<2x256xf32>
// CHECK:       memfit.split = {chunk = 2 : i64, chunks = 128 : i64, dim = 0 : i64, kind = "accumulate"{{.*}}loop_fixed_bytes = 131088 : i64
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<256x16xf32>, tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<256x16xf32>, sym_name = "accumulator_in_layer_loop", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<256x16xf32>, %k0: tensor<16x256xf32>, %v0: tensor<256x64xf32>):
    %i0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %w:4 = "stablehlo.while"(%i0, %x, %k0, %v0) ({
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %k: tensor<16x256xf32>, %v: tensor<256x64xf32>):
      %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %k: tensor<16x256xf32>, %v: tensor<256x64xf32>):
      %s = "stablehlo.dot_general"(%h, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x16xf32>, tensor<16x256xf32>) -> tensor<256x256xf32>
      %e = "stablehlo.exponential"(%s) : (tensor<256x256xf32>) -> tensor<256x256xf32>
      %z0 = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
      %l = "stablehlo.reduce"(%e, %z0) <{dimensions = array<i64: 1>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%t) : (tensor<f32>) -> ()
      }) : (tensor<256x256xf32>, tensor<f32>) -> tensor<256xf32>
      %bl = "stablehlo.broadcast_in_dim"(%l) <{broadcast_dimensions = array<i64: 0>}> : (tensor<256xf32>) -> tensor<256x256xf32>
      %p = "stablehlo.divide"(%e, %bl) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
      %g = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
      %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
      %r = "stablehlo.reduce"(%g, %z) <{dimensions = array<i64: 1>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%t) : (tensor<f32>) -> ()
      }) : (tensor<256x64xf32>, tensor<f32>) -> tensor<256xf32>
      %br = "stablehlo.broadcast_in_dim"(%r) <{broadcast_dimensions = array<i64: 0>}> : (tensor<256xf32>) -> tensor<256x16xf32>
      %h2 = "stablehlo.multiply"(%h, %br) : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x16xf32>
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i2 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%i2, %h2, %k, %v) : (tensor<i32>, tensor<256x16xf32>, tensor<16x256xf32>, tensor<256x64xf32>) -> ()
    }) : (tensor<i32>, tensor<256x16xf32>, tensor<16x256xf32>, tensor<256x64xf32>) -> (tensor<i32>, tensor<256x16xf32>, tensor<16x256xf32>, tensor<256x64xf32>)
    "func.return"(%w#1) : (tensor<256x16xf32>) -> ()
  }) : () -> ()
}) : () -> ()
