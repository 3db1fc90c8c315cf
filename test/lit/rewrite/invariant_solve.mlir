// RUN: memfit-opt %s --memfit-rewrite | FileCheck %s
// RUN: memfit-opt %s --memfit-rewrite="invariant-solve=false" | FileCheck %s --check-prefix=OFF

// A solve in a loop body against a factor the loop carries unchanged (jax's
// scan of solve_triangular) becomes blocked substitution: before the loop,
// the same call against the identity gives op(A)^-1, whose diagonal blocks
// (64 rows each) are stacked and carried as one more loop value; in the
// loop every flop is a GEMM, with one refinement step per diagonal block
// against op(A)'s block, its unread triangle masked to zero.
// CHECK-LABEL: func.func @invariant_left
// CHECK: %[[I0:.*]] = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4x4xi32>
// CHECK: %[[I1:.*]] = "stablehlo.iota"() <{iota_dimension = 1 : i64}>
// CHECK: %[[EQ:.*]] = "stablehlo.compare"(%[[I0]], %[[I1]])
// CHECK: %[[EYE:.*]] = "stablehlo.convert"(%[[EQ]]) : (tensor<4x4xi1>) -> tensor<4x4xf32>
// CHECK: %[[INV:.*]] = "stablehlo.custom_call"(%arg0, %[[EYE]]) {{.*}}lapack_strsm_ffi{{.*}} -> tensor<4x4xf32>
// CHECK: %[[D:.*]] = "stablehlo.slice"(%[[INV]])
// CHECK: "stablehlo.while"({{.*}}, %[[D]])
// CHECK: ^bb0(%{{[^:]*}}: tensor<5x4x3xf32>, %[[A:[^:]*]]: tensor<4x4xf32>, %{{[^:]*}}: tensor<i32>, %{{[^:]*}}: tensor<4x3xf32>, %[[CARRIED:[^:]*]]: tensor<4x4xf32>):
// CHECK-NOT: lapack_strsm_ffi
// CHECK: %[[R:.*]] = "stablehlo.reshape"
// CHECK: %[[DI:.*]] = "stablehlo.slice"(%[[CARRIED]])
// CHECK: %[[X:.*]] = "stablehlo.dot_general"(%[[DI]], %[[R]]) {{.*}}lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]
// CHECK: %[[AII:.*]] = "stablehlo.slice"(%[[A]])
// CHECK: %[[KEEP:.*]] = "stablehlo.compare"({{.*}}) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}>
// CHECK: %[[TII:.*]] = "stablehlo.select"(%[[KEEP]], %[[AII]],
// CHECK: %[[AX:.*]] = "stablehlo.dot_general"(%[[TII]], %[[X]])
// CHECK: %[[RES:.*]] = "stablehlo.subtract"(%[[R]], %[[AX]])
// CHECK: %[[FIX:.*]] = "stablehlo.dot_general"(%[[DI]], %[[RES]])
// CHECK: "stablehlo.add"(%[[X]], %[[FIX]])
// CHECK: "stablehlo.return"({{.*}}, %[[CARRIED]])
// OFF-LABEL: func.func @invariant_left
// OFF-NOT: "stablehlo.dot_general"
// OFF: lapack_strsm_ffi
func.func @invariant_left(%arg0: tensor<4x4xf32>, %arg1: tensor<5x4x3xf32>) -> tensor<4x3xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x3xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%arg1, %arg0, %2, %1) ({
    ^bb0(%arg6: tensor<5x4x3xf32>, %arg7: tensor<4x4xf32>, %arg8: tensor<i32>, %arg9: tensor<4x3xf32>):
      %12 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.compare"(%arg8, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%13) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<5x4x3xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<i32>, %arg5: tensor<4x3xf32>):
      %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %6 = "stablehlo.dynamic_slice"(%arg2, %arg4, %4, %5) <{slice_sizes = array<i64: 1, 4, 3>}> : (tensor<5x4x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x3xf32>
      %7 = "stablehlo.reshape"(%6) : (tensor<1x4x3xf32>) -> tensor<4x3xf32>
      %8 = "stablehlo.custom_call"(%arg3, %7) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %9 = "stablehlo.add"(%arg5, %8) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %11 = "stablehlo.add"(%arg4, %10) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg2, %arg3, %11, %9) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> ()
    }) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>)
    return %3#3 : tensor<4x3xf32>
}

