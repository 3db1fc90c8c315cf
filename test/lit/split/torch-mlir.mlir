// torch-mlir's StableHLO (tools/torch_export/export_programs.py): identity
// reshapes and broadcast_in_dims around nearly every op, scalars written as
// an arith.constant of another type then convert, reshape and broadcast.
// memfit-split folds them on its working copy of a function that is over
// its limit (FoldViews.cpp), so the split sees jax's dataflow.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=160KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=160KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<1x256x256xf32>
// NOBIG-NOT: tensor<512x512xf32>

// Self-attention with q = k = v = x, as torch-mlir writes it: q and v both
// read one identity reshape of x. Folded, the scores are split by query
// rows in one loop (before: three loops along the keys, two passes).
// CHECK-LABEL: func.func @self_attention
// CHECK-NOT: "stablehlo.reshape"(%arg0) : (tensor<1x256x16xf32>) -> tensor<1x256x16xf32>
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dynamic_slice"(%arg3, {{.*}}slice_sizes = array<i64: 1, 24, 16>
// CHECK: memfit.split = {chunk = 24 : i64, chunks = 10 : i64, dim = 1 : i64, kind = "map"
// CHECK-NOT: "stablehlo.while"
// CHECK: return

// An f64 scalar (a Python float in torch) converted to f32: a plain f32
// constant, cloned into the loop; no convert is left.
// CHECK-LABEL: func.func @f64_constant
// CHECK-NOT: "stablehlo.convert"
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.constant"() <{value = dense<-5.000000e-01> : tensor<f32>}>
// CHECK: "stablehlo.multiply"{{.*}}-> tensor<32x512xf32>
// CHECK: memfit.split = {chunk = 32
// CHECK-NOT: "stablehlo.convert"
// CHECK: return

// An i64 scalar (a Python int) converted to f32.
// CHECK-LABEL: func.func @i64_constant
// CHECK-NOT: "stablehlo.convert"
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}>
// CHECK: memfit.split = {chunk = 32
// CHECK-NOT: "stablehlo.convert"
// CHECK: return

// An unsigned scalar converts by its value (255, not -1).
// CHECK-LABEL: func.func @unsigned_constant
// CHECK-NOT: "stablehlo.convert"
// CHECK: "stablehlo.constant"() <{value = dense<2.550000e+02> : tensor<f32>}>
// CHECK: return

// A splat arith.constant of the split tensor's shape is a chunk-sized
// stablehlo.constant in the loop (before: the whole constant, sliced).
// CHECK-LABEL: func.func @arith_splat
// CHECK-NOT: arith.constant
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.constant"() <{value = dense<-5.000000e-01> : tensor<32x512xf32>}>
// CHECK: memfit.split = {chunk = 32
// CHECK-NOT: arith.constant
// CHECK: return

