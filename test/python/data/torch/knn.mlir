// torch 2.13.0+cpu, torch-mlir 20261001: written by tools/torch_export/export_programs.py; do not edit.
#loc1 = loc("tools/torch_export/export_programs.py":51:0)
#loc2 = loc("tools/torch_export/export_programs.py":52:0)
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4096x16xf32>, tensor<256x16xf32>) -> (tensor<256x8xf32>, tensor<256x8xi64>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4096x16xf32> loc("tools/torch_export/export_programs.py":51:0), %arg1: tensor<256x16xf32> loc("tools/torch_export/export_programs.py":51:0)):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32> loc(#loc)
    %1 = "arith.constant"() <{value = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64> loc(#loc1)
    %2 = "stablehlo.multiply"(%arg1, %arg1) : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x16xf32> loc(#loc1)
    %3 = "stablehlo.reduce"(%2, %0) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg8: tensor<f32> loc("tools/torch_export/export_programs.py":51:0), %arg9: tensor<f32> loc("tools/torch_export/export_programs.py":51:0)):
      %23 = "stablehlo.add"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(#loc1)
      "stablehlo.return"(%23) : (tensor<f32>) -> () loc(#loc1)
    }) : (tensor<256x16xf32>, tensor<f32>) -> tensor<256xf32> loc(#loc1)
    %4 = "stablehlo.reshape"(%3) : (tensor<256xf32>) -> tensor<256x1xf32> loc(#loc1)
    %5 = "stablehlo.convert"(%1) : (tensor<1xi64>) -> tensor<1xf32> loc(#loc1)
    %6 = "stablehlo.reshape"(%5) : (tensor<1xf32>) -> tensor<f32> loc(#loc1)
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x16xf32> loc(#loc1)
    %8 = "stablehlo.multiply"(%arg1, %7) : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x16xf32> loc(#loc1)
    %9 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<4096x16xf32>) -> tensor<16x4096xf32> loc(#loc1)
    %10 = "stablehlo.dot_general"(%8, %9) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x16xf32>, tensor<16x4096xf32>) -> tensor<256x4096xf32> loc(#loc1)
    %11 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<256x1xf32>) -> tensor<256x4096xf32> loc(#loc1)
    %12 = "stablehlo.subtract"(%11, %10) : (tensor<256x4096xf32>, tensor<256x4096xf32>) -> tensor<256x4096xf32> loc(#loc1)
    %13 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<4096x16xf32>, tensor<4096x16xf32>) -> tensor<4096x16xf32> loc(#loc1)
    %14 = "stablehlo.reduce"(%13, %0) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg6: tensor<f32> loc("tools/torch_export/export_programs.py":51:0), %arg7: tensor<f32> loc("tools/torch_export/export_programs.py":51:0)):
      %22 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(#loc1)
      "stablehlo.return"(%22) : (tensor<f32>) -> () loc(#loc1)
    }) : (tensor<4096x16xf32>, tensor<f32>) -> tensor<4096xf32> loc(#loc1)
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4096xf32>) -> tensor<256x4096xf32> loc(#loc1)
    %16 = "stablehlo.add"(%12, %15) : (tensor<256x4096xf32>, tensor<256x4096xf32>) -> tensor<256x4096xf32> loc(#loc1)
    %17 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<256x4096xi64> loc(#loc2)
    %18:2 = "stablehlo.sort"(%16, %17) <{dimension = 1 : i64, is_stable = false}> ({
    ^bb0(%arg2: tensor<f32> loc("tools/torch_export/export_programs.py":52:0), %arg3: tensor<f32> loc("tools/torch_export/export_programs.py":52:0), %arg4: tensor<i64> loc("tools/torch_export/export_programs.py":52:0), %arg5: tensor<i64> loc("tools/torch_export/export_programs.py":52:0)):
      %21 = "stablehlo.compare"(%arg2, %arg3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc2)
      "stablehlo.return"(%21) : (tensor<i1>) -> () loc(#loc2)
    }) : (tensor<256x4096xf32>, tensor<256x4096xi64>) -> (tensor<256x4096xf32>, tensor<256x4096xi64>) loc(#loc2)
    %19 = "stablehlo.slice"(%18#0) <{limit_indices = array<i64: 256, 8>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<256x4096xf32>) -> tensor<256x8xf32> loc(#loc2)
    %20 = "stablehlo.slice"(%18#1) <{limit_indices = array<i64: 256, 8>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<256x4096xi64>) -> tensor<256x8xi64> loc(#loc2)
    "func.return"(%19, %20) : (tensor<256x8xf32>, tensor<256x8xi64>) -> () loc(#loc2)
  }) : () -> () loc(#loc1)
}) : () -> () loc(#loc)
#loc = loc(unknown)
