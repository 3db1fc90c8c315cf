// RUN: memfit-opt %s --memfit-rewrite="cache-bytes=16384" | FileCheck %s
// RUN: memfit-opt %s --memfit-rewrite="cache-bytes=16384 memory-limit=120KiB" | FileCheck %s --check-prefix=LIMIT
// RUN: memfit-opt %s --memfit-rewrite="cache-bytes=16384 memory-limit=60KiB" | FileCheck %s --check-prefix=TIGHT
// RUN: not memfit-opt %s --memfit-rewrite="memory-limit=lots" 2>&1 | FileCheck %s --check-prefix=BAD

// Over long rows the exact kNN takes its candidates from block maxima in a
// two-level loop (Analysis/KnnTiles: a 16 KiB L2 here, so that the tiles
// are small): chunks of 64 queries (all of them), and inside each a loop
// over tiles of 64 blocks of 8 points whose centred rows and norms are
// made once (a barrier), a [64, 512] GEMM, 2 q.x - |x|^2 (the row's |q|^2
// is left for the kept maxima), the maxima of the blocks' keys made on
// their own (a barrier) and written into [64, 512]. Then, 32 rows at a
// time: top_k of the maxima picks 10 blocks, their 80 points get the
// program's own distances, top_k of those, the certificate, and the repair
// loop. No [64, 4096] matrix.
// CHECK-LABEL: func.func @knn_tiled(
// CHECK-NOT: tensor<64x4096
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dynamic_slice"(%{{.*}}) <{slice_sizes = array<i64: 64, 4>}>
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dynamic_slice"(%{{.*}}) <{slice_sizes = array<i64: 512, 4>}> : (tensor<4096x4xf32>
// CHECK: "stablehlo.optimization_barrier"
// CHECK: %[[G:.*]] = "stablehlo.dot_general"
// CHECK-SAME: -> tensor<64x512xf32>
// CHECK: %[[TWICE:.*]] = "stablehlo.multiply"(%{{.*}}, %[[G]])
// CHECK: %[[XN:.*]] = "stablehlo.broadcast_in_dim"
// CHECK-SAME: -> tensor<64x512xf32>
// CHECK: "stablehlo.subtract"(%[[TWICE]], %[[XN]])
// CHECK: "stablehlo.reduce"
// CHECK: "stablehlo.maximum"
// CHECK: (tensor<64x64x8xi32>, tensor<i32>) -> tensor<64x64xi32>
// CHECK: %[[MX:.*]] = "stablehlo.optimization_barrier"({{.*}}) : (tensor<64x64xi32>)
// CHECK: "stablehlo.dynamic_update_slice"({{.*}}, %[[MX]], {{.*}}) : (tensor<64x512xi32>, tensor<64x64xi32>
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dynamic_slice"({{.*}}) <{slice_sizes = array<i64: 32, 512>}>
// CHECK: "chlo.top_k"({{.*}}) <{k = 10 : i64}> {memfit.two_stage} : (tensor<32x512xf32>)
// CHECK-NOT: "stablehlo.concatenate"
// CHECK: "stablehlo.gather"
// CHECK-SAME: -> tensor<32x80x4xf32>
// CHECK: {memfit.exact_distance}
// CHECK: %[[TOP:.*]]:2 = "chlo.top_k"({{.*}}) <{k = 2 : i64}> {memfit.two_stage} : (tensor<32x80xf32>)
// The k-th value is the minimum of the top_k's values, not a slice at k - 1
// (which would keep XLA:CPU from giving this top_k its TopK kernel).
// CHECK-NOT: "stablehlo.slice"(%[[TOP]]#0)
// CHECK: "stablehlo.reduce"(%[[TOP]]#0, %{{.*}})
// CHECK-NEXT: ^bb0
// CHECK-NEXT: "stablehlo.minimum"
// CHECK: comparison_direction GT
// CHECK: "stablehlo.dynamic_update_slice"({{.*}}) : (tensor<64x2xi32>, tensor<32x2xi32>
// CHECK: "stablehlo.while"
// CHECK-NOT: tensor<64x4096
func.func @knn_tiled(%arg0: tensor<4096x4xf32>, %arg1: tensor<64x4xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>) {
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

// Rows whose certificate fails at 10 blocks get a second pass over 20 (2 KB),
// 16 rows at a time (half the first pass's 32, so that its 160 gathered
// points take no more memory), in a loop whose trip count is 0 when every
// row of the part is certified: top_k of their maxima picks 20 blocks,
// their points' exact distances, the certificate, and the rows certified
// the first time keep their answer (selects; certificates or-ed). Then the
// part's rows are stored, and the row-by-row repair follows.
// CHECK-LABEL: func.func @knn_wider_pass(
// CHECK: "chlo.top_k"({{.*}}) <{k = 10 : i64}> {memfit.two_stage} : (tensor<32x512xf32>)
// CHECK: %[[CERT:.*]] = "stablehlo.and"({{.*}}) : (tensor<32xi1>, tensor<32xi1>) -> tensor<32xi1>
// CHECK: %[[ALL:.*]] = "stablehlo.reduce"(%[[CERT]], %{{.*}})
// CHECK: "stablehlo.and"
// CHECK-DAG: %[[NONE:.*]] = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}>
// CHECK-DAG: %[[TWO:.*]] = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}>
// CHECK: %[[TRIPS:.*]] = "stablehlo.select"(%[[ALL]], %[[NONE]], %[[TWO]])
// CHECK: "stablehlo.while"(%{{.*}}, %[[TRIPS]], {{.*}}, %[[CERT]])
// CHECK: "stablehlo.compare"(%[[I:.*]], %[[N:.*]]) {{.*}}comparison_direction LT
// CHECK: "stablehlo.dynamic_slice"({{.*}}) <{slice_sizes = array<i64: 16, 512>}>
// CHECK: "chlo.top_k"({{.*}}) <{k = 20 : i64}> {memfit.two_stage} : (tensor<16x512xf32>)
// CHECK: "stablehlo.gather"
// CHECK-SAME: -> tensor<16x160x4xf32>
// CHECK: comparison_direction GT
// CHECK: "stablehlo.select"({{.*}}) : (tensor<16x2xi1>, tensor<16x2xf32>, tensor<16x2xf32>)
// CHECK: "stablehlo.select"({{.*}}) : (tensor<16x2xi1>, tensor<16x2xi32>, tensor<16x2xi32>)
// CHECK: "stablehlo.or"({{.*}}) : (tensor<16xi1>, tensor<16xi1>)
// CHECK: "stablehlo.dynamic_update_slice"({{.*}}) : (tensor<32xi1>, tensor<16xi1>
// CHECK: "stablehlo.dynamic_update_slice"({{.*}}) : (tensor<64xi1>, tensor<32xi1>
func.func @knn_wider_pass(%arg0: tensor<4096x4xf32>, %arg1: tensor<64x4xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>) {
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

// Long rows of block maxima (200,000 points: 6,250 blocks of 32) are picked
// from in two stages themselves (TwoStageTopK's model): maxima of 32 block
// maxima, top_k of those, then top_k of the picked groups' maxima and the
// 10 left over, never a top_k over a row of 6,250.
// CHECK-LABEL: func.func @knn_tiled_long_rows
// CHECK: {memfit.knn_loop}
// CHECK-NOT: "chlo.top_k"{{.*}}(tensor<4x6250xf32>)
// CHECK: "stablehlo.reduce"
// CHECK: -> tensor<4x195xi32>
// CHECK: "chlo.top_k"({{.*}}) <{k = 10 : i64}> {memfit.two_stage} : (tensor<4x195xf32>)
// CHECK: "chlo.top_k"({{.*}}) <{k = 10 : i64}> {memfit.two_stage} : (tensor<4x330xf32>)
// CHECK-NOT: "chlo.top_k"{{.*}}(tensor<4x6250xf32>)
// CHECK: {memfit.exact_distance}
func.func @knn_tiled_long_rows(%arg0: tensor<200000x4xf32>, %arg1: tensor<64x4xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<64x4xf32>) -> tensor<64x200000x4xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<200000x4xf32>) -> tensor<64x200000x4xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<64x200000x4xf32>, tensor<64x200000x4xf32>) -> tensor<64x200000x4xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<64x200000x4xf32>, tensor<64x200000x4xf32>) -> tensor<64x200000x4xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<64x200000x4xf32>, tensor<f32>) -> tensor<64x200000xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<64x200000xf32>) -> tensor<64x200000xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 2 : i64}> : (tensor<64x200000xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>)
  return %7#0, %7#1 : tensor<64x2xf32>, tensor<64x2xi32>
}