// Side 'R' (x op(a) = b): the chunk times each inverse block.
// CHECK-LABEL: func.func @invariant_right
// CHECK: "stablehlo.custom_call"(%arg0, {{.*}}) {{.*}}lapack_strsm_ffi{{.*}} -> tensor<4x4xf32>
// CHECK: ^bb0({{.*}}, %[[CARRIED:[^:]*]]: tensor<4x4xf32>):
// CHECK-NOT: lapack_strsm_ffi
// CHECK: %[[R:.*]] = "stablehlo.reshape"
// CHECK: %[[DI:.*]] = "stablehlo.slice"(%[[CARRIED]])
// CHECK: "stablehlo.dot_general"(%[[R]], %[[DI]])
func.func @invariant_right(%arg0: tensor<4x4xf32>, %arg1: tensor<5x3x4xf32>) -> tensor<3x4xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x4xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%arg1, %arg0, %2, %1) ({
    ^bb0(%arg6: tensor<5x3x4xf32>, %arg7: tensor<4x4xf32>, %arg8: tensor<i32>, %arg9: tensor<3x4xf32>):
      %12 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.compare"(%arg8, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%13) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<5x3x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<i32>, %arg5: tensor<3x4xf32>):
      %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %6 = "stablehlo.dynamic_slice"(%arg2, %arg4, %4, %5) <{slice_sizes = array<i64: 1, 3, 4>}> : (tensor<5x3x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x3x4xf32>
      %7 = "stablehlo.reshape"(%6) : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
      %8 = "stablehlo.custom_call"(%arg3, %7) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 82 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<4x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
      %9 = "stablehlo.add"(%arg5, %8) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
      %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %11 = "stablehlo.add"(%arg4, %10) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg2, %arg3, %11, %9) : (tensor<5x3x4xf32>, tensor<4x4xf32>, tensor<i32>, tensor<3x4xf32>) -> ()
    }) : (tensor<5x3x4xf32>, tensor<4x4xf32>, tensor<i32>, tensor<3x4xf32>) -> (tensor<5x3x4xf32>, tensor<4x4xf32>, tensor<i32>, tensor<3x4xf32>)
    return %3#3 : tensor<3x4xf32>
}

// A factor the loop changes is not invariant: the solve stays.
// CHECK-LABEL: func.func @factor_changes
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: "stablehlo.while"
// CHECK: lapack_strsm_ffi
// CHECK-NOT: "stablehlo.dot_general"
func.func @factor_changes(%arg0: tensor<4x4xf32>, %arg1: tensor<5x4x3xf32>) -> tensor<4x3xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x3xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%arg1, %arg0, %2, %1) ({
    ^bb0(%arg6: tensor<5x4x3xf32>, %arg7: tensor<4x4xf32>, %arg8: tensor<i32>, %arg9: tensor<4x3xf32>):
      %12 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.compare"(%arg8, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%13) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<5x4x3xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<i32>, %arg5: tensor<4x3xf32>):
      %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %6 = "stablehlo.dynamic_slice"(%arg2, %arg4, %4, %5) <{slice_sizes = array<i64: 1, 4, 3>}> : (tensor<5x4x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x3xf32>
      %7 = "stablehlo.reshape"(%6) : (tensor<1x4x3xf32>) -> tensor<4x3xf32>
      %8 = "stablehlo.custom_call"(%arg3, %7) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %9 = "stablehlo.add"(%arg5, %8) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %11 = "stablehlo.add"(%arg4, %10) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %20 = "stablehlo.add"(%arg3, %arg3) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      "stablehlo.return"(%arg2, %20, %11, %9) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> ()
    }) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>)
    return %3#3 : tensor<4x3xf32>
}

