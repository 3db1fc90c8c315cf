// When the limit cannot be met the pass fails with an error that names the
// op, its source line and the smallest limit memfit can reach.
// RUN: not memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=300KB})' 2>&1 | FileCheck %s --check-prefix=UNSPLIT
// RUN: not memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=100KB})' 2>&1 | FileCheck %s --check-prefix=FIXED
// RUN: not memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=lots})' 2>&1 | FileCheck %s --check-prefix=BADLIMIT
// RUN: not memfit-opt %s --pass-pipeline='builtin.module(memfit-split)' 2>&1 | FileCheck %s --check-prefix=NOLIMIT

// Sorting each row and reading its tail (not a prefix, so not a running
// top-k) needs the whole row: splitting by rows is the best there is.
// UNSPLIT: error: memfit-split: cannot fit @unsplittable into 292.97 KiB (300000 bytes): the 781.25 KiB result of 'stablehlo.multiply' (at {{.*}}limit.mlir:{{[0-9]+}}:{{[0-9]+}}) cannot be split within the limit: even its smallest chunks (1 of 4) need {{.*}}; the smallest limit memfit can reach is {{.*}}
// UNSPLIT-NOT: stablehlo.while

// The arguments and outputs alone exceed the limit.
// FIXED: error: memfit-split: cannot fit @unsplittable into 97.66 KiB (100000 bytes): its arguments and outputs alone take 195.34 KiB; the smallest limit memfit can reach is
// BADLIMIT: error: memfit-split: invalid memory-limit 'lots'
// NOLIMIT: error: memfit-split needs a memory limit
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4xf32>, tensor<50000xf32>) -> tensor<4xf32>, sym_name = "unsplittable", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<4xf32>, %arg4: tensor<50000xf32>):
    %16 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %17 = "stablehlo.broadcast_in_dim"(%arg4) <{broadcast_dimensions = array<i64: 1>}> : (tensor<50000xf32>) -> tensor<1x50000xf32>
    %18 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x50000xf32>
    %19 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x50000xf32>) -> tensor<4x50000xf32>
    %20 = "stablehlo.multiply"(%18, %19) : (tensor<4x50000xf32>, tensor<4x50000xf32>) -> tensor<4x50000xf32>
    %21 = "func.call"(%20) <{callee = @sort}> : (tensor<4x50000xf32>) -> tensor<4x50000xf32>
    %22 = "stablehlo.slice"(%21) <{limit_indices = array<i64: 4, 50000>, start_indices = array<i64: 0, 49990>, strides = array<i64: 1, 1>}> : (tensor<4x50000xf32>) -> tensor<4x10xf32>
    %23 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %24 = "stablehlo.reduce"(%22, %23) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %25 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%25) : (tensor<f32>) -> ()
    }) : (tensor<4x10xf32>, tensor<f32>) -> tensor<4xf32>
    "func.return"(%24) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x50000xf32>) -> tensor<4x50000xf32>, sym_name = "sort", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x50000xf32>):
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %4 = "stablehlo.select"(%2, %3, %arg1) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %5 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %7 = "stablehlo.select"(%5, %6, %4) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %9 = "stablehlo.compare"(%arg2, %8) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %11 = "stablehlo.select"(%9, %10, %arg2) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %12 = "stablehlo.compare"(%arg2, %arg2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %13 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %14 = "stablehlo.select"(%12, %13, %11) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %15 = "stablehlo.compare"(%7, %14) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }) : (tensor<4x50000xf32>) -> tensor<4x50000xf32>
    "func.return"(%0) : (tensor<4x50000xf32>) -> ()
  }) : () -> ()
}) : () -> ()
