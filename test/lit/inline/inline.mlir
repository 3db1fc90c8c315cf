// RUN: memfit-opt %s --split-input-file --memfit-inline | FileCheck %s
//
// memfit-inline clones callee bodies made of unregistered StableHLO ops
// (MLIR's own inliner refuses them), then erases private functions left
// without callers.

// Both calls of jax's private @relu are inlined, and @relu is erased.
// CHECK-LABEL: func.func @two_calls
// CHECK-NOT:     call
// CHECK:         %[[A:.*]] = "stablehlo.maximum"(%arg0, %[[Z:.*]])
// CHECK:         %[[B:.*]] = "stablehlo.maximum"(%[[A]], %[[Z2:.*]])
// CHECK:         return %[[B]]
// CHECK-NOT:   func.func private @relu
func.func @two_calls(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @relu(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<4xf32>}> : () -> tensor<4xf32>
  %m = "stablehlo.maximum"(%x, %z) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// Calls inside callees are inlined too; both private functions go.
// CHECK-LABEL: func.func @nested_calls
// CHECK-NOT:     call
// CHECK:         "stablehlo.negate"(%arg0)
// CHECK-NEXT:    "stablehlo.exponential"
// CHECK-NEXT:    return
// CHECK-NOT:   @outer
// CHECK-NOT:   @inner
func.func @nested_calls(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @outer(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @outer(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = "stablehlo.negate"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %0 = func.call @inner(%n) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @inner(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = "stablehlo.exponential"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// Calls inside a loop body are inlined into the body; a public callee is
// inlined but kept (others may call it); an external declaration stays a call.
// CHECK-LABEL: func.func @call_in_region
// CHECK:         "stablehlo.while"
// CHECK-NOT:     call @public_helper
// CHECK:         "stablehlo.abs"
// CHECK:         call @external(
// CHECK-LABEL: func.func @public_helper
// CHECK-LABEL: func.func private @external
func.func @call_in_region(%x: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %r:2 = "stablehlo.while"(%i, %x) ({
  ^bb0(%a: tensor<i32>, %b: tensor<4xf32>):
    %c = "stablehlo.compare"(%a, %a) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%a: tensor<i32>, %b: tensor<4xf32>):
    %y = func.call @public_helper(%b) : (tensor<4xf32>) -> tensor<4xf32>
    "stablehlo.return"(%a, %y) : (tensor<i32>, tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
  %e = func.call @external(%r#1) : (tensor<4xf32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}
func.func @public_helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = "stablehlo.abs"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// -----

// A module that also holds a stablehlo.reduce (an unregistered op with one
// region, which MLIR's symbol-use query cannot see through) still loses
// its inlined private callee.
// CHECK-LABEL: func.func @with_reduce
// CHECK-NOT:     call
// CHECK:         "stablehlo.reduce"
// CHECK:         "stablehlo.negate"
// CHECK-NOT:   func.func private @neg
func.func @with_reduce(%x: tensor<4xf32>) -> tensor<f32> {
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %r = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %n = func.call @neg(%r) : (tensor<f32>) -> tensor<f32>
  return %n : tensor<f32>
}
func.func private @neg(%x: tensor<f32>) -> tensor<f32> {
  %n = "stablehlo.negate"(%x) : (tensor<f32>) -> tensor<f32>
  return %n : tensor<f32>
}
