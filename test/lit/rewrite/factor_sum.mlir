// RUN: memfit-opt %s --memfit-rewrite="distance=false matrix-chain=false reduce-to-dot=false" | FileCheck %s
// RUN: memfit-opt %s --memfit-rewrite="factor-sums=false" | FileCheck %s --check-prefix=OFF

// jax's gradient of A A^T with respect to A (plus an outer product from a
// second use of A): G A + G^T A + c y^T. The two GEMMs over the wide A
// become one over (G + G^T); the outer product stays a term of the sum.
// CHECK-LABEL: func.func @gram_gradient
// CHECK: %[[GT:.*]] = "stablehlo.transpose"(%arg0)
// CHECK: %[[S:.*]] = "stablehlo.add"(%arg0, %[[GT]]) : (tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK: %[[D:.*]] = "stablehlo.dot_general"(%[[S]], %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>
// CHECK: %[[R:.*]] = "stablehlo.add"(%[[D]], %{{.*}}) : (tensor<8x512xf32>, tensor<8x512xf32>)
// CHECK: return %[[R]]
// OFF-LABEL: func.func @gram_gradient
// OFF-COUNT-3: "stablehlo.dot_general"
func.func @gram_gradient(%g: tensor<8x8xf32>, %a: tensor<8x512xf32>, %c: tensor<8xf32>, %y: tensor<512xf32>) -> tensor<8x512xf32> {
  %at = "stablehlo.transpose"(%a) <{permutation = array<i64: 1, 0>}> : (tensor<8x512xf32>) -> tensor<512x8xf32>
  %outer = "stablehlo.dot_general"(%c, %y) <{dot_dimension_numbers = #stablehlo.dot<>}> : (tensor<8xf32>, tensor<512xf32>) -> tensor<8x512xf32>
  %gta = "stablehlo.dot_general"(%g, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>
  %t1 = "stablehlo.transpose"(%gta) <{permutation = array<i64: 1, 0>}> : (tensor<8x512xf32>) -> tensor<512x8xf32>
  %ga = "stablehlo.dot_general"(%g, %at) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<8x8xf32>, tensor<512x8xf32>) -> tensor<8x512xf32>
  %s1 = "stablehlo.add"(%outer, %ga) : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>
  %t2 = "stablehlo.transpose"(%t1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
  %s2 = "stablehlo.add"(%s1, %t2) : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>
  return %s2 : tensor<8x512xf32>
}

// A shared left factor: W X1 + W X2 -> W (X1 + X2).
// CHECK-LABEL: func.func @shared_left
// CHECK: %[[S:.*]] = "stablehlo.add"(%arg1, %arg2) : (tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK: "stablehlo.dot_general"(%arg0, %[[S]])
// CHECK-NOT: "stablehlo.dot_general"
func.func @shared_left(%w: tensor<512x8xf32>, %x1: tensor<8x16xf32>, %x2: tensor<8x16xf32>) -> tensor<512x16xf32> {
  %p1 = "stablehlo.dot_general"(%w, %x1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x8xf32>, tensor<8x16xf32>) -> tensor<512x16xf32>
  %p2 = "stablehlo.dot_general"(%w, %x2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x8xf32>, tensor<8x16xf32>) -> tensor<512x16xf32>
  %s = "stablehlo.add"(%p1, %p2) : (tensor<512x16xf32>, tensor<512x16xf32>) -> tensor<512x16xf32>
  return %s : tensor<512x16xf32>
}

// The shared factor is the small one: (G1 + G2) would be a 512 x 8
// temporary where the products are 512 x 4, so nothing changes.
// CHECK-LABEL: func.func @shared_small_kept
// CHECK-COUNT-2: "stablehlo.dot_general"
func.func @shared_small_kept(%g1: tensor<512x8xf32>, %g2: tensor<512x8xf32>, %a: tensor<8x4xf32>) -> tensor<512x4xf32> {
  %p1 = "stablehlo.dot_general"(%g1, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x8xf32>, tensor<8x4xf32>) -> tensor<512x4xf32>
  %p2 = "stablehlo.dot_general"(%g2, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x8xf32>, tensor<8x4xf32>) -> tensor<512x4xf32>
  %s = "stablehlo.add"(%p1, %p2) : (tensor<512x4xf32>, tensor<512x4xf32>) -> tensor<512x4xf32>
  return %s : tensor<512x4xf32>
}

// A product that is also used elsewhere is not merged (nothing would be saved).
// CHECK-LABEL: func.func @product_used_twice
// CHECK-COUNT-2: "stablehlo.dot_general"
func.func @product_used_twice(%g1: tensor<8x8xf32>, %g2: tensor<8x8xf32>, %a: tensor<8x512xf32>) -> (tensor<8x512xf32>, tensor<8x512xf32>) {
  %p1 = "stablehlo.dot_general"(%g1, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>
  %p2 = "stablehlo.dot_general"(%g2, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>
  %s = "stablehlo.add"(%p1, %p2) : (tensor<8x512xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>
  return %s, %p1 : tensor<8x512xf32>, tensor<8x512xf32>
}
