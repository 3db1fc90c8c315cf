// LAPACK triangular solve with side = 'L' (jax's lapack_strsm_ffi): each
// column of the right-hand side is solved on its own, so A = L^-1 Kuf is
// split along Kuf's columns (the sparse-GP data points) and A A^T, which
// contracts them, accumulates partial products. The chunk clones drop the
// Shardy rule, which states the full sizes.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=40KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=40KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<8x2000xf32>
// NOBIG-NOT: tensor<2000x8xf32>

// CHECK-LABEL: func.func public @trsm_columns
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<8x[[C:[0-9]+]]xf32>
// CHECK: "stablehlo.custom_call"(%{{.*}}, %{{.*}}) <{{.*}}call_target_name = "lapack_strsm_ffi"
// CHECK-NOT: sdy.sharding_rule
// CHECK-SAME: (tensor<8x8xf32>, tensor<8x[[C]]xf32>) -> tensor<8x[[C]]xf32>
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<8x8xf32>
// CHECK: "stablehlo.add"{{.*}} -> tensor<8x8xf32>
// CHECK: "stablehlo.return"

// A side = 'R' solve (x L = b) solves each row of b on its own: split by rows.
// CHECK-LABEL: func.func public @trsm_right_side_rows
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.custom_call"
// CHECK-SAME: (tensor<8x8xf32>, tensor<[[R:[0-9]+]]x8xf32>) -> tensor<[[R]]x8xf32>
// CHECK: "stablehlo.return"
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8x4xf32>, tensor<2000x4xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>, sym_name = "trsm_columns", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8x4xf32>, %arg1: tensor<2000x4xf32>, %arg2: tensor<8x8xf32>):
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<8x4xf32>, tensor<2000x4xf32>) -> tensor<8x2000xf32>
    %1 = "stablehlo.exponential"(%0) : (tensor<8x2000xf32>) -> tensor<8x2000xf32>
    %2 = "stablehlo.custom_call"(%arg2, %1) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_strsm_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=8, j=8, k=8, l=2000, m=8, n=2000}, custom>} : (tensor<8x8xf32>, tensor<8x2000xf32>) -> tensor<8x2000xf32>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 1, 0>}> : (tensor<8x2000xf32>) -> tensor<2000x8xf32>
    %4 = "stablehlo.dot_general"(%2, %3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x2000xf32>, tensor<2000x8xf32>) -> tensor<8x8xf32>
    "func.return"(%4) : (tensor<8x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2000x4xf32>, tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>, sym_name = "trsm_right_side_rows", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2000x4xf32>, %arg1: tensor<8x4xf32>, %arg2: tensor<8x8xf32>):
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>}> : (tensor<2000x4xf32>, tensor<8x4xf32>) -> tensor<2000x8xf32>
    %1 = "stablehlo.exponential"(%0) : (tensor<2000x8xf32>) -> tensor<2000x8xf32>
    %2 = "stablehlo.custom_call"(%arg2, %1) <{api_version = 1 : i32, backend_config = "", call_target_name = "lapack_strsm_ffi", called_computations = [], has_side_effect = false, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 82 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<8x8xf32>, tensor<2000x8xf32>) -> tensor<2000x8xf32>
    %3 = "stablehlo.dot_general"(%2, %2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> : (tensor<2000x8xf32>, tensor<2000x8xf32>) -> tensor<8x8xf32>
    "func.return"(%3) : (tensor<8x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
