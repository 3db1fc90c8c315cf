// RUN: memfit-opt %s --memfit-rewrite | FileCheck %s
// RUN: memfit-opt %s --memfit-rewrite="fast-distance=true" | FileCheck %s --check-prefix=FAST

// memfit-rewrite runs its rewrites as patterns under MLIR's greedy driver:
// in program order across ops, by benefit at one op. Both orders decide who
// claims top_k(-sum((q - x)^2)).
//
// At the top_k, nearest neighbours is tried before the two-stage top-k: it
// claims both functions' top_k, also @knn_long's, whose 65536-long rows the
// two-stage top-k would take on its own. Every top_k the nearest-neighbour
// rewrite makes is marked (the repair loop's 65536-long one too), so the
// two-stage top-k takes none.
// CHECK: module attributes {memfit.rewrites = {distance = 2 : i64}}
// CHECK-LABEL: func.func @knn(
// CHECK: "chlo.top_k"({{.*}}) <{k = 18 : i64}>
// CHECK: "stablehlo.while"
// CHECK-LABEL: func.func @knn_long(
// CHECK: "stablehlo.while"
// CHECK-NOT: "chlo.top_k"({{.*}}) : (tensor<16x65536xf32>)
// CHECK: return
//
// With fast-distance on, the reduce comes first in program order: it is
// expanded (|q|^2 + |x|^2 - 2 q.x) before the nearest-neighbour rewrite is
// tried at the top_k, which then finds no squared distance to claim. The
// long top_k is then the two-stage top-k's.
// FAST: module attributes {memfit.rewrites = {"fast-distance" = 2 : i64, "top-k" = 1 : i64}}
// FAST-LABEL: func.func @knn(
// FAST-NOT: "stablehlo.while"
// FAST: "stablehlo.dot_general"
// FAST: "chlo.top_k"({{.*}}) <{k = 5 : i64}> : (tensor<16x64xf32>)
// FAST-LABEL: func.func @knn_long(
// FAST-NOT: "stablehlo.while"
// FAST: "stablehlo.dot_general"
// FAST: "chlo.top_k"({{.*}}) <{k = 5 : i64}> {memfit.two_stage} : (tensor<16x2048xf32>)

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

func.func @knn_long(%arg0: tensor<65536x8xf32>, %arg1: tensor<16x8xf32>) -> (tensor<16x5xf32>, tensor<16x5xi32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x8xf32>) -> tensor<16x65536x8xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<65536x8xf32>) -> tensor<16x65536x8xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x65536x8xf32>, tensor<16x65536x8xf32>) -> tensor<16x65536x8xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<16x65536x8xf32>, tensor<16x65536x8xf32>) -> tensor<16x65536x8xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x65536x8xf32>, tensor<f32>) -> tensor<16x65536xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<16x65536xf32>) -> tensor<16x65536xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 5 : i64}> : (tensor<16x65536xf32>) -> (tensor<16x5xf32>, tensor<16x5xi32>)
  return %7#0, %7#1 : tensor<16x5xf32>, tensor<16x5xi32>
}
