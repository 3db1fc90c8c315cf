// Sort-based top-k: a sort along the split dimension whose results are read
// only through prefix slices [0:k] (jnp.argsort(d)[:, :k], torch-mlir's
// top-k) keeps a running sorted prefix with the sort's own comparator: the
// chunk is sorted, its first k appended after the running k, sorted again
// (stably: earlier chunks win ties) and cut to k; the slices after the loop
// read the running prefix.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=900KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=900KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<2x100000x

// CHECK-LABEL: func.func public @argsort_prefix
// CHECK: "stablehlo.while"
// CHECK: ^bb0(%[[I:.*]]: tensor<i64>, %[[V:.*]]: tensor<2x3xf32>, %[[X:.*]]: tensor<2x3xi32>,
// CHECK: %[[FIRST:.*]] = "stablehlo.compare"(%[[I]], {{.*}}comparison_direction EQ
// CHECK: %[[IOTA:.*]] = "stablehlo.add"(
// CHECK: %[[CS:.*]]:2 = "stablehlo.sort"({{.*}}, %[[IOTA]]) <{dimension = 1 : i64, is_stable = true}>
// CHECK: comparison_direction LT
// CHECK: %[[TV:.*]] = "stablehlo.slice"(%[[CS]]#0) <{limit_indices = array<i64: 2, 3>
// CHECK: %[[CV:.*]] = "stablehlo.concatenate"(%[[V]], %[[TV]]) <{dimension = 1 : i64}>
// CHECK: %[[TI:.*]] = "stablehlo.slice"(%[[CS]]#1) <{limit_indices = array<i64: 2, 3>
// CHECK: %[[CI:.*]] = "stablehlo.concatenate"(%[[X]], %[[TI]]) <{dimension = 1 : i64}>
// CHECK: %[[M:.*]]:2 = "stablehlo.sort"(%[[CV]], %[[CI]]) <{dimension = 1 : i64, is_stable = true}>
// CHECK: comparison_direction LT
// CHECK: %[[MV:.*]] = "stablehlo.slice"(%[[M]]#0) <{limit_indices = array<i64: 2, 3>
// CHECK: "stablehlo.select"(%[[FIRST]], %[[TV]], %[[MV]])
// CHECK: "stablehlo.optimization_barrier"
// CHECK: "stablehlo.sort"
// CHECK: %[[R:.*]]:2 = "stablehlo.sort"
// CHECK: %[[RI:.*]] = "stablehlo.slice"(%[[R]]#1) <{limit_indices = array<i64: 2, 3>
// CHECK: return %[[RI]]

// The longest prefix read decides k; shorter slices read a slice of it.
// CHECK-LABEL: func.func public @two_prefixes
// CHECK: "stablehlo.while"({{.*}}) ({
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<2x4xi32>,
// CHECK: "stablehlo.optimization_barrier"
// CHECK: "stablehlo.sort"
// CHECK: %[[R:.*]]:2 = "stablehlo.sort"
// CHECK: %[[RV:.*]] = "stablehlo.slice"(%[[R]]#0) <{limit_indices = array<i64: 2, 4>
// CHECK: %[[RI:.*]] = "stablehlo.slice"(%[[R]]#1) <{limit_indices = array<i64: 2, 4>
// CHECK: %[[SI:.*]] = "stablehlo.slice"(%[[RI]]) <{limit_indices = array<i64: 2, 2>
// CHECK: return %[[RV]], %[[SI]]
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2xf32>, tensor<100000xf32>) -> (tensor<2x3xi32>), res_attrs = [{}], sym_name = "argsort_prefix", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<100000xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x100000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<100000xf32>) -> tensor<2x100000xf32>
    %2 = "stablehlo.subtract"(%0, %1) : (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %3 = "stablehlo.abs"(%2) : (tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %4 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x100000xi32>
    %5:2 = "stablehlo.sort"(%3, %4) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %lt = "stablehlo.compare"(%a, %b) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }) : (tensor<2x100000xf32>, tensor<2x100000xi32>) -> (tensor<2x100000xf32>, tensor<2x100000xi32>)
    %6 = "stablehlo.slice"(%5#1) <{limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<2x100000xi32>) -> tensor<2x3xi32>
    "func.return"(%6) : (tensor<2x3xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2xf32>, tensor<100000xf32>) -> (tensor<2x4xf32>, tensor<2x2xi32>), res_attrs = [{}, {}], sym_name = "two_prefixes", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<100000xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x100000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<100000xf32>) -> tensor<2x100000xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %4 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x100000xi32>
    %5:2 = "stablehlo.sort"(%2, %4) <{dimension = 1 : i64}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %gt = "stablehlo.compare"(%a, %b) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%gt) : (tensor<i1>) -> ()
    }) : (tensor<2x100000xf32>, tensor<2x100000xi32>) -> (tensor<2x100000xf32>, tensor<2x100000xi32>)
    %6 = "stablehlo.slice"(%5#0) <{limit_indices = array<i64: 2, 4>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<2x100000xf32>) -> tensor<2x4xf32>
    %7 = "stablehlo.slice"(%5#1) <{limit_indices = array<i64: 2, 2>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<2x100000xi32>) -> tensor<2x2xi32>
    "func.return"(%6, %7) : (tensor<2x4xf32>, tensor<2x2xi32>) -> ()
  }) : () -> ()
}) : () -> ()
