// A split inside a loop body is budgeted on what the body adds: what lives
// outside the body while the loop runs (the layer loop's carried state, its
// stacked inputs and outputs, other live values) is no loop temporary, and
// the chunk rule's margin does not multiply it.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=2200KiB})' | FileCheck %s

// exp(big) (1 MiB, costly to recompute: it stays carried) lives through the
// loop beside 1.04 MiB of arguments and outputs; the body's 256 KiB of
// scores is split (by its rows). Counting the 1 MiB twice, as a
// temporary of the loop, no chunk would fit 2200 KiB (1.04 + 2 x 1.0 MiB
// alone exceeds it); counted once, a chunk fits, and 32 rows,
// which divide the 256, are taken (in a layer loop's body a chunk down
// to half the one that fits does when it divides: the chunk-size rule).
// CHECK-LABEL: func.func public @outside_state
// CHECK:       %[[E:.*]] = "stablehlo.exponential"(%arg1)
// CHECK:       "stablehlo.while"(%{{.*}}, %arg0, %[[E]]) ({
// CHECK:       ^bb0(%{{.*}}: tensor<i32>, %{{.*}}: tensor<256x16xf32>, %{{.*}}: tensor<512x512xf32>):
// CHECK:         "stablehlo.while"
// CHECK:         "stablehlo.exponential"{{.*}}-> tensor<32x256xf32>
// CHECK:       memfit.split = {chunk = 32 : i64{{.*}}outside_bytes = 1048580 : i64
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<256x16xf32>, tensor<512x512xf32>) -> (tensor<256x16xf32>, tensor<f32>), sym_name = "outside_state", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<256x16xf32>, %big: tensor<512x512xf32>):
    %e = "stablehlo.exponential"(%big) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %i0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %w:3 = "stablehlo.while"(%i0, %x, %e) ({
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %k: tensor<512x512xf32>):
      %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %h: tensor<256x16xf32>, %k: tensor<512x512xf32>):
      %s = "stablehlo.dot_general"(%h, %h) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x256xf32>
      %ex = "stablehlo.exponential"(%s) : (tensor<256x256xf32>) -> tensor<256x256xf32>
      %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
      %sum = "stablehlo.reduce"(%ex, %z) <{dimensions = array<i64: 1>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%t) : (tensor<f32>) -> ()
      }) : (tensor<256x256xf32>, tensor<f32>) -> tensor<256xf32>
      %bs = "stablehlo.broadcast_in_dim"(%sum) <{broadcast_dimensions = array<i64: 0>}> : (tensor<256xf32>) -> tensor<256x16xf32>
      %h2 = "stablehlo.divide"(%h, %bs) : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x16xf32>
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i2 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%i2, %h2, %k) : (tensor<i32>, tensor<256x16xf32>, tensor<512x512xf32>) -> ()
    }) : (tensor<i32>, tensor<256x16xf32>, tensor<512x512xf32>) -> (tensor<i32>, tensor<256x16xf32>, tensor<512x512xf32>)
    %z2 = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %tot = "stablehlo.reduce"(%w#2, %z2) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%t) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%w#1, %tot) : (tensor<256x16xf32>, tensor<f32>) -> ()
  }) : () -> ()
}) : () -> ()
