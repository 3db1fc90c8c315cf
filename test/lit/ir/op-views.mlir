// RUN: memfit-opt %s --memfit-test-op-views -o /dev/null | FileCheck %s
//
// What each op view reads from generic StableHLO (lib/IR/OpViews.cpp), and
// the byte size of the first result (pred = 1 byte, as XLA stores it).

// CHECK-LABEL: func @constants
// CHECK-NEXT:    stablehlo.constant: elements=6 splat=2.500000e+00 bytes=24
// CHECK-NEXT:    stablehlo.constant: elements=3 bytes=12
// CHECK-NEXT:    arith.constant: elements=4 type=tensor<4xi32> bytes=16
// CHECK-NEXT:    stablehlo.iota: dim=1 bytes=48
// CHECK-NEXT:    func.return: operands=4
func.func @constants() -> (tensor<2x3xf32>, tensor<3xi32>, tensor<4xi32>, tensor<3x4xf32>) {
  %0 = "stablehlo.constant"() <{value = dense<2.5> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %1 = "stablehlo.constant"() <{value = dense<[1, 2, 3]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %2 = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %3 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<3x4xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<3xi32>, tensor<4xi32>, tensor<3x4xf32>
}

// CHECK-LABEL: func @layout
// CHECK-NEXT:    stablehlo.broadcast_in_dim: dims=[0, 2] bytes=96
// CHECK-NEXT:    stablehlo.reshape: tensor<2x3xf32> -> tensor<6xf32> bytes=24
// CHECK-NEXT:    stablehlo.transpose: perm=[1, 0] bytes=24
// CHECK-NEXT:    stablehlo.convert: f32 -> bf16 bytes=12
// CHECK-NEXT:    stablehlo.slice: start=[0, 1] limit=[2, 3] strides=[1, 2] bytes=8
// CHECK-NEXT:    stablehlo.concatenate: dim=1 operands=2 bytes=48
// CHECK-NEXT:    stablehlo.pad: low=[1, 0] high=[0, 2] interior=[0, 1] bytes=84
func.func @layout(%x: tensor<2x3xf32>, %p: tensor<f32>) -> (tensor<2x4x3xf32>, tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xbf16>, tensor<2x1xf32>, tensor<2x6xf32>, tensor<3x7xf32>) {
  %0 = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<2x3xf32>) -> tensor<2x4x3xf32>
  %1 = "stablehlo.reshape"(%x) : (tensor<2x3xf32>) -> tensor<6xf32>
  %2 = "stablehlo.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = "stablehlo.convert"(%x) : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %4 = "stablehlo.slice"(%x) <{start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 3>, strides = array<i64: 1, 2>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %5 = "stablehlo.concatenate"(%x, %x) <{dimension = 1 : i64}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %6 = "stablehlo.pad"(%x, %p) <{edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, 2>, interior_padding = array<i64: 0, 1>}> : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x7xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x4x3xf32>, tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xbf16>, tensor<2x1xf32>, tensor<2x6xf32>, tensor<3x7xf32>
}

// CHECK-LABEL: func @elementwise
// CHECK-NEXT:    stablehlo.add: elementwise operands=2 bytes=16
// CHECK-NEXT:    chlo.erf_inv: elementwise operands=1 bytes=16
// CHECK-NEXT:    stablehlo.compare: direction=GE type=TOTALORDER bytes=4
// CHECK-NEXT:    stablehlo.compare: direction=NE bytes=4
// CHECK-NEXT:    stablehlo.select: pred=tensor<4xi1> on_true=tensor<4xf32> bytes=16
// CHECK-NEXT:    stablehlo.clamp: clamp bytes=16
// CHECK-NEXT:    stablehlo.add: elementwise operands=2 bytes=32
func.func @elementwise(%x: tensor<4xf32>, %c: tensor<4xcomplex<f32>>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xcomplex<f32>>) {
  %0 = "stablehlo.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "chlo.erf_inv"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "stablehlo.compare"(%1, %x) <{comparison_direction = #stablehlo<comparison_direction GE>, compare_type = #stablehlo<comparison_type TOTALORDER>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = "stablehlo.compare"(%1, %x) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %4 = "stablehlo.select"(%2, %1, %x) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = "stablehlo.clamp"(%x, %4, %x) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %6 = "stablehlo.add"(%c, %c) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %5, %3, %6 : tensor<4xf32>, tensor<4xi1>, tensor<4xcomplex<f32>>
}

// CHECK-LABEL: func @dots
// CHECK-NEXT:    stablehlo.dot_general: lhs_batch=[0] rhs_batch=[0] lhs_contract=[2] rhs_contract=[1] roundtrip=ok bytes=512
// CHECK-NEXT:    stablehlo.dot_general: lhs_batch=[] rhs_batch=[] lhs_contract=[1] rhs_contract=[0] roundtrip=ok bytes=40
func.func @dots(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>, %m: tensor<2x8xf32>, %n: tensor<8x5xf32>) -> (tensor<2x4x16xf32>, tensor<2x5xf32>) {
  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  %1 = "stablehlo.dot_general"(%m, %n) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x8xf32>, tensor<8x5xf32>) -> tensor<2x5xf32>
  return %0, %1 : tensor<2x4x16xf32>, tensor<2x5xf32>
}

