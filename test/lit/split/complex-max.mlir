// A running maximum needs an order; complex has none (issue 16). The split
// stops at the reduce, says why, and leaves the IR unchanged.
// RUN: not memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=1MB})' 2>&1 | FileCheck %s
// CHECK: error: memfit-split: cannot fit @cmax
// CHECK-SAME: 'stablehlo.reduce' (at {{.*}}complex-max.mlir:{{[0-9]+}}:{{[0-9]+}}) needs the split dimension whole (operand dimension 1): it takes a maximum or minimum of complex values, which have no order
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<1xf32>, tensor<100000xf32>) -> tensor<1xcomplex<f32>>, sym_name = "cmax", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<1xf32>, %y: tensor<100000xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf32>) -> tensor<1x100000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%y) <{broadcast_dimensions = array<i64: 1>}> : (tensor<100000xf32>) -> tensor<1x100000xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<1x100000xf32>, tensor<1x100000xf32>) -> tensor<1x100000xf32>
    %3 = "stablehlo.cosine"(%2) : (tensor<1x100000xf32>) -> tensor<1x100000xf32>
    %4 = "stablehlo.sine"(%2) : (tensor<1x100000xf32>) -> tensor<1x100000xf32>
    %5 = "stablehlo.complex"(%3, %4) : (tensor<1x100000xf32>, tensor<1x100000xf32>) -> tensor<1x100000xcomplex<f32>>
    %6 = "stablehlo.constant"() <{value = dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<complex<f32>>, %b: tensor<complex<f32>>):
      %8 = "stablehlo.maximum"(%a, %b) : (tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      "stablehlo.return"(%8) : (tensor<complex<f32>>) -> ()
    }) : (tensor<1x100000xcomplex<f32>>, tensor<complex<f32>>) -> tensor<1xcomplex<f32>>
    "func.return"(%7) : (tensor<1xcomplex<f32>>) -> ()
  }) : () -> ()
}) : () -> ()

