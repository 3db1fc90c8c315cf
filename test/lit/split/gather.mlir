// Gather as a split point. Along the indices' batch dimensions the indices
// and the result are chunked and the gathered operand is read whole (a
// live-in): an embedding lookup table[idx], jraph's nodes[senders], optax's
// take_along_axis of the label logit (operand_batching_dims: the operand's
// rows are chunked with the indices'). Along an operand dimension that the
// gather takes whole and never indexes, the operand and the result's
// offset dimension are chunked together (table[idx] split by the table's
// columns).
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=400KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-inline,memfit-split{memory-limit=400KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<20000x16xf32>
// NOBIG-NOT: tensor<512x1000xf32>
// NOBIG-NOT: tensor<1000x2000xf32>

// CHECK-LABEL: func.func public @embedding_lookup
// CHECK: "stablehlo.while"({{.*}}, %arg1, %arg0)
// CHECK: "stablehlo.gather"(%{{.*}}) {{.*}} : (tensor<1000x16xf32>, tensor<[[C:[0-9]+]]x1xi32>) -> tensor<[[C]]x16xf32>
// CHECK: "stablehlo.reduce"
// CHECK: (tensor<[[C]]x16xf32>, tensor<f32>) -> tensor<16xf32>

// CHECK-LABEL: func.func public @label_logit
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C:[0-9]+]]x1000xf32>
// CHECK: "stablehlo.gather"{{.*}}operand_batching_dims = [0], start_indices_batching_dims = [0]
// CHECK-SAME: (tensor<[[C]]x1000xf32>, tensor<[[C]]x1x1xi32>) -> tensor<[[C]]x1xf32>

