// Scatter-add as a split point: a scatter whose update computation combines
// in any order (jax's segment_sum, .at[idx].add, segment_max, the gradient
// of an embedding lookup) is split along its updates' scatter rows. The
// region is chunked along the updates and indices; the scatter becomes a
// sink whose state is its own result: it starts as the scatter's input and
// each chunk scatters into it. The input is the loop's initial state, not
// also carried as a live-in.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=400KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=400KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<20000x8xf32>
// NOBIG-NOT: tensor<256x64x16xf32>

// A GNN layer as jraph writes it: gather node rows by sender, scale each
// edge, segment_sum into the receivers. The zeros jax scatters into are
// the loop's state; the node table is read whole.
// CHECK-LABEL: func.func public @segment_sum
// CHECK: %[[ZEROS:.*]] = "stablehlo.broadcast_in_dim"({{.*}}) -> tensor<100x8xf32>
// CHECK: %[[LOOP:[0-9]+]]:6 = "stablehlo.while"(%{{[0-9]+}}, %[[ZEROS]], %arg1, %arg0, %arg3, %arg2)
// CHECK: ^bb0(%{{.*}}: tensor<i64>, %[[ACC:[a-z0-9]+]]: tensor<100x8xf32>
// CHECK: "stablehlo.gather"(%{{.*}}) {{.*}} : (tensor<100x8xf32>, tensor<[[C:[0-9]+]]x1xi32>) -> tensor<[[C]]x8xf32>
// CHECK: "stablehlo.scatter"(%[[ACC]], %{{.*}}, %{{.*}})
// CHECK: stablehlo.add
// CHECK: (tensor<100x8xf32>, tensor<[[C]]x1xi32>, tensor<[[C]]x8xf32>) -> tensor<100x8xf32>
// The remainder chunk scatters into the loop's result.
// CHECK: %[[BAR:.*]]:2 = "stablehlo.optimization_barrier"(%[[LOOP]]#0, %[[LOOP]]#1)
// CHECK: %[[LAST:.*]] = "stablehlo.scatter"(%[[BAR]]#1,
// CHECK: return %[[LAST]]

// x.at[idx].add(u) into an argument: the argument is the initial state
// and is not carried a second time.
// CHECK-LABEL: func.func public @add_into_argument
// CHECK: "stablehlo.while"(%{{[0-9]+}}, %arg0, %arg2, %arg3, %arg1)
// CHECK: "stablehlo.sine"({{.*}}) -> tensor<[[C:[0-9]+]]x8xf32>
// CHECK: "stablehlo.scatter"
// CHECK: (tensor<100x8xf32>, tensor<[[C]]x1xi32>, tensor<[[C]]x8xf32>) -> tensor<100x8xf32>

// segment_max: a maximum combines in any order too.
// CHECK-LABEL: func.func public @segment_max
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.scatter"
// CHECK: stablehlo.maximum
// CHECK: (tensor<100x8xf32>, tensor<[[C:[0-9]+]]x1xi32>, tensor<[[C]]x8xf32>) -> tensor<100x8xf32>

