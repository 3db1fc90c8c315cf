// A program that already loops (lax.fori_loop): the 1000x1000 temporary
// lives in the loop's body, so the split happens inside that body and the
// new loop nests in the old one.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=300KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=300KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<1000x1000xf32>

// CHECK-LABEL: func.func public @nested
// CHECK: "stablehlo.while"
// CHECK: comparison_direction LT
// CHECK: ^bb0(%[[X:.*]]: tensor<1000xf32>, %[[Y:.*]]: tensor<1000xf32>, %{{.*}}: tensor<i32>, %[[K:.*]]: tensor<i32>, %{{.*}}: tensor<1000xf32>):
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: 32>}>
// CHECK: "stablehlo.exponential"{{.*}}-> tensor<32x1000xf32>
// CHECK: "stablehlo.dynamic_update_slice"
// CHECK: "stablehlo.return"
// CHECK: "stablehlo.optimization_barrier"
// CHECK: "stablehlo.exponential"{{.*}}-> tensor<8x1000xf32>
// CHECK: "stablehlo.return"
// CHECK: return
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>, sym_name = "nested", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<1000xf32>, %arg1: tensor<1000xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1000xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %4:5 = "stablehlo.while"(%arg0, %arg1, %3, %2, %1) ({
    ^bb0(%arg9: tensor<1000xf32>, %arg10: tensor<1000xf32>, %arg11: tensor<i32>, %arg12: tensor<i32>, %arg13: tensor<1000xf32>):
      %22 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %23 = "stablehlo.compare"(%arg11, %22) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%23) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<1000xf32>, %arg3: tensor<1000xf32>, %arg4: tensor<i32>, %arg5: tensor<i32>, %arg6: tensor<1000xf32>):
      %5 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %6 = "stablehlo.add"(%arg5, %5) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %7 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1000xf32>) -> tensor<1000x1xf32>
      %8 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 1>}> : (tensor<1000xf32>) -> tensor<1x1000xf32>
      %9 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1000x1xf32>) -> tensor<1000x1000xf32>
      %10 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1000xf32>) -> tensor<1000x1000xf32>
      %11 = "stablehlo.multiply"(%9, %10) : (tensor<1000x1000xf32>, tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
      %12 = "stablehlo.convert"(%arg5) : (tensor<i32>) -> tensor<f32>
      %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1000x1000xf32>
      %14 = "stablehlo.add"(%11, %13) : (tensor<1000x1000xf32>, tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
      %15 = "stablehlo.exponential"(%14) : (tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
      %16 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %17 = "stablehlo.reduce"(%15, %16) <{dimensions = array<i64: 1>}> ({
      ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
        %21 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%21) : (tensor<f32>) -> ()
      }) : (tensor<1000x1000xf32>, tensor<f32>) -> tensor<1000xf32>
      %18 = "stablehlo.add"(%arg6, %17) : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
      %19 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %20 = "stablehlo.add"(%arg4, %19) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg2, %arg3, %20, %6, %18) : (tensor<1000xf32>, tensor<1000xf32>, tensor<i32>, tensor<i32>, tensor<1000xf32>) -> ()
    }) : (tensor<1000xf32>, tensor<1000xf32>, tensor<i32>, tensor<i32>, tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>, tensor<i32>, tensor<i32>, tensor<1000xf32>)
    "func.return"(%4#4) : (tensor<1000xf32>) -> ()
  }) : () -> ()
}) : () -> ()
