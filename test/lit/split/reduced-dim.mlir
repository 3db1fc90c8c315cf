// Reduced dimension: sum_j exp(x_i * y_j) over 100000 j with only two rows i.
// The split runs along j, which the reduce sums away: each chunk's partial
// sum is added to an accumulator carried by the loop (no output buffer).
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=900KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=900KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<2x100000xf32>

// CHECK-LABEL: func.func public @reduced
// CHECK: "stablehlo.while"
// CHECK: ^bb0(%[[I:.*]]: tensor<i64>, %[[ACC:.*]]: tensor<2xf32>, %{{.*}}: tensor<100000xf32>
// CHECK: "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: 25088>}>
// CHECK: %[[P:.*]] = "stablehlo.reduce"({{.*}}dimensions = array<i64: 1>
// CHECK: }) : (tensor<2x25088xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK: %[[SUM:.*]] = "stablehlo.add"(%[[ACC]], %[[P]])
// CHECK-NOT: dynamic_update_slice
// CHECK: "stablehlo.return"(%{{.*}}, %[[SUM]],
// Remainder: 100000 = 3 * 25088 + 24736, after the loop.
// CHECK: "stablehlo.dynamic_slice"(%arg1, {{.*}}slice_sizes = array<i64: 24736>}>
// CHECK: }) : (tensor<2x24736xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK: "stablehlo.add"
// CHECK: return
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2xf32>, tensor<100000xf32>) -> tensor<2xf32>, sym_name = "reduced", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<100000xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x1xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<100000xf32>) -> tensor<1x100000xf32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x1xf32>) -> tensor<2x100000xf32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x100000xf32>) -> tensor<2x100000xf32>
    %4 = "stablehlo.multiply"(%2, %3) : (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %5 = "stablehlo.exponential"(%4) : (tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %8 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%8) : (tensor<f32>) -> ()
    }) : (tensor<2x100000xf32>, tensor<f32>) -> tensor<2xf32>
    "func.return"(%7) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
