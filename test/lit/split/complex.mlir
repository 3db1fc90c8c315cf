// Complex values split: a sum over the contracted dimension of exp(i x y)
// accumulates complex partial sums from a complex zero (issue 16: buildConstantSplat
// used to ask for an integer attribute of complex<f32> and abort). Four rows
// of 4,000: only the contracted dimension can be chunked under the limit.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=40KB})' | FileCheck %s

// CHECK-LABEL: func.func public @dft
// CHECK: "stablehlo.constant"() <{value = dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>}>
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.complex"({{.*}}-> tensor<4x{{[0-9]+}}xcomplex<f32>>
// CHECK: %[[P:.*]] = "stablehlo.reduce"
// CHECK: "stablehlo.add"(%{{.*}}, %[[P]]) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>)
// CHECK: return
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<4000xf32>) -> tensor<4xcomplex<f32>>, sym_name = "dft", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<4xf32>, %y: tensor<4000xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x4000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%y) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4000xf32>) -> tensor<4x4000xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<4x4000xf32>, tensor<4x4000xf32>) -> tensor<4x4000xf32>
    %3 = "stablehlo.cosine"(%2) : (tensor<4x4000xf32>) -> tensor<4x4000xf32>
    %4 = "stablehlo.sine"(%2) : (tensor<4x4000xf32>) -> tensor<4x4000xf32>
    %5 = "stablehlo.complex"(%3, %4) : (tensor<4x4000xf32>, tensor<4x4000xf32>) -> tensor<4x4000xcomplex<f32>>
    %6 = "stablehlo.constant"() <{value = dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<complex<f32>>, %b: tensor<complex<f32>>):
      %8 = "stablehlo.add"(%a, %b) : (tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      "stablehlo.return"(%8) : (tensor<complex<f32>>) -> ()
    }) : (tensor<4x4000xcomplex<f32>>, tensor<complex<f32>>) -> tensor<4xcomplex<f32>>
    "func.return"(%7) : (tensor<4xcomplex<f32>>) -> ()
  }) : () -> ()
}) : () -> ()

