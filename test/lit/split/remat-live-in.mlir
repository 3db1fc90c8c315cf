// A loop operand is a buffer: a live-in that XLA would fuse (here k^T, a
// transpose of an argument that folds into the dot) is recomputed in the
// loop body from the argument instead of being materialised to enter the
// loop.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB})' | FileCheck %s

// CHECK-LABEL: func.func public @transpose_live_in
// CHECK-NOT: "stablehlo.transpose"
// CHECK: "stablehlo.while"(%{{.*}}, %{{.*}}, %arg0, %arg1, %arg2)
// CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<64x4xf32>, %{{.*}}: tensor<64x4xf32>, %[[K:.*]]: tensor<1000x4xf32>, %{{.*}}: tensor<1000x4xf32>):
// CHECK: "stablehlo.transpose"(%[[K]])
// CHECK: "stablehlo.return"
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<64x4xf32>, tensor<1000x4xf32>, tensor<1000x4xf32>) -> tensor<64x4xf32>, sym_name = "transpose_live_in", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<64x4xf32>, %arg1: tensor<1000x4xf32>, %arg2: tensor<1000x4xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<1000x4xf32>) -> tensor<4x1000xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x4xf32>, tensor<4x1000xf32>) -> tensor<64x1000xf32>
    %2 = "stablehlo.exponential"(%1) : (tensor<64x1000xf32>) -> tensor<64x1000xf32>
    %3 = "stablehlo.dot_general"(%2, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x1000xf32>, tensor<1000x4xf32>) -> tensor<64x4xf32>
    "func.return"(%3) : (tensor<64x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
