// memfit-split{minor-contraction} and the dots' whole operands: a loop
// carries a computed operand whose batch dimensions do not lead with them
// first (XLA:CPU would otherwise copy it so in every iteration), and a
// split program's top-level dots are written with the lhs contracted on
// its minor dimension (MinorContraction.h). Off, nothing changes.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=600KB minor-contraction=true})' | FileCheck %s --check-prefix=ON
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=600KB})' | FileCheck %s --check-prefix=OFF

"builtin.module"() ({
// Attention split by query rows with k = kx W [S, H, D] (a dot, computed
// once before the loop) read whole by both dots, by heads in its middle dimension: k is transposed once to
// [H, D, S] (batch first, the largest dimension minor) behind a barrier
// before the loop, the loop carries that, and each iteration transposes it
// back for the dots (which XLA folds into their dimension numbers).
// ON-LABEL: func.func public @carried_heads_first
// ON: %[[K:.*]] = "stablehlo.dot_general"(%arg1, %arg2)
// ON: %[[KT:.*]] = "stablehlo.transpose"(%[[K]]) <{permutation = array<i64: 1, 2, 0>}> : (tensor<512x2x8xf32>) -> tensor<2x8x512xf32>
// ON: %[[B:.*]] = "stablehlo.optimization_barrier"(%[[KT]]) : (tensor<2x8x512xf32>) -> tensor<2x8x512xf32>
// ON: "stablehlo.while"({{.*}}%[[B]]
// ON: ^bb0({{.*}}, %[[A:[^:]*]]: tensor<2x8x512xf32>
// ON: %[[BACK:.*]] = "stablehlo.transpose"(%[[A]]) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x8x512xf32>) -> tensor<512x2x8xf32>
// ON: "stablehlo.dot_general"(%{{.*}}, %[[BACK]])
// ON: "stablehlo.dot_general"(%{{.*}}, %[[BACK]])
// ON: "stablehlo.return"
// OFF-LABEL: func.func public @carried_heads_first
// OFF-NOT: "stablehlo.optimization_barrier"(%{{[^,]*}}) :
// OFF: "stablehlo.while"
// OFF-NOT: tensor<2x8x512xf32>
// OFF: return
  "func.func"() <{function_type = (tensor<512x2x8xf32>, tensor<512x2x8xf32>, tensor<8x8xf32>) -> tensor<2x512x8xf32>, sym_name = "carried_heads_first", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x2x8xf32>, %arg1: tensor<512x2x8xf32>, %arg2: tensor<8x8xf32>):
    %k = "stablehlo.dot_general"(%arg1, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>}> : (tensor<512x2x8xf32>, tensor<8x8xf32>) -> tensor<512x2x8xf32>
    %1 = "stablehlo.dot_general"(%arg0, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>}> : (tensor<512x2x8xf32>, tensor<512x2x8xf32>) -> tensor<2x512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 2>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %9 = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<2x512x512xf32>, tensor<f32>) -> tensor<2x512xf32>
    %5 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x512xf32>) -> tensor<2x512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<2x512x512xf32>, tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
    %8 = "stablehlo.dot_general"(%7, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>}> : (tensor<2x512x512xf32>, tensor<512x2x8xf32>) -> tensor<2x512x8xf32>
    "func.return"(%8) : (tensor<2x512x8xf32>) -> ()
  }) : () -> ()
// The same loop with k = kx * kx, which the loop body recomputes from kx
// (in whatever layout its dots read): no copy is carried.
// ON-LABEL: func.func public @fusible_recomputed
// ON-NOT: "stablehlo.optimization_barrier"(%{{[^,]*}}) :
// ON: "stablehlo.while"
// ON-NOT: tensor<2x8x512xf32>
// ON: return
  "func.func"() <{function_type = (tensor<512x2x8xf32>, tensor<512x2x8xf32>) -> tensor<2x512x8xf32>, sym_name = "fusible_recomputed", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x2x8xf32>, %arg1: tensor<512x2x8xf32>):
    %k = "stablehlo.multiply"(%arg1, %arg1) : (tensor<512x2x8xf32>, tensor<512x2x8xf32>) -> tensor<512x2x8xf32>
    %1 = "stablehlo.dot_general"(%arg0, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>}> : (tensor<512x2x8xf32>, tensor<512x2x8xf32>) -> tensor<2x512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 2>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %9 = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<2x512x512xf32>, tensor<f32>) -> tensor<2x512xf32>
    %5 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x512xf32>) -> tensor<2x512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<2x512x512xf32>, tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
    %8 = "stablehlo.dot_general"(%7, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>}> : (tensor<2x512x512xf32>, tensor<512x2x8xf32>) -> tensor<2x512x8xf32>
    "func.return"(%8) : (tensor<2x512x8xf32>) -> ()
  }) : () -> ()
