// RUN: memfit-opt %s --memfit-rewrite="distance=false reduce-to-dot=false" | FileCheck %s

// (A B) v -> A (B v): the n x n intermediate is gone.
// CHECK-LABEL: func.func @matvec_chain
// CHECK: %[[BV:.*]] = "stablehlo.dot_general"(%arg1, {{.*}}) -> tensor<256x1xf32>
// CHECK: %[[ABV:.*]] = "stablehlo.dot_general"(%arg0, %[[BV]]){{.*}} -> tensor<256x1xf32>
// CHECK: "stablehlo.reshape"(%[[ABV]]) : (tensor<256x1xf32>) -> tensor<256xf32>
// CHECK-NOT: tensor<256x256xf32>) -> tensor<256x256xf32>
func.func @matvec_chain(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>, %v: tensor<256xf32>) -> tensor<256xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "stablehlo.dot_general"(%0, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %1 : tensor<256xf32>
}

// Transposes fold into the contracting dimensions: (A^T B) C with a thin C.
// CHECK-LABEL: func.func @through_transpose
// CHECK-NOT: "stablehlo.transpose"
// CHECK: %[[BC:.*]] = "stablehlo.dot_general"(%arg1, %arg2) {{.*}} -> tensor<512x4xf32>
// CHECK: "stablehlo.dot_general"(%arg0, %[[BC]]) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> {{.*}} -> tensor<512x4xf32>
func.func @through_transpose(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>, %c: tensor<512x4xf32>) -> tensor<512x4xf32> {
  %t = "stablehlo.transpose"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %0 = "stablehlo.dot_general"(%t, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %1 = "stablehlo.dot_general"(%0, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x512xf32>, tensor<512x4xf32>) -> tensor<512x4xf32>
  return %1 : tensor<512x4xf32>
}

// Already in the cheapest order: unchanged.
// CHECK-LABEL: func.func @already_optimal
// CHECK: %[[X:.*]] = "stablehlo.dot_general"(%arg1, %arg2)
// CHECK: "stablehlo.dot_general"(%arg0, %[[X]])
func.func @already_optimal(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x2xf32>) -> tensor<64x2xf32> {
  %0 = "stablehlo.dot_general"(%b, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x64xf32>, tensor<64x2xf32>) -> tensor<64x2xf32>
  %1 = "stablehlo.dot_general"(%a, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x64xf32>, tensor<64x2xf32>) -> tensor<64x2xf32>
  return %1 : tensor<64x2xf32>
}

// An intermediate product used twice is not part of a chain: unchanged.
// CHECK-LABEL: func.func @shared_intermediate
// CHECK: %[[AB:.*]] = "stablehlo.dot_general"(%arg0, %arg1)
// CHECK: "stablehlo.dot_general"(%[[AB]], %arg2)
func.func @shared_intermediate(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x2xf32>) -> (tensor<64x2xf32>, tensor<64x64xf32>) {
  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = "stablehlo.dot_general"(%0, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x64xf32>, tensor<64x2xf32>) -> tensor<64x2xf32>
  return %1, %0 : tensor<64x2xf32>, tensor<64x64xf32>
}
