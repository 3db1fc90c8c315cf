"builtin.module"() <{sym_name = "jit_clip_loss"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<64x4xf32>, tensor<64x4xf32>, tensor<f32>) -> (tensor<f32>, tensor<64x4xf32>, tensor<64x4xf32>, tensor<f32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1][0]"}, {jax.result_info = "result[1][1]"}, {jax.result_info = "result[1][2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<64x4xf32>, %arg1: tensor<64x4xf32>, %arg2: tensor<f32>):
    %0 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg35: tensor<f32>, %arg36: tensor<f32>):
      %239 = "stablehlo.add"(%arg35, %arg36) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%239) : (tensor<f32>) -> ()
    }) : (tensor<64x4xf32>, tensor<f32>) -> tensor<64xf32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x1xf32>
    %4 = "stablehlo.sqrt"(%3) : (tensor<64x1xf32>) -> tensor<64x1xf32>
    %5 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x1xf32>
    %7 = "stablehlo.divide"(%6, %4) : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %8 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<64x1xf32>) -> tensor<64x4xf32>
    %9 = "stablehlo.divide"(%arg0, %8) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %10 = "stablehlo.multiply"(%4, %4) : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %11 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x1xf32>
    %13 = "stablehlo.divide"(%12, %10) : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %14 = "stablehlo.multiply"(%arg1, %arg1) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %15 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.reduce"(%14, %15) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg33: tensor<f32>, %arg34: tensor<f32>):
      %238 = "stablehlo.add"(%arg33, %arg34) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%238) : (tensor<f32>) -> ()
    }) : (tensor<64x4xf32>, tensor<f32>) -> tensor<64xf32>
    %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x1xf32>
    %18 = "stablehlo.sqrt"(%17) : (tensor<64x1xf32>) -> tensor<64x1xf32>
    %19 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x1xf32>
    %21 = "stablehlo.divide"(%20, %18) : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %22 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<64x1xf32>) -> tensor<64x4xf32>
    %23 = "stablehlo.divide"(%arg1, %22) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %24 = "stablehlo.multiply"(%18, %18) : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %25 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %26 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x1xf32>
    %27 = "stablehlo.divide"(%26, %24) : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %28 = "stablehlo.exponential"(%arg2) : (tensor<f32>) -> tensor<f32>
    %29 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x4xf32>
    %30 = "stablehlo.multiply"(%29, %9) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %31 = "stablehlo.transpose"(%23) <{permutation = array<i64: 1, 0>}> : (tensor<64x4xf32>) -> tensor<4x64xf32>
    %32 = "stablehlo.dot_general"(%30, %31) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<64x4xf32>, tensor<4x64xf32>) -> tensor<64x64xf32>
    %33 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<64xi32>
    %34 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xi32>) -> tensor<64x1xi32>
    %35 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<64x1xi32>
    %37 = "stablehlo.compare"(%34, %36) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<64x1xi32>, tensor<64x1xi32>) -> tensor<64x1xi1>
    %38 = "stablehlo.constant"() <{value = dense<64> : tensor<i32>}> : () -> tensor<i32>
    %39 = "stablehlo.broadcast_in_dim"(%38) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<64x1xi32>
    %40 = "stablehlo.add"(%34, %39) : (tensor<64x1xi32>, tensor<64x1xi32>) -> tensor<64x1xi32>
    %41 = "stablehlo.select"(%37, %40, %34) : (tensor<64x1xi1>, tensor<64x1xi32>, tensor<64x1xi32>) -> tensor<64x1xi32>
    %42 = "stablehlo.reshape"(%41) : (tensor<64x1xi32>) -> tensor<64x1x1xi32>
    %43 = "stablehlo.constant"() <{value = dense<63> : tensor<1xi32>}> : () -> tensor<1xi32>
    %44 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %45 = "stablehlo.broadcast_in_dim"(%44) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<64x1x1xi32>
    %46 = "stablehlo.compare"(%42, %45) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<64x1x1xi32>, tensor<64x1x1xi32>) -> tensor<64x1x1xi1>
    %47 = "stablehlo.broadcast_in_dim"(%43) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %48 = "stablehlo.broadcast_in_dim"(%47) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<64x1x1xi32>
    %49 = "stablehlo.compare"(%42, %48) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<64x1x1xi32>, tensor<64x1x1xi32>) -> tensor<64x1x1xi1>
    %50 = "stablehlo.and"(%46, %49) : (tensor<64x1x1xi1>, tensor<64x1x1xi1>) -> tensor<64x1x1xi1>
    %51 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %52 = "stablehlo.reduce"(%50, %51) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg31: tensor<i1>, %arg32: tensor<i1>):
      %237 = "stablehlo.and"(%arg31, %arg32) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%237) : (tensor<i1>) -> ()
    }) : (tensor<64x1x1xi1>, tensor<i1>) -> tensor<64x1xi1>
    %53 = "stablehlo.gather"(%32, %42) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<64x64xf32>, tensor<64x1x1xi32>) -> tensor<64x1xf32>
    %54 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %55 = "stablehlo.broadcast_in_dim"(%54) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x1xf32>
    %56 = "stablehlo.select"(%52, %53, %55) : (tensor<64x1xi1>, tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %57 = "stablehlo.reshape"(%56) : (tensor<64x1xf32>) -> tensor<64xf32>
    %58 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %59 = "stablehlo.reduce"(%32, %58) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg29: tensor<f32>, %arg30: tensor<f32>):
      %236 = "stablehlo.maximum"(%arg29, %arg30) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%236) : (tensor<f32>) -> ()
    }) : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
    %60 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %61 = "stablehlo.broadcast_in_dim"(%60) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %62 = "stablehlo.maximum"(%61, %59) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %63 = "stablehlo.is_finite"(%62) : (tensor<64xf32>) -> tensor<64xi1>
    %64 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %65 = "stablehlo.broadcast_in_dim"(%64) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %66 = "stablehlo.select"(%63, %62, %65) : (tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %67 = "stablehlo.broadcast_in_dim"(%66) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x1xf32>
    %68 = "stablehlo.broadcast_in_dim"(%67) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<64x1xf32>) -> tensor<64x64xf32>
    %69 = "stablehlo.subtract"(%32, %68) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %70 = "stablehlo.exponential"(%69) : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %71 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %72 = "stablehlo.reduce"(%70, %71) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg27: tensor<f32>, %arg28: tensor<f32>):
      %235 = "stablehlo.add"(%arg27, %arg28) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%235) : (tensor<f32>) -> ()
    }) : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
    %73 = "stablehlo.abs"(%72) : (tensor<64xf32>) -> tensor<64xf32>
    %74 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %75 = "stablehlo.broadcast_in_dim"(%74) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %76 = "stablehlo.compare"(%72, %75) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xi1>
    %77 = "stablehlo.log"(%73) : (tensor<64xf32>) -> tensor<64xf32>
    %78 = "stablehlo.add"(%77, %66) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %79 = "stablehlo.subtract"(%78, %57) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %80 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %81 = "stablehlo.reduce"(%79, %80) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg25: tensor<f32>, %arg26: tensor<f32>):
      %234 = "stablehlo.add"(%arg25, %arg26) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%234) : (tensor<f32>) -> ()
    }) : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
    %82 = "stablehlo.constant"() <{value = dense<6.400000e+01> : tensor<f32>}> : () -> tensor<f32>
    %83 = "stablehlo.divide"(%81, %82) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %84 = "stablehlo.transpose"(%32) <{permutation = array<i64: 1, 0>}> : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %85 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xi32>) -> tensor<64x1xi32>
    %86 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %87 = "stablehlo.broadcast_in_dim"(%86) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<64x1xi32>
    %88 = "stablehlo.compare"(%85, %87) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<64x1xi32>, tensor<64x1xi32>) -> tensor<64x1xi1>
    %89 = "stablehlo.constant"() <{value = dense<64> : tensor<i32>}> : () -> tensor<i32>
    %90 = "stablehlo.broadcast_in_dim"(%89) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<64x1xi32>
    %91 = "stablehlo.add"(%85, %90) : (tensor<64x1xi32>, tensor<64x1xi32>) -> tensor<64x1xi32>
    %92 = "stablehlo.select"(%88, %91, %85) : (tensor<64x1xi1>, tensor<64x1xi32>, tensor<64x1xi32>) -> tensor<64x1xi32>
    %93 = "stablehlo.reshape"(%92) : (tensor<64x1xi32>) -> tensor<64x1x1xi32>
    %94 = "stablehlo.constant"() <{value = dense<63> : tensor<1xi32>}> : () -> tensor<1xi32>
    %95 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %96 = "stablehlo.broadcast_in_dim"(%95) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<64x1x1xi32>
    %97 = "stablehlo.compare"(%93, %96) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<64x1x1xi32>, tensor<64x1x1xi32>) -> tensor<64x1x1xi1>
    %98 = "stablehlo.broadcast_in_dim"(%94) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %99 = "stablehlo.broadcast_in_dim"(%98) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<64x1x1xi32>
    %100 = "stablehlo.compare"(%93, %99) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<64x1x1xi32>, tensor<64x1x1xi32>) -> tensor<64x1x1xi1>
    %101 = "stablehlo.and"(%97, %100) : (tensor<64x1x1xi1>, tensor<64x1x1xi1>) -> tensor<64x1x1xi1>
    %102 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %103 = "stablehlo.reduce"(%101, %102) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg23: tensor<i1>, %arg24: tensor<i1>):
      %233 = "stablehlo.and"(%arg23, %arg24) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%233) : (tensor<i1>) -> ()
    }) : (tensor<64x1x1xi1>, tensor<i1>) -> tensor<64x1xi1>
    %104 = "stablehlo.gather"(%84, %93) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<64x64xf32>, tensor<64x1x1xi32>) -> tensor<64x1xf32>
    %105 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %106 = "stablehlo.broadcast_in_dim"(%105) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x1xf32>
    %107 = "stablehlo.select"(%103, %104, %106) : (tensor<64x1xi1>, tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %108 = "stablehlo.reshape"(%107) : (tensor<64x1xf32>) -> tensor<64xf32>
    %109 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %110 = "stablehlo.reduce"(%84, %109) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg21: tensor<f32>, %arg22: tensor<f32>):
      %232 = "stablehlo.maximum"(%arg21, %arg22) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%232) : (tensor<f32>) -> ()
    }) : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
    %111 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %112 = "stablehlo.broadcast_in_dim"(%111) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %113 = "stablehlo.maximum"(%112, %110) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %114 = "stablehlo.is_finite"(%113) : (tensor<64xf32>) -> tensor<64xi1>
    %115 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %116 = "stablehlo.broadcast_in_dim"(%115) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %117 = "stablehlo.select"(%114, %113, %116) : (tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %118 = "stablehlo.broadcast_in_dim"(%117) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x1xf32>
    %119 = "stablehlo.broadcast_in_dim"(%118) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<64x1xf32>) -> tensor<64x64xf32>
    %120 = "stablehlo.subtract"(%84, %119) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %121 = "stablehlo.exponential"(%120) : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %122 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %123 = "stablehlo.reduce"(%121, %122) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg19: tensor<f32>, %arg20: tensor<f32>):
      %231 = "stablehlo.add"(%arg19, %arg20) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%231) : (tensor<f32>) -> ()
    }) : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
    %124 = "stablehlo.abs"(%123) : (tensor<64xf32>) -> tensor<64xf32>
    %125 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %126 = "stablehlo.broadcast_in_dim"(%125) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %127 = "stablehlo.compare"(%123, %126) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xi1>
    %128 = "stablehlo.log"(%124) : (tensor<64xf32>) -> tensor<64xf32>
    %129 = "stablehlo.add"(%128, %117) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %130 = "stablehlo.subtract"(%129, %108) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %131 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %132 = "stablehlo.reduce"(%130, %131) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg17: tensor<f32>, %arg18: tensor<f32>):
      %230 = "stablehlo.add"(%arg17, %arg18) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%230) : (tensor<f32>) -> ()
    }) : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
    %133 = "stablehlo.constant"() <{value = dense<6.400000e+01> : tensor<f32>}> : () -> tensor<f32>
    %134 = "stablehlo.divide"(%132, %133) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %135 = "stablehlo.add"(%83, %134) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %136 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %137 = "stablehlo.multiply"(%136, %135) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %138 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %139 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %140 = "stablehlo.multiply"(%138, %139) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %141 = "stablehlo.constant"() <{value = dense<6.400000e+01> : tensor<f32>}> : () -> tensor<f32>
    %142 = "stablehlo.divide"(%140, %141) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %143 = "stablehlo.broadcast_in_dim"(%142) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %144 = "stablehlo.negate"(%143) : (tensor<64xf32>) -> tensor<64xf32>
    %145 = "stablehlo.divide"(%143, %124) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %146 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %147 = "stablehlo.broadcast_in_dim"(%146) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %148 = "stablehlo.select"(%127, %147, %145) : (tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %149 = "stablehlo.select"(%127, %145, %147) : (tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %150 = "stablehlo.negate"(%148) : (tensor<64xf32>) -> tensor<64xf32>
    %151 = "stablehlo.add"(%149, %150) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %152 = "stablehlo.broadcast_in_dim"(%151) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x64xf32>
    %153 = "stablehlo.multiply"(%152, %121) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %154 = "stablehlo.broadcast_in_dim"(%144) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x1xf32>
    %155 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %156 = "stablehlo.broadcast_in_dim"(%155) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x64xf32>
    %157 = "stablehlo.scatter"(%156, %93, %154) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg15: tensor<f32>, %arg16: tensor<f32>):
      %229 = "stablehlo.add"(%arg15, %arg16) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%229) : (tensor<f32>) -> ()
    }) : (tensor<64x64xf32>, tensor<64x1x1xi32>, tensor<64x1xf32>) -> tensor<64x64xf32>
    %158 = "stablehlo.add"(%153, %157) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %159 = "stablehlo.transpose"(%158) <{permutation = array<i64: 1, 0>}> : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %160 = "stablehlo.constant"() <{value = dense<6.400000e+01> : tensor<f32>}> : () -> tensor<f32>
    %161 = "stablehlo.divide"(%140, %160) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %162 = "stablehlo.broadcast_in_dim"(%161) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %163 = "stablehlo.negate"(%162) : (tensor<64xf32>) -> tensor<64xf32>
    %164 = "stablehlo.divide"(%162, %73) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %165 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %166 = "stablehlo.broadcast_in_dim"(%165) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64xf32>
    %167 = "stablehlo.select"(%76, %166, %164) : (tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %168 = "stablehlo.select"(%76, %164, %166) : (tensor<64xi1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %169 = "stablehlo.negate"(%167) : (tensor<64xf32>) -> tensor<64xf32>
    %170 = "stablehlo.add"(%168, %169) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    %171 = "stablehlo.broadcast_in_dim"(%170) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x64xf32>
    %172 = "stablehlo.multiply"(%171, %70) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %173 = "stablehlo.add"(%159, %172) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %174 = "stablehlo.broadcast_in_dim"(%163) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x1xf32>
    %175 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %176 = "stablehlo.broadcast_in_dim"(%175) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x64xf32>
    %177 = "stablehlo.scatter"(%176, %42, %174) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg13: tensor<f32>, %arg14: tensor<f32>):
      %228 = "stablehlo.add"(%arg13, %arg14) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%228) : (tensor<f32>) -> ()
    }) : (tensor<64x64xf32>, tensor<64x1x1xi32>, tensor<64x1xf32>) -> tensor<64x64xf32>
    %178 = "stablehlo.add"(%173, %177) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %179 = "stablehlo.dot_general"(%178, %30) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<64x64xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %180 = "stablehlo.transpose"(%179) <{permutation = array<i64: 1, 0>}> : (tensor<64x4xf32>) -> tensor<4x64xf32>
    %181 = "stablehlo.dot_general"(%178, %31) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<64x64xf32>, tensor<4x64xf32>) -> tensor<64x4xf32>
    %182 = "stablehlo.transpose"(%180) <{permutation = array<i64: 1, 0>}> : (tensor<4x64xf32>) -> tensor<64x4xf32>
    %183 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x4xf32>
    %184 = "stablehlo.multiply"(%183, %181) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %185 = "stablehlo.multiply"(%181, %9) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %186 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %187 = "stablehlo.reduce"(%185, %186) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg11: tensor<f32>, %arg12: tensor<f32>):
      %227 = "stablehlo.add"(%arg11, %arg12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%227) : (tensor<f32>) -> ()
    }) : (tensor<64x4xf32>, tensor<f32>) -> tensor<f32>
    %188 = "stablehlo.multiply"(%187, %28) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %189 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<64x1xf32>) -> tensor<64x4xf32>
    %190 = "stablehlo.multiply"(%182, %189) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %191 = "stablehlo.multiply"(%190, %arg1) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %192 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %193 = "stablehlo.reduce"(%191, %192) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %226 = "stablehlo.add"(%arg9, %arg10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%226) : (tensor<f32>) -> ()
    }) : (tensor<64x4xf32>, tensor<f32>) -> tensor<64xf32>
    %194 = "stablehlo.reshape"(%193) : (tensor<64xf32>) -> tensor<64x1xf32>
    %195 = "stablehlo.negate"(%194) : (tensor<64x1xf32>) -> tensor<64x1xf32>
    %196 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<64x1xf32>) -> tensor<64x4xf32>
    %197 = "stablehlo.divide"(%182, %196) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %198 = "stablehlo.multiply"(%195, %21) : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %199 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %200 = "stablehlo.reduce"(%198, %199) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %225 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%225) : (tensor<f32>) -> ()
    }) : (tensor<64x1xf32>, tensor<f32>) -> tensor<64xf32>
    %201 = "stablehlo.broadcast_in_dim"(%200) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x4xf32>
    %202 = "stablehlo.multiply"(%arg1, %201) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %203 = "stablehlo.multiply"(%201, %arg1) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %204 = "stablehlo.add"(%202, %203) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %205 = "stablehlo.add"(%197, %204) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %206 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<64x1xf32>) -> tensor<64x4xf32>
    %207 = "stablehlo.multiply"(%184, %206) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %208 = "stablehlo.multiply"(%207, %arg0) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %209 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %210 = "stablehlo.reduce"(%208, %209) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %224 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%224) : (tensor<f32>) -> ()
    }) : (tensor<64x4xf32>, tensor<f32>) -> tensor<64xf32>
    %211 = "stablehlo.reshape"(%210) : (tensor<64xf32>) -> tensor<64x1xf32>
    %212 = "stablehlo.negate"(%211) : (tensor<64x1xf32>) -> tensor<64x1xf32>
    %213 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<64x1xf32>) -> tensor<64x4xf32>
    %214 = "stablehlo.divide"(%184, %213) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %215 = "stablehlo.multiply"(%212, %7) : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    %216 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %217 = "stablehlo.reduce"(%215, %216) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %223 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%223) : (tensor<f32>) -> ()
    }) : (tensor<64x1xf32>, tensor<f32>) -> tensor<64xf32>
    %218 = "stablehlo.broadcast_in_dim"(%217) <{broadcast_dimensions = array<i64: 0>}> : (tensor<64xf32>) -> tensor<64x4xf32>
    %219 = "stablehlo.multiply"(%arg0, %218) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %220 = "stablehlo.multiply"(%218, %arg0) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %221 = "stablehlo.add"(%219, %220) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    %222 = "stablehlo.add"(%214, %221) : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
    "func.return"(%137, %222, %205, %188) : (tensor<f32>, tensor<64x4xf32>, tensor<64x4xf32>, tensor<f32>) -> ()
  }) : () -> ()
}) {memfit.pipeline = "builtin.module(memfit-inline)", mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

