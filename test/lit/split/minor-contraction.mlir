// memfit-split{minor-contraction}: an accumulated dot (in the loop, its
// partial products summed into a loop-carried value) whose lhs is contracted
// on its major dimension is written with the lhs contracted on its minor
// one, the form XLA:CPU's ynn fusions take (MinorContraction.h). Every
// function splits the [512, 512] scores exp(q k^T - rowmax) by query rows
// and contracts the rows with a small [512, 8] or [8, 512] operand.
// Off (the pass's default), the dots keep their form.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=256KB minor-contraction=true})' | FileCheck %s --check-prefix=ON
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=256KB})' | FileCheck %s --check-prefix=OFF

"builtin.module"() ({
// dot(p, q) contracting the query rows, q [N, 8] the smaller: q's chunk is
// transposed behind a one-operand barrier and becomes the lhs; the loop
// accumulates [8, 512] and transposes it once after the loop.
// ON-LABEL: func.func public @rhs_smaller
// ON: "stablehlo.while"
// ON: %[[Q:.*]] = "stablehlo.dynamic_slice"({{.*}} -> tensor<32x8xf32>
// ON: %[[QT:.*]] = "stablehlo.transpose"(%[[Q]]) <{permutation = array<i64: 1, 0>}> : (tensor<32x8xf32>) -> tensor<8x32xf32>
// ON: %[[B:.*]] = "stablehlo.optimization_barrier"(%[[QT]]) : (tensor<8x32xf32>) -> tensor<8x32xf32>
// ON: %[[D:.*]] = "stablehlo.dot_general"(%[[B]], %{{.*}}) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>{{.*}}(tensor<8x32xf32>, tensor<32x512xf32>) -> tensor<8x512xf32>
// ON: "stablehlo.add"(%{{.*}}, %[[D]]) : (tensor<8x512xf32>, tensor<8x512xf32>)
// ON: "stablehlo.return"
// ON: %[[R:.*]] = "stablehlo.transpose"(%{{.*}}#1) <{permutation = array<i64: 1, 0>}> : (tensor<8x512xf32>) -> tensor<512x8xf32>
// ON: return %[[R]]
// OFF-LABEL: func.func public @rhs_smaller
// OFF-NOT: "stablehlo.optimization_barrier"(%{{[^,]*}}) :
// OFF: "stablehlo.dot_general"({{.*}}lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>{{.*}}(tensor<32x512xf32>, tensor<32x8xf32>) -> tensor<512x8xf32>
// OFF-NOT: "stablehlo.optimization_barrier"(%{{[^,]*}}) :
// OFF: return
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "rhs_smaller", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %9 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x1xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<512x1xf32>) -> tensor<512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = "stablehlo.dot_general"(%7, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x512xf32>, tensor<512x8xf32>) -> tensor<512x8xf32>
    "func.return"(%8) : (tensor<512x8xf32>) -> ()
  }) : () -> ()
// dot(q, p), q the smaller lhs contracted on its major dimension: q's chunk
// is transposed behind a barrier; the result keeps its layout (no
// transpose after the loop).
// ON-LABEL: func.func public @lhs_smaller
// ON: "stablehlo.while"
// ON: %[[Q:.*]] = "stablehlo.dynamic_slice"({{.*}} -> tensor<32x8xf32>
// ON: %[[QT:.*]] = "stablehlo.transpose"(%[[Q]]) <{permutation = array<i64: 1, 0>}> : (tensor<32x8xf32>) -> tensor<8x32xf32>
// ON: %[[B:.*]] = "stablehlo.optimization_barrier"(%[[QT]])
// ON: "stablehlo.dot_general"(%[[B]], %{{.*}}) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>{{.*}}(tensor<8x32xf32>, tensor<32x512xf32>) -> tensor<8x512xf32>
// ON: "stablehlo.return"
// ON-NEXT: })
// ON-NEXT: return %{{.*}}#1
// OFF-LABEL: func.func public @lhs_smaller
// OFF: "stablehlo.dot_general"({{.*}}lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>{{.*}}(tensor<32x8xf32>, tensor<32x512xf32>) -> tensor<8x512xf32>
// OFF: return
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>) -> tensor<8x512xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "lhs_smaller", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %9 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x1xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<512x1xf32>) -> tensor<512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = "stablehlo.dot_general"(%arg0, %7) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<512x512xf32>) -> tensor<8x512xf32>
    "func.return"(%8) : (tensor<8x512xf32>) -> ()
  }) : () -> ()
