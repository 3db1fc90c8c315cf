// memfit-rewrite{batched-gemv}: in a loop memfit-split made, a batched
// matrix-vector dot_general (one operand has only batch and contracting
// dimensions) whose matrix operand's batch dimensions do not lead becomes
// reduce(add, broadcast(vector) * matrix). Each function runs such a dot in
// a hand-written loop marked memfit.split (@not_in_a_split_loop: unmarked).
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-rewrite{distance=false top-k=false})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-rewrite{distance=false top-k=false batched-gemv=false})' | FileCheck %s --check-prefix=OFF

// A decode step's scores: q [B, H, D] against a key chunk [B, c, H, D]
// (batch B, H; contracted D). The product is read in the chunk's layout,
// reduced over D, and the small [B, c, H] result transposed to the dot's
// [B, H, c]; reduce-to-dot (on here) leaves the marked reduce alone.
// CHECK-LABEL: func.func @scores
// CHECK: "stablehlo.while"
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: %[[Q:.*]] = "stablehlo.broadcast_in_dim"(%{{.*}}) <{broadcast_dimensions = array<i64: 0, 2, 3>}> : (tensor<2x4x8xf32>) -> tensor<2x6x4x8xf32>
// CHECK: %[[P:.*]] = "stablehlo.multiply"(%{{.*}}, %[[Q]]) : (tensor<2x6x4x8xf32>, tensor<2x6x4x8xf32>)
// CHECK: %[[S:.*]] = "stablehlo.reduce"(%[[P]], %{{.*}}) <{dimensions = array<i64: 3>}>
// CHECK: "stablehlo.add"
// CHECK: }) {memfit.batched_gemv} : (tensor<2x6x4x8xf32>, tensor<f32>) -> tensor<2x6x4xf32>
// CHECK: "stablehlo.transpose"(%[[S]]) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x6x4xf32>) -> tensor<2x4x6xf32>
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: "stablehlo.return"
// OFF-LABEL: func.func @scores
// OFF: "stablehlo.dot_general"
func.func @scores(%arg0: tensor<2x4x8xf32>, %arg1: tensor<2x6x4x8xf32>) -> tensor<2x4x6xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x4x6xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%2, %arg1, %arg0, %1) ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<2x6x4x8xf32>, %arg4: tensor<2x4x8xf32>, %arg5: tensor<2x4x6xf32>):
      %4 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.compare"(%arg2, %4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%5) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<2x6x4x8xf32>, %arg4: tensor<2x4x8xf32>, %arg5: tensor<2x4x6xf32>):
      %4 = "stablehlo.dot_general"(%arg4, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x8xf32>, tensor<2x6x4x8xf32>) -> tensor<2x4x6xf32>
      %5 = "stablehlo.add"(%arg5, %4) : (tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
      %6 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.add"(%arg2, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%7, %arg3, %arg4, %5) : (tensor<i32>, tensor<2x6x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>) -> ()
    }) {memfit.split = {chunk = 2 : i64, kind = "map"}} : (tensor<i32>, tensor<2x6x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>) -> (tensor<i32>, tensor<2x6x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>)
    return %3#3 : tensor<2x4x6xf32>
}

