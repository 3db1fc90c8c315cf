// Remainder chunk: max_j x_i * y_j over 1001 j in chunks of 32 is 31 full
// chunks and 9 left. dynamic_slice clamps its start, so the last 9 are not a
// 32-wide chunk: they get a straight-line copy of the body with size 9, whose
// start comes from the loop counter through an optimization_barrier (so XLA
// cannot hoist it next to the loop).
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB})' | FileCheck %s

// CHECK-LABEL: func.func public @remainder
// CHECK: %[[W:.*]]:4 = "stablehlo.while"
// CHECK: "stablehlo.constant"() <{value = dense<31> : tensor<i64>}>
// CHECK: comparison_direction LT
// CHECK: "stablehlo.constant"() <{value = dense<32> : tensor<i64>}>
// CHECK: "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: 32>}>
// CHECK: }) : (tensor<1000x32xf32>, tensor<f32>) -> tensor<1000xf32>
// CHECK: "stablehlo.maximum"(%{{.*}}, %{{.*}}) : (tensor<1000xf32>, tensor<1000xf32>)
// CHECK: %[[B:.*]]:2 = "stablehlo.optimization_barrier"(%[[W]]#0, %[[W]]#1)
// CHECK: %[[ST:.*]] = "stablehlo.multiply"(%[[B]]#0,
// CHECK: "stablehlo.dynamic_slice"(%arg1, %[[ST]]) <{slice_sizes = array<i64: 9>}>
// CHECK: }) : (tensor<1000x9xf32>, tensor<f32>) -> tensor<1000xf32>
// CHECK: %[[OUT:.*]] = "stablehlo.maximum"(%[[B]]#1,
// CHECK: return %[[OUT]]

"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<1000xf32>, tensor<1001xf32>) -> tensor<1000xf32>, sym_name = "remainder", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<1000xf32>, %arg1: tensor<1001xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1000xf32>) -> tensor<1000x1xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<1001xf32>) -> tensor<1x1001xf32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1000x1xf32>) -> tensor<1000x1001xf32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1001xf32>) -> tensor<1000x1001xf32>
    %4 = "stablehlo.multiply"(%2, %3) : (tensor<1000x1001xf32>, tensor<1000x1001xf32>) -> tensor<1000x1001xf32>
    %5 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.reduce"(%4, %5) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %7 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%7) : (tensor<f32>) -> ()
    }) : (tensor<1000x1001xf32>, tensor<f32>) -> tensor<1000xf32>
    "func.return"(%6) : (tensor<1000xf32>) -> ()
  }) : () -> ()
}) : () -> ()
