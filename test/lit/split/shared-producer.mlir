// Self-attention whose q, k and v are one value computed from the
// argument (y = 2x; softmax(y y^T / 8) y): splitting the scores by query
// rows pulls y in for the rows, and from y the product with v would join as
// a sink along the keys, contradicting the rows' split. The planner cuts
// that one edge (the product still joins from the softmax's side) and then
// reads y whole in the loop: one loop over query rows. Before: no row
// split, online softmax along the keys in chunks of 16.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=160KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=160KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<1x256x256xf32>

// CHECK-LABEL: func.func public @shared_producer
// CHECK: %[[Y:.*]] = "stablehlo.multiply"(%arg0, {{.*}}) : (tensor<1x256x16xf32>, tensor<1x256x16xf32>) -> tensor<1x256x16xf32>
// CHECK: "stablehlo.while"({{.*}}, %[[Y]])
// CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<1x256x16xf32>, %[[YL:.*]]: tensor<1x256x16xf32>):
// CHECK: "stablehlo.transpose"(%[[YL]])
// CHECK: "stablehlo.dynamic_slice"(%[[YL]], {{.*}}slice_sizes = array<i64: 1, 16, 16>
// CHECK: "stablehlo.dot_general"({{.*}}, %[[YL]]) {{.*}}-> tensor<1x16x16xf32>
// CHECK: memfit.split = {chunk = 16 : i64, chunks = 16 : i64, dim = 1 : i64, kind = "map"
// CHECK-NOT: "stablehlo.while"
// CHECK: return
"builtin.module"() <{sym_name = "shared"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<1x256x16xf32>) -> tensor<1x256x16xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "shared_producer", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<1x256x16xf32>):
    %0 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x256x16xf32>
    %2 = "stablehlo.multiply"(%arg0, %1) : (tensor<1x256x16xf32>, tensor<1x256x16xf32>) -> tensor<1x256x16xf32>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 0, 2, 1>}> : (tensor<1x256x16xf32>) -> tensor<1x16x256xf32>
    %4 = "stablehlo.dot_general"(%2, %3) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<1x256x16xf32>, tensor<1x16x256xf32>) -> tensor<1x256x256xf32>
    %5 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x256x256xf32>
    %7 = "stablehlo.divide"(%4, %6) : (tensor<1x256x256xf32>, tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %8 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.reduce"(%7, %8) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %24 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%24) : (tensor<f32>) -> ()
    }) : (tensor<1x256x256xf32>, tensor<f32>) -> tensor<1x256xf32>
    %10 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x256xf32>
    %12 = "stablehlo.maximum"(%11, %9) : (tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x256xf32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x256xf32>) -> tensor<1x256x1xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x256x1xf32>) -> tensor<1x256x256xf32>
    %15 = "stablehlo.subtract"(%7, %14) : (tensor<1x256x256xf32>, tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %16 = "stablehlo.exponential"(%15) : (tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %17 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %18 = "stablehlo.reduce"(%16, %17) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %23 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%23) : (tensor<f32>) -> ()
    }) : (tensor<1x256x256xf32>, tensor<f32>) -> tensor<1x256xf32>
    %19 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x256xf32>) -> tensor<1x256x1xf32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x256x1xf32>) -> tensor<1x256x256xf32>
    %21 = "stablehlo.divide"(%16, %20) : (tensor<1x256x256xf32>, tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
    %22 = "stablehlo.dot_general"(%21, %2) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<1x256x256xf32>, tensor<1x256x16xf32>) -> tensor<1x256x16xf32>
    "func.return"(%22) : (tensor<1x256x16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
