// memfit-split records each loop's plan on the loop (reports read it:
// python/memfit/explain/split.py), and memfit-profile tags the loop's ops with it.
// max_j x_i * y_j over 1001 j: 31 chunks of 32 and a remainder of 9.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB},memfit-profile{format=json timeline=true})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PROFILE

// CHECK: "stablehlo.while"
// CHECK: memfit.split = {chunk = 32 : i64, chunks = 31 : i64, dim = 1 : i64, kind = "accumulate",
// CHECK-SAME: remainder = 9 : i64, seed = "stablehlo.multiply", seed_bytes = 4004000 : i64,
// CHECK-SAME: seed_element = "f32", seed_shape = array<i64: 1000, 1001>, size = 1001 : i64, step = 0 : i64,
// CHECK-SAME: temp_margin = 2.000000e+00 : f64}

// PROFILE: "op": "stablehlo.while"
// PROFILE-NEXT: "split_step": 0

"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<1000xf32>, tensor<1001xf32>) -> tensor<1000xf32>, sym_name = "record", sym_visibility = "public"}> ({
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