// The probabilities [B, H, c] against a value chunk [B, c, H, D]
// (contracted c): the small operand is transposed to the chunk's order
// first, so that the broadcast's dimensions increase; the reduce over c
// gives [B, H, D], the dot's own order.
// CHECK-LABEL: func.func @values
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: %[[T:.*]] = "stablehlo.transpose"(%{{.*}}) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x4x6xf32>) -> tensor<2x6x4xf32>
// CHECK: %[[B:.*]] = "stablehlo.broadcast_in_dim"(%[[T]]) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x6x4xf32>) -> tensor<2x6x4x8xf32>
// CHECK: "stablehlo.multiply"(%{{.*}}, %[[B]])
// CHECK: "stablehlo.reduce"{{.*}}<{dimensions = array<i64: 1>}>
// CHECK: }) {memfit.batched_gemv} : (tensor<2x6x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
// CHECK-NOT: "stablehlo.transpose"
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: "stablehlo.return"
func.func @values(%arg0: tensor<2x4x6xf32>, %arg1: tensor<2x6x4x8xf32>) -> tensor<2x4x8xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x4x8xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%2, %arg1, %arg0, %1) ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<2x6x4x8xf32>, %arg4: tensor<2x4x6xf32>, %arg5: tensor<2x4x8xf32>):
      %4 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.compare"(%arg2, %4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%5) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<2x6x4x8xf32>, %arg4: tensor<2x4x6xf32>, %arg5: tensor<2x4x8xf32>):
      %4 = "stablehlo.dot_general"(%arg4, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x6xf32>, tensor<2x6x4x8xf32>) -> tensor<2x4x8xf32>
      %5 = "stablehlo.add"(%arg5, %4) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %6 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.add"(%arg2, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%7, %arg3, %arg4, %5) : (tensor<i32>, tensor<2x6x4x8xf32>, tensor<2x4x6xf32>, tensor<2x4x8xf32>) -> ()
    }) {memfit.split = {chunk = 2 : i64, kind = "map"}} : (tensor<i32>, tensor<2x6x4x8xf32>, tensor<2x4x6xf32>, tensor<2x4x8xf32>) -> (tensor<i32>, tensor<2x6x4x8xf32>, tensor<2x4x6xf32>, tensor<2x4x8xf32>)
    return %3#3 : tensor<2x4x8xf32>
}

// The vector as the rhs: matrix [c, B, D] (batch B), vector [B, D]; the
// result [B, c] is the reduce's [c, B] transposed.
// CHECK-LABEL: func.func @vector_on_the_right
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: "stablehlo.broadcast_in_dim"(%{{.*}}) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<2x8xf32>) -> tensor<6x2x8xf32>
// CHECK: "stablehlo.reduce"{{.*}}<{dimensions = array<i64: 2>}>
// CHECK: }) {memfit.batched_gemv} : (tensor<6x2x8xf32>, tensor<f32>) -> tensor<6x2xf32>
// CHECK: "stablehlo.transpose"(%{{.*}}) <{permutation = array<i64: 1, 0>}> : (tensor<6x2xf32>) -> tensor<2x6xf32>
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: "stablehlo.return"
func.func @vector_on_the_right(%arg0: tensor<2x8xf32>, %arg1: tensor<6x2x8xf32>) -> tensor<2x6xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x6xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%2, %arg1, %arg0, %1) ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<6x2x8xf32>, %arg4: tensor<2x8xf32>, %arg5: tensor<2x6xf32>):
      %4 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.compare"(%arg2, %4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%5) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<6x2x8xf32>, %arg4: tensor<2x8xf32>, %arg5: tensor<2x6xf32>):
      %4 = "stablehlo.dot_general"(%arg3, %arg4) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<6x2x8xf32>, tensor<2x8xf32>) -> tensor<2x6xf32>
      %5 = "stablehlo.add"(%arg5, %4) : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
      %6 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.add"(%arg2, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%7, %arg3, %arg4, %5) : (tensor<i32>, tensor<6x2x8xf32>, tensor<2x8xf32>, tensor<2x6xf32>) -> ()
    }) {memfit.split = {chunk = 2 : i64, kind = "map"}} : (tensor<i32>, tensor<6x2x8xf32>, tensor<2x8xf32>, tensor<2x6xf32>) -> (tensor<i32>, tensor<6x2x8xf32>, tensor<2x8xf32>, tensor<2x6xf32>)
    return %3#3 : tensor<2x6xf32>
}

