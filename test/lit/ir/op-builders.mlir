// RUN: memfit-opt %s --memfit-test-op-views=mode=build --mlir-print-op-generic | FileCheck %s
//
// The builders (lib/IR/OpViews.cpp) make one op of each kind in
// @memfit_built_ops; the views read back what the builders wrote, then the
// generic form is checked (test/python/test_op_views.py feeds the same
// output to jaxlib's StableHLO verifier).

// What the views read back from the built ops.
// CHECK-LABEL: func @memfit_built_ops
// CHECK-NEXT:    stablehlo.constant: elements=32 splat=1.500000e+00 bytes=128
// CHECK-NEXT:    stablehlo.iota: dim=0 bytes=32
// CHECK-NEXT:    stablehlo.broadcast_in_dim: dims=[1, 2] bytes=256
// CHECK-NEXT:    stablehlo.reshape: tensor<4x8xf32> -> tensor<32xf32> bytes=128
// CHECK-NEXT:    stablehlo.transpose: perm=[1, 0] bytes=128
// CHECK-NEXT:    stablehlo.convert: f32 -> f16 bytes=64
// CHECK-NEXT:    stablehlo.add: elementwise operands=2 bytes=128
// CHECK-NEXT:    stablehlo.exponential: elementwise operands=1 bytes=128
// CHECK-NEXT:    stablehlo.compare: direction=LT type=FLOAT bytes=32
// CHECK-NEXT:    stablehlo.select: pred=tensor<4x8xi1> on_true=tensor<4x8xf32> bytes=128
// CHECK-NEXT:    stablehlo.dot_general: lhs_batch=[] rhs_batch=[] lhs_contract=[1] rhs_contract=[0] roundtrip=ok bytes=256
// CHECK-NEXT:    stablehlo.constant: elements=1 splat=0.000000e+00 bytes=4
// CHECK-NEXT:    stablehlo.reduce: inputs=1 dims=[1] reducer=add bytes=16
// CHECK-NEXT:      stablehlo.add: elementwise operands=2 bytes=4
// CHECK-NEXT:      stablehlo.return: operands=1
// CHECK-NEXT:    stablehlo.slice: start=[0, 2] limit=[4, 8] strides=[2, 3] bytes=16
// CHECK-NEXT:    stablehlo.constant: elements=1 splat=1.000000e+00 bytes=8
// CHECK-NEXT:    stablehlo.constant: elements=1 splat=0.000000e+00 bytes=8
// CHECK-NEXT:    stablehlo.dynamic_slice: starts=2 sizes=[2, 8] bytes=64
// CHECK-NEXT:    stablehlo.dynamic_update_slice: update=tensor<2x8xf32> starts=2 bytes=128
// CHECK-NEXT:    stablehlo.concatenate: dim=0 operands=2 bytes=256
// CHECK-NEXT:    stablehlo.pad: low=[1, 0] high=[0, 2] interior=[0, 1] bytes=340
// CHECK-NEXT:    chlo.top_k: k=3 bytes=48
// CHECK-NEXT:    stablehlo.sort: dim=1 stable=true operands=1 bytes=128
// CHECK-NEXT:      stablehlo.compare: direction=LT bytes=1
// CHECK-NEXT:      stablehlo.return: operands=1
// CHECK-NEXT:    stablehlo.custom_call: target=memfit_test_target bytes=128
// CHECK-NEXT:    stablehlo.constant: elements=1 splat=0.000000e+00 bytes=8
// CHECK-NEXT:    stablehlo.while: carried=2 cond_args=2 body_args=2 bytes=8
// CHECK:         func.return: operands=21

// The generic form the builders wrote (attribute text as jax prints it).
// CHECK-LABEL: sym_name = "memfit_built_ops"
// CHECK:      "stablehlo.constant"() <{value = dense<1.500000e+00> : tensor<4x8xf32>}>
// CHECK:      "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8xi32>
// CHECK:      "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4x8xf32>) -> tensor<2x4x8xf32>
// CHECK:      "stablehlo.reshape"(%arg0) : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK:      "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<8x4xf32>
// CHECK:      "stablehlo.convert"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK:      "stablehlo.exponential"
// CHECK:      "stablehlo.compare"(%arg0, %{{.*}}) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
// CHECK:      "stablehlo.select"
// CHECK:      "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK:      "stablehlo.reduce"(%arg0, %{{.*}}) <{dimensions = array<i64: 1>}> ({
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
// CHECK-NEXT:   %[[S:.*]] = "stablehlo.add"(%[[A]], %[[B]])
// CHECK-NEXT:   "stablehlo.return"(%[[S]])
// CHECK-NEXT: }) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:      "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 4, 8>, start_indices = array<i64: 0, 2>, strides = array<i64: 2, 3>}> : (tensor<4x8xf32>) -> tensor<2x2xf32>
// CHECK:      "stablehlo.dynamic_slice"(%arg0, %{{.*}}, %{{.*}}) <{slice_sizes = array<i64: 2, 8>}> : (tensor<4x8xf32>, tensor<i64>, tensor<i64>) -> tensor<2x8xf32>
// CHECK:      "stablehlo.dynamic_update_slice"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<2x8xf32>, tensor<i64>, tensor<i64>) -> tensor<4x8xf32>
// CHECK:      "stablehlo.concatenate"(%arg0, %{{.*}}) <{dimension = 0 : i64}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
// CHECK:      "stablehlo.pad"(%arg0, %{{.*}}) <{edge_padding_high = array<i64: 0, 2>, edge_padding_low = array<i64: 1, 0>, interior_padding = array<i64: 0, 1>}> : (tensor<4x8xf32>, tensor<f32>) -> tensor<5x17xf32>
// CHECK:      "chlo.top_k"(%arg0) <{k = 3 : i64}> : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
// CHECK:      "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
// CHECK:      "stablehlo.custom_call"(%arg0) <{call_target_name = "memfit_test_target"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:      "stablehlo.while"(%{{.*}}, %arg0) ({
// CHECK-NEXT: ^bb0(%[[I:.*]]: tensor<i64>, %{{.*}}: tensor<4x8xf32>):
// CHECK:        "stablehlo.compare"(%[[I]], %{{.*}}) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}>
// CHECK:        "stablehlo.return"
// CHECK-NEXT: }, {
// CHECK:        "stablehlo.return"(%{{.*}}, %{{.*}}) : (tensor<i64>, tensor<4x8xf32>) -> ()
// CHECK-NEXT: }) : (tensor<i64>, tensor<4x8xf32>) -> (tensor<i64>, tensor<4x8xf32>)
// CHECK:      "func.return"
module {
}
