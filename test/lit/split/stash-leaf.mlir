// A first pass's output is assembled in the buffer of a whole value the
// region reads only as the same chunks (output-in-place.mlir), but not in
// one whose chunks a second pass recomputes from: here the layer loop's
// carried g is read by q = g * g, pulled into the region as a producer of
// the stash z = (h V) * q, and the pass after the loop
// (out = z * sum(s) + q * sum(s)) reads q again, computed from g. Assembled
// over g, z would make XLA copy g whole (twice per iteration in a checkpointed
// decoder's backward body); it gets a buffer of its own, and g is carried
// through the loop unchanged.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=3MB})' | FileCheck %s

// CHECK-LABEL: func.func @stash_not_over_recomputed_leaf
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i32>, %{{[a-z0-9]+}}: tensor<4096x16xf32>
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i32>, %[[G2:[a-z0-9]+]]: tensor<4096x16xf32>
// CHECK: %[[Z0:[0-9]+]] = "stablehlo.broadcast_in_dim"{{.*}} -> tensor<4096x16xf32>
// CHECK: "stablehlo.while"(%{{[0-9]+}}, %{{[0-9]+}}, %[[Z0]], {{.*}}%[[G2]])
// CHECK: kind = "first-of-two-passes"
func.func @stash_not_over_recomputed_leaf(%g0: tensor<4096x16xf32>, %x: tensor<4096x16xf32>, %w: tensor<16x2048xf32>, %v: tensor<2048x16xf32>) -> tensor<4096x16xf32> {
  %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %r:5 = "stablehlo.while"(%c0, %g0, %x, %w, %v) ({
  ^bb0(%i: tensor<i32>, %g: tensor<4096x16xf32>, %xa: tensor<4096x16xf32>, %wa: tensor<16x2048xf32>, %va: tensor<2048x16xf32>):
    %n = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %g: tensor<4096x16xf32>, %xa: tensor<4096x16xf32>, %wa: tensor<16x2048xf32>, %va: tensor<2048x16xf32>):
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %0 = "stablehlo.dot_general"(%xa, %wa) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4096x16xf32>, tensor<16x2048xf32>) -> tensor<4096x2048xf32>
    %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %mx = "stablehlo.reduce"(%0, %ninf) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%m) : (tensor<f32>) -> ()
    }) : (tensor<4096x2048xf32>, tensor<f32>) -> tensor<4096xf32>
    %mb = "stablehlo.broadcast_in_dim"(%mx) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4096xf32>) -> tensor<4096x2048xf32>
    %sh = "stablehlo.subtract"(%0, %mb) : (tensor<4096x2048xf32>, tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
    %h = "stablehlo.exponential"(%sh) : (tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
    %z0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %s = "stablehlo.reduce"(%h, %z0) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%m) : (tensor<f32>) -> ()
    }) : (tensor<4096x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %t = "stablehlo.reduce"(%s, %z0) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%m) : (tensor<f32>) -> ()
    }) : (tensor<2048xf32>, tensor<f32>) -> tensor<f32>
    %y = "stablehlo.dot_general"(%h, %va) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4096x2048xf32>, tensor<2048x16xf32>) -> tensor<4096x16xf32>
    %q = "stablehlo.multiply"(%g, %g) : (tensor<4096x16xf32>, tensor<4096x16xf32>) -> tensor<4096x16xf32>
    %z = "stablehlo.multiply"(%y, %q) : (tensor<4096x16xf32>, tensor<4096x16xf32>) -> tensor<4096x16xf32>
    %tb = "stablehlo.broadcast_in_dim"(%t) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4096x16xf32>
    %o1 = "stablehlo.multiply"(%z, %tb) : (tensor<4096x16xf32>, tensor<4096x16xf32>) -> tensor<4096x16xf32>
    %o2 = "stablehlo.multiply"(%q, %tb) : (tensor<4096x16xf32>, tensor<4096x16xf32>) -> tensor<4096x16xf32>
    %out = "stablehlo.add"(%o1, %o2) : (tensor<4096x16xf32>, tensor<4096x16xf32>) -> tensor<4096x16xf32>
    "stablehlo.return"(%i1, %out, %xa, %wa, %va) : (tensor<i32>, tensor<4096x16xf32>, tensor<4096x16xf32>, tensor<16x2048xf32>, tensor<2048x16xf32>) -> ()
  }) : (tensor<i32>, tensor<4096x16xf32>, tensor<4096x16xf32>, tensor<16x2048xf32>, tensor<2048x16xf32>) -> (tensor<i32>, tensor<4096x16xf32>, tensor<4096x16xf32>, tensor<16x2048xf32>, tensor<2048x16xf32>)
  return %r#1 : tensor<4096x16xf32>
}
