// temp-margin: how many times over the chunk rule budgets a loop's modelled
// temporaries. The default (2) gives 32-wide chunks of max_j x_i * y_j under
// 100 KB; budgeting them half as much (0.5) allows 40-wide chunks. A margin
// that is not positive is an error that names the option.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB})' | FileCheck %s --check-prefix=DEFAULT
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB temp-margin=0.5})' | FileCheck %s --check-prefix=HALF
// RUN: not memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB temp-margin=0})' 2>&1 | FileCheck %s --check-prefix=BAD

// DEFAULT-LABEL: func.func public @margin
// DEFAULT: "stablehlo.while"
// DEFAULT: "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: 32>}>

// HALF-LABEL: func.func public @margin
// HALF: "stablehlo.while"
// HALF: "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: 40>}>

// BAD: error: memfit-split: invalid temp-margin 0.000000e+00: it must be a positive number (default 2)

"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<1000xf32>, tensor<1001xf32>) -> tensor<1000xf32>, sym_name = "margin", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<1000xf32>, %arg1: tensor<1001xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1000xf32>) -> tensor<1000x1xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<1001xf32>) -> tensor<1x1001xf32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1000x1xf32>) -> tensor<1000x1001xf32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1001xf32>) -> tensor<1000x1001xf32>
    %4 = "stablehlo.multiply"(%2, %3) : (tensor<1000x1001xf32>, tensor<1000x1001xf32>) -> tensor<1000x1001xf32>
    %5 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.reduce"(%4, %5) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %7 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%7) : (tensor<f32>) -> ()
    }) : (tensor<1000x1001xf32>, tensor<f32>) -> tensor<1000xf32>
    "func.return"(%6) : (tensor<1000xf32>) -> ()
  }) : () -> ()
}) : () -> ()
