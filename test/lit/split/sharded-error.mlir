// RUN: not memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=1MiB})' -o /dev/null 2>&1 | FileCheck %s
//
// The only dimension a split could chunk is sharded over the mesh (the sort
// needs the other whole): memfit does not chunk it, and says so.
// CHECK: error: memfit-split: cannot fit @only_sharded_dim into 1.00 MiB
// CHECK-SAME: chunks along dimension 0 of 'stablehlo.dot_general' (at {{.*}}sharded-error.mlir:9:8) would cut a dimension sharded over 8 devices, and memfit chunks only unsharded dimensions
"sdy.mesh"() <{mesh = #sdy.mesh<["d"=8]>, sym_name = "mesh"}> : () -> ()
func.func @only_sharded_dim(%x: tensor<8192x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}, %w: tensor<16x512xf32>) -> tensor<8192xf32> {
  %0 = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8192x16xf32>, tensor<16x512xf32>) -> tensor<8192x512xf32>
  %1 = "stablehlo.sort"(%0) <{dimension = 1 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }) : (tensor<8192x512xf32>) -> tensor<8192x512xf32>
  %2 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8192x512xf32>
  %3 = "stablehlo.multiply"(%1, %2) : (tensor<8192x512xf32>, tensor<8192x512xf32>) -> tensor<8192x512xf32>
  %z = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %4 = "stablehlo.reduce"(%3, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<8192x512xf32>, tensor<f32>) -> tensor<8192xf32>
  return %4 : tensor<8192xf32>
}