// A unit diagonal (diag = 'U') is implied, not stored: the solve stays.
// CHECK-LABEL: func.func @unit_diagonal
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: lapack_strsm_ffi
func.func @unit_diagonal(%arg0: tensor<4x4xf32>, %arg1: tensor<5x4x3xf32>) -> tensor<4x3xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x3xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%arg1, %arg0, %2, %1) ({
    ^bb0(%arg6: tensor<5x4x3xf32>, %arg7: tensor<4x4xf32>, %arg8: tensor<i32>, %arg9: tensor<4x3xf32>):
      %12 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.compare"(%arg8, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%13) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<5x4x3xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<i32>, %arg5: tensor<4x3xf32>):
      %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %6 = "stablehlo.dynamic_slice"(%arg2, %arg4, %4, %5) <{slice_sizes = array<i64: 1, 4, 3>}> : (tensor<5x4x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x3xf32>
      %7 = "stablehlo.reshape"(%6) : (tensor<1x4x3xf32>) -> tensor<4x3xf32>
      %8 = "stablehlo.custom_call"(%arg3, %7) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 85 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %9 = "stablehlo.add"(%arg5, %8) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %11 = "stablehlo.add"(%arg4, %10) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg2, %arg3, %11, %9) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> ()
    }) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>)
    return %3#3 : tensor<4x3xf32>
}

// 130 rows: blocks [0,64), [64,128), [128,130). The stacked inverses are
// 130 x 64, the last block padded with zero columns. Forward substitution
// (lower, not transposed), by halves: rows [0,128) (itself [0,64) then
// [64,128) less A[64:128, 0:64] X_0), then [128,130) less A[128:130, 0:128]
// X_01; X is the concatenation.
// CHECK-LABEL: func.func @three_blocks_forward
// CHECK: "stablehlo.pad"({{.*}}) <{edge_padding_high = array<i64: 0, 62>
// CHECK: %[[D:.*]] = "stablehlo.concatenate"({{.*}}) <{dimension = 0 : i64}> : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<2x64xf32>) -> tensor<130x64xf32>
// CHECK: "stablehlo.while"({{.*}}, %[[D]])
// CHECK: ^bb0(%{{[^:]*}}: tensor<5x130x3xf32>, %[[A:[^:]*]]: tensor<130x130xf32>
// CHECK: "stablehlo.slice"(%{{.*}}) <{limit_indices = array<i64: 128, 3>, start_indices = array<i64: 0, 0>
// CHECK: "stablehlo.slice"(%{{.*}}) <{limit_indices = array<i64: 64, 3>, start_indices = array<i64: 0, 0>
// CHECK: %[[L10:.*]] = "stablehlo.slice"(%[[A]]) <{limit_indices = array<i64: 128, 64>, start_indices = array<i64: 64, 0>
// CHECK: "stablehlo.dot_general"(%[[L10]], %{{.*}}) {{.*}}lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]{{.*}} -> tensor<64x3xf32>
// CHECK: %[[X01:.*]] = "stablehlo.concatenate"({{.*}}) <{dimension = 0 : i64}> : (tensor<64x3xf32>, tensor<64x3xf32>) -> tensor<128x3xf32>
// CHECK: %[[L2:.*]] = "stablehlo.slice"(%[[A]]) <{limit_indices = array<i64: 130, 128>, start_indices = array<i64: 128, 0>
// CHECK: "stablehlo.dot_general"(%[[L2]], %[[X01]])
// CHECK: "stablehlo.concatenate"({{.*}}) <{dimension = 0 : i64}> : (tensor<128x3xf32>, tensor<2x3xf32>) -> tensor<130x3xf32>
func.func @three_blocks_forward(%arg0: tensor<130x130xf32>, %arg1: tensor<5x130x3xf32>) -> tensor<130x3xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<130x3xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%arg1, %arg0, %2, %1) ({
    ^bb0(%arg6: tensor<5x130x3xf32>, %arg7: tensor<130x130xf32>, %arg8: tensor<i32>, %arg9: tensor<130x3xf32>):
      %12 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.compare"(%arg8, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%13) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<5x130x3xf32>, %arg3: tensor<130x130xf32>, %arg4: tensor<i32>, %arg5: tensor<130x3xf32>):
      %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %6 = "stablehlo.dynamic_slice"(%arg2, %arg4, %4, %5) <{slice_sizes = array<i64: 1, 130, 3>}> : (tensor<5x130x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x130x3xf32>
      %7 = "stablehlo.reshape"(%6) : (tensor<1x130x3xf32>) -> tensor<130x3xf32>
      %8 = "stablehlo.custom_call"(%arg3, %7) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<130x130xf32>, tensor<130x3xf32>) -> tensor<130x3xf32>
      %9 = "stablehlo.add"(%arg5, %8) : (tensor<130x3xf32>, tensor<130x3xf32>) -> tensor<130x3xf32>
      %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %11 = "stablehlo.add"(%arg4, %10) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg2, %arg3, %11, %9) : (tensor<5x130x3xf32>, tensor<130x130xf32>, tensor<i32>, tensor<130x3xf32>) -> ()
    }) : (tensor<5x130x3xf32>, tensor<130x130xf32>, tensor<i32>, tensor<130x3xf32>) -> (tensor<5x130x3xf32>, tensor<130x130xf32>, tensor<i32>, tensor<130x3xf32>)
    return %3#3 : tensor<130x3xf32>
}

