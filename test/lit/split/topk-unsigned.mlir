// The running top-k's merge sort orders keys as lax.top_k does: unsigned
// integers with compare_type UNSIGNED, floats in TOTALORDER. It used to say
// SIGNED for every non-float type, which does not describe unsigned keys
// (seen while reading TopK.cpp for issue 16; test_split.py checks the values
// with high bits set against jax).
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=900KB})' | FileCheck %s

// CHECK-LABEL: func.func public @topk_u32
// CHECK: "stablehlo.while"
// CHECK: "chlo.top_k"({{.*}} : (tensor<2x{{[0-9]+}}xui32>)
// CHECK: "stablehlo.sort"
// CHECK: comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction GT>
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2xui32>, tensor<100000xui32>) -> (tensor<2x3xui32>, tensor<2x3xi32>), sym_name = "topk_u32", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xui32>, %arg1: tensor<100000xui32>):
    %2 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xui32>) -> tensor<2x100000xui32>
    %3 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<100000xui32>) -> tensor<2x100000xui32>
    %4 = "stablehlo.xor"(%2, %3) : (tensor<2x100000xui32>, tensor<2x100000xui32>) -> tensor<2x100000xui32>
    %7:2 = "chlo.top_k"(%4) <{k = 3 : i64}> : (tensor<2x100000xui32>) -> (tensor<2x3xui32>, tensor<2x3xi32>)
    "func.return"(%7#0, %7#1) : (tensor<2x3xui32>, tensor<2x3xi32>) -> ()
  }) : () -> ()
}) : () -> ()