// The repair loop (rows the certificate fails, one at a time, against all
// 200,000 points) keeps one top_k, marked so that the two-stage rewrite
// leaves it: its stages would be a dozen more kernels for XLA to compile,
// in a loop that runs only for uncertified rows.
// CHECK-LABEL: func.func @knn_repair_one_top_k
// CHECK: {memfit.exact_distance}
// CHECK: "stablehlo.while"
// CHECK: {memfit.exact_distance} : (tensor<1x200000x4xf32>
// CHECK-NEXT: "stablehlo.negate"
// CHECK-NEXT: "chlo.top_k"({{.*}}) <{k = 2 : i64}> {memfit.two_stage} : (tensor<1x200000xf32>)
// CHECK-NOT: "chlo.top_k"
// CHECK: return
func.func @knn_repair_one_top_k(%arg0: tensor<200000x4xf32>, %arg1: tensor<64x4xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<64x4xf32>) -> tensor<64x200000x4xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<200000x4xf32>) -> tensor<64x200000x4xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<64x200000x4xf32>, tensor<64x200000x4xf32>) -> tensor<64x200000x4xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<64x200000x4xf32>, tensor<64x200000x4xf32>) -> tensor<64x200000x4xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<64x200000x4xf32>, tensor<f32>) -> tensor<64x200000xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<64x200000xf32>) -> tensor<64x200000xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 2 : i64}> : (tensor<64x200000xf32>) -> (tensor<64x2xf32>, tensor<64x2xi32>)
  return %7#0, %7#1 : tensor<64x2xf32>, tensor<64x2xi32>
}

