// Online softmax: softmax(q k^T) v split along the KEY axis with a running
// max m, running sum l and accumulator acc, when no split by query rows fits.
// Per key chunk: m' = max(m, rowmax(s_c)); shift = (m' == -inf ? 0 : m');
// corr = (m == -inf ? 0 : exp(m - shift)); l = l*corr + rowsum(exp(s_c - shift));
// acc = acc*corr + exp(s_c - shift) v_c; after the loop out = acc / l.
// The limit is 40 KB: the arguments of the first two functions take 32.3 KB,
// one query row of scores (1000 keys) with its exp 8 KB, counted twice, so
// splitting by query rows cannot fit (k^T is recomputed in the loop body,
// not carried); the third has 64 keys and 256 queries
// and is split by query rows (no running max).
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=40KB})' | FileCheck %s

"builtin.module"() ({
// CHECK-LABEL: func.func public @attention_by_keys
// CHECK-NOT: tensor<8x1000xf32>
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: [[C:[0-9]+]], 4>
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<8x[[C]]xf32>
// CHECK: "stablehlo.reduce"
// CHECK: "stablehlo.maximum"(%{{.*}}, %{{.*}}) : (tensor<8xf32>, tensor<8xf32>)
// CHECK: comparison_direction EQ
// CHECK: "stablehlo.select"
// CHECK: "stablehlo.exponential"
// CHECK: "stablehlo.select"
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<8x[[C]]xf32>
// CHECK: "stablehlo.multiply"(%{{.*}}, %{{.*}}) : (tensor<8xf32>, tensor<8xf32>)
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<8x4xf32>
// CHECK: "stablehlo.multiply"(%{{.*}}, %{{.*}}) : (tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: "stablehlo.return"
// CHECK: "stablehlo.divide"(%{{.*}}, %{{.*}}) : (tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-NOT: tensor<8x1000xf32>
// CHECK: return
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<8x4xf32>, tensor<1000x4xf32>, tensor<1000x4xf32>) -> tensor<8x4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "attention_by_keys", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8x4xf32>, %arg1: tensor<1000x4xf32>, %arg2: tensor<1000x4xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<1000x4xf32>) -> tensor<4x1000xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x4xf32>, tensor<4x1000xf32>) -> tensor<8x1000xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %18 = "stablehlo.maximum"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%18) : (tensor<f32>) -> ()
    }) : (tensor<8x1000xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
    %6 = "stablehlo.maximum"(%5, %3) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x1000xf32>
    %9 = "stablehlo.subtract"(%1, %8) : (tensor<8x1000xf32>, tensor<8x1000xf32>) -> tensor<8x1000xf32>
    %10 = "stablehlo.exponential"(%9) : (tensor<8x1000xf32>) -> tensor<8x1000xf32>
    %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %17 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%17) : (tensor<f32>) -> ()
    }) : (tensor<8x1000xf32>, tensor<f32>) -> tensor<8xf32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x1000xf32>
    %15 = "stablehlo.divide"(%10, %14) : (tensor<8x1000xf32>, tensor<8x1000xf32>) -> tensor<8x1000xf32>
    %16 = "stablehlo.dot_general"(%15, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x1000xf32>, tensor<1000x4xf32>) -> tensor<8x4xf32>
    "func.return"(%16) : (tensor<8x4xf32>) -> ()
  }) : () -> ()
