// RUN: memfit-opt %s --memfit-rewrite | FileCheck %s
//
// Chains of products that reuse an intermediate, under all of memfit-rewrite's
// rewrites: a product with several uses is a leaf of every chain that reads
// it, computed once and never re-associated away, and the rewrite stops once
// a chain is in its cheapest order (it used to count the leaf's own product
// as part of the chain, find the rebuilt chain cheaper than itself and
// rewrite it forever).

// One application in all (the count memfit-rewrite records):
// CHECK: module attributes {memfit.rewrites = {"matrix-chain" = 1 : i64}}

// c = a a is read three times (the chain c c c of equal squares has no
// cheaper order): the program is left as written.
// CHECK-LABEL: func.func @reused_square_unchanged
// CHECK-NEXT:    %[[C:.*]] = "stablehlo.dot_general"(%arg0, %arg0)
// CHECK-NEXT:    %[[D:.*]] = "stablehlo.dot_general"(%[[C]], %[[C]])
// CHECK-NEXT:    %[[E:.*]] = "stablehlo.dot_general"(%[[D]], %[[C]])
// CHECK-NEXT:    return %[[E]]
func.func @reused_square_unchanged(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %d = "stablehlo.dot_general"(%c, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = "stablehlo.dot_general"(%d, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %e : tensor<8x8xf32>
}

// (c m) v with c = a b also returned: re-associated once to c (m v), and
// a b is still computed once, not folded into the chain and duplicated.
// CHECK-LABEL: func.func @shared_product_reassociated_once
// CHECK-NEXT:    %[[C:.*]] = "stablehlo.dot_general"(%arg0, %arg1){{.*}} -> tensor<64x64xf32>
// CHECK-NEXT:    %[[MV:.*]] = "stablehlo.dot_general"(%arg2, %arg3){{.*}} -> tensor<64x2xf32>
// CHECK-NEXT:    %[[R:.*]] = "stablehlo.dot_general"(%[[C]], %[[MV]]){{.*}} -> tensor<64x2xf32>
// CHECK-NEXT:    return %[[R]], %[[C]]
func.func @shared_product_reassociated_once(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %m: tensor<64x64xf32>, %v: tensor<64x2xf32>) -> (tensor<64x2xf32>, tensor<64x64xf32>) {
  %c = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %cm = "stablehlo.dot_general"(%c, %m) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = "stablehlo.dot_general"(%cm, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x64xf32>, tensor<64x2xf32>) -> tensor<64x2xf32>
  return %r, %c : tensor<64x2xf32>, tensor<64x64xf32>
}
