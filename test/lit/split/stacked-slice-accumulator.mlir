// In a layer loop's body, a dot contracting the split rows whose whole
// result is only stored into a slice of a stacked value the layer loop
// carries (jax's scan transpose writes each layer's weight gradient so:
// dynamic_update_slice(G, reshape(dW), layer, 0, 0)) accumulates in that
// slice: the split loop carries G, whose slice is zeroed once before it,
// and adds each chunk's partial product there. No zero-initialised
// accumulator of dW's size lives beside G, and nothing is copied into G
// after the loop.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=1536KiB})' | FileCheck %s

// CHECK-LABEL: func.func public @weight_gradient_into_stack
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i32>, %[[G:[a-z0-9]+]]: tensor<4x64x128xf32>
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i32>, %[[G2:[a-z0-9]+]]: tensor<4x64x128xf32>
// CHECK-NOT: -> tensor<64x128xf32>
// CHECK: %[[Z:[0-9]+]] = "stablehlo.dynamic_update_slice"(%[[G2]], %{{[0-9]+}}, %{{.*}}) : (tensor<4x64x128xf32>, tensor<1x64x128xf32>
// CHECK: %[[L:[0-9]+]]:{{[0-9]+}} = "stablehlo.while"(%{{[0-9]+}}, %[[Z]],
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i64>, %[[S:[a-z0-9]+]]: tensor<4x64x128xf32>
// CHECK: %[[P:[0-9]+]] = "stablehlo.dot_general"{{.*}} -> tensor<64x128xf32>
// CHECK: %[[V:[0-9]+]] = "stablehlo.reshape"(%[[P]]) : (tensor<64x128xf32>) -> tensor<1x64x128xf32>
// CHECK: %[[OLD:[0-9]+]] = "stablehlo.dynamic_slice"(%[[S]],
// CHECK: %[[NEW:[0-9]+]] = "stablehlo.add"(%[[OLD]], %[[V]])
// CHECK: "stablehlo.dynamic_update_slice"(%[[S]], %[[NEW]],
// CHECK: kind = "accumulate"
// CHECK-NOT: "stablehlo.dynamic_update_slice"
// CHECK: "stablehlo.return"(%{{[0-9]+}}, %[[L]]#1,
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4x64x128xf32>, tensor<4096x64xf32>, tensor<64x128xf32>) -> tensor<4x64x128xf32>, sym_name = "weight_gradient_into_stack", sym_visibility = "public"}> ({
  ^bb0(%g0: tensor<4x64x128xf32>, %a0: tensor<4096x64xf32>, %w0: tensor<64x128xf32>):
    %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %r:4 = "stablehlo.while"(%c0, %g0, %a0, %w0) ({
    ^bb0(%i: tensor<i32>, %g: tensor<4x64x128xf32>, %a: tensor<4096x64xf32>, %w: tensor<64x128xf32>):
      %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %g: tensor<4x64x128xf32>, %a: tensor<4096x64xf32>, %w: tensor<64x128xf32>):
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %s = "stablehlo.dot_general"(%a, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4096x64xf32>, tensor<64x128xf32>) -> tensor<4096x128xf32>
      %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
      %mx = "stablehlo.reduce"(%s, %ninf) <{dimensions = array<i64: 1>}> ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %m = "stablehlo.maximum"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%m) : (tensor<f32>) -> ()
      }) : (tensor<4096x128xf32>, tensor<f32>) -> tensor<4096xf32>
      %mb = "stablehlo.broadcast_in_dim"(%mx) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4096xf32>) -> tensor<4096x128xf32>
      %sh = "stablehlo.subtract"(%s, %mb) : (tensor<4096x128xf32>, tensor<4096x128xf32>) -> tensor<4096x128xf32>
      %h = "stablehlo.exponential"(%sh) : (tensor<4096x128xf32>) -> tensor<4096x128xf32>
      %dw = "stablehlo.dot_general"(%a, %h) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<4096x64xf32>, tensor<4096x128xf32>) -> tensor<64x128xf32>
      %v = "stablehlo.reshape"(%dw) : (tensor<64x128xf32>) -> tensor<1x64x128xf32>
      %z = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %g1 = "stablehlo.dynamic_update_slice"(%g, %v, %i, %z, %z) : (tensor<4x64x128xf32>, tensor<1x64x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x64x128xf32>
      "stablehlo.return"(%i1, %g1, %a, %w) : (tensor<i32>, tensor<4x64x128xf32>, tensor<4096x64xf32>, tensor<64x128xf32>) -> ()
    }) : (tensor<i32>, tensor<4x64x128xf32>, tensor<4096x64xf32>, tensor<64x128xf32>) -> (tensor<i32>, tensor<4x64x128xf32>, tensor<4096x64xf32>, tensor<64x128xf32>)
    "func.return"(%r#1) : (tensor<4x64x128xf32>) -> ()
  }) : () -> ()
}) : () -> ()
