// torch 2.13.0+cpu, torch-mlir 20261001: written by tools/torch_export/export_programs.py; do not edit.
#loc1 = loc("tools/torch_export/export_programs.py":44:0)
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x1024x64xf32>, tensor<2x1024x64xf32>, tensor<2x1024x64xf32>) -> tensor<2x1024x64xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x1024x64xf32> loc("tools/torch_export/export_programs.py":44:0), %arg1: tensor<2x1024x64xf32> loc("tools/torch_export/export_programs.py":44:0), %arg2: tensor<2x1024x64xf32> loc("tools/torch_export/export_programs.py":44:0)):
    %0 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32> loc(#loc1)
    %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32> loc(#loc1)
    %2 = "arith.constant"() <{value = dense<8.000000e+00> : tensor<1xf64>}> : () -> tensor<1xf64> loc(#loc1)
    %3 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x1024x64xf32>) -> tensor<2x64x1024xf32> loc(#loc1)
    %4 = "stablehlo.reshape"(%arg0) : (tensor<2x1024x64xf32>) -> tensor<2x1024x64xf32> loc(#loc1)
    %5 = "stablehlo.reshape"(%3) : (tensor<2x64x1024xf32>) -> tensor<2x64x1024xf32> loc(#loc1)
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x64x1024xf32>) -> tensor<2x64x1024xf32> loc(#loc1)
    %7 = "stablehlo.dot_general"(%4, %6) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<2x1024x64xf32>, tensor<2x64x1024xf32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %8 = "stablehlo.reshape"(%7) : (tensor<2x1024x1024xf32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %9 = "stablehlo.convert"(%2) : (tensor<1xf64>) -> tensor<1xf32> loc(#loc1)
    %10 = "stablehlo.reshape"(%9) : (tensor<1xf32>) -> tensor<f32> loc(#loc1)
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %12 = "stablehlo.divide"(%8, %11) : (tensor<2x1024x1024xf32>, tensor<2x1024x1024xf32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %13 = "stablehlo.reduce"(%12, %0) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg5: tensor<f32> loc("tools/torch_export/export_programs.py":44:0), %arg6: tensor<f32> loc("tools/torch_export/export_programs.py":44:0)):
      %28 = "stablehlo.maximum"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(#loc1)
      "stablehlo.return"(%28) : (tensor<f32>) -> () loc(#loc1)
    }) : (tensor<2x1024x1024xf32>, tensor<f32>) -> tensor<2x1024xf32> loc(#loc1)
    %14 = "stablehlo.reshape"(%13) : (tensor<2x1024xf32>) -> tensor<2x1024x1xf32> loc(#loc1)
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x1024x1xf32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %16 = "stablehlo.subtract"(%12, %15) : (tensor<2x1024x1024xf32>, tensor<2x1024x1024xf32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %17 = "stablehlo.exponential"(%16) : (tensor<2x1024x1024xf32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %18 = "stablehlo.reduce"(%17, %1) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg3: tensor<f32> loc("tools/torch_export/export_programs.py":44:0), %arg4: tensor<f32> loc("tools/torch_export/export_programs.py":44:0)):
      %27 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(#loc1)
      "stablehlo.return"(%27) : (tensor<f32>) -> () loc(#loc1)
    }) : (tensor<2x1024x1024xf32>, tensor<f32>) -> tensor<2x1024xf32> loc(#loc1)
    %19 = "stablehlo.reshape"(%18) : (tensor<2x1024xf32>) -> tensor<2x1024x1xf32> loc(#loc1)
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x1024x1xf32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %21 = "stablehlo.divide"(%17, %20) : (tensor<2x1024x1024xf32>, tensor<2x1024x1024xf32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %22 = "stablehlo.reshape"(%21) : (tensor<2x1024x1024xf32>) -> tensor<2x1024x1024xf32> loc(#loc1)
    %23 = "stablehlo.reshape"(%arg2) : (tensor<2x1024x64xf32>) -> tensor<2x1024x64xf32> loc(#loc1)
    %24 = "stablehlo.broadcast_in_dim"(%23) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x1024x64xf32>) -> tensor<2x1024x64xf32> loc(#loc1)
    %25 = "stablehlo.dot_general"(%22, %24) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<2x1024x1024xf32>, tensor<2x1024x64xf32>) -> tensor<2x1024x64xf32> loc(#loc1)
    %26 = "stablehlo.reshape"(%25) : (tensor<2x1024x64xf32>) -> tensor<2x1024x64xf32> loc(#loc1)
    "func.return"(%26) : (tensor<2x1024x64xf32>) -> () loc(#loc1)
  }) : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc(unknown)
