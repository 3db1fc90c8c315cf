// A small fusible value that the region reads in chunks and ops outside the
// region read too (here the return) is sliced in the loop, not recomputed:
// XLA rewrites each copy by its own users (x / sqrt(y) becomes
// x * rsqrt(y) when the sqrt has one user), so a recomputed copy can differ
// from the original in its last bits, and two passes of a softmax gradient
// would read differently rounded logits. A value only the region reads is
// still recomputed per chunk (no buffer for it).
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=128KB})' | FileCheck %s

// The normalised rows n (4 KiB, a thirty-second of the limit and 1/256 of
// the [512, 512] exponentials) are also returned: the loop takes n whole
// and slices its rows.
// CHECK-LABEL: func.func public @shared_small_value
// CHECK: %[[N:.*]] = "stablehlo.divide"(%arg0,
// CHECK: "stablehlo.while"({{.*}}%[[N]]{{[,)]}}
// CHECK-NOT: "stablehlo.sqrt"
// CHECK: "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: {{[0-9]+}}, 2>
// CHECK-NOT: "stablehlo.sqrt"
// CHECK: "stablehlo.exponential"
// CHECK: memfit.split
// CHECK-NOT: "stablehlo.sqrt"
// CHECK: return
"func.func"() <{function_type = (tensor<512x2xf32>, tensor<512x2xf32>) -> (tensor<512xf32>, tensor<512x2xf32>), sym_name = "shared_small_value", sym_visibility = "public"}> ({
^bb0(%arg0: tensor<512x2xf32>, %arg1: tensor<512x2xf32>):
  %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %1 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<512x2xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>
  %2 = "stablehlo.reduce"(%1, %0) <{dimensions = array<i64: 1>}> ({
  ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
    %10 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%10) : (tensor<f32>) -> ()
  }) : (tensor<512x2xf32>, tensor<f32>) -> tensor<512xf32>
  %3 = "stablehlo.sqrt"(%2) : (tensor<512xf32>) -> tensor<512xf32>
  %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x2xf32>
  %5 = "stablehlo.divide"(%arg0, %4) : (tensor<512x2xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>
  %6 = "stablehlo.dot_general"(%5, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<512x2xf32>, tensor<512x2xf32>) -> tensor<512x512xf32>
  %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %8 = "stablehlo.reduce"(%7, %0) <{dimensions = array<i64: 1>}> ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %9 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%9) : (tensor<f32>) -> ()
  }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
  "func.return"(%8, %5) : (tensor<512xf32>, tensor<512x2xf32>) -> ()
}) : () -> ()

// Only the region reads n: each chunk recomputes its rows.
// CHECK-LABEL: func.func public @region_only_value
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.sqrt"
// CHECK: "stablehlo.divide"
// CHECK: "stablehlo.exponential"
// CHECK: memfit.split
"func.func"() <{function_type = (tensor<512x2xf32>, tensor<512x2xf32>) -> tensor<512xf32>, sym_name = "region_only_value", sym_visibility = "public"}> ({
^bb0(%arg0: tensor<512x2xf32>, %arg1: tensor<512x2xf32>):
  %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %1 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<512x2xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>
  %2 = "stablehlo.reduce"(%1, %0) <{dimensions = array<i64: 1>}> ({
  ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
    %10 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%10) : (tensor<f32>) -> ()
  }) : (tensor<512x2xf32>, tensor<f32>) -> tensor<512xf32>
  %3 = "stablehlo.sqrt"(%2) : (tensor<512xf32>) -> tensor<512xf32>
  %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xf32>) -> tensor<512x2xf32>
  %5 = "stablehlo.divide"(%arg0, %4) : (tensor<512x2xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>
  %6 = "stablehlo.dot_general"(%5, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<512x2xf32>, tensor<512x2xf32>) -> tensor<512x512xf32>
  %7 = "stablehlo.exponential"(%6) : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %8 = "stablehlo.reduce"(%7, %0) <{dimensions = array<i64: 1>}> ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %9 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%9) : (tensor<f32>) -> ()
  }) : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
  "func.return"(%8) : (tensor<512xf32>) -> ()
}) : () -> ()