// dot(p, wt) with wt [8, N] contracted on its minor dimension: the operands
// are swapped, no transpose in the loop; [8, 512] accumulated, transposed
// once after it.
// ON-LABEL: func.func public @swap
// ON: "stablehlo.while"
// ON-NOT: "stablehlo.optimization_barrier"
// ON: %[[W:.*]] = "stablehlo.dynamic_slice"({{.*}} -> tensor<8x32xf32>
// ON-NOT: "stablehlo.optimization_barrier"
// ON: "stablehlo.dot_general"(%[[W]], %{{.*}}) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>{{.*}}(tensor<8x32xf32>, tensor<32x512xf32>) -> tensor<8x512xf32>
// ON: "stablehlo.return"
// ON: %[[R:.*]] = "stablehlo.transpose"(%{{.*}}) <{permutation = array<i64: 1, 0>}> : (tensor<8x512xf32>) -> tensor<512x8xf32>
// ON: return %[[R]]
// OFF-LABEL: func.func public @swap
// OFF: "stablehlo.dot_general"({{.*}}lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]>{{.*}}(tensor<32x512xf32>, tensor<8x32xf32>) -> tensor<512x8xf32>
// OFF: return
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "swap", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>, %arg2: tensor<8x512xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %9 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x1xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<512x1xf32>) -> tensor<512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = "stablehlo.dot_general"(%7, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x512xf32>, tensor<8x512xf32>) -> tensor<512x8xf32>
    "func.return"(%8) : (tensor<512x8xf32>) -> ()
  }) : () -> ()
// dot(wt, p): the lhs is contracted on its minor dimension already, and
// is left as it is.
// ON-LABEL: func.func public @already_minor
// ON: "stablehlo.while"
// ON-NOT: "stablehlo.optimization_barrier"
// ON: %[[W:.*]] = "stablehlo.dynamic_slice"({{.*}} -> tensor<8x32xf32>
// ON-NOT: "stablehlo.optimization_barrier"
// ON: "stablehlo.dot_general"(%[[W]], %{{.*}}) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>{{.*}}(tensor<8x32xf32>, tensor<32x512xf32>) -> tensor<8x512xf32>
// ON-NOT: "stablehlo.transpose"
// ON: return
  "func.func"() <{function_type = (tensor<512x8xf32>, tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<8x512xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "already_minor", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x8xf32>, %arg1: tensor<512x8xf32>, %arg2: tensor<8x512xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<512x8xf32>) -> tensor<8x512xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x8xf32>, tensor<8x512xf32>) -> tensor<512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %9 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x1xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<512x1xf32>) -> tensor<512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = "stablehlo.dot_general"(%arg2, %7) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x512xf32>, tensor<512x512xf32>) -> tensor<8x512xf32>
    "func.return"(%8) : (tensor<8x512xf32>) -> ()
  }) : () -> ()
// dot(p, q) contracting the query rows, with q [N, H, D] read by heads in
// its middle dimension (jax's gradient of einsum("qhd,khd->hqk") by k): q's
// chunk, the smaller, is transposed to [H, D, c] (batch first, the
// contracted rows minor) behind a barrier and becomes the lhs; the loop
// accumulates [H, D, N] and transposes it once after the loop.
// ON-LABEL: func.func public @batch_not_leading
// ON: "stablehlo.while"
// ON: %[[Q:.*]] = "stablehlo.dynamic_slice"({{.*}} -> tensor<[[C:[0-9]+]]x2x8xf32>
// ON: %[[QT:.*]] = "stablehlo.transpose"(%[[Q]]) <{permutation = array<i64: 1, 2, 0>}> : (tensor<[[C]]x2x8xf32>) -> tensor<2x8x[[C]]xf32>
// ON: %[[B:.*]] = "stablehlo.optimization_barrier"(%[[QT]])
// ON: %[[D:.*]] = "stablehlo.dot_general"(%[[B]], %{{.*}}) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>{{.*}}(tensor<2x8x[[C]]xf32>, tensor<2x[[C]]x512xf32>) -> tensor<2x8x512xf32>
// ON: "stablehlo.add"(%{{.*}}, %[[D]]) : (tensor<2x8x512xf32>, tensor<2x8x512xf32>)
// ON: "stablehlo.return"
// ON: %[[R:.*]] = "stablehlo.transpose"(%{{.*}}#1) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x8x512xf32>) -> tensor<2x512x8xf32>
// ON: return %[[R]]
// OFF-LABEL: func.func public @batch_not_leading
// OFF-NOT: "stablehlo.optimization_barrier"(%{{[^,]*}}) :
// OFF: "stablehlo.dot_general"({{.*}}lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>{{.*}} -> tensor<2x512x8xf32>
// OFF: return
  "func.func"() <{function_type = (tensor<512x2x8xf32>, tensor<512x2x8xf32>) -> tensor<2x512x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "batch_not_leading", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<512x2x8xf32>, %arg1: tensor<512x2x8xf32>):
    %1 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x2x8xf32>, tensor<512x2x8xf32>) -> tensor<2x512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %9 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<2x512x512xf32>, tensor<f32>) -> tensor<2x512xf32>
    %5 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x512xf32>) -> tensor<2x512x512xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<2x512x512xf32>, tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
    %8 = "stablehlo.dot_general"(%7, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x512x512xf32>, tensor<512x2x8xf32>) -> tensor<2x512x8xf32>
    "func.return"(%8) : (tensor<2x512x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
