// Scatter along a batch dimension: the gradient of a top-k loss scatters
// the upstream gradient into the rows' selected columns
// (input_batching_dims = [0] joined with scatter_indices_batching_dims = [0]),
// so a split by rows chunks the scatter's operand, indices, updates and
// result alike; the indices address columns, which each chunk holds whole.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=120KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=120KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<64x1000xf32>

// CHECK-LABEL: func.func public @scatter_rows
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C:[0-9]+]]x1000xf32>
// CHECK: "chlo.top_k"{{.*}} -> (tensor<[[C]]x3xf32>, tensor<[[C]]x3xi32>)
// CHECK: "stablehlo.scatter"{{.*}}input_batching_dims = [0], scatter_indices_batching_dims = [0]
// CHECK: (tensor<[[C]]x1000xf32>, tensor<[[C]]x3x1xi32>, tensor<[[C]]x3xf32>) -> tensor<[[C]]x1000xf32>
// CHECK: "stablehlo.reduce"
// CHECK: (tensor<[[C]]x1000xf32>, tensor<f32>) -> tensor<[[C]]xf32>
// CHECK: "stablehlo.dynamic_update_slice"
// CHECK: "stablehlo.return"
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<64x4xf32>, tensor<1000x4xf32>) -> tensor<64xf32>, sym_name = "scatter_rows", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<64x4xf32>, %arg1: tensor<1000x4xf32>):
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<64x4xf32>, tensor<1000x4xf32>) -> tensor<64x1000xf32>
    %1:2 = "chlo.top_k"(%0) <{k = 3 : i64}> : (tensor<64x1000xf32>) -> (tensor<64x3xf32>, tensor<64x3xi32>)
    %2 = "stablehlo.reshape"(%1#1) : (tensor<64x3xi32>) -> tensor<64x3x1xi32>
    %3 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x3xf32>
    %5 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x1000xf32>
    %7 = "stablehlo.scatter"(%6, %2, %4) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<64x1000xf32>, tensor<64x3x1xi32>, tensor<64x3xf32>) -> tensor<64x1000xf32>
    %8 = "stablehlo.multiply"(%7, %0) : (tensor<64x1000xf32>, tensor<64x1000xf32>) -> tensor<64x1000xf32>
    %9 = "stablehlo.reduce"(%8, %5) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<64x1000xf32>, tensor<f32>) -> tensor<64xf32>
    "func.return"(%9) : (tensor<64xf32>) -> ()
  }) : () -> ()
}) : () -> ()
