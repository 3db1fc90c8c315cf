// RUN: not memfit-opt %s --memfit-inline --mlir-print-ir-after-failure 2>&1 | FileCheck %s
//
// A recursive call graph is rejected before anything changes: the
// non-recursive call to @leaf is still there in the IR printed after the
// failure, and so are all three functions.

// CHECK: error: recursive call to 'ping'; memfit-inline cannot inline recursion
// CHECK-LABEL: func.func @main
// CHECK:         call @leaf
// CHECK:         call @ping
// CHECK-LABEL: func.func private @leaf
// CHECK-LABEL: func.func private @ping
// CHECK:         call @pong
// CHECK-LABEL: func.func private @pong
// CHECK:         call @ping
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @ping(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @leaf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = "stablehlo.negate"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}
func.func private @ping(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @pong(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @pong(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @ping(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
