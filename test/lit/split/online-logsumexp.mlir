// Online logsumexp: a max and a sum of exp(x - max) over the split
// dimension share one pass. The loop carries the running max m and sum l;
// per chunk m' = max(m, max(x_c)), X = where(isfinite(m), m, 0) (jax's
// chain, cloned), corr = exp(min(X - X', 0)) (0 where X is -inf),
// l' = l * corr + sum(exp(x_c - X')). A reader of the exponentials other
// than the sum is a second pass that recomputes them with the final max;
// a reader inside the loop (the rows' sums below) keeps the two passes.
// Each function: x = a b^T [8192, 4] reduced over its 8192 rows at 100 KB
// (a takes 64 KB; one column of x does not fit twice over).
// Generated from jax (jax.nn.logsumexp / jax.nn.softmax over axis 0).
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=100KB})' | FileCheck %s

"builtin.module"() ({
// CHECK-LABEL: func.func public @col_lse
// CHECK-NOT: tensor<8192x4xf32>
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C:[0-9]+]]x4xf32>
// CHECK: "stablehlo.maximum"(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>)
// CHECK: "stablehlo.is_finite"
// CHECK: "stablehlo.minimum"(%{{.*}}, %{{.*}}) : (tensor<1x4xf32>, tensor<1x4xf32>)
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<1x4xf32>
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<[[C]]x4xf32>
// CHECK: "stablehlo.multiply"(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>)
// CHECK: "stablehlo.add"(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>)
// CHECK: kind = "online-logsumexp"
// CHECK-NOT: "stablehlo.while"
// CHECK-NOT: tensor<8192x4xf32>
// CHECK: "stablehlo.log"
// CHECK: return
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<8192x2xf32>, tensor<4x2xf32>) -> tensor<4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "col_lse", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8192x2xf32>, %arg1: tensor<4x2xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<4x2xf32>) -> tensor<2x4xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8192x2xf32>, tensor<2x4xf32>) -> tensor<8192x4xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %21 = "stablehlo.maximum"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%21) : (tensor<f32>) -> ()
    }) : (tensor<8192x4xf32>, tensor<f32>) -> tensor<4xf32>
    %4 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %6 = "stablehlo.maximum"(%5, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %7 = "stablehlo.is_finite"(%6) : (tensor<4xf32>) -> tensor<4xi1>
    %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %10 = "stablehlo.select"(%7, %6, %9) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<8192x4xf32>
    %13 = "stablehlo.subtract"(%1, %12) : (tensor<8192x4xf32>, tensor<8192x4xf32>) -> tensor<8192x4xf32>
    %14 = "stablehlo.exponential"(%13) : (tensor<8192x4xf32>) -> tensor<8192x4xf32>
    %15 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.reduce"(%14, %15) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %20 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%20) : (tensor<f32>) -> ()
    }) : (tensor<8192x4xf32>, tensor<f32>) -> tensor<4xf32>
    %17 = "stablehlo.abs"(%16) : (tensor<4xf32>) -> tensor<4xf32>
    %18 = "stablehlo.log"(%17) : (tensor<4xf32>) -> tensor<4xf32>
    %19 = "stablehlo.add"(%18, %10) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%19) : (tensor<4xf32>) -> ()
  }) : () -> ()
