// argmin along the split dimension: the variadic (value, index) reduce is
// accumulated by reducing the stacked (running, chunk) pairs with the op's
// own body; the iota of indices is rebuilt per chunk, offset by its start.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=900KB})' | FileCheck %s

// CHECK-LABEL: func.func public @nearest
// CHECK: "stablehlo.while"
// CHECK: %[[START:.*]] = "stablehlo.multiply"
// CHECK: %[[IOTA:.*]] = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x14336xi32>
// CHECK: %[[OFF:.*]] = "stablehlo.convert"(%[[START]])
// CHECK: %[[B:.*]] = "stablehlo.broadcast_in_dim"(%[[OFF]])
// CHECK: %[[IDX:.*]] = "stablehlo.add"(%[[IOTA]], %[[B]])
// CHECK: %[[P:.*]]:2 = "stablehlo.reduce"(%{{.*}}, %[[IDX]],
// CHECK: "stablehlo.concatenate"
// CHECK: "stablehlo.concatenate"
// CHECK: "stablehlo.reduce"({{.*}}dimensions = array<i64: 0>
// CHECK: -> (tensor<2xf32>, tensor<2xi32>)
// CHECK: return
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2xf32>, tensor<100000xf32>) -> tensor<2xi32>, sym_name = "nearest", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<2xf32>, %arg6: tensor<100000xf32>):
    %13 = "stablehlo.broadcast_in_dim"(%arg5) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x1xf32>
    %14 = "stablehlo.broadcast_in_dim"(%arg6) <{broadcast_dimensions = array<i64: 1>}> : (tensor<100000xf32>) -> tensor<1x100000xf32>
    %15 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x1xf32>) -> tensor<2x100000xf32>
    %16 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x100000xf32>) -> tensor<2x100000xf32>
    %17 = "stablehlo.subtract"(%15, %16) : (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %18 = "stablehlo.abs"(%17) : (tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %19 = "func.call"(%18) <{callee = @argmin}> : (tensor<2x100000xf32>) -> tensor<2xi32>
    "func.return"(%19) : (tensor<2xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2x100000xf32>) -> tensor<2xi32>, sym_name = "argmin", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2x100000xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x100000xi32>
    %1 = "stablehlo.constant"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:2 = "stablehlo.reduce"(%arg0, %0, %1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<f32>, %arg4: tensor<i32>):
      %4 = "stablehlo.compare"(%arg1, %arg3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %5 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = "stablehlo.or"(%4, %5) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %7 = "stablehlo.compare"(%arg1, %arg3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %8 = "stablehlo.compare"(%arg2, %arg4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %9 = "stablehlo.and"(%7, %8) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %10 = "stablehlo.or"(%6, %9) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %11 = "stablehlo.select"(%6, %arg1, %arg3) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %12 = "stablehlo.select"(%10, %arg2, %arg4) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%11, %12) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<2x100000xf32>, tensor<2x100000xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
    "func.return"(%3#1) : (tensor<2xi32>) -> ()
  }) : () -> ()
}) : () -> ()
