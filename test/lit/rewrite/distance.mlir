// RUN: memfit-opt %s --memfit-rewrite="fast-distance=true matrix-chain=false reduce-to-dot=false" | FileCheck %s
// RUN: memfit-opt %s --memfit-rewrite="matrix-chain=false reduce-to-dot=false" | FileCheck %s --check-prefix=EXACT

// fast-distance (opt-in) expands every squared distance. By default a
// distance that no top_k orders keeps the program's own formula: the
// expanded form's error grows with |x|^2 + |y|^2 (README, numerics).
// EXACT-LABEL: func.func @knn_multiply
// EXACT-NOT: dot_general
// EXACT: "stablehlo.subtract"
// EXACT: "stablehlo.reduce"

// The kNN distance: sum over D of (q[:, None] - x[None])^2 becomes
// |q|^2 + |x|^2 - 2 q.x, and the M x N x D tensor disappears.
// CHECK-LABEL: func.func @knn_multiply
// CHECK-NOT: tensor<16x64x8xf32>
// CHECK: "stablehlo.dot_general"(%arg1, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}>
// CHECK-SAME: -> tensor<16x64xf32>
// CHECK: "stablehlo.multiply"(%arg1, %arg1)
// CHECK: "stablehlo.multiply"(%arg0, %arg0)
// CHECK: dense<2.000000e+00>
// CHECK: "stablehlo.subtract"
// CHECK-NOT: tensor<16x64x8xf32>
func.func @knn_multiply(%arg0: tensor<64x8xf32>, %arg1: tensor<16x8xf32>) -> tensor<16x64xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x1x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xf32>) -> tensor<1x64x8xf32>
  %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<16x1x8xf32>) -> tensor<16x64x8xf32>
  %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x64x8xf32>) -> tensor<16x64x8xf32>
  %4 = "stablehlo.subtract"(%2, %3) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %5 = "stablehlo.multiply"(%4, %4) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x64x8xf32>, tensor<f32>) -> tensor<16x64xf32>
  return %7 : tensor<16x64xf32>
}

// Squares written as power(d, 2) (torch-mlir's form) are recognised too.
// CHECK-LABEL: func.func @knn_power
// CHECK: "stablehlo.dot_general"
// CHECK-NOT: "stablehlo.power"
func.func @knn_power(%arg0: tensor<64x8xf32>, %arg1: tensor<16x8xf32>) -> tensor<16x64xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x64x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xf32>) -> tensor<16x64x8xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %c2 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<16x64x8xf32>}> : () -> tensor<16x64x8xf32>
  %3 = "stablehlo.power"(%2, %c2) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %7 = "stablehlo.reduce"(%3, %6) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x64x8xf32>, tensor<f32>) -> tensor<16x64xf32>
  return %7 : tensor<16x64xf32>
}

// A batch dimension carried by both sides becomes a dot batch dimension.
// CHECK-LABEL: func.func @batched
// CHECK: "stablehlo.dot_general"(%arg1, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>}>
// CHECK-SAME: -> tensor<4x16x64xf32>
func.func @batched(%arg0: tensor<4x64x8xf32>, %arg1: tensor<4x16x8xf32>) -> tensor<4x16x64xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 1, 3>}> : (tensor<4x16x8xf32>) -> tensor<4x16x64x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0, 2, 3>}> : (tensor<4x64x8xf32>) -> tensor<4x16x64x8xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<4x16x64x8xf32>, tensor<4x16x64x8xf32>) -> tensor<4x16x64x8xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<4x16x64x8xf32>, tensor<4x16x64x8xf32>) -> tensor<4x16x64x8xf32>
  %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %7 = "stablehlo.reduce"(%3, %6) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<4x16x64x8xf32>, tensor<f32>) -> tensor<4x16x64xf32>
  return %7 : tensor<4x16x64xf32>
}

// A sum over a dimension only one side carries is not a distance: unchanged.
// CHECK-LABEL: func.func @one_sided
// CHECK-NOT: dot_general
// CHECK: "stablehlo.reduce"
func.func @one_sided(%arg0: tensor<64x8xf32>, %arg1: tensor<16xf32>) -> tensor<16x64xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<16xf32>) -> tensor<16x64x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xf32>) -> tensor<16x64x8xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %7 = "stablehlo.reduce"(%3, %6) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x64x8xf32>, tensor<f32>) -> tensor<16x64xf32>
  return %7 : tensor<16x64xf32>
}

// jnp.square writes chlo.square.
// CHECK-LABEL: func.func @knn_chlo_square
// CHECK: "stablehlo.dot_general"
// CHECK-NOT: "chlo.square"
func.func @knn_chlo_square(%arg0: tensor<64x8xf32>, %arg1: tensor<16x8xf32>) -> tensor<16x64xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x64x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xf32>) -> tensor<16x64x8xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %3 = "chlo.square"(%2) : (tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %7 = "stablehlo.reduce"(%3, %6) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x64x8xf32>, tensor<f32>) -> tensor<16x64xf32>
  return %7 : tensor<16x64xf32>
}

// |d|^2 of a real d is d^2 (jnp.abs(d) ** 2): the abs goes too.
// CHECK-LABEL: func.func @knn_abs_squared
// CHECK: "stablehlo.dot_general"
// CHECK-NOT: "stablehlo.abs"
func.func @knn_abs_squared(%arg0: tensor<64x8xf32>, %arg1: tensor<16x8xf32>) -> tensor<16x64xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x64x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xf32>) -> tensor<16x64x8xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %a = "stablehlo.abs"(%2) : (tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %3 = "stablehlo.multiply"(%a, %a) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %7 = "stablehlo.reduce"(%3, %6) <{dimensions = array<i64: 2>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x64x8xf32>, tensor<f32>) -> tensor<16x64xf32>
  return %7 : tensor<16x64xf32>
}

// The square of a complex difference is not a squared distance: |d|^2 of a
// complex d is not d^2, so nothing changes.
// CHECK-LABEL: func.func @complex_abs_kept
// CHECK: "stablehlo.abs"
// CHECK-NOT: "stablehlo.dot_general"
func.func @complex_abs_kept(%arg0: tensor<64x8xcomplex<f32>>, %arg1: tensor<16x8xcomplex<f32>>) -> tensor<16x64xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xcomplex<f32>>) -> tensor<16x64x8xcomplex<f32>>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xcomplex<f32>>) -> tensor<16x64x8xcomplex<f32>>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x64x8xcomplex<f32>>, tensor<16x64x8xcomplex<f32>>) -> tensor<16x64x8xcomplex<f32>>
  %a = "stablehlo.abs"(%2) : (tensor<16x64x8xcomplex<f32>>) -> tensor<16x64x8xf32>
  %3 = "stablehlo.multiply"(%a, %a) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %7 = "stablehlo.reduce"(%3, %6) <{dimensions = array<i64: 2>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x64x8xf32>, tensor<f32>) -> tensor<16x64xf32>
  return %7 : tensor<16x64xf32>
}