// op(A) = A^T of a lower A is upper triangular: backward substitution, the
// last rows first ([128,130)), then [0,128) less A^T[0:128, 128:130] X_2,
// read from A[128:130, 0:128] contracting A's first dimension.
// CHECK-LABEL: func.func @transposed_backward
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.slice"(%{{.*}}) <{limit_indices = array<i64: 130, 3>, start_indices = array<i64: 128, 0>
// CHECK: "stablehlo.select"
// CHECK: %[[U:.*]] = "stablehlo.slice"(%{{.*}}) <{limit_indices = array<i64: 130, 128>, start_indices = array<i64: 128, 0>
// CHECK: "stablehlo.dot_general"(%[[U]], %{{.*}}) {{.*}}lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]{{.*}} -> tensor<128x3xf32>
// CHECK: "stablehlo.slice"(%{{.*}}) <{limit_indices = array<i64: 128, 3>, start_indices = array<i64: 0, 0>
// CHECK: "stablehlo.concatenate"({{.*}}) <{dimension = 0 : i64}> : (tensor<128x3xf32>, tensor<2x3xf32>) -> tensor<130x3xf32>
func.func @transposed_backward(%arg0: tensor<130x130xf32>, %arg1: tensor<5x130x3xf32>) -> tensor<130x3xf32> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<130x3xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:4 = "stablehlo.while"(%arg1, %arg0, %2, %1) ({
    ^bb0(%arg6: tensor<5x130x3xf32>, %arg7: tensor<130x130xf32>, %arg8: tensor<i32>, %arg9: tensor<130x3xf32>):
      %12 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.compare"(%arg8, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%13) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<5x130x3xf32>, %arg3: tensor<130x130xf32>, %arg4: tensor<i32>, %arg5: tensor<130x3xf32>):
      %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %6 = "stablehlo.dynamic_slice"(%arg2, %arg4, %4, %5) <{slice_sizes = array<i64: 1, 130, 3>}> : (tensor<5x130x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x130x3xf32>
      %7 = "stablehlo.reshape"(%6) : (tensor<1x130x3xf32>) -> tensor<130x3xf32>
      %8 = "stablehlo.custom_call"(%arg3, %7) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}} : (tensor<130x130xf32>, tensor<130x3xf32>) -> tensor<130x3xf32>
      %9 = "stablehlo.add"(%arg5, %8) : (tensor<130x3xf32>, tensor<130x3xf32>) -> tensor<130x3xf32>
      %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %11 = "stablehlo.add"(%arg4, %10) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg2, %arg3, %11, %9) : (tensor<5x130x3xf32>, tensor<130x130xf32>, tensor<i32>, tensor<130x3xf32>) -> ()
    }) : (tensor<5x130x3xf32>, tensor<130x130xf32>, tensor<i32>, tensor<130x3xf32>) -> (tensor<5x130x3xf32>, tensor<130x130xf32>, tensor<i32>, tensor<130x3xf32>)
    return %3#3 : tensor<130x3xf32>
}