// Reducer kinds: one binary op of the two block arguments; anything else
// (here: a body that ignores an argument) is `other`.
// CHECK-LABEL: func @reductions
// CHECK-NEXT:    stablehlo.constant
// CHECK-NEXT:    stablehlo.reduce: inputs=1 dims=[1] reducer=max bytes=16
// CHECK:         stablehlo.reduce: inputs=1 dims=[0, 1] reducer=mul bytes=4
// CHECK:         stablehlo.reduce: inputs=2 dims=[1] reducer=other bytes=16
func.func @reductions(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> (tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<4xi32>) {
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 0, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.multiply"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
  %zi = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %2:2 = "stablehlo.reduce"(%x, %i, %z, %zi) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):
    "stablehlo.return"(%a, %ai) : (tensor<f32>, tensor<i32>) -> ()
  }) : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
  return %0, %1, %2#0, %2#1 : tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<4xi32>
}

// CHECK-LABEL: func @dynamic_slices
// CHECK-NEXT:    stablehlo.dynamic_slice: starts=2 sizes=[2, 8] bytes=64
// CHECK-NEXT:    stablehlo.dynamic_update_slice: update=tensor<2x8xf32> starts=2 bytes=128
func.func @dynamic_slices(%x: tensor<4x8xf32>, %i: tensor<i32>) -> tensor<4x8xf32> {
  %0 = "stablehlo.dynamic_slice"(%x, %i, %i) <{slice_sizes = array<i64: 2, 8>}> : (tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<2x8xf32>
  %1 = "stablehlo.dynamic_update_slice"(%x, %0, %i, %i) : (tensor<4x8xf32>, tensor<2x8xf32>, tensor<i32>, tensor<i32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func @sorting
// CHECK-NEXT:    chlo.top_k: k=3 bytes=48
// CHECK-NEXT:    stablehlo.sort: dim=1 stable=true operands=2 bytes=128
// CHECK-NEXT:      stablehlo.compare: direction=GT type=FLOAT bytes=1
// CHECK-NEXT:      stablehlo.return: operands=1
// CHECK-NEXT:    stablehlo.sort: dim=0 stable=false operands=1 bytes=128
func.func @sorting(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> (tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>) {
  %0:2 = "chlo.top_k"(%x) <{k = 3 : i64}> : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
  %1:2 = "stablehlo.sort"(%x, %i) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %t = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%t) : (tensor<i1>) -> ()
  }) : (tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
  %2 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%t) : (tensor<i1>) -> ()
  }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0#0, %0#1, %1#0, %1#1, %2 : tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>
}

// jax's LAPACK calls carry more attributes; the view reads the target.
// CHECK-LABEL: func @custom_calls
// CHECK-NEXT:    stablehlo.custom_call: target=lapack_spotrf_ffi bytes=64
// CHECK-NEXT:    stablehlo.gather: other
func.func @custom_calls(%x: tensor<4x4xf32>, %idx: tensor<2x1xi32>) -> (tensor<4x4xf32>, tensor<2x4xf32>) {
  %0 = "stablehlo.custom_call"(%x) <{api_version = 4 : i32, call_target_name = "lapack_spotrf_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<4x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func @loops
// CHECK-NEXT:    stablehlo.while: carried=2 cond_args=2 body_args=2 bytes=4
// CHECK:         func.call: callee=@callee bytes=16
func.func @loops(%i: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = "stablehlo.while"(%i, %x) ({
  ^bb0(%a: tensor<i32>, %b: tensor<4xf32>):
    %c = "stablehlo.compare"(%a, %a) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%a: tensor<i32>, %b: tensor<4xf32>):
    "stablehlo.return"(%a, %b) : (tensor<i32>, tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
  %1 = func.call @callee(%0#1) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