// The table's gradient of an embedding bag (mean of table[tokens] over 64
// tokens per bag): the scatter's updates [bags, 64, 16] are split by bags,
// the first of its two scatter dimensions.
// CHECK-LABEL: func.func public @embedding_grad
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dynamic_slice"(%{{.*}}) <{slice_sizes = array<i64: [[C:[0-9]+]], 64>}>
// CHECK: "stablehlo.scatter"
// CHECK: (tensor<1000x16xf32>, tensor<[[C]]x64x1xi32>, tensor<[[C]]x64x16xf32>) -> tensor<1000x16xf32>
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<100x8xf32>, tensor<20000xi32>, tensor<20000xi32>, tensor<20000xf32>) -> tensor<100x8xf32>, sym_name = "segment_sum", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<100x8xf32>, %arg1: tensor<20000xi32>, %arg2: tensor<20000xi32>, %arg3: tensor<20000xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<20000xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi1>
    %3 = "stablehlo.constant"() <{value = dense<100> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<20000xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<20000xi1>, tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<20000xi32>) -> tensor<20000x1xi32>
    %8 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 8>}> : (tensor<100x8xf32>, tensor<20000x1xi32>) -> tensor<20000x8xf32>
    %9 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 0>}> : (tensor<20000xf32>) -> tensor<20000x1xf32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<20000x1xf32>) -> tensor<20000x8xf32>
    %11 = "stablehlo.multiply"(%8, %10) : (tensor<20000x8xf32>, tensor<20000x8xf32>) -> tensor<20000x8xf32>
    %12 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<100x8xf32>
    %14 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<20000xi32>) -> tensor<20000x1xi32>
    %15 = "stablehlo.scatter"(%13, %14, %11) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %16 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<100x8xf32>, tensor<20000x1xi32>, tensor<20000x8xf32>) -> tensor<100x8xf32>
    "func.return"(%15) : (tensor<100x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<100x8xf32>, tensor<20000xi32>, tensor<20000xf32>, tensor<8xf32>) -> tensor<100x8xf32>, sym_name = "add_into_argument", sym_visibility = "public"}> ({
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
      %15 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%15) : (tensor<f32>) -> ()
    }) : (tensor<100x8xf32>, tensor<20000x1xi32>, tensor<20000x8xf32>) -> tensor<100x8xf32>
    "func.return"(%14) : (tensor<100x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<100x8xf32>, tensor<20000xi32>, tensor<20000xi32>) -> tensor<100x8xf32>, sym_name = "segment_max", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<100x8xf32>, %arg1: tensor<20000xi32>, %arg2: tensor<20000xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<20000xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi1>
    %3 = "stablehlo.constant"() <{value = dense<100> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<20000xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<20000xi1>, tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<20000xi32>) -> tensor<20000x1xi32>
    %8 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 8>}> : (tensor<100x8xf32>, tensor<20000x1xi32>) -> tensor<20000x8xf32>
    %9 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<20000x8xf32>
    %11 = "stablehlo.multiply"(%8, %10) : (tensor<20000x8xf32>, tensor<20000x8xf32>) -> tensor<20000x8xf32>
    %12 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<100x8xf32>
    %14 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<20000xi32>) -> tensor<20000x1xi32>
    %15 = "stablehlo.scatter"(%13, %14, %11) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %16 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<100x8xf32>, tensor<20000x1xi32>, tensor<20000x8xf32>) -> tensor<100x8xf32>
    "func.return"(%15) : (tensor<100x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<256x64xi32>, tensor<256x16xf32>) -> tensor<1000x16xf32>, sym_name = "embedding_grad", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x64xi32>, %arg1: tensor<256x16xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<256x64xi32>
    %2 = "stablehlo.compare"(%arg0, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<256x64xi32>, tensor<256x64xi32>) -> tensor<256x64xi1>
    %3 = "stablehlo.constant"() <{value = dense<1000> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<256x64xi32>
    %5 = "stablehlo.add"(%arg0, %4) : (tensor<256x64xi32>, tensor<256x64xi32>) -> tensor<256x64xi32>
    %6 = "stablehlo.select"(%2, %5, %arg0) : (tensor<256x64xi1>, tensor<256x64xi32>, tensor<256x64xi32>) -> tensor<256x64xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<256x64xi32>) -> tensor<256x64x1xi32>
    %8 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x16xf32>
    %10 = "stablehlo.multiply"(%9, %arg1) : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x16xf32>
    %11 = "stablehlo.constant"() <{value = dense<6.400000e+01> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x16xf32>
    %13 = "stablehlo.divide"(%10, %12) : (tensor<256x16xf32>, tensor<256x16xf32>) -> tensor<256x16xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<256x16xf32>) -> tensor<256x64x16xf32>
    %15 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1000x16xf32>
    %17 = "stablehlo.scatter"(%16, %7, %14) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %18 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%18) : (tensor<f32>) -> ()
    }) : (tensor<1000x16xf32>, tensor<256x64x1xi32>, tensor<256x64x16xf32>) -> tensor<1000x16xf32>
    "func.return"(%17) : (tensor<1000x16xf32>) -> ()
  }) : () -> ()
}) : () -> ()