// CHECK-LABEL: func.func public @col_softmax
// CHECK-NOT: tensor<8192x4xf32>
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.minimum"(%{{.*}}, %{{.*}}) : (tensor<1x4xf32>, tensor<1x4xf32>)
// CHECK: kind = "online-logsumexp"
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<[[C:[0-9]+]]x4xf32>
// CHECK: "stablehlo.divide"{{.*}} -> tensor<[[C]]x4xf32>
// CHECK: kind = "accumulate"
// CHECK-NOT: "stablehlo.while"
// CHECK-NOT: tensor<8192x4xf32>
// CHECK: return
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<8192x2xf32>, tensor<4x2xf32>) -> tensor<4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "col_softmax", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8192x2xf32>, %arg1: tensor<4x2xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<4x2xf32>) -> tensor<2x4xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8192x2xf32>, tensor<2x4xf32>) -> tensor<8192x4xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %26 = "stablehlo.maximum"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%26) : (tensor<f32>) -> ()
    }) : (tensor<8192x4xf32>, tensor<f32>) -> tensor<4xf32>
    %4 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %6 = "stablehlo.maximum"(%5, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<8192x4xf32>
    %9 = "stablehlo.subtract"(%1, %8) : (tensor<8192x4xf32>, tensor<8192x4xf32>) -> tensor<8192x4xf32>
    %10 = "stablehlo.exponential"(%9) : (tensor<8192x4xf32>) -> tensor<8192x4xf32>
    %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %25 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%25) : (tensor<f32>) -> ()
    }) : (tensor<8192x4xf32>, tensor<f32>) -> tensor<4xf32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<8192x4xf32>
    %15 = "stablehlo.divide"(%10, %14) : (tensor<8192x4xf32>, tensor<8192x4xf32>) -> tensor<8192x4xf32>
    %16 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 8192, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<8192x2xf32>) -> tensor<8192x1xf32>
    %17 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8192x1xf32>
    %19 = "stablehlo.add"(%16, %18) : (tensor<8192x1xf32>, tensor<8192x1xf32>) -> tensor<8192x1xf32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<8192x1xf32>) -> tensor<8192x4xf32>
    %21 = "stablehlo.multiply"(%15, %20) : (tensor<8192x4xf32>, tensor<8192x4xf32>) -> tensor<8192x4xf32>
    %22 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %23 = "stablehlo.reduce"(%21, %22) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %24 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%24) : (tensor<f32>) -> ()
    }) : (tensor<8192x4xf32>, tensor<f32>) -> tensor<4xf32>
    "func.return"(%23) : (tensor<4xf32>) -> ()
  }) : () -> ()
// CHECK-LABEL: func.func public @row_reads_e
// CHECK-NOT: "stablehlo.minimum"
// CHECK: kind = "first-of-two-passes"
// CHECK-NOT: kind = "online-logsumexp"
// CHECK: kind = "accumulate"
// CHECK: return
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<8192x2xf32>, tensor<4x2xf32>) -> (tensor<4xf32>, tensor<f32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "row_reads_e", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8192x2xf32>, %arg1: tensor<4x2xf32>):
    %0 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 1, 0>}> : (tensor<4x2xf32>) -> tensor<2x4xf32>
    %1 = "stablehlo.dot_general"(%arg0, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8192x2xf32>, tensor<2x4xf32>) -> tensor<8192x4xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %19 = "stablehlo.maximum"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%19) : (tensor<f32>) -> ()
    }) : (tensor<8192x4xf32>, tensor<f32>) -> tensor<4xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<8192x4xf32>
    %6 = "stablehlo.subtract"(%1, %5) : (tensor<8192x4xf32>, tensor<8192x4xf32>) -> tensor<8192x4xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<8192x4xf32>) -> tensor<8192x4xf32>
    %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.reduce"(%7, %8) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %18 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%18) : (tensor<f32>) -> ()
    }) : (tensor<8192x4xf32>, tensor<f32>) -> tensor<4xf32>
    %10 = "stablehlo.log"(%9) : (tensor<4xf32>) -> tensor<4xf32>
    %11 = "stablehlo.add"(%10, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %12 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.reduce"(%7, %12) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %17 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%17) : (tensor<f32>) -> ()
    }) : (tensor<8192x4xf32>, tensor<f32>) -> tensor<8192xf32>
    %14 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.reduce"(%13, %14) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %16 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<8192xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%11, %15) : (tensor<4xf32>, tensor<f32>) -> ()
  }) : () -> ()

}) : () -> ()
