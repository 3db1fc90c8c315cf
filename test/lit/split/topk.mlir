// Running top-k: top_k(-|x_i - y_j|, 3) along 100000 j. Each chunk's top-k,
// with indices offset by the chunk start, is concatenated after the running
// set and a stable descending sort keeps the first k (ties go to the lower
// index, as lax.top_k); the first iteration takes the chunk's top-k as is.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=900KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=900KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<2x100000xf32>

// CHECK-LABEL: func.func public @topk
// CHECK: "stablehlo.while"
// CHECK: ^bb0(%[[I:.*]]: tensor<i64>, %[[V:.*]]: tensor<2x3xf32>, %[[X:.*]]: tensor<2x3xi32>,
// CHECK: %[[START:.*]] = "stablehlo.multiply"(%[[I]],
// CHECK: %[[FIRST:.*]] = "stablehlo.compare"(%[[I]], {{.*}}comparison_direction EQ
// CHECK: %[[TK:.*]]:2 = "chlo.top_k"({{.*}}k = 3 : i64}> : (tensor<2x25088xf32>)
// CHECK: %[[OFF:.*]] = "stablehlo.convert"(%[[START]]) : (tensor<i64>) -> tensor<i32>
// CHECK: %[[IDX:.*]] = "stablehlo.add"(%[[TK]]#1,
// CHECK: %[[CV:.*]] = "stablehlo.concatenate"(%[[V]], %[[TK]]#0) <{dimension = 1 : i64}>
// CHECK: %[[CI:.*]] = "stablehlo.concatenate"(%[[X]], %[[IDX]]) <{dimension = 1 : i64}>
// CHECK: %[[S:.*]]:2 = "stablehlo.sort"(%[[CV]], %[[CI]]) <{dimension = 1 : i64, is_stable = true}>
// CHECK: comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction GT>
// CHECK: %[[MV:.*]] = "stablehlo.slice"(%[[S]]#0) <{limit_indices = array<i64: 2, 3>
// CHECK: "stablehlo.select"(%[[FIRST]], %[[TK]]#0, %[[MV]])
// CHECK: return
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2xf32>, tensor<100000xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "topk", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<100000xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x1xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<100000xf32>) -> tensor<1x100000xf32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x1xf32>) -> tensor<2x100000xf32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x100000xf32>) -> tensor<2x100000xf32>
    %4 = "stablehlo.subtract"(%2, %3) : (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %5 = "stablehlo.abs"(%4) : (tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %6 = "stablehlo.negate"(%5) : (tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %7:2 = "chlo.top_k"(%6) <{is_stable = true, k = 3 : i64}> : (tensor<2x100000xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
    "func.return"(%7#0, %7#1) : (tensor<2x3xf32>, tensor<2x3xi32>) -> ()
  }) : () -> ()
}) : () -> ()