// Wide rows (256 features) make each candidate dear (its gathered row and
// its distance by the program's formula): the block shrinks to 4 points,
// not the 8 a 4-feature row of the same length gets (@knn_tiled), and the
// 4098 mod 4 = 2 last points are candidates too: 10 blocks of 4 and 2.
// CHECK-LABEL: func.func @knn_tiled_wide_rows
// CHECK: "stablehlo.reduce"
// CHECK: (tensor<16x{{[0-9]+}}x4xi32>, tensor<i32>) -> tensor<16x{{[0-9]+}}xi32>
// CHECK: "chlo.top_k"({{.*}}) <{k = 10 : i64}> {memfit.two_stage} : (tensor<{{[0-9]+}}x1024xf32>)
// CHECK: "stablehlo.concatenate"{{.*}} : (tensor<{{[0-9]+}}x40xi32>, tensor<{{[0-9]+}}x2xi32>) -> tensor<{{[0-9]+}}x42xi32>
// CHECK: "stablehlo.gather"
// CHECK-SAME: x42x256xf32>
func.func @knn_tiled_wide_rows(%arg0: tensor<4098x256xf32>, %arg1: tensor<16x256xf32>) -> (tensor<16x2xf32>, tensor<16x2xi32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<16x256xf32>) -> tensor<16x4098x256xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4098x256xf32>) -> tensor<16x4098x256xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<16x4098x256xf32>, tensor<16x4098x256xf32>) -> tensor<16x4098x256xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<16x4098x256xf32>, tensor<16x4098x256xf32>) -> tensor<16x4098x256xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<16x4098x256xf32>, tensor<f32>) -> tensor<16x4098xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<16x4098xf32>) -> tensor<16x4098xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 2 : i64}> : (tensor<16x4098xf32>) -> (tensor<16x2xf32>, tensor<16x2xi32>)
  return %7#0, %7#1 : tensor<16x2xf32>, tensor<16x2xi32>
}

