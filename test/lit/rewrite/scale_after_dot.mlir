// memfit-rewrite{scale-after-dot}: in a loop memfit-split made,
// dot(x * broadcast(c), y) -> dot(x, y) * broadcast(c) (and x / c) when c
// varies only along dimensions the result keeps and the result is smaller
// than x. Each function computes exp(q k^T - rowmax) [512, 512] and is split
// by query rows at 256 KB (@fits is small and not split). Only
// scale-after-dot runs here; with it off the loops keep the scaled operand.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=256KB},memfit-rewrite{distance=false top-k=false invariant-solve=false matrix-chain=false reduce-to-dot=false factor-sums=false})' | FileCheck %s --check-prefix=ON
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=256KB},memfit-rewrite{distance=false top-k=false invariant-solve=false matrix-chain=false reduce-to-dot=false factor-sums=false scale-after-dot=false})' | FileCheck %s --check-prefix=OFF

"builtin.module"() ({
// dot(p * 0.125, v) in the loop over query rows: the [32, 8] result is
// scaled, not the [32, 512] operand.
// ON-LABEL: func.func public @scalar_scale
// ON: "stablehlo.while"
// ON: %[[E:.*]] = "stablehlo.exponential"{{.*}} -> tensor<32x512xf32>
// ON-NOT: "stablehlo.multiply"({{.*}}tensor<32x512xf32>
// ON: %[[D:.*]] = "stablehlo.dot_general"(%[[E]], %{{.*}}) {{.*}} -> tensor<32x8xf32>
// ON: %[[C:.*]] = "stablehlo.broadcast_in_dim"(%{{.*}}) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<32x8xf32>
// ON: "stablehlo.multiply"(%[[D]], %[[C]]) : (tensor<32x8xf32>, tensor<32x8xf32>)
// ON: "stablehlo.return"
// OFF-LABEL: func.func public @scalar_scale
// OFF: "stablehlo.while"
// OFF: %[[M:.*]] = "stablehlo.multiply"({{.*}} : (tensor<32x512xf32>, tensor<32x512xf32>)
// OFF: "stablehlo.dot_general"(%[[M]], %{{.*}}) {{.*}} -> tensor<32x8xf32>
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "scalar_scale", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>, %arg2: tensor<512x8xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %12 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x1xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<512x1xf32>) -> tensor<512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = "stablehlo.constant"() <{value = dense<1.250000e-01> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<512x512xf32>
    %10 = "stablehlo.multiply"(%7, %9) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %11 = "stablehlo.dot_general"(%10, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x512xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>
    "func.return"(%11) : (tensor<512x8xf32>) -> ()
  }) : () -> ()
// dot(p / rowsum(p), v): the row sums have extent 1 along the contracted
// keys; the [32, 8] result is divided by them.
// ON-LABEL: func.func public @row_scale
// ON: "stablehlo.while"
// ON: %[[E:.*]] = "stablehlo.exponential"{{.*}} -> tensor<32x512xf32>
// ON: %[[L:.*]] = "stablehlo.reshape"(%{{.*}}) : (tensor<32x1xf32>) -> tensor<32xf32>
// ON: %[[D:.*]] = "stablehlo.dot_general"(%[[E]], %{{.*}}) {{.*}} -> tensor<32x8xf32>
// ON: %[[B:.*]] = "stablehlo.broadcast_in_dim"(%[[L]]) <{broadcast_dimensions = array<i64: 0>}> : (tensor<32xf32>) -> tensor<32x8xf32>
// ON: "stablehlo.divide"(%[[D]], %[[B]]) : (tensor<32x8xf32>, tensor<32x8xf32>)
// ON: "stablehlo.return"
// OFF-LABEL: func.func public @row_scale
// OFF: "stablehlo.divide"({{.*}} : (tensor<32x512xf32>, tensor<32x512xf32>)
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "row_scale", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>, %arg2: tensor<512x8xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %15 = "stablehlo.maximum"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%15) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x1xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<512x1xf32>) -> tensor<512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.reduce"(%7, %8) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %14 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%14) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x1xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<512x1xf32>) -> tensor<512x512xf32>
    %12 = "stablehlo.divide"(%7, %11) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %13 = "stablehlo.dot_general"(%12, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x512xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>
    "func.return"(%13) : (tensor<512x8xf32>) -> ()
  }) : () -> ()
// dot(q * 0.5, k^T): the [48, 512] result is larger than the [48, 8]
// operand: the operand stays scaled.
// ON-LABEL: func.func public @larger_result
// ON: "stablehlo.while"
// ON: %[[M:.*]] = "stablehlo.multiply"({{.*}} : (tensor<48x8xf32>, tensor<48x8xf32>)
// ON: "stablehlo.dot_general"(%[[M]], %{{.*}}) {{.*}} -> tensor<48x512xf32>
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>) -> tensor<512xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "larger_result", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<512x8xf32>
    %2 = "stablehlo.multiply"(%arg0, %1) : (tensor<512x8xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>
    %3 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
    %4 = "stablehlo.dot_general"(%2, %3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %5 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.reduce"(%4, %5) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %7 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%7) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    "func.return"(%6) : (tensor<512xf32>) -> ()
  }) : () -> ()
// dot(p * w[keys], v): w varies along the contracted keys and cannot
// move out of the sum.
// ON-LABEL: func.func public @contracted_scale
// ON: "stablehlo.while"
// ON: %[[M:.*]] = "stablehlo.multiply"({{.*}} : (tensor<32x512xf32>, tensor<32x512xf32>)
// ON: "stablehlo.dot_general"(%[[M]], %{{.*}}) {{.*}} -> tensor<32x8xf32>
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>, tensor<512x8xf32>, tensor<512xf32>) -> tensor<512x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "contracted_scale", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>, %arg2: tensor<512x8xf32>, %arg3: tensor<512xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %12 = "stablehlo.maximum"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x1xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<512x1xf32>) -> tensor<512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 1>}> : (tensor<512xf32>) -> tensor<1x512xf32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x512xf32>) -> tensor<512x512xf32>
    %10 = "stablehlo.multiply"(%7, %9) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %11 = "stablehlo.dot_general"(%10, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x512xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>
    "func.return"(%11) : (tensor<512x8xf32>) -> ()
  }) : () -> ()
// A program that fits has no split loop and is left exactly as written.
// ON-LABEL: func.func public @fits
// ON-NOT: "stablehlo.while"
// ON: %[[M:.*]] = "stablehlo.multiply"(%arg0, %{{.*}}) : (tensor<16x8xf32>, tensor<16x8xf32>)
// ON: "stablehlo.dot_general"(%[[M]], %{{.*}})
  "func.func"() <{function_type = (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "fits", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<16x8xf32>, %arg1: tensor<16x8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<1.250000e-01> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x8xf32>
    %2 = "stablehlo.multiply"(%arg0, %1) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %3 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<16x8xf32>) -> tensor<8x16xf32>
    %4 = "stablehlo.slice"(%3) <{limit_indices = array<i64: 8, 8>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<8x16xf32>) -> tensor<8x8xf32>
    %5 = "stablehlo.dot_general"(%2, %4) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
    "func.return"(%5) : (tensor<16x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
