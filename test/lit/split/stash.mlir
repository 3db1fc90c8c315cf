// Stash: h = exp(a - rowmax(a)), a = x W [4096, 2048] (32 MiB), is split
// by rows. Its column
// sums s are a sink, and out = (h V) * sum(s) needs them: a second pass.
// That pass reads y = h V, which each chunk computes behind a contraction
// (Stash.h). The first loop assembles y ([4096, 8], 128 KiB, within an
// eighth of the limit) as an output, so nothing after the loop recomputes
// h: one loop, and the multiply reads the loop's y. Such a pass's margin
// leaves out what it holds at any chunk (loop_fixed_bytes, ChunkChooser.cpp).
// RUN: memfit-opt %s --split-input-file --pass-pipeline='builtin.module(memfit-split{memory-limit=2MB})' | FileCheck %s

// CHECK-LABEL: func.func public @stash_behind_contraction
// CHECK: %[[L:.*]]:{{[0-9]+}} = "stablehlo.while"
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<[[C:[0-9]+]]x2048xf32>
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C]]x8xf32>
// CHECK: "stablehlo.dynamic_update_slice"{{.*}} -> tensor<4096x8xf32>
// CHECK: "stablehlo.return"
// CHECK: loop_fixed_bytes = {{[1-9][0-9]*}}
// CHECK-NOT: "stablehlo.while"(
// CHECK-NOT: "stablehlo.exponential"(
// CHECK: "stablehlo.multiply"(%[[L]]#{{[0-9]+}}, {{.*}}) : (tensor<4096x8xf32>, tensor<4096x8xf32>) -> tensor<4096x8xf32>
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4096x16xf32>, tensor<16x2048xf32>, tensor<2048x8xf32>) -> tensor<4096x8xf32>, sym_name = "stash_behind_contraction", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<4096x16xf32>, %w: tensor<16x2048xf32>, %v: tensor<2048x8xf32>):
    %0 = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4096x16xf32>, tensor<16x2048xf32>) -> tensor<4096x2048xf32>
    %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %mx = "stablehlo.reduce"(%0, %ninf) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<4096x2048xf32>, tensor<f32>) -> tensor<4096xf32>
    %mb = "stablehlo.broadcast_in_dim"(%mx) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4096xf32>) -> tensor<4096x2048xf32>
    %sh = "stablehlo.subtract"(%0, %mb) : (tensor<4096x2048xf32>, tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
    %h = "stablehlo.exponential"(%sh) : (tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
    %z = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %s = "stablehlo.reduce"(%h, %z) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<4096x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %t = "stablehlo.reduce"(%s, %z) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<2048xf32>, tensor<f32>) -> tensor<f32>
    %y = "stablehlo.dot_general"(%h, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4096x2048xf32>, tensor<2048x8xf32>) -> tensor<4096x8xf32>
    %tb = "stablehlo.broadcast_in_dim"(%t) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4096x8xf32>
    %out = "stablehlo.multiply"(%y, %tb) : (tensor<4096x8xf32>, tensor<4096x8xf32>) -> tensor<4096x8xf32>
    "func.return"(%out) : (tensor<4096x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// No contraction behind what the second pass reads: y = rowmax(h) costs no
// more to recompute than to keep, so the first loop accumulates s alone and
// a second loop recomputes h in chunks for y, as a plain second pass does.
// CHECK-LABEL: func.func public @no_stash_without_contraction
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.exponential"
// CHECK-NOT: "stablehlo.dynamic_update_slice"
// CHECK: "stablehlo.return"
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.exponential"
// CHECK: "stablehlo.return"
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4096x16xf32>, tensor<16x2048xf32>) -> tensor<4096xf32>, sym_name = "no_stash_without_contraction", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<4096x16xf32>, %w: tensor<16x2048xf32>):
    %0 = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4096x16xf32>, tensor<16x2048xf32>) -> tensor<4096x2048xf32>
    %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %mx = "stablehlo.reduce"(%0, %ninf) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<4096x2048xf32>, tensor<f32>) -> tensor<4096xf32>
    %mb = "stablehlo.broadcast_in_dim"(%mx) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4096xf32>) -> tensor<4096x2048xf32>
    %sh = "stablehlo.subtract"(%0, %mb) : (tensor<4096x2048xf32>, tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
    %h = "stablehlo.exponential"(%sh) : (tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
    %z = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %s = "stablehlo.reduce"(%h, %z) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<4096x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %t = "stablehlo.reduce"(%s, %z) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<2048xf32>, tensor<f32>) -> tensor<f32>
    %m = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %y = "stablehlo.reduce"(%h, %m) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<4096x2048xf32>, tensor<f32>) -> tensor<4096xf32>
    %tb = "stablehlo.broadcast_in_dim"(%t) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4096xf32>
    %out = "stablehlo.multiply"(%y, %tb) : (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
    "func.return"(%out) : (tensor<4096xf32>) -> ()
  }) : () -> ()
}) : () -> ()