// The matrix's batch dimensions lead ([B, H, c, D]): XLA reads it as it
// lies, and the dot stays.
// CHECK-LABEL: func.func @batch_leading
// CHECK: "stablehlo.dot_general"
// CHECK-NOT: memfit.batched_gemv
func.func @batch_leading(%arg0: tensor<2x4x8xf32>, %arg1: tensor<2x4x6x8xf32>) -> tensor<2x4x6xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x4x6xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%2, %arg1, %arg0, %1) ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<2x4x6x8xf32>, %arg4: tensor<2x4x8xf32>, %arg5: tensor<2x4x6xf32>):
      %4 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.compare"(%arg2, %4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%5) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<2x4x6x8xf32>, %arg4: tensor<2x4x8xf32>, %arg5: tensor<2x4x6xf32>):
      %4 = "stablehlo.dot_general"(%arg4, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6xf32>
      %5 = "stablehlo.add"(%arg5, %4) : (tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
      %6 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.add"(%arg2, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%7, %arg3, %arg4, %5) : (tensor<i32>, tensor<2x4x6x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>) -> ()
    }) {memfit.split = {chunk = 2 : i64, kind = "map"}} : (tensor<i32>, tensor<2x4x6x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>) -> (tensor<i32>, tensor<2x4x6x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>)
    return %3#3 : tensor<2x4x6xf32>
}

// Both operands have free dimensions (a batched matrix product): a GEMM,
// left as it is.
// CHECK-LABEL: func.func @matrix_product
// CHECK: "stablehlo.dot_general"
// CHECK-NOT: memfit.batched_gemv
func.func @matrix_product(%arg0: tensor<4x3x8xf32>, %arg1: tensor<6x4x8xf32>) -> tensor<4x3x6xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x3x6xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%2, %arg1, %arg0, %1) ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<6x4x8xf32>, %arg4: tensor<4x3x8xf32>, %arg5: tensor<4x3x6xf32>):
      %4 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.compare"(%arg2, %4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%5) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<6x4x8xf32>, %arg4: tensor<4x3x8xf32>, %arg5: tensor<4x3x6xf32>):
      %4 = "stablehlo.dot_general"(%arg4, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x3x8xf32>, tensor<6x4x8xf32>) -> tensor<4x3x6xf32>
      %5 = "stablehlo.add"(%arg5, %4) : (tensor<4x3x6xf32>, tensor<4x3x6xf32>) -> tensor<4x3x6xf32>
      %6 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.add"(%arg2, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%7, %arg3, %arg4, %5) : (tensor<i32>, tensor<6x4x8xf32>, tensor<4x3x8xf32>, tensor<4x3x6xf32>) -> ()
    }) {memfit.split = {chunk = 2 : i64, kind = "map"}} : (tensor<i32>, tensor<6x4x8xf32>, tensor<4x3x8xf32>, tensor<4x3x6xf32>) -> (tensor<i32>, tensor<6x4x8xf32>, tensor<4x3x8xf32>, tensor<4x3x6xf32>)
    return %3#3 : tensor<4x3x6xf32>
}

// The same dot as @scores in a loop memfit-split did not make (no
// memfit.split): a program that fits compiles as written.
// CHECK-LABEL: func.func @not_in_a_split_loop
// CHECK: "stablehlo.dot_general"
// CHECK-NOT: memfit.batched_gemv
func.func @not_in_a_split_loop(%arg0: tensor<2x4x8xf32>, %arg1: tensor<2x6x4x8xf32>) -> tensor<2x4x6xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x4x6xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%2, %arg1, %arg0, %1) ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<2x6x4x8xf32>, %arg4: tensor<2x4x8xf32>, %arg5: tensor<2x4x6xf32>):
      %4 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.compare"(%arg2, %4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%5) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<2x6x4x8xf32>, %arg4: tensor<2x4x8xf32>, %arg5: tensor<2x4x6xf32>):
      %4 = "stablehlo.dot_general"(%arg4, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x8xf32>, tensor<2x6x4x8xf32>) -> tensor<2x4x6xf32>
      %5 = "stablehlo.add"(%arg5, %4) : (tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
      %6 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.add"(%arg2, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%7, %arg3, %arg4, %5) : (tensor<i32>, tensor<2x6x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>) -> ()
    }) : (tensor<i32>, tensor<2x6x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>) -> (tensor<i32>, tensor<2x6x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x6xf32>)
    return %3#3 : tensor<2x4x6xf32>
}
