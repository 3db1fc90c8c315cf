// A split along a dimension that an op reaches through its indices, with
// one index component: a scatter into a chunk reads the indices less the
// chunk's start (XLA drops the updates that then fall outside it), and a
// gather of one element per row (take_along_axis) keeps, per chunk, the
// elements whose clamped index falls in it.
// RUN: memfit-opt %s --split-input-file --pass-pipeline='builtin.module(memfit-split{memory-limit=300KB})' | FileCheck %s

// Adding into a computed vector of 100000 at 100 indices, then a sum of
// squares: the vector is split into chunks, each scattering the updates
// that land in it.
// CHECK-LABEL: func.func public @scatter_into_chunks
// CHECK: "stablehlo.while"
// CHECK: %[[START:.*]] = "stablehlo.multiply"(%arg3, %{{.*}}) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[S32:.*]] = "stablehlo.convert"(%[[START]]) : (tensor<i64>) -> tensor<i32>
// CHECK: %[[OFF:.*]] = "stablehlo.broadcast_in_dim"(%[[S32]]) {{.*}} -> tensor<100x1xi32>
// CHECK: %[[IDX:.*]] = "stablehlo.subtract"(%{{.*}}, %[[OFF]]) : (tensor<100x1xi32>, tensor<100x1xi32>) -> tensor<100x1xi32>
// CHECK-NEXT: "stablehlo.scatter"(%{{.*}}, %[[IDX]], %{{.*}})
// CHECK: }) : (tensor<[[C:[0-9]+]]xf32>, tensor<100x1xi32>, tensor<100xf32>) -> tensor<[[C]]xf32>
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<f32>, tensor<100xi32>, tensor<100xf32>) -> tensor<f32>, sym_name = "scatter_into_chunks", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<100xi32>, %arg2: tensor<100xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<100000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<100000xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<100000xf32>
    %3 = "stablehlo.sine"(%2) : (tensor<100000xf32>) -> tensor<100000xf32>
    %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<100xi32>
    %6 = "stablehlo.compare"(%arg1, %5) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<100xi32>, tensor<100xi32>) -> tensor<100xi1>
    %7 = "stablehlo.constant"() <{value = dense<100000> : tensor<i32>}> : () -> tensor<i32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<100xi32>
    %9 = "stablehlo.add"(%arg1, %8) : (tensor<100xi32>, tensor<100xi32>) -> tensor<100xi32>
    %10 = "stablehlo.select"(%6, %9, %arg1) : (tensor<100xi1>, tensor<100xi32>, tensor<100xi32>) -> tensor<100xi32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0>}> : (tensor<100xi32>) -> tensor<100x1xi32>
    %12 = "stablehlo.scatter"(%3, %11, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %17 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%17) : (tensor<f32>) -> ()
    }) : (tensor<100000xf32>, tensor<100x1xi32>, tensor<100xf32>) -> tensor<100000xf32>
    %13 = "stablehlo.multiply"(%12, %12) : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<100000xf32>
    %14 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.reduce"(%13, %14) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %16 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<100000xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%15) : (tensor<f32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// take_along_axis of 4 rows of 100000 computed columns, as optax picks the
// label's logit, and the rows' sums: one row takes 390 KiB, so the split
// runs along the columns and the gather becomes a per-chunk select.
// CHECK-LABEL: func.func public @take_along_axis_by_columns
// CHECK: "stablehlo.while"
// CHECK: %[[LO:.*]] = "stablehlo.maximum"(%{{.*}}, %{{.*}}) : (tensor<4x1x1xi32>
// CHECK: %[[HI:.*]] = "stablehlo.minimum"(%[[LO]], %{{.*}}) : (tensor<4x1x1xi32>
// CHECK: %[[LOCAL:.*]] = "stablehlo.subtract"(%[[HI]], %{{.*}}) : (tensor<4x1x1xi32>
// CHECK: %[[GE:.*]] = "stablehlo.compare"(%[[LOCAL]], %{{.*}}) {{.*}}comparison_direction GE
// CHECK: %[[LT:.*]] = "stablehlo.compare"(%[[LOCAL]], %{{.*}}) {{.*}}comparison_direction LT
// CHECK: %[[IN:.*]] = "stablehlo.and"(%[[GE]], %[[LT]])
// CHECK: %[[G:.*]] = "stablehlo.gather"(%{{.*}}, %[[LOCAL]]) {{.*}} : (tensor<4x[[C:[0-9]+]]xf32>, tensor<4x1x1xi32>) -> tensor<4x1xf32>
// CHECK: %[[M:.*]] = "stablehlo.reshape"(%[[IN]]) : (tensor<4x1x1xi1>) -> tensor<4x1xi1>
// CHECK: %[[MR:.*]] = "stablehlo.broadcast_in_dim"(%[[M]]) <{broadcast_dimensions = array<i64: 0, 1>}>
// CHECK: "stablehlo.select"(%[[MR]], %[[G]], %{{.*}}) : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>)
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<f32>, tensor<4x1x1xi32>) -> (tensor<4x1xf32>, tensor<4xf32>), sym_name = "take_along_axis_by_columns", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<4x1x1xi32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<4x100000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x100000xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<4x100000xf32>, tensor<4x100000xf32>) -> tensor<4x100000xf32>
    %3 = "stablehlo.sine"(%2) : (tensor<4x100000xf32>) -> tensor<4x100000xf32>
    %4 = "stablehlo.gather"(%3, %arg1) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<4x100000xf32>, tensor<4x1x1xi32>) -> tensor<4x1xf32>
    %5 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.reduce"(%3, %5) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %7 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%7) : (tensor<f32>) -> ()
    }) : (tensor<4x100000xf32>, tensor<f32>) -> tensor<4xf32>
    "func.return"(%4, %6) : (tensor<4x1xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
