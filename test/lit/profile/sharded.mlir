// RUN: memfit-opt %s --memfit-profile -o /dev/null | FileCheck %s
//
// A sharded program's memory is counted per device (lib/Analysis/Sharding.cpp):
// a tensor dimension split over mesh axes holds 1/(product of their sizes) on
// each device; shardings propagate forward through the ops memfit knows; a
// dimension that a user needs whole (top_k along it) is counted whole, as
// XLA all-gathers it there. The mesh "d" has 8 devices, "e" 2.

"sdy.mesh"() <{mesh = #sdy.mesh<["d"=8, "e"=2]>, sym_name = "mesh"}> : () -> ()

// 8x512x512xf32 is 8 MiB; split 8 ways by its first dimension, 1 MiB per
// device, and the batched dot's result (propagated: batch dim) 1 MiB too.
// CHECK-LABEL: memfit-profile: @sharded_argument (sharded: bytes per device)
// CHECK-NEXT:    arguments: 1.00 MiB (1048576 B)
// CHECK-NEXT:    outputs:   2.00 KiB (2048 B)
// CHECK-NEXT:    peak:      2.00 MiB
func.func @sharded_argument(%x: tensor<8x512x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}, {}]>}) -> tensor<8x512xf32> {
  %0 = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>}> : (tensor<8x512x512xf32>, tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
  %c = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %1 = "stablehlo.reduce"(%0, %c) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<8x512x512xf32>, tensor<f32>) -> tensor<8x512xf32>
  return %1 : tensor<8x512xf32>
}

// Axes on two dimensions multiply: 4 MiB / (8 * 2).
// CHECK-LABEL: memfit-profile: @two_axes
// CHECK-NEXT:    arguments: 256.00 KiB (262144 B)
func.func @two_axes(%x: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {"e"}]>}) -> tensor<1024x1024xf32> {
  %0 = "stablehlo.exponential"(%x) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// The same argument unsharded: whole on every device.
// CHECK-LABEL: memfit-profile: @replicated_argument{{$}}
// CHECK-NEXT:    arguments: 8.00 MiB (8388608 B)
func.func @replicated_argument(%x: tensor<8x512x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> tensor<8x512x512xf32> {
  %0 = "stablehlo.exponential"(%x) : (tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
  return %0 : tensor<8x512x512xf32>
}

// kNN with the database sharded by rows: the 64x65536 scores are sharded
// along the database dimension, but top_k needs it whole: 16 MiB per device.
// The database itself is 4 MiB / 8.
// CHECK-LABEL: memfit-profile: @top_k_gathers
// CHECK:         largest tensors live at the peak:
// CHECK-NEXT:     16.00 MiB  tensor<64x65536xf32>  stablehlo.dot_general
// CHECK-NEXT:    512.00 KiB  tensor<65536x16xf32>  argument #1
func.func @top_k_gathers(%q: tensor<64x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %db: tensor<65536x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}) -> tensor<64x4xi32> {
  %0 = "stablehlo.dot_general"(%q, %db) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<64x16xf32>, tensor<65536x16xf32>) -> tensor<64x65536xf32>
  %1:2 = "chlo.top_k"(%0) <{k = 4 : i64}> : (tensor<64x65536xf32>) -> (tensor<64x4xf32>, tensor<64x4xi32>)
  return %1#1 : tensor<64x4xi32>
}

// A sharding constraint shards a replicated value: the output (exp of the
// constrained value) is 4 MiB / 8.
// CHECK-LABEL: memfit-profile: @constraint
// CHECK-NEXT:    arguments: 4.00 MiB (4194304 B)
// CHECK-NEXT:    outputs:   512.00 KiB (524288 B)
func.func @constraint(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = "sdy.sharding_constraint"(%x) <{sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}> : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %1 = "stablehlo.exponential"(%0) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %1 : tensor<1024x1024xf32>
}

// A loop's zero-initialised accumulator is sharded like what its body
// yields (XLA's partitioner propagates backwards into the splat): output
// and carried value 1 MiB each, not 8.
// CHECK-LABEL: memfit-profile: @loop_carried
// CHECK-NEXT:    arguments: 1.00 MiB (1048584 B)
// CHECK-NEXT:    outputs:   1.00 MiB (1048576 B)
func.func @loop_carried(%x: tensor<8x512x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}, {}]>}, %n: tensor<i64>) -> tensor<8x512x512xf32> {
  %z = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %init = "stablehlo.broadcast_in_dim"(%z) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x512x512xf32>
  %i0 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
  %r:2 = "stablehlo.while"(%i0, %init) ({
  ^bb0(%i: tensor<i64>, %acc: tensor<8x512x512xf32>):
    %c = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i64>, tensor<i64>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i64>, %acc: tensor<8x512x512xf32>):
    %next = "stablehlo.add"(%acc, %x) : (tensor<8x512x512xf32>, tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %j = "stablehlo.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "stablehlo.return"(%j, %next) : (tensor<i64>, tensor<8x512x512xf32>) -> ()
  }) : (tensor<i64>, tensor<8x512x512xf32>) -> (tensor<i64>, tensor<8x512x512xf32>)
  return %r#1 : tensor<8x512x512xf32>
}

// A sub-axis ("d":(1)2) is not read: the dimension counts whole.
// CHECK-LABEL: memfit-profile: @sub_axis_counts_whole
// CHECK-NEXT:    arguments: 4.00 MiB (4194304 B)
func.func @sub_axis_counts_whole(%x: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d":(1)2}, {}]>}) -> tensor<1024x1024xf32> {
  %0 = "stablehlo.exponential"(%x) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// A gather of single rows from a database sharded by rows: XLA's partitioner
// reads each device's own rows (the indices offset, the other devices' rows
// masked) and all-reduces the [64, 16, 16] result, so the database counts
// 4 MiB / 8 per device, beside the 4 KiB of indices.
// CHECK-LABEL: memfit-profile: @gather_rows_sharded
// CHECK-NEXT:    arguments: 516.00 KiB (528384 B)
func.func @gather_rows_sharded(%db: tensor<65536x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}, %idx: tensor<64x16x1xi32>) -> tensor<64x16x16xf32> {
  %0 = "stablehlo.gather"(%db, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<65536x16xf32>, tensor<64x16x1xi32>) -> tensor<64x16x16xf32>
  return %0 : tensor<64x16x16xf32>
}

// Windows of 2 rows from the same database may span two devices' rows: the
// model does not follow how XLA partitions that and counts the database
// whole (4 MiB), an overcount as everywhere it cannot see.
// CHECK-LABEL: memfit-profile: @gather_windows_whole
// CHECK-NEXT:    arguments: 4.00 MiB (4198400 B)
func.func @gather_windows_whole(%db: tensor<65536x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}, %idx: tensor<64x16x1xi32>) -> tensor<64x16x2x16xf32> {
  %0 = "stablehlo.gather"(%db, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 2, 16>}> : (tensor<65536x16xf32>, tensor<64x16x1xi32>) -> tensor<64x16x2x16xf32>
  return %0 : tensor<64x16x2x16xf32>
}