// A function within its limit comes back as it was: nothing is folded.
// CHECK-LABEL: func.func @fits
// CHECK: "stablehlo.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<1x256x16xf32>) -> tensor<1x256x16xf32>, sym_name = "self_attention"}> ({
  ^bb0(%arg0: tensor<1x256x16xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %2 = "arith.constant"() <{value = dense<8> : tensor<1xi64>}> : () -> tensor<1xi64>
    %3 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 0, 2, 1>}> : (tensor<1x256x16xf32>) -> tensor<1x16x256xf32>
    %4 = "stablehlo.reshape"(%arg0) : (tensor<1x256x16xf32>) -> tensor<1x256x16xf32>
    %5 = "stablehlo.reshape"(%3) : (tensor<1x16x256xf32>) -> tensor<1x16x256xf32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x16x256xf32>) -> tensor<1x16x256xf32>
    %7 = "stablehlo.dot_general"(%4, %6) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<1x256x16xf32>, tensor<1x16x256xf32>) -> tensor<1x256x256xf32>
    %8 = "stablehlo.reshape"(%7) : (tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %9 = "stablehlo.convert"(%2) : (tensor<1xi64>) -> tensor<1xf32>
    %10 = "stablehlo.reshape"(%9) : (tensor<1xf32>) -> tensor<f32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x256x256xf32>
    %12 = "stablehlo.divide"(%8, %11) : (tensor<1x256x256xf32>, tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %13 = "stablehlo.reduce"(%12, %0) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %27 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%27) : (tensor<f32>) -> ()
    }) : (tensor<1x256x256xf32>, tensor<f32>) -> tensor<1x256xf32>
    %14 = "stablehlo.reshape"(%13) : (tensor<1x256xf32>) -> tensor<1x256x1xf32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x256x1xf32>) -> tensor<1x256x256xf32>
    %16 = "stablehlo.subtract"(%12, %15) : (tensor<1x256x256xf32>, tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %17 = "stablehlo.exponential"(%16) : (tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %18 = "stablehlo.reduce"(%17, %1) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %26 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%26) : (tensor<f32>) -> ()
    }) : (tensor<1x256x256xf32>, tensor<f32>) -> tensor<1x256xf32>
    %19 = "stablehlo.reshape"(%18) : (tensor<1x256xf32>) -> tensor<1x256x1xf32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x256x1xf32>) -> tensor<1x256x256xf32>
    %21 = "stablehlo.divide"(%17, %20) : (tensor<1x256x256xf32>, tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %22 = "stablehlo.reshape"(%21) : (tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %23 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x256x16xf32>) -> tensor<1x256x16xf32>
    %24 = "stablehlo.dot_general"(%22, %23) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<1x256x256xf32>, tensor<1x256x16xf32>) -> tensor<1x256x16xf32>
    %25 = "stablehlo.reshape"(%24) : (tensor<1x256x16xf32>) -> tensor<1x256x16xf32>
    "func.return"(%25) : (tensor<1x256x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<512x4xf32>, tensor<4x512xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>, sym_name = "f64_constant"}> ({
  ^bb0(%arg0: tensor<512x4xf32>, %arg1: tensor<4x512xf32>, %arg2: tensor<512x2xf32>):
    %c = "arith.constant"() <{value = dense<-5.000000e-01> : tensor<1xf64>}> : () -> tensor<1xf64>
    %c32 = "stablehlo.convert"(%c) : (tensor<1xf64>) -> tensor<1xf32>
    %s = "stablehlo.reshape"(%c32) : (tensor<1xf32>) -> tensor<f32>
    %b = "stablehlo.broadcast_in_dim"(%s) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<512x512xf32>
    %d = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x4xf32>, tensor<4x512xf32>) -> tensor<512x512xf32>
    %m = "stablehlo.multiply"(%d, %b) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %e = "stablehlo.exponential"(%m) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %r = "stablehlo.dot_general"(%e, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x512xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>
    "func.return"(%r) : (tensor<512x2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<512x4xf32>, tensor<4x512xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>, sym_name = "i64_constant"}> ({
  ^bb0(%arg0: tensor<512x4xf32>, %arg1: tensor<4x512xf32>, %arg2: tensor<512x2xf32>):
    %c = "arith.constant"() <{value = dense<8> : tensor<1xi64>}> : () -> tensor<1xi64>
    %c32 = "stablehlo.convert"(%c) : (tensor<1xi64>) -> tensor<1xf32>
    %s = "stablehlo.reshape"(%c32) : (tensor<1xf32>) -> tensor<f32>
    %b = "stablehlo.broadcast_in_dim"(%s) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<512x512xf32>
    %d = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x4xf32>, tensor<4x512xf32>) -> tensor<512x512xf32>
    %m = "stablehlo.multiply"(%d, %b) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %e = "stablehlo.exponential"(%m) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %r = "stablehlo.dot_general"(%e, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x512xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>
    "func.return"(%r) : (tensor<512x2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<512x4xf32>, tensor<4x512xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>, sym_name = "unsigned_constant"}> ({
  ^bb0(%arg0: tensor<512x4xf32>, %arg1: tensor<4x512xf32>, %arg2: tensor<512x2xf32>):
    %c = "arith.constant"() <{value = dense<255> : tensor<1xui8>}> : () -> tensor<1xui8>
    %c32 = "stablehlo.convert"(%c) : (tensor<1xui8>) -> tensor<1xf32>
    %s = "stablehlo.reshape"(%c32) : (tensor<1xf32>) -> tensor<f32>
    %b = "stablehlo.broadcast_in_dim"(%s) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<512x512xf32>
    %d = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x4xf32>, tensor<4x512xf32>) -> tensor<512x512xf32>
    %m = "stablehlo.multiply"(%d, %b) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %e = "stablehlo.exponential"(%m) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %r = "stablehlo.dot_general"(%e, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x512xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>
    "func.return"(%r) : (tensor<512x2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<512x4xf32>, tensor<4x512xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>, sym_name = "arith_splat"}> ({
  ^bb0(%arg0: tensor<512x4xf32>, %arg1: tensor<4x512xf32>, %arg2: tensor<512x2xf32>):
    %b = "arith.constant"() <{value = dense<-5.000000e-01> : tensor<512x512xf32>}> : () -> tensor<512x512xf32>
    %d = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x4xf32>, tensor<4x512xf32>) -> tensor<512x512xf32>
    %m = "stablehlo.multiply"(%d, %b) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %e = "stablehlo.exponential"(%m) : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %r = "stablehlo.dot_general"(%e, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<512x512xf32>, tensor<512x2xf32>) -> tensor<512x2xf32>
    "func.return"(%r) : (tensor<512x2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4x8xf32>) -> tensor<4x8xf32>, sym_name = "fits"}> ({
  ^bb0(%arg0: tensor<4x8xf32>):
    %0 = "stablehlo.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = "stablehlo.exponential"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%1) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