// When the tile (52 blocks) does not divide the 410 blocks of 10, the last
// tile starts at block 358; when the part (32 rows) does not divide the 60
// queries, the last part starts at row 28: they recompute blocks and rows,
// never read past the end.
// CHECK-LABEL: func.func @knn_tiled_clamped
// CHECK: %[[C52:.*]] = "stablehlo.constant"() <{value = dense<52> : tensor<i32>}>
// CHECK: %[[J:.*]] = "stablehlo.multiply"(%{{.*}}, %[[C52]])
// CHECK: %[[LASTB:.*]] = "stablehlo.constant"() <{value = dense<358> : tensor<i32>}>
// CHECK: "stablehlo.minimum"(%[[J]], %[[LASTB]])
// CHECK: %[[C32:.*]] = "stablehlo.constant"() <{value = dense<32> : tensor<i32>}>
// CHECK: %[[P:.*]] = "stablehlo.multiply"(%{{.*}}, %[[C32]])
// CHECK: %[[LASTP:.*]] = "stablehlo.constant"() <{value = dense<28> : tensor<i32>}>
// CHECK: %[[FIRST:.*]] = "stablehlo.minimum"(%[[P]], %[[LASTP]])
// CHECK: "stablehlo.dynamic_slice"(%{{.*}}, %[[FIRST]], %{{.*}}) <{slice_sizes = array<i64: 32, 4>}>
func.func @knn_tiled_clamped(%arg0: tensor<4100x4xf32>, %arg1: tensor<60x4xf32>) -> (tensor<60x2xf32>, tensor<60x2xi32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<60x4xf32>) -> tensor<60x4100x4xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4100x4xf32>) -> tensor<60x4100x4xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<60x4100x4xf32>, tensor<60x4100x4xf32>) -> tensor<60x4100x4xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<60x4100x4xf32>, tensor<60x4100x4xf32>) -> tensor<60x4100x4xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<60x4100x4xf32>, tensor<f32>) -> tensor<60x4100xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<60x4100xf32>) -> tensor<60x4100xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 2 : i64}> : (tensor<60x4100xf32>) -> (tensor<60x2xf32>, tensor<60x2xi32>)
  return %7#0, %7#1 : tensor<60x2xf32>, tensor<60x2xi32>
}

// A memory limit bounds the query chunk by what it leaves after the
// arguments and results (halved: the split's margin); when not even one
// query's chunk fits, the one-level form stays (memfit-split chunks it).
// LIMIT-LABEL: func.func @knn_limited
// LIMIT: "stablehlo.dynamic_slice"(%{{.*}}) <{slice_sizes = array<i64: 3, 4>}>
// LIMIT: "stablehlo.dot_general"
// LIMIT-SAME: -> tensor<3x344xf32>
// TIGHT-LABEL: func.func @knn_limited
// TIGHT: "stablehlo.dot_general"
// TIGHT-SAME: -> tensor<512x4096xf32>
// TIGHT: "chlo.top_k"({{.*}}) <{k = 12 : i64}>
func.func @knn_limited(%arg0: tensor<4096x4xf32>, %arg1: tensor<512x4xf32>) -> (tensor<512x2xf32>, tensor<512x2xi32>) {
  %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<512x4xf32>) -> tensor<512x4096x4xf32>
  %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4096x4xf32>) -> tensor<512x4096x4xf32>
  %2 = "stablehlo.subtract"(%0, %1) : (tensor<512x4096x4xf32>, tensor<512x4096x4xf32>) -> tensor<512x4096x4xf32>
  %3 = "stablehlo.multiply"(%2, %2) : (tensor<512x4096x4xf32>, tensor<512x4096x4xf32>) -> tensor<512x4096x4xf32>
  %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<512x4096x4xf32>, tensor<f32>) -> tensor<512x4096xf32>
  %6 = "stablehlo.negate"(%5) : (tensor<512x4096xf32>) -> tensor<512x4096xf32>
  %7:2 = "chlo.top_k"(%6) <{k = 2 : i64}> : (tensor<512x4096xf32>) -> (tensor<512x2xf32>, tensor<512x2xi32>)
  return %7#0, %7#1 : tensor<512x2xf32>, tensor<512x2xi32>
}

// BAD: error: memfit-rewrite: bad memory-limit