// The same loop, with k an argument: the caller keeps it, so a carried
// copy would cost its bytes beside it; the loop reads k as it is.
// ON-LABEL: func.func public @argument_read_as_it_is
// ON-NOT: "stablehlo.transpose"
// ON: "stablehlo.while"
// ON-NOT: tensor<2x8x512xf32>
// ON: return
  "func.func"() <{function_type = (tensor<512x2x8xf32>, tensor<512x2x8xf32>) -> tensor<2x512x8xf32>, sym_name = "argument_read_as_it_is", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x2x8xf32>, %k: tensor<512x2x8xf32>):
    %1 = "stablehlo.dot_general"(%arg0, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>}> : (tensor<512x2x8xf32>, tensor<512x2x8xf32>) -> tensor<2x512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 2>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %9 = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<2x512x512xf32>, tensor<f32>) -> tensor<2x512xf32>
    %5 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x512xf32>) -> tensor<2x512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<2x512x512xf32>, tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
    %8 = "stablehlo.dot_general"(%7, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>}> : (tensor<2x512x512xf32>, tensor<512x2x8xf32>) -> tensor<2x512x8xf32>
    "func.return"(%8) : (tensor<2x512x8xf32>) -> ()
  }) : () -> ()
// A split program's whole dot a^T b (contracted on a's major dimension,
// outside the loop): a is transposed behind a barrier, the dot contracts
// it on its minor dimension, and its result goes behind a barrier too (XLA
// would fold a transpose of it back into the dot).
// ON-LABEL: func.func public @top_level_dot_of_split_program
// ON: %[[AT:.*]] = "stablehlo.transpose"(%arg2) <{permutation = array<i64: 1, 0>}> : (tensor<64x8xf32>) -> tensor<8x64xf32>
// ON: %[[B:.*]] = "stablehlo.optimization_barrier"(%[[AT]])
// ON: %[[D:.*]] = "stablehlo.dot_general"(%[[B]], %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>{{.*}}(tensor<8x64xf32>, tensor<64x8xf32>) -> tensor<8x8xf32>
// ON: %[[R:.*]] = "stablehlo.optimization_barrier"(%[[D]])
// ON: "stablehlo.while"
// ON: return {{.*}}%[[R]]
// OFF-LABEL: func.func public @top_level_dot_of_split_program
// OFF: "stablehlo.dot_general"(%arg2, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>, tensor<64x8xf32>, tensor<64x8xf32>) -> (tensor<512xf32>, tensor<8x8xf32>), sym_name = "top_level_dot_of_split_program", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>, %arg2: tensor<64x8xf32>, %arg3: tensor<64x8xf32>):
    %1 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<512x8xf32>, tensor<512x8xf32>) -> tensor<512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %9 = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %w = "stablehlo.dot_general"(%arg2, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<64x8xf32>, tensor<64x8xf32>) -> tensor<8x8xf32>
    "func.return"(%3, %w) : (tensor<512xf32>, tensor<8x8xf32>) -> ()
  }) : () -> ()
// A program that fits is left as jax wrote it, dots included.
// ON-LABEL: func.func public @fits_unchanged
// ON-NOT: "stablehlo.optimization_barrier"
// ON: "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>
  "func.func"() <{function_type = (tensor<64x8xf32>, tensor<64x8xf32>) -> tensor<8x8xf32>, sym_name = "fits_unchanged", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<64x8xf32>, %arg1: tensor<64x8xf32>):
    %w = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<64x8xf32>, tensor<64x8xf32>) -> tensor<8x8xf32>
    "func.return"(%w) : (tensor<8x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
