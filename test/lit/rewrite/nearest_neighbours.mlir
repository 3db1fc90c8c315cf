// RUN: memfit-opt %s --memfit-rewrite | FileCheck %s
// RUN: memfit-opt %s --memfit-rewrite="distance=false" | FileCheck %s --check-prefix=OFF

// top_k(-sum((q - x)^2)) keeps a GEMM and stays exact: centred data (mean
// row of x), top_k of the expanded distances for 2k + 8 = 18 candidates,
// their distances recomputed as written (gather), ordered like top_k (by
// index, then stably by distance), a certificate per row, and a loop that
// recomputes the rows it does not certify.
// CHECK-LABEL: func.func @knn
// CHECK-NOT: tensor<16x64x8xf32>
// CHECK: %[[SUM:.*]] = "stablehlo.reduce"(%arg0
// CHECK: %[[MEAN:.*]] = "stablehlo.divide"(%[[SUM]]
// CHECK: "stablehlo.dot_general"
// CHECK-SAME: -> tensor<16x64xf32>
// CHECK: %[[CAND:.*]]:2 = "chlo.top_k"({{.*}}) <{k = 18 : i64}>
// CHECK-NOT: "stablehlo.slice"(%[[CAND]]#0)
// CHECK: "stablehlo.reduce"(%[[CAND]]#0, %{{.*}})
// CHECK-NEXT: ^bb0
// CHECK-NEXT: "stablehlo.minimum"
// CHECK: "stablehlo.gather"(%arg0,
// CHECK-SAME: -> tensor<16x18x8xf32>
// CHECK: {memfit.exact_distance}
// CHECK: "stablehlo.sort"
// CHECK: "stablehlo.sort"
// CHECK-SAME: is_stable = true
// CHECK: comparison_direction GT
// CHECK: "stablehlo.while"
// CHECK: "chlo.top_k"({{.*}}) <{k = 5 : i64}> {memfit.two_stage} : (tensor<1x64xf32>)
// CHECK: "stablehlo.dynamic_update_slice"
// CHECK-NOT: tensor<16x64x8xf32>
// OFF-LABEL: func.func @knn
// OFF: tensor<16x64x8xf32>
// OFF-NOT: dot_general
func.func @knn(%arg0: tensor<64x8xf32>, %arg1: tensor<16x8xf32>) -> (tensor<16x5xf32>, tensor<16x5xi32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x64x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xf32>) -> tensor<16x64x8xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x64x8xf32>, tensor<f32>) -> tensor<16x64xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 5 : i64}> : (tensor<16x64xf32>) -> (tensor<16x5xf32>, tensor<16x5xi32>)
  return %7#0, %7#1 : tensor<16x5xf32>, tensor<16x5xi32>
}

// The query rows may come first in the subtract or second, transposed.
// CHECK-LABEL: func.func @knn_database_first
// CHECK: "stablehlo.dot_general"
// CHECK: "stablehlo.while"
func.func @knn_database_first(%arg0: tensor<8x64xf32>, %arg1: tensor<16x8xf32>) -> tensor<16x5xi32> {
  %t = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<8x64xf32>) -> tensor<64x8xf32>
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x64x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%t) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xf32>) -> tensor<16x64x8xf32>
  %2 = "stablehlo.subtract"(%1, %0) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x64x8xf32>, tensor<f32>) -> tensor<16x64xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 5 : i64}> : (tensor<16x64xf32>) -> (tensor<16x5xf32>, tensor<16x5xi32>)
  return %7#1 : tensor<16x5xi32>
}

// Distances that top_k reads as the farthest (no negate), bfloat16 data and
// a database barely larger than the candidates keep the program's formula.
// CHECK-LABEL: func.func @farthest_kept
// CHECK-NOT: dot_general
// CHECK: "chlo.top_k"
func.func @farthest_kept(%arg0: tensor<64x8xf32>, %arg1: tensor<16x8xf32>) -> tensor<16x5xi32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x64x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xf32>) -> tensor<16x64x8xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<16x64x8xf32>, tensor<16x64x8xf32>) -> tensor<16x64x8xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x64x8xf32>, tensor<f32>) -> tensor<16x64xf32>
  %7:2 = "chlo.top_k"(%5) <{k = 5 : i64}> : (tensor<16x64xf32>) -> (tensor<16x5xf32>, tensor<16x5xi32>)
  return %7#1 : tensor<16x5xi32>
}

// CHECK-LABEL: func.func @bf16_kept
// CHECK-NOT: dot_general
// CHECK: "chlo.top_k"
func.func @bf16_kept(%arg0: tensor<64x8xbf16>, %arg1: tensor<16x8xbf16>) -> tensor<16x5xi32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xbf16>) -> tensor<16x64x8xbf16>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<64x8xbf16>) -> tensor<16x64x8xbf16>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x64x8xbf16>, tensor<16x64x8xbf16>) -> tensor<16x64x8xbf16>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<16x64x8xbf16>, tensor<16x64x8xbf16>) -> tensor<16x64x8xbf16>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<bf16>}> : () -> tensor<bf16>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
    %s = "stablehlo.add"(%a, %b) : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
    "stablehlo.return"(%s) : (tensor<bf16>) -> ()
  }) : (tensor<16x64x8xbf16>, tensor<bf16>) -> tensor<16x64xbf16>
  %6 = "stablehlo.negate"(%5) : (tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %7:2 = "chlo.top_k"(%6) <{k = 5 : i64}> : (tensor<16x64xbf16>) -> (tensor<16x5xbf16>, tensor<16x5xi32>)
  return %7#1 : tensor<16x5xi32>
}

// CHECK-LABEL: func.func @few_points_kept
// CHECK-NOT: dot_general
// CHECK: "chlo.top_k"
func.func @few_points_kept(%arg0: tensor<18x8xf32>, %arg1: tensor<16x8xf32>) -> tensor<16x5xi32> {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x18x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<18x8xf32>) -> tensor<16x18x8xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x18x8xf32>, tensor<16x18x8xf32>) -> tensor<16x18x8xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<16x18x8xf32>, tensor<16x18x8xf32>) -> tensor<16x18x8xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x18x8xf32>, tensor<f32>) -> tensor<16x18xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<16x18xf32>) -> tensor<16x18xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 5 : i64}> : (tensor<16x18xf32>) -> (tensor<16x5xf32>, tensor<16x5xi32>)
  return %7#1 : tensor<16x5xi32>
}
