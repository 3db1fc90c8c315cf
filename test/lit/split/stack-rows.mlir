// In a layer loop's body, a leaf the split reads by rows that is one
// layer's slice of a stacked value the layer loop carries (the layer's
// input, reshape(dynamic_slice(xs, layer, 0, 0)), as jax's checkpointed
// scan reads it behind an optimization_barrier) is read from the stack
// chunk by chunk: the split loop carries xs, which lives anyway, and the
// slice is not held through the loop.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=7MB})' | FileCheck %s

// CHECK-LABEL: func.func public @layer_input_from_stack
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i32>, %[[XS:[a-z0-9]+]]: tensor<4x4096x64xf32>
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i32>, %[[XS2:[a-z0-9]+]]: tensor<4x4096x64xf32>
// CHECK: "stablehlo.while"({{.*}}%[[XS2]]
// CHECK: ^bb0(
// CHECK: ^bb0({{.*}}%[[ST:[a-z0-9]+]]: tensor<4x4096x64xf32>
// CHECK: %[[R:[0-9]+]] = "stablehlo.dynamic_slice"(%[[ST]], {{.*}}) <{slice_sizes = array<i64: 1, [[C:[0-9]+]], 64>}>
// CHECK: "stablehlo.reshape"(%[[R]]) : (tensor<1x[[C]]x64xf32>) -> tensor<[[C]]x64xf32>
// CHECK: kind = "accumulate"
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4x4096x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<128xf32>, sym_name = "layer_input_from_stack", sym_visibility = "public"}> ({
  ^bb0(%xs0: tensor<4x4096x64xf32>, %w0: tensor<64x128xf32>, %acc0: tensor<128xf32>):
    %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %r:4 = "stablehlo.while"(%c0, %xs0, %w0, %acc0) ({
    ^bb0(%i: tensor<i32>, %xs: tensor<4x4096x64xf32>, %w: tensor<64x128xf32>, %acc: tensor<128xf32>):
      %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
      %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %xs: tensor<4x4096x64xf32>, %w: tensor<64x128xf32>, %acc: tensor<128xf32>):
      %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %z = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %sl = "stablehlo.dynamic_slice"(%xs, %i, %z, %z) <{slice_sizes = array<i64: 1, 4096, 64>}> : (tensor<4x4096x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4096x64xf32>
      %a0 = "stablehlo.reshape"(%sl) : (tensor<1x4096x64xf32>) -> tensor<4096x64xf32>
      %a = "stablehlo.optimization_barrier"(%a0) : (tensor<4096x64xf32>) -> tensor<4096x64xf32>
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
      %zf = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %cs = "stablehlo.reduce"(%h, %zf) <{dimensions = array<i64: 0>}> ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %m = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%m) : (tensor<f32>) -> ()
      }) : (tensor<4096x128xf32>, tensor<f32>) -> tensor<128xf32>
      %acc1 = "stablehlo.add"(%acc, %cs) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
      "stablehlo.return"(%i1, %xs, %w, %acc1) : (tensor<i32>, tensor<4x4096x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> ()
    }) : (tensor<i32>, tensor<4x4096x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> (tensor<i32>, tensor<4x4096x64xf32>, tensor<64x128xf32>, tensor<128xf32>)
    "func.return"(%r#3) : (tensor<128xf32>) -> ()
  }) : () -> ()
}) : () -> ()
