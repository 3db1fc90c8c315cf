// Kept dimension: the kernel matrix exp(-|x_i - y_j|^2) @ v is split by the
// rows i, which the dot_general keeps: each chunk's rows land in the output
// through dynamic_update_slice; the 1000x1000 matrix is never built.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=200KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=200KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<1000x1000xf32>

// CHECK-LABEL: func.func public @kept
// CHECK: %[[W:.*]]:5 = "stablehlo.while"(%{{.*}}, %{{.*}}, %arg0, %{{.*}}, %arg2)
// CHECK: "stablehlo.compare"({{.*}}comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK: "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: 16, 2>}>
// CHECK: "stablehlo.exponential"{{.*}}-> tensor<16x1000xf32>
// CHECK: "stablehlo.dot_general"{{.*}}-> tensor<16x4xf32>
// CHECK: "stablehlo.dynamic_update_slice"{{.*}}(tensor<1000x4xf32>, tensor<16x4xf32>, tensor<i64>, tensor<i64>) -> tensor<1000x4xf32>
// CHECK: "stablehlo.return"
// Remainder: 1000 = 62 * 16 + 8.
// CHECK: "stablehlo.optimization_barrier"(%[[W]]#0
// CHECK: "stablehlo.dot_general"{{.*}}-> tensor<8x4xf32>
// CHECK: return
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<1000x2xf32>, tensor<1000x2xf32>, tensor<1000x4xf32>) -> tensor<1000x4xf32>, sym_name = "kept", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<1000x2xf32>, %arg1: tensor<1000x2xf32>, %arg2: tensor<1000x4xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<1000x2xf32>) -> tensor<1000x1x2xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<1000x2xf32>) -> tensor<1x1000x2xf32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1000x1x2xf32>) -> tensor<1000x1000x2xf32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1000x2xf32>) -> tensor<1000x1000x2xf32>
    %4 = "stablehlo.subtract"(%2, %3) : (tensor<1000x1000x2xf32>, tensor<1000x1000x2xf32>) -> tensor<1000x1000x2xf32>
    %5 = "stablehlo.multiply"(%4, %4) : (tensor<1000x1000x2xf32>, tensor<1000x1000x2xf32>) -> tensor<1000x1000x2xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %11 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%11) : (tensor<f32>) -> ()
    }) : (tensor<1000x1000x2xf32>, tensor<f32>) -> tensor<1000x1000xf32>
    %8 = "stablehlo.negate"(%7) : (tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
    %9 = "stablehlo.exponential"(%8) : (tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
    %10 = "stablehlo.dot_general"(%9, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<1000x1000xf32>, tensor<1000x4xf32>) -> tensor<1000x4xf32>
    "func.return"(%10) : (tensor<1000x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
