// RUN: mlir-opt --load-pass-plugin=%plugin --allow-unregistered-dialect --pass-pipeline="builtin.module(memfit-profile)" %s -o /dev/null | FileCheck %s
// RUN: memfit-opt --pass-pipeline="builtin.module(memfit-profile)" %s -o /dev/null | FileCheck %s
// RUN: mlir-opt --load-pass-plugin=%plugin --allow-unregistered-dialect --pass-pipeline="builtin.module(memfit-inline)" %s | FileCheck %s --check-prefix=INLINE
//
// The same passes, loaded as a plugin into Debian's stock mlir-opt, give the
// same numbers as memfit-opt (both RUN lines check one set of CHECKs).

// Arguments 2 x 32 KiB; the 512x512x16 broadcasts fuse into the reduce.
// CHECK-LABEL: memfit-profile: @knn_distances
// CHECK:         peak:      1.06 MiB (1114112 B) at stablehlo.reduce
func.func @knn_distances(%x: tensor<512x16xf32>, %q: tensor<512x16xf32>) -> tensor<512x512xf32> {
  %bx = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<512x16xf32>) -> tensor<512x512x16xf32>
  %bq = "stablehlo.broadcast_in_dim"(%q) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<512x16xf32>) -> tensor<512x512x16xf32>
  %d = "stablehlo.subtract"(%bq, %bx) : (tensor<512x512x16xf32>, tensor<512x512x16xf32>) -> tensor<512x512x16xf32>
  %s = "stablehlo.multiply"(%d, %d) : (tensor<512x512x16xf32>, tensor<512x512x16xf32>) -> tensor<512x512x16xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %r = "stablehlo.reduce"(%s, %z) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<512x512x16xf32>, tensor<f32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

// A call to a private helper: profiled across, and inlined by memfit-inline.
// CHECK-LABEL: memfit-profile: @with_call
// CHECK:         peak:      192.00 KiB (196608 B) at func.call
// INLINE-LABEL: func.func @with_call
// INLINE-NOT:     call
// INLINE-COUNT-2: "stablehlo.dot_general"
// INLINE-NOT:   func.func private @helper
func.func @with_call(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %r = func.call @helper(%x) : (tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
func.func private @helper(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %d = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %e = "stablehlo.dot_general"(%d, %d) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  return %e : tensor<128x128xf32>
}