// The [1000, 2000] operand is computed; the gather reads its rows at the
// indices, so it is chunked by columns, each chunk's gathered columns
// assembled into the result. The sine of the operand is taken on the
// gathered rows (GatherElementwise.cpp).
// CHECK-LABEL: func.func public @gather_columns
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.multiply"{{.*}} -> tensor<1000x[[C:[0-9]+]]xf32>
// CHECK: "stablehlo.gather"{{.*}} slice_sizes = array<i64: 1, [[C]]>
// CHECK-SAME: (tensor<1000x[[C]]xf32>, tensor<16x1xi32>) -> tensor<16x[[C]]xf32>
// CHECK: "stablehlo.sine"{{.*}} -> tensor<16x[[C]]xf32>
// CHECK: "stablehlo.dynamic_update_slice"
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<1000x16xf32>, tensor<20000xi32>) -> tensor<16xf32>, sym_name = "embedding_lookup", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<1000x16xf32>, %arg1: tensor<20000xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<20000xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi1>
    %3 = "stablehlo.constant"() <{value = dense<1000> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<20000xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<20000xi1>, tensor<20000xi32>, tensor<20000xi32>) -> tensor<20000xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<20000xi32>) -> tensor<20000x1xi32>
    %8 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<1000x16xf32>, tensor<20000x1xi32>) -> tensor<20000x16xf32>
    %9 = "stablehlo.tanh"(%8) : (tensor<20000x16xf32>) -> tensor<20000x16xf32>
    %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.reduce"(%9, %10) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %12 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<20000x16xf32>, tensor<f32>) -> tensor<16xf32>
    "func.return"(%11) : (tensor<16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<512x16xf32>, tensor<16x1000xf32>, tensor<512xi32>) -> tensor<512xf32>, sym_name = "label_logit", sym_visibility = "public"}> ({
  ^bb0(%arg4: tensor<512x16xf32>, %arg5: tensor<16x1000xf32>, %arg6: tensor<512xi32>):
    %23 = "stablehlo.dot_general"(%arg4, %arg5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<512x16xf32>, tensor<16x1000xf32>) -> tensor<512x1000xf32>
    %24 = "stablehlo.broadcast_in_dim"(%arg6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<512xi32>) -> tensor<512x1xi32>
    %25 = "func.call"(%23, %24) <{callee = @take_along_axis}> : (tensor<512x1000xf32>, tensor<512x1xi32>) -> tensor<512x1xf32>
    %26 = "stablehlo.reshape"(%25) : (tensor<512x1xf32>) -> tensor<512xf32>
    %27 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<512xf32>
    %29 = "stablehlo.multiply"(%26, %28) : (tensor<512xf32>, tensor<512xf32>) -> tensor<512xf32>
    %30 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %31 = "stablehlo.reduce"(%23, %30) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %33 = "stablehlo.maximum"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%33) : (tensor<f32>) -> ()
    }) : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %32 = "stablehlo.add"(%29, %31) : (tensor<512xf32>, tensor<512xf32>) -> tensor<512xf32>
    "func.return"(%32) : (tensor<512xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<512x1000xf32>, tensor<512x1xi32>) -> tensor<512x1xf32>, sym_name = "take_along_axis", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<512x1000xf32>, %arg1: tensor<512x1xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<512x1xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<512x1xi32>, tensor<512x1xi32>) -> tensor<512x1xi1>
    %3 = "stablehlo.constant"() <{value = dense<1000> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<512x1xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<512x1xi32>, tensor<512x1xi32>) -> tensor<512x1xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<512x1xi1>, tensor<512x1xi32>, tensor<512x1xi32>) -> tensor<512x1xi32>
    %7 = "stablehlo.reshape"(%6) : (tensor<512x1xi32>) -> tensor<512x1x1xi32>
    %8 = "stablehlo.constant"() <{value = dense<999> : tensor<1xi32>}> : () -> tensor<1xi32>
    %9 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<512x1x1xi32>
    %11 = "stablehlo.compare"(%7, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<512x1x1xi32>, tensor<512x1x1xi32>) -> tensor<512x1x1xi1>
    %12 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<512x1x1xi32>
    %14 = "stablehlo.compare"(%7, %13) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<512x1x1xi32>, tensor<512x1x1xi32>) -> tensor<512x1x1xi1>
    %15 = "stablehlo.and"(%11, %14) : (tensor<512x1x1xi1>, tensor<512x1x1xi1>) -> tensor<512x1x1xi1>
    %16 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %17 = "stablehlo.reduce"(%15, %16) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg2: tensor<i1>, %arg3: tensor<i1>):
      %22 = "stablehlo.and"(%arg2, %arg3) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%22) : (tensor<i1>) -> ()
    }) : (tensor<512x1x1xi1>, tensor<i1>) -> tensor<512x1xi1>
    %18 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<512x1000xf32>, tensor<512x1x1xi32>) -> tensor<512x1xf32>
    %19 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<512x1xf32>
    %21 = "stablehlo.select"(%17, %18, %20) : (tensor<512x1xi1>, tensor<512x1xf32>, tensor<512x1xf32>) -> tensor<512x1xf32>
    "func.return"(%21) : (tensor<512x1xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<1000xf32>, tensor<2000xf32>, tensor<16xi32>) -> tensor<2000xf32>, sym_name = "gather_columns", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<1000xf32>, %arg1: tensor<2000xf32>, %arg2: tensor<16xi32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1000xf32>) -> tensor<1000x1xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<2000xf32>) -> tensor<1x2000xf32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1000x1xf32>) -> tensor<1000x2000xf32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x2000xf32>) -> tensor<1000x2000xf32>
    %4 = "stablehlo.multiply"(%2, %3) : (tensor<1000x2000xf32>, tensor<1000x2000xf32>) -> tensor<1000x2000xf32>
    %5 = "stablehlo.sine"(%4) : (tensor<1000x2000xf32>) -> tensor<1000x2000xf32>
    %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<16xi32>
    %8 = "stablehlo.compare"(%arg2, %7) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi1>
    %9 = "stablehlo.constant"() <{value = dense<1000> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<16xi32>
    %11 = "stablehlo.add"(%arg2, %10) : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi32>
    %12 = "stablehlo.select"(%8, %11, %arg2) : (tensor<16xi1>, tensor<16xi32>, tensor<16xi32>) -> tensor<16xi32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0>}> : (tensor<16xi32>) -> tensor<16x1xi32>
    %14 = "stablehlo.gather"(%5, %13) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2000>}> : (tensor<1000x2000xf32>, tensor<16x1xi32>) -> tensor<16x2000xf32>
    %15 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.reduce"(%14, %15) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %17 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%17) : (tensor<f32>) -> ()
    }) : (tensor<16x2000xf32>, tensor<f32>) -> tensor<2000xf32>
    "func.return"(%16) : (tensor<2000xf32>) -> ()
  }) : () -> ()
}) : () -> ()
