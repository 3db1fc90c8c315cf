// RUN: memfit-opt %s --memfit-rewrite="distance=false matrix-chain=false" | FileCheck %s

// sum_d a[i, d] * b[j, d] over broadcasts -> one dot_general.
// CHECK-LABEL: func.func @outer_sum
// CHECK: %[[D:.*]] = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<16x8xf32>, tensor<32x8xf32>) -> tensor<16x32xf32>
// CHECK-NOT: "stablehlo.reduce"
// CHECK: return %[[D]]
func.func @outer_sum(%arg0: tensor<16x8xf32>, %arg1: tensor<32x8xf32>) -> tensor<16x32xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x32x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<32x8xf32>) -> tensor<16x32x8xf32>
  %2 = "stablehlo.multiply"(%0, %1) : (tensor<16x32x8xf32>, tensor<16x32x8xf32>) -> tensor<16x32x8xf32>
  %c = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %3 = "stablehlo.reduce"(%2, %c) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x32x8xf32>, tensor<f32>) -> tensor<16x32xf32>
  return %3 : tensor<16x32xf32>
}

// The result order follows the reduce: rhs dims first needs a transpose.
// CHECK-LABEL: func.func @transposed_result
// CHECK: "stablehlo.dot_general"(%arg0, %arg1)
// CHECK-SAME: -> tensor<16x32xf32>
// CHECK: "stablehlo.transpose"{{.*}}permutation = array<i64: 1, 0>{{.*}} -> tensor<32x16xf32>
func.func @transposed_result(%arg0: tensor<16x8xf32>, %arg1: tensor<32x8xf32>) -> tensor<32x16xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<16x8xf32>) -> tensor<32x16x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<32x8xf32>) -> tensor<32x16x8xf32>
  %2 = "stablehlo.multiply"(%0, %1) : (tensor<32x16x8xf32>, tensor<32x16x8xf32>) -> tensor<32x16x8xf32>
  %c = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %3 = "stablehlo.reduce"(%2, %c) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<32x16x8xf32>, tensor<f32>) -> tensor<32x16xf32>
  return %3 : tensor<32x16xf32>
}

// A max-reduce of a product is not a dot: unchanged.
// CHECK-LABEL: func.func @max_not_sum
// CHECK-NOT: dot_general
func.func @max_not_sum(%arg0: tensor<16x8xf32>, %arg1: tensor<32x8xf32>) -> tensor<16x32xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x32x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<32x8xf32>) -> tensor<16x32x8xf32>
  %2 = "stablehlo.multiply"(%0, %1) : (tensor<16x32x8xf32>, tensor<16x32x8xf32>) -> tensor<16x32x8xf32>
  %c = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
  %3 = "stablehlo.reduce"(%2, %c) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x32x8xf32>, tensor<f32>) -> tensor<16x32xf32>
  return %3 : tensor<16x32xf32>
}
