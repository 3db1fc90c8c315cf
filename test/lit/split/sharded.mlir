// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=2MiB})' | FileCheck %s
//
// A sharded program (a jax jit with a mesh: sdy.mesh, sdy.sharding on the
// arguments, sdy.sharding_constraint ops) is split at a per-device limit:
// memory counts one device's shard (lib/Analysis/Sharding.cpp), chunks run
// only along dimensions that are not sharded, and every sdy attribute and op
// stays as it was, so that XLA's SPMD partitioner still partitions the
// result (test_sharded.py compiles and runs such programs on 8 devices).
// The mesh "d" has 8 devices; 2 MiB per device.

// CHECK: "sdy.mesh"() <{mesh = #sdy.mesh<["d"=8]>, sym_name = "mesh"}>
"builtin.module"() <{sym_name = "jit_f"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["d"=8]>, sym_name = "mesh"}> : () -> ()
// 8x512x512xf32 sharded 8 ways by its batch dimension (1 MiB per device);
// the batched dot's 8x512x512 result is 1 MiB per device too, over the
// limit with the argument. Dimension 0 is sharded: the loop chunks
// dimension 1 (slices of 8 x c x 512, the batch whole), and the arguments
// keep their shardings.
// CHECK-LABEL: func.func public @batched
// CHECK-SAME:    sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}, {}]>
// CHECK-SAME:    sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>
// CHECK:         "stablehlo.while"
// CHECK:         "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: 8, [[C:[0-9]+]], 512>
// CHECK:         "stablehlo.dot_general"{{.*}} -> tensor<8x[[C]]x512xf32>
// CHECK:         memfit.split = {{{.*}}dim = 1 : i64
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}, {}]>}], function_type = (tensor<8x512x512xf32>) -> tensor<8x512xf32>, res_attrs = [{jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}], sym_name = "batched", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8x512x512xf32>):
    %0 = "stablehlo.dot_general"(%arg0, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>}> : (tensor<8x512x512xf32>, tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
    %1 = "stablehlo.exponential"(%0) : (tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
    %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 2>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %4 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4) : (tensor<f32>) -> ()
    }) : (tensor<8x512x512xf32>, tensor<f32>) -> tensor<8x512xf32>
    "func.return"(%3) : (tensor<8x512xf32>) -> ()
  }) : () -> ()
// kNN with the database sharded by rows: top_k needs the scores' database
// dimension whole (XLA gathers it), so a device holds 64x65536 scores. The
// database dimension is sharded: the loop chunks the queries (replicated)
// and reads the database whole (each device its shard).
// CHECK-LABEL: func.func public @knn
// CHECK-SAME:    sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>
// CHECK:         "stablehlo.while"
// CHECK:         "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: [[C:[0-9]+]], 16>}> : (tensor<64x16xf32>
// CHECK:         "stablehlo.dot_general"({{.*}}) {{.*}} -> tensor<[[C]]x65536xf32>
// CHECK:         "chlo.top_k"({{.*}}) <{k = 4 : i64}> : (tensor<[[C]]x65536xf32>)
// CHECK:         memfit.split = {{{.*}}dim = 0 : i64
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}], function_type = (tensor<64x16xf32>, tensor<65536x16xf32>) -> tensor<64x4xi32>, res_attrs = [{jax.result_info = "result"}], sym_name = "knn", sym_visibility = "public"}> ({
  ^bb0(%q: tensor<64x16xf32>, %db: tensor<65536x16xf32>):
    %0 = "stablehlo.dot_general"(%q, %db) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<64x16xf32>, tensor<65536x16xf32>) -> tensor<64x65536xf32>
    %1:2 = "chlo.top_k"(%0) <{k = 4 : i64}> : (tensor<64x65536xf32>) -> (tensor<64x4xf32>, tensor<64x4xi32>)
    "func.return"(%1#1) : (tensor<64x4xi32>) -> ()
  }) : () -> ()
// A sharding constraint inside the split region is chunked with it: the
// constraint's sharding names dimensions by position, so on a chunk of the
// unsharded dimension 1 it stays valid and is kept, in the loop and in the
// remainder step.
// CHECK-LABEL: func.func public @constrained
// CHECK:         "stablehlo.while"
// CHECK:         "sdy.sharding_constraint"({{.*}}) <{sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}> : (tensor<4096x[[C:[0-9]+]]xf32>) -> tensor<4096x[[C]]xf32>
// CHECK:         memfit.split = {{{.*}}dim = 1 : i64{{.*}}kind = "accumulate"
// CHECK:         "sdy.sharding_constraint"({{.*}}) <{sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}> : (tensor<4096x64xf32>) -> tensor<4096x64xf32>
// CHECK:         return
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}, {}], function_type = (tensor<4096x64xf32>, tensor<64x4096xf32>) -> tensor<4096xf32>, sym_name = "constrained", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<4096x64xf32>, %w: tensor<64x4096xf32>):
    %0 = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4096x64xf32>, tensor<64x4096xf32>) -> tensor<4096x4096xf32>
    %1 = "sdy.sharding_constraint"(%0) <{sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}> : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
    %2 = "stablehlo.tanh"(%1) : (tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
    %3 = "stablehlo.dot_general"(%2, %2) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096xf32>
    "func.return"(%3) : (tensor<4096xf32>) -> ()
  }) : () -> ()
}) : () -> ()
