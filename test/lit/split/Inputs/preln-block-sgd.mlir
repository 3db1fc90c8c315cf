"builtin.module"() <{sym_name = "jit_sgd_step"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}], function_type = (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<96x16xf32>, tensor<96x16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>), res_attrs = [{jax.result_info = "result['b1']"}, {jax.result_info = "result['b2']"}, {jax.result_info = "result['g1']"}, {jax.result_info = "result['g2']"}, {jax.result_info = "result['w1']"}, {jax.result_info = "result['w2']"}, {jax.result_info = "result['wk']"}, {jax.result_info = "result['wo']"}, {jax.result_info = "result['wq']"}, {jax.result_info = "result['wv']"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16xf32>, %arg4: tensor<16x64xf32>, %arg5: tensor<64x16xf32>, %arg6: tensor<16x16xf32>, %arg7: tensor<16x16xf32>, %arg8: tensor<16x16xf32>, %arg9: tensor<16x16xf32>, %arg10: tensor<96x16xf32>, %arg11: tensor<96x16xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce"(%arg10, %0) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg52: tensor<f32>, %arg53: tensor<f32>):
      %318 = "stablehlo.add"(%arg52, %arg53) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%318) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<96xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<96xf32>) -> tensor<96x1xf32>
    %3 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x1xf32>
    %5 = "stablehlo.divide"(%2, %4) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<96x1xf32>) -> tensor<96x16xf32>
    %7 = "stablehlo.subtract"(%arg10, %6) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %8 = "stablehlo.multiply"(%7, %7) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.reduce"(%8, %9) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg50: tensor<f32>, %arg51: tensor<f32>):
      %317 = "stablehlo.add"(%arg50, %arg51) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%317) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<96xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0>}> : (tensor<96xf32>) -> tensor<96x1xf32>
    %12 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x1xf32>
    %14 = "stablehlo.divide"(%11, %13) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %15 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<96x1xf32>) -> tensor<96x16xf32>
    %16 = "stablehlo.subtract"(%arg10, %15) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %17 = "stablehlo.constant"() <{value = dense<9.99999974E-6> : tensor<f32>}> : () -> tensor<f32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x1xf32>
    %19 = "stablehlo.add"(%14, %18) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %20 = "stablehlo.rsqrt"(%19) : (tensor<96x1xf32>) -> tensor<96x1xf32>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<96x1xf32>) -> tensor<96x16xf32>
    %22 = "stablehlo.multiply"(%16, %21) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %23 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<1x16xf32>
    %24 = "stablehlo.broadcast_in_dim"(%23) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<96x16xf32>
    %25 = "stablehlo.multiply"(%22, %24) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %26 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<1x16xf32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<96x16xf32>
    %28 = "stablehlo.add"(%25, %27) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %29 = "stablehlo.dot_general"(%28, %arg8) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<16x16xf32>) -> tensor<96x16xf32>
    %30 = "stablehlo.reshape"(%29) : (tensor<96x16xf32>) -> tensor<96x4x4xf32>
    %31 = "stablehlo.dot_general"(%28, %arg6) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<16x16xf32>) -> tensor<96x16xf32>
    %32 = "stablehlo.reshape"(%31) : (tensor<96x16xf32>) -> tensor<96x4x4xf32>
    %33 = "stablehlo.dot_general"(%28, %arg9) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<16x16xf32>) -> tensor<96x16xf32>
    %34 = "stablehlo.reshape"(%33) : (tensor<96x16xf32>) -> tensor<96x4x4xf32>
    %35 = "stablehlo.dot_general"(%30, %32) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x4x4xf32>, tensor<96x4x4xf32>) -> tensor<4x96x96xf32>
    %36 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %37 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x96x96xf32>
    %38 = "stablehlo.divide"(%35, %37) : (tensor<4x96x96xf32>, tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %39 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %40 = "stablehlo.reduce"(%38, %39) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg48: tensor<f32>, %arg49: tensor<f32>):
      %316 = "stablehlo.maximum"(%arg48, %arg49) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%316) : (tensor<f32>) -> ()
    }) : (tensor<4x96x96xf32>, tensor<f32>) -> tensor<4x96xf32>
    %41 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %42 = "stablehlo.broadcast_in_dim"(%41) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x96xf32>
    %43 = "stablehlo.maximum"(%42, %40) : (tensor<4x96xf32>, tensor<4x96xf32>) -> tensor<4x96xf32>
    %44 = "stablehlo.broadcast_in_dim"(%43) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x96xf32>) -> tensor<4x96x1xf32>
    %45 = "stablehlo.broadcast_in_dim"(%44) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<4x96x1xf32>) -> tensor<4x96x96xf32>
    %46 = "stablehlo.subtract"(%38, %45) : (tensor<4x96x96xf32>, tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %47 = "stablehlo.exponential"(%46) : (tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %48 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %49 = "stablehlo.reduce"(%47, %48) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg46: tensor<f32>, %arg47: tensor<f32>):
      %315 = "stablehlo.add"(%arg46, %arg47) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%315) : (tensor<f32>) -> ()
    }) : (tensor<4x96x96xf32>, tensor<f32>) -> tensor<4x96xf32>
    %50 = "stablehlo.broadcast_in_dim"(%49) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x96xf32>) -> tensor<4x96x1xf32>
    %51 = "stablehlo.broadcast_in_dim"(%50) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<4x96x1xf32>) -> tensor<4x96x96xf32>
    %52 = "stablehlo.divide"(%47, %51) : (tensor<4x96x96xf32>, tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %53 = "stablehlo.multiply"(%50, %50) : (tensor<4x96x1xf32>, tensor<4x96x1xf32>) -> tensor<4x96x1xf32>
    %54 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %55 = "stablehlo.broadcast_in_dim"(%54) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x96x1xf32>
    %56 = "stablehlo.divide"(%55, %53) : (tensor<4x96x1xf32>, tensor<4x96x1xf32>) -> tensor<4x96x1xf32>
    %57 = "stablehlo.dot_general"(%34, %52) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x4x4xf32>, tensor<4x96x96xf32>) -> tensor<4x4x96xf32>
    %58 = "stablehlo.transpose"(%57) <{permutation = array<i64: 2, 0, 1>}> : (tensor<4x4x96xf32>) -> tensor<96x4x4xf32>
    %59 = "stablehlo.reshape"(%58) : (tensor<96x4x4xf32>) -> tensor<96x16xf32>
    %60 = "stablehlo.dot_general"(%59, %arg7) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<16x16xf32>) -> tensor<96x16xf32>
    %61 = "stablehlo.add"(%arg10, %60) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %62 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %63 = "stablehlo.reduce"(%61, %62) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg44: tensor<f32>, %arg45: tensor<f32>):
      %314 = "stablehlo.add"(%arg44, %arg45) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%314) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<96xf32>
    %64 = "stablehlo.broadcast_in_dim"(%63) <{broadcast_dimensions = array<i64: 0>}> : (tensor<96xf32>) -> tensor<96x1xf32>
    %65 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %66 = "stablehlo.broadcast_in_dim"(%65) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x1xf32>
    %67 = "stablehlo.divide"(%64, %66) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %68 = "stablehlo.broadcast_in_dim"(%67) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<96x1xf32>) -> tensor<96x16xf32>
    %69 = "stablehlo.subtract"(%61, %68) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %70 = "stablehlo.multiply"(%69, %69) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %71 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %72 = "stablehlo.broadcast_in_dim"(%71) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x16xf32>
    %73 = "stablehlo.multiply"(%72, %69) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %74 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %75 = "stablehlo.reduce"(%70, %74) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg42: tensor<f32>, %arg43: tensor<f32>):
      %313 = "stablehlo.add"(%arg42, %arg43) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%313) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<96xf32>
    %76 = "stablehlo.broadcast_in_dim"(%75) <{broadcast_dimensions = array<i64: 0>}> : (tensor<96xf32>) -> tensor<96x1xf32>
    %77 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %78 = "stablehlo.broadcast_in_dim"(%77) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x1xf32>
    %79 = "stablehlo.divide"(%76, %78) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %80 = "stablehlo.broadcast_in_dim"(%67) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<96x1xf32>) -> tensor<96x16xf32>
    %81 = "stablehlo.subtract"(%61, %80) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %82 = "stablehlo.constant"() <{value = dense<9.99999974E-6> : tensor<f32>}> : () -> tensor<f32>
    %83 = "stablehlo.broadcast_in_dim"(%82) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x1xf32>
    %84 = "stablehlo.add"(%79, %83) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %85 = "stablehlo.rsqrt"(%84) : (tensor<96x1xf32>) -> tensor<96x1xf32>
    %86 = "stablehlo.divide"(%85, %84) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %87 = "stablehlo.constant"() <{value = dense<-5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %88 = "stablehlo.broadcast_in_dim"(%87) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x1xf32>
    %89 = "stablehlo.multiply"(%88, %86) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %90 = "stablehlo.broadcast_in_dim"(%85) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<96x1xf32>) -> tensor<96x16xf32>
    %91 = "stablehlo.multiply"(%81, %90) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %92 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<1x16xf32>
    %93 = "stablehlo.broadcast_in_dim"(%92) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<96x16xf32>
    %94 = "stablehlo.multiply"(%91, %93) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %95 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<1x16xf32>
    %96 = "stablehlo.broadcast_in_dim"(%95) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<96x16xf32>
    %97 = "stablehlo.add"(%94, %96) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %98 = "stablehlo.dot_general"(%97, %arg4) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<16x64xf32>) -> tensor<96x64xf32>
    %99 = "stablehlo.multiply"(%98, %98) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %100 = "stablehlo.multiply"(%99, %98) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %101 = "stablehlo.multiply"(%98, %98) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %102 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %103 = "stablehlo.broadcast_in_dim"(%102) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %104 = "stablehlo.multiply"(%103, %101) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %105 = "stablehlo.constant"() <{value = dense<4.471500e-02> : tensor<f32>}> : () -> tensor<f32>
    %106 = "stablehlo.broadcast_in_dim"(%105) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %107 = "stablehlo.multiply"(%106, %100) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %108 = "stablehlo.add"(%98, %107) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %109 = "stablehlo.constant"() <{value = dense<0.797884583> : tensor<f32>}> : () -> tensor<f32>
    %110 = "stablehlo.broadcast_in_dim"(%109) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %111 = "stablehlo.multiply"(%110, %108) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %112 = "stablehlo.tanh"(%111) : (tensor<96x64xf32>) -> tensor<96x64xf32>
    %113 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %114 = "stablehlo.broadcast_in_dim"(%113) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %115 = "stablehlo.add"(%114, %112) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %116 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %117 = "stablehlo.broadcast_in_dim"(%116) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %118 = "stablehlo.subtract"(%117, %112) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %119 = "stablehlo.multiply"(%115, %118) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %120 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %121 = "stablehlo.broadcast_in_dim"(%120) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %122 = "stablehlo.add"(%121, %112) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %123 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %124 = "stablehlo.broadcast_in_dim"(%123) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %125 = "stablehlo.multiply"(%124, %122) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %126 = "stablehlo.multiply"(%98, %125) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %127 = "stablehlo.dot_general"(%126, %arg5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x64xf32>, tensor<64x16xf32>) -> tensor<96x16xf32>
    %128 = "stablehlo.add"(%61, %127) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %129 = "stablehlo.subtract"(%128, %arg11) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %130 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %131 = "stablehlo.broadcast_in_dim"(%130) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x16xf32>
    %132 = "stablehlo.multiply"(%131, %129) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %133 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %134 = "stablehlo.constant"() <{value = dense<1.536000e+03> : tensor<f32>}> : () -> tensor<f32>
    %135 = "stablehlo.divide"(%133, %134) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %136 = "stablehlo.broadcast_in_dim"(%135) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x16xf32>
    %137 = "stablehlo.multiply"(%136, %132) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %138 = "stablehlo.dot_general"(%137, %126) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<96x64xf32>) -> tensor<16x64xf32>
    %139 = "stablehlo.transpose"(%138) <{permutation = array<i64: 1, 0>}> : (tensor<16x64xf32>) -> tensor<64x16xf32>
    %140 = "stablehlo.dot_general"(%137, %arg5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<64x16xf32>) -> tensor<96x64xf32>
    %141 = "stablehlo.multiply"(%98, %140) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %142 = "stablehlo.multiply"(%140, %125) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %143 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %144 = "stablehlo.broadcast_in_dim"(%143) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %145 = "stablehlo.multiply"(%144, %141) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %146 = "stablehlo.multiply"(%145, %119) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %147 = "stablehlo.constant"() <{value = dense<0.797884583> : tensor<f32>}> : () -> tensor<f32>
    %148 = "stablehlo.broadcast_in_dim"(%147) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %149 = "stablehlo.multiply"(%148, %146) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %150 = "stablehlo.add"(%142, %149) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %151 = "stablehlo.constant"() <{value = dense<4.471500e-02> : tensor<f32>}> : () -> tensor<f32>
    %152 = "stablehlo.broadcast_in_dim"(%151) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x64xf32>
    %153 = "stablehlo.multiply"(%152, %149) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %154 = "stablehlo.multiply"(%153, %104) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %155 = "stablehlo.add"(%150, %154) : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
    %156 = "stablehlo.dot_general"(%155, %97) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x64xf32>, tensor<96x16xf32>) -> tensor<64x16xf32>
    %157 = "stablehlo.transpose"(%156) <{permutation = array<i64: 1, 0>}> : (tensor<64x16xf32>) -> tensor<16x64xf32>
    %158 = "stablehlo.dot_general"(%155, %arg4) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x64xf32>, tensor<16x64xf32>) -> tensor<96x16xf32>
    %159 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %160 = "stablehlo.reduce"(%158, %159) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg40: tensor<f32>, %arg41: tensor<f32>):
      %312 = "stablehlo.add"(%arg40, %arg41) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%312) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<16xf32>
    %161 = "stablehlo.reshape"(%160) : (tensor<16xf32>) -> tensor<1x16xf32>
    %162 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %163 = "stablehlo.reduce"(%161, %162) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg38: tensor<f32>, %arg39: tensor<f32>):
      %311 = "stablehlo.add"(%arg38, %arg39) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%311) : (tensor<f32>) -> ()
    }) : (tensor<1x16xf32>, tensor<f32>) -> tensor<16xf32>
    %164 = "stablehlo.multiply"(%91, %158) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %165 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %166 = "stablehlo.reduce"(%164, %165) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg36: tensor<f32>, %arg37: tensor<f32>):
      %310 = "stablehlo.add"(%arg36, %arg37) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%310) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<16xf32>
    %167 = "stablehlo.reshape"(%166) : (tensor<16xf32>) -> tensor<1x16xf32>
    %168 = "stablehlo.broadcast_in_dim"(%92) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<96x16xf32>
    %169 = "stablehlo.multiply"(%158, %168) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %170 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %171 = "stablehlo.reduce"(%167, %170) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg34: tensor<f32>, %arg35: tensor<f32>):
      %309 = "stablehlo.add"(%arg34, %arg35) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%309) : (tensor<f32>) -> ()
    }) : (tensor<1x16xf32>, tensor<f32>) -> tensor<16xf32>
    %172 = "stablehlo.multiply"(%81, %169) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %173 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %174 = "stablehlo.reduce"(%172, %173) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg32: tensor<f32>, %arg33: tensor<f32>):
      %308 = "stablehlo.add"(%arg32, %arg33) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%308) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<96xf32>
    %175 = "stablehlo.reshape"(%174) : (tensor<96xf32>) -> tensor<96x1xf32>
    %176 = "stablehlo.broadcast_in_dim"(%85) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<96x1xf32>) -> tensor<96x16xf32>
    %177 = "stablehlo.multiply"(%169, %176) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %178 = "stablehlo.multiply"(%175, %89) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %179 = "stablehlo.negate"(%177) : (tensor<96x16xf32>) -> tensor<96x16xf32>
    %180 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %181 = "stablehlo.reduce"(%179, %180) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg30: tensor<f32>, %arg31: tensor<f32>):
      %307 = "stablehlo.add"(%arg30, %arg31) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%307) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<96xf32>
    %182 = "stablehlo.reshape"(%181) : (tensor<96xf32>) -> tensor<96x1xf32>
    %183 = "stablehlo.add"(%137, %177) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %184 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %185 = "stablehlo.broadcast_in_dim"(%184) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x1xf32>
    %186 = "stablehlo.divide"(%178, %185) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %187 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %188 = "stablehlo.reduce"(%186, %187) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg28: tensor<f32>, %arg29: tensor<f32>):
      %306 = "stablehlo.add"(%arg28, %arg29) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%306) : (tensor<f32>) -> ()
    }) : (tensor<96x1xf32>, tensor<f32>) -> tensor<96xf32>
    %189 = "stablehlo.broadcast_in_dim"(%188) <{broadcast_dimensions = array<i64: 0>}> : (tensor<96xf32>) -> tensor<96x16xf32>
    %190 = "stablehlo.multiply"(%189, %73) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %191 = "stablehlo.negate"(%190) : (tensor<96x16xf32>) -> tensor<96x16xf32>
    %192 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %193 = "stablehlo.reduce"(%191, %192) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg26: tensor<f32>, %arg27: tensor<f32>):
      %305 = "stablehlo.add"(%arg26, %arg27) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%305) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<96xf32>
    %194 = "stablehlo.reshape"(%193) : (tensor<96xf32>) -> tensor<96x1xf32>
    %195 = "stablehlo.add"(%183, %190) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %196 = "stablehlo.add"(%182, %194) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %197 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %198 = "stablehlo.broadcast_in_dim"(%197) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<96x1xf32>
    %199 = "stablehlo.divide"(%196, %198) : (tensor<96x1xf32>, tensor<96x1xf32>) -> tensor<96x1xf32>
    %200 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %201 = "stablehlo.reduce"(%199, %200) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg24: tensor<f32>, %arg25: tensor<f32>):
      %304 = "stablehlo.add"(%arg24, %arg25) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%304) : (tensor<f32>) -> ()
    }) : (tensor<96x1xf32>, tensor<f32>) -> tensor<96xf32>
    %202 = "stablehlo.broadcast_in_dim"(%201) <{broadcast_dimensions = array<i64: 0>}> : (tensor<96xf32>) -> tensor<96x16xf32>
    %203 = "stablehlo.add"(%195, %202) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %204 = "stablehlo.dot_general"(%203, %59) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<16x16xf32>
    %205 = "stablehlo.transpose"(%204) <{permutation = array<i64: 1, 0>}> : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %206 = "stablehlo.dot_general"(%203, %arg7) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<16x16xf32>) -> tensor<96x16xf32>
    %207 = "stablehlo.reshape"(%206) : (tensor<96x16xf32>) -> tensor<96x4x4xf32>
    %208 = "stablehlo.transpose"(%207) <{permutation = array<i64: 1, 2, 0>}> : (tensor<96x4x4xf32>) -> tensor<4x4x96xf32>
    %209 = "stablehlo.dot_general"(%208, %34) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x4x96xf32>, tensor<96x4x4xf32>) -> tensor<4x96x96xf32>
    %210 = "stablehlo.dot_general"(%208, %52) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x4x96xf32>, tensor<4x96x96xf32>) -> tensor<4x4x96xf32>
    %211 = "stablehlo.transpose"(%210) <{permutation = array<i64: 2, 0, 1>}> : (tensor<4x4x96xf32>) -> tensor<96x4x4xf32>
    %212 = "stablehlo.broadcast_in_dim"(%56) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<4x96x1xf32>) -> tensor<4x96x96xf32>
    %213 = "stablehlo.multiply"(%209, %212) : (tensor<4x96x96xf32>, tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %214 = "stablehlo.multiply"(%213, %47) : (tensor<4x96x96xf32>, tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %215 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %216 = "stablehlo.reduce"(%214, %215) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg22: tensor<f32>, %arg23: tensor<f32>):
      %303 = "stablehlo.add"(%arg22, %arg23) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%303) : (tensor<f32>) -> ()
    }) : (tensor<4x96x96xf32>, tensor<f32>) -> tensor<4x96xf32>
    %217 = "stablehlo.reshape"(%216) : (tensor<4x96xf32>) -> tensor<4x96x1xf32>
    %218 = "stablehlo.negate"(%217) : (tensor<4x96x1xf32>) -> tensor<4x96x1xf32>
    %219 = "stablehlo.broadcast_in_dim"(%50) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<4x96x1xf32>) -> tensor<4x96x96xf32>
    %220 = "stablehlo.divide"(%209, %219) : (tensor<4x96x96xf32>, tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %221 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %222 = "stablehlo.reduce"(%218, %221) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg20: tensor<f32>, %arg21: tensor<f32>):
      %302 = "stablehlo.add"(%arg20, %arg21) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%302) : (tensor<f32>) -> ()
    }) : (tensor<4x96x1xf32>, tensor<f32>) -> tensor<4x96xf32>
    %223 = "stablehlo.broadcast_in_dim"(%222) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x96xf32>) -> tensor<4x96x96xf32>
    %224 = "stablehlo.add"(%220, %223) : (tensor<4x96x96xf32>, tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %225 = "stablehlo.multiply"(%224, %47) : (tensor<4x96x96xf32>, tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %226 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %227 = "stablehlo.broadcast_in_dim"(%226) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x96x96xf32>
    %228 = "stablehlo.divide"(%225, %227) : (tensor<4x96x96xf32>, tensor<4x96x96xf32>) -> tensor<4x96x96xf32>
    %229 = "stablehlo.dot_general"(%228, %30) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x96x96xf32>, tensor<96x4x4xf32>) -> tensor<4x96x4xf32>
    %230 = "stablehlo.transpose"(%229) <{permutation = array<i64: 1, 0, 2>}> : (tensor<4x96x4xf32>) -> tensor<96x4x4xf32>
    %231 = "stablehlo.dot_general"(%228, %32) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x96x96xf32>, tensor<96x4x4xf32>) -> tensor<4x96x4xf32>
    %232 = "stablehlo.transpose"(%231) <{permutation = array<i64: 1, 0, 2>}> : (tensor<4x96x4xf32>) -> tensor<96x4x4xf32>
    %233 = "stablehlo.reshape"(%211) : (tensor<96x4x4xf32>) -> tensor<96x16xf32>
    %234 = "stablehlo.dot_general"(%233, %28) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<16x16xf32>
    %235 = "stablehlo.transpose"(%234) <{permutation = array<i64: 1, 0>}> : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %236 = "stablehlo.dot_general"(%233, %arg9) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<16x16xf32>) -> tensor<96x16xf32>
    %237 = "stablehlo.reshape"(%230) : (tensor<96x4x4xf32>) -> tensor<96x16xf32>
    %238 = "stablehlo.dot_general"(%237, %28) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<16x16xf32>
    %239 = "stablehlo.transpose"(%238) <{permutation = array<i64: 1, 0>}> : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %240 = "stablehlo.dot_general"(%237, %arg6) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<16x16xf32>) -> tensor<96x16xf32>
    %241 = "stablehlo.add"(%236, %240) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %242 = "stablehlo.reshape"(%232) : (tensor<96x4x4xf32>) -> tensor<96x16xf32>
    %243 = "stablehlo.dot_general"(%242, %28) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<16x16xf32>
    %244 = "stablehlo.transpose"(%243) <{permutation = array<i64: 1, 0>}> : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %245 = "stablehlo.dot_general"(%242, %arg8) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<96x16xf32>, tensor<16x16xf32>) -> tensor<96x16xf32>
    %246 = "stablehlo.add"(%241, %245) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %247 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %248 = "stablehlo.reduce"(%246, %247) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg18: tensor<f32>, %arg19: tensor<f32>):
      %301 = "stablehlo.add"(%arg18, %arg19) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%301) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<16xf32>
    %249 = "stablehlo.reshape"(%248) : (tensor<16xf32>) -> tensor<1x16xf32>
    %250 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %251 = "stablehlo.reduce"(%249, %250) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg16: tensor<f32>, %arg17: tensor<f32>):
      %300 = "stablehlo.add"(%arg16, %arg17) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%300) : (tensor<f32>) -> ()
    }) : (tensor<1x16xf32>, tensor<f32>) -> tensor<16xf32>
    %252 = "stablehlo.multiply"(%22, %246) : (tensor<96x16xf32>, tensor<96x16xf32>) -> tensor<96x16xf32>
    %253 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %254 = "stablehlo.reduce"(%252, %253) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
      %299 = "stablehlo.add"(%arg14, %arg15) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%299) : (tensor<f32>) -> ()
    }) : (tensor<96x16xf32>, tensor<f32>) -> tensor<16xf32>
    %255 = "stablehlo.reshape"(%254) : (tensor<16xf32>) -> tensor<1x16xf32>
    %256 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %257 = "stablehlo.reduce"(%255, %256) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg12: tensor<f32>, %arg13: tensor<f32>):
      %298 = "stablehlo.add"(%arg12, %arg13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%298) : (tensor<f32>) -> ()
    }) : (tensor<1x16xf32>, tensor<f32>) -> tensor<16xf32>
    %258 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %259 = "stablehlo.broadcast_in_dim"(%258) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16xf32>
    %260 = "stablehlo.multiply"(%259, %251) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %261 = "stablehlo.subtract"(%arg0, %260) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %262 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %263 = "stablehlo.broadcast_in_dim"(%262) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16xf32>
    %264 = "stablehlo.multiply"(%263, %163) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %265 = "stablehlo.subtract"(%arg1, %264) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %266 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %267 = "stablehlo.broadcast_in_dim"(%266) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16xf32>
    %268 = "stablehlo.multiply"(%267, %257) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %269 = "stablehlo.subtract"(%arg2, %268) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %270 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %271 = "stablehlo.broadcast_in_dim"(%270) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16xf32>
    %272 = "stablehlo.multiply"(%271, %171) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %273 = "stablehlo.subtract"(%arg3, %272) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    %274 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %275 = "stablehlo.broadcast_in_dim"(%274) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x64xf32>
    %276 = "stablehlo.multiply"(%275, %157) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
    %277 = "stablehlo.subtract"(%arg4, %276) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
    %278 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %279 = "stablehlo.broadcast_in_dim"(%278) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x16xf32>
    %280 = "stablehlo.multiply"(%279, %139) : (tensor<64x16xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
    %281 = "stablehlo.subtract"(%arg5, %280) : (tensor<64x16xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
    %282 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %283 = "stablehlo.broadcast_in_dim"(%282) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x16xf32>
    %284 = "stablehlo.multiply"(%283, %239) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %285 = "stablehlo.subtract"(%arg6, %284) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %286 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %287 = "stablehlo.broadcast_in_dim"(%286) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x16xf32>
    %288 = "stablehlo.multiply"(%287, %205) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %289 = "stablehlo.subtract"(%arg7, %288) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %290 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %291 = "stablehlo.broadcast_in_dim"(%290) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x16xf32>
    %292 = "stablehlo.multiply"(%291, %244) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %293 = "stablehlo.subtract"(%arg8, %292) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %294 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %295 = "stablehlo.broadcast_in_dim"(%294) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<16x16xf32>
    %296 = "stablehlo.multiply"(%295, %235) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %297 = "stablehlo.subtract"(%arg9, %296) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    "func.return"(%261, %265, %269, %273, %277, %281, %285, %289, %293, %297) : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

