// RUN: memfit-opt %s --memfit-rewrite="top-k=false cache-bytes=16384" | FileCheck %s
// RUN: memfit-opt %s --memfit-rewrite="top-k=false cache-bytes=16384 memory-limit=1MiB" | FileCheck %s --check-prefix=LIMIT
// RUN: memfit-opt %s --memfit-rewrite="top-k=false cache-bytes=16384" --memfit-profile -o /dev/null | FileCheck %s --check-prefix=PROFILE
//
// The exact kNN rewrite (NearestNeighbours.cpp) on sharded programs keeps
// what one device holds per device. The programs are
// nearest_neighbours_tiled.mlir's @knn_tiled (64 queries, 4,096 points of 4
// features, k = 2: rows long enough for the two-level loop at a 16 KiB L2)
// on the mesh "d" of 8 devices.

"sdy.mesh"() <{mesh = #sdy.mesh<["d"=8]>, sym_name = "mesh"}> : () -> ()

// The database sharded by rows: the two-level loop would slice its rows,
// which XLA's partitioner does on a whole copy on every device, each
// searching all of it. The one-level GEMM stays (each device computes its
// own 512 columns; memfit-split chunks the queries): top_k of 2k + 8 = 12
// candidates over the [64, 4096] distances, and no loop but the repair loop.
// CHECK-LABEL: func.func @database_rows_sharded(
// CHECK-NOT:     "stablehlo.while"
// CHECK:         "stablehlo.dot_general"
// CHECK-SAME:      -> tensor<64x4096xf32>
// CHECK:         "chlo.top_k"({{.*}}) <{k = 12 : i64}>
// CHECK:         "stablehlo.gather"
// CHECK:         "stablehlo.while"
// CHECK-NOT:     "stablehlo.while"
// CHECK:         return
//
// The candidates' rows gathered from the sharded database are read where
// they lie (XLA masks the other devices' rows and all-reduces): after the
// rewrite the database still counts 64 KiB / 8 per device, beside the
// 1 KiB of queries.
// PROFILE-LABEL: memfit-profile: @database_rows_sharded (sharded: bytes per device)
// PROFILE-NEXT:    arguments: 9.00 KiB (9216 B)
func.func @database_rows_sharded(%arg0: tensor<4096x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}, %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<64x2xf32>, tensor<64x2xi32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<64x4xf32>) -> tensor<64x4096x4xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4096x4xf32>) -> tensor<64x4096x4xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<64x4096x4xf32>, tensor<64x4096x4xf32>) -> tensor<64x4096x4xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<64x4096x4xf32>, tensor<64x4096x4xf32>) -> tensor<64x4096x4xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<64x4096x4xf32>, tensor<f32>) -> tensor<64x4096xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<64x4096xf32>) -> tensor<64x4096xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 2 : i64}> : (tensor<64x4096xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>)
  return %7#0, %7#1 : tensor<64x2xf32>, tensor<64x2xi32>
}

// The queries sharded by rows: the two-level loop's query chunks would
// slice them; the one-level form again.
// CHECK-LABEL: func.func @queries_sharded(
// CHECK-NOT:     "stablehlo.while"
// CHECK:         "stablehlo.dot_general"
// CHECK-SAME:      -> tensor<64x4096xf32>
func.func @queries_sharded(%arg0: tensor<4096x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}) -> (tensor<64x2xf32>, tensor<64x2xi32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<64x4xf32>) -> tensor<64x4096x4xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4096x4xf32>) -> tensor<64x4096x4xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<64x4096x4xf32>, tensor<64x4096x4xf32>) -> tensor<64x4096x4xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<64x4096x4xf32>, tensor<64x4096x4xf32>) -> tensor<64x4096x4xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<64x4096x4xf32>, tensor<f32>) -> tensor<64x4096xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<64x4096xf32>) -> tensor<64x4096xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 2 : i64}> : (tensor<64x4096xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>)
  return %7#0, %7#1 : tensor<64x2xf32>, tensor<64x2xi32>
}

// Both replicated, and a 2 MiB table sharded beside them, returned as it
// came: the 1 MiB limit (per device) leaves the loop what one device's
// arguments and results leave (the table's 256 KiB twice; 2 MiB twice would
// leave nothing and keep the one-level form), so the two-level loop is made.
// LIMIT-LABEL: func.func @other_argument_sharded(
// LIMIT:         "stablehlo.while"
// LIMIT:         "stablehlo.while"
// LIMIT-NOT:     -> tensor<64x4096xf32>
// LIMIT:         return
func.func @other_argument_sharded(%arg0: tensor<4096x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<64x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<8x65536xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}) -> (tensor<64x2xf32>, tensor<64x2xi32>, tensor<8x65536xf32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<64x4xf32>) -> tensor<64x4096x4xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4096x4xf32>) -> tensor<64x4096x4xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<64x4096x4xf32>, tensor<64x4096x4xf32>) -> tensor<64x4096x4xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<64x4096x4xf32>, tensor<64x4096x4xf32>) -> tensor<64x4096x4xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<64x4096x4xf32>, tensor<f32>) -> tensor<64x4096xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<64x4096xf32>) -> tensor<64x4096xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 2 : i64}> : (tensor<64x4096xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>)
  return %7#0, %7#1, %arg2 : tensor<64x2xf32>, tensor<64x2xi32>, tensor<8x65536xf32>
}
