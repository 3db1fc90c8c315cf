// When a scatter or gather stops a split, the error names the scatter, which
// operand and dimension the split reached it through, and why that
// dimension must stay whole.
// RUN: not memfit-opt %s --split-input-file --pass-pipeline='builtin.module(memfit-split{memory-limit=300KB})' 2>&1 | FileCheck %s

// x.at[idx].set(u): a replacing update computation. With repeated indices
// the last update wins, and chunks scattered one after another could change
// which one that is; the split reaches it through the indices (operand #1).
// CHECK: error: memfit-split: cannot fit @scatter_set
// CHECK-SAME: 'stablehlo.scatter' (at {{.*}}scatter-errors.mlir:{{[0-9]+}}:{{[0-9]+}}) needs the split dimension whole (dimension 0 of operand #1): it is a scatter dimension of the updates and indices, and the scatter's update computation is not an addition, multiplication, maximum or minimum

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<100x8xf32>, tensor<20000xi32>, tensor<20000xf32>, tensor<8xf32>) -> tensor<100x8xf32>, sym_name = "scatter_set", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<100x8xf32>, %arg1: tensor<20000xi32>, %arg2: tensor<20000xf32>, %arg3: tensor<8xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<20000xf32>) -> tensor<20000x1xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<20000x1xf32>) -> tensor<20000x8xf32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x8xf32>) -> tensor<20000x8xf32>
    %4 = "stablehlo.multiply"(%2, %3) : (tensor<20000x8xf32>, tensor<20000x8xf32>) -> tensor<20000x8xf32>
    %5 = "stablehlo.sine"(%4) : (tensor<20000x8xf32>) -> tensor<20000x8xf32>
    %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<20000xi32>
    %8 = "stablehlo.compare"(%arg1, %7) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi1>
    %9 = "stablehlo.constant"() <{value = dense<100> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<20000xi32>
    %11 = "stablehlo.add"(%arg1, %10) : (tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi32>
    %12 = "stablehlo.select"(%8, %11, %arg1) : (tensor<20000xi1>, tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0>}> : (tensor<20000xi32>) -> tensor<20000x1xi32>
    %14 = "stablehlo.scatter"(%arg0, %13, %5) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      "stablehlo.return"(%arg5) : (tensor<f32>) -> ()
    }) : (tensor<100x8xf32>, tensor<20000x1xi32>, tensor<20000x8xf32>) -> tensor<100x8xf32>
    "func.return"(%14) : (tensor<100x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Adding into a computed matrix at (row, column) pairs: two index
// components address the dimensions the split would chunk (the scatter's
// input, operand 0); a chunk of updates may land anywhere along either.
// CHECK: error: memfit-split: cannot fit @scatter_indexed
// CHECK-SAME: 'stablehlo.scatter' (at {{.*}}scatter-errors.mlir:{{[0-9]+}}:{{[0-9]+}}) needs the split dimension whole (operand dimension {{[01]}}): the scatter's indices address this dimension of its input: any chunk of updates may land anywhere along it
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<f32>, tensor<100x2xi32>, tensor<100xf32>) -> tensor<f32>, sym_name = "scatter_indexed", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<100x2xi32>, %arg2: tensor<100xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<1000x100xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1000x100xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<1000x100xf32>, tensor<1000x100xf32>) -> tensor<1000x100xf32>
    %3 = "stablehlo.sine"(%2) : (tensor<1000x100xf32>) -> tensor<1000x100xf32>
    %12 = "stablehlo.scatter"(%3, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %17 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%17) : (tensor<f32>) -> ()
    }) : (tensor<1000x100xf32>, tensor<100x2xi32>, tensor<100xf32>) -> tensor<1000x100xf32>
    %13 = "stablehlo.multiply"(%12, %12) : (tensor<1000x100xf32>, tensor<1000x100xf32>) -> tensor<1000x100xf32>
    %14 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.reduce"(%13, %14) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %16 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<1000x100xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%15) : (tensor<f32>) -> ()
  }) : () -> ()
}) : () -> ()