// CHECK-LABEL: func.func public @masked_attention
// CHECK-NOT: tensor<8x1000xf32>
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.iota"
// CHECK: "stablehlo.compare"{{.*}}comparison_direction GE
// CHECK: "stablehlo.select"
// CHECK: "stablehlo.maximum"(%{{.*}}, %{{.*}}) : (tensor<8xf32>, tensor<8xf32>)
// CHECK: comparison_direction EQ
// CHECK: "stablehlo.exponential"
// CHECK: "stablehlo.return"
// CHECK: "stablehlo.divide"(%{{.*}}, %{{.*}}) : (tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-NOT: tensor<8x1000xf32>
// CHECK: return
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<8x4xf32>, tensor<1000x4xf32>, tensor<1000x4xf32>) -> tensor<8x4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "masked_attention", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<8x4xf32>, %arg4: tensor<1000x4xf32>, %arg5: tensor<1000x4xf32>):
    %3 = "stablehlo.transpose"(%arg4) <{permutation = array<i64: 1, 0>}> : (tensor<1000x4xf32>) -> tensor<4x1000xf32>
    %4 = "stablehlo.dot_general"(%arg3, %3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x4xf32>, tensor<4x1000xf32>) -> tensor<8x1000xf32>
    %5 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8xi32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xi32>) -> tensor<8x1xi32>
    %7 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<1000xi32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 1>}> : (tensor<1000xi32>) -> tensor<1x1000xi32>
    %9 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xi32>) -> tensor<8x1000xi32>
    %10 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1000xi32>) -> tensor<8x1000xi32>
    %11 = "stablehlo.compare"(%9, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<8x1000xi32>, tensor<8x1000xi32>) -> tensor<8x1000xi1>
    %12 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %13 = "func.call"(%11, %4, %12) <{callee = @_where_masked_attention}> : (tensor<8x1000xi1>, tensor<8x1000xf32>, tensor<f32>) -> tensor<8x1000xf32>
    %14 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.reduce"(%13, %14) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %30 = "stablehlo.maximum"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%30) : (tensor<f32>) -> ()
    }) : (tensor<8x1000xf32>, tensor<f32>) -> tensor<8xf32>
    %16 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
    %18 = "stablehlo.maximum"(%17, %15) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %19 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x1000xf32>
    %21 = "stablehlo.subtract"(%13, %20) : (tensor<8x1000xf32>, tensor<8x1000xf32>) -> tensor<8x1000xf32>
    %22 = "stablehlo.exponential"(%21) : (tensor<8x1000xf32>) -> tensor<8x1000xf32>
    %23 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %24 = "stablehlo.reduce"(%22, %23) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %29 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%29) : (tensor<f32>) -> ()
    }) : (tensor<8x1000xf32>, tensor<f32>) -> tensor<8xf32>
    %25 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x1xf32>
    %26 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8x1xf32>) -> tensor<8x1000xf32>
    %27 = "stablehlo.divide"(%22, %26) : (tensor<8x1000xf32>, tensor<8x1000xf32>) -> tensor<8x1000xf32>
    %28 = "stablehlo.dot_general"(%27, %arg5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x1000xf32>, tensor<1000x4xf32>) -> tensor<8x4xf32>
    "func.return"(%28) : (tensor<8x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<8x1000xi1>, tensor<8x1000xf32>, tensor<f32>) -> tensor<8x1000xf32>, res_attrs = [{}], sym_name = "_where_masked_attention", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<8x1000xi1>, %arg1: tensor<8x1000xf32>, %arg2: tensor<f32>):
    %0 = "stablehlo.convert"(%arg2) : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x1000xf32>
    %2 = "stablehlo.select"(%arg0, %arg1, %1) : (tensor<8x1000xi1>, tensor<8x1000xf32>, tensor<8x1000xf32>) -> tensor<8x1000xf32>
    "func.return"(%2) : (tensor<8x1000xf32>) -> ()
  }) : () -> ()
// CHECK-LABEL: func.func public @attention_by_queries
// CHECK: "stablehlo.while"
// CHECK-NOT: comparison_direction EQ
// CHECK: "stablehlo.dynamic_update_slice"
// CHECK: "stablehlo.return"
// CHECK-NOT: comparison_direction EQ
// CHECK: return
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<256x4xf32>, tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<256x4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "attention_by_queries", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x4xf32>, %arg1: tensor<64x4xf32>, %arg2: tensor<64x4xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<64x4xf32>) -> tensor<4x64xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<256x4xf32>, tensor<4x64xf32>) -> tensor<256x64xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %18 = "stablehlo.maximum"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%18) : (tensor<f32>) -> ()
    }) : (tensor<256x64xf32>, tensor<f32>) -> tensor<256xf32>
    %4 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256xf32>
    %6 = "stablehlo.maximum"(%5, %3) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<256xf32>) -> tensor<256x1xf32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<256x1xf32>) -> tensor<256x64xf32>
    %9 = "stablehlo.subtract"(%1, %8) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
    %10 = "stablehlo.exponential"(%9) : (tensor<256x64xf32>) -> tensor<256x64xf32>
    %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %17 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%17) : (tensor<f32>) -> ()
    }) : (tensor<256x64xf32>, tensor<f32>) -> tensor<256xf32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0>}> : (tensor<256xf32>) -> tensor<256x1xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<256x1xf32>) -> tensor<256x64xf32>
    %15 = "stablehlo.divide"(%10, %14) : (tensor<256x64xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
    %16 = "stablehlo.dot_general"(%15, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<256x64xf32>, tensor<64x4xf32>) -> tensor<256x4xf32>
    "func.return"(%16) : (tensor<256x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
