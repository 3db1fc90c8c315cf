// RUN: memfit-opt %s --memfit-rewrite="invariant-solve=true" | FileCheck %s
// RUN: memfit-opt %s --memfit-rewrite | FileCheck %s --check-prefix=OFF

// (opt-in: less accurate on ill-conditioned factors.)
// A solve in a loop body against a factor the loop carries unchanged (jax's
// scan of solve_triangular): the factor's inverse is the same call against
// the identity, once before the loop, carried as one more loop value; each
// iteration multiplies by it.
// CHECK-LABEL: func.func @invariant_left
// CHECK: %[[I0:.*]] = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4x4xi32>
// CHECK: %[[I1:.*]] = "stablehlo.iota"() <{iota_dimension = 1 : i64}>
// CHECK: %[[EQ:.*]] = "stablehlo.compare"(%[[I0]], %[[I1]])
// CHECK: %[[EYE:.*]] = "stablehlo.convert"(%[[EQ]]) : (tensor<4x4xi1>) -> tensor<4x4xf32>
// CHECK: %[[INV:.*]] = "stablehlo.custom_call"(%arg0, %[[EYE]]) {{.*}}lapack_strsm_ffi{{.*}} -> tensor<4x4xf32>
// CHECK: "stablehlo.while"({{.*}}, %[[INV]])
// CHECK: ^bb0({{.*}}, %[[CARRIED:[^:]*]]: tensor<4x4xf32>):
// CHECK-NOT: lapack_strsm_ffi
// CHECK: "stablehlo.dot_general"(%[[CARRIED]], {{.*}}lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]
// CHECK: "stablehlo.return"({{.*}}, %[[CARRIED]])
// OFF-LABEL: func.func @invariant_left
// OFF-NOT: "stablehlo.dot_general"
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
      %8 = "stablehlo.custom_call"(%arg3, %7) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=3, m=4, n=3}, custom>} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %9 = "stablehlo.add"(%arg5, %8) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %11 = "stablehlo.add"(%arg4, %10) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg2, %arg3, %11, %9) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> ()
    }) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>)
    return %3#3 : tensor<4x3xf32>
}

// Side 'R' (x op(a) = b): the chunk times the inverse.
// CHECK-LABEL: func.func @invariant_right
// CHECK: "stablehlo.custom_call"(%arg0, {{.*}}) {{.*}}lapack_strsm_ffi{{.*}} -> tensor<4x4xf32>
// CHECK: ^bb0({{.*}}, %[[CARRIED:[^:]*]]: tensor<4x4xf32>):
// CHECK-NOT: lapack_strsm_ffi
// CHECK: "stablehlo.dot_general"({{[^,]*}}, %[[CARRIED]])
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
      %8 = "stablehlo.custom_call"(%arg3, %7) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 82 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=3, m=4, n=3}, custom>} : (tensor<4x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
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
      %8 = "stablehlo.custom_call"(%arg3, %7) <{backend_config = "", call_target_name = "lapack_strsm_ffi", operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]}> {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=3, m=4, n=3}, custom>} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %9 = "stablehlo.add"(%arg5, %8) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %10 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %11 = "stablehlo.add"(%arg4, %10) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %20 = "stablehlo.add"(%arg3, %arg3) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      "stablehlo.return"(%arg2, %20, %11, %9) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> ()
    }) : (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>) -> (tensor<5x4x3xf32>, tensor<4x4xf32>, tensor<i32>, tensor<4x3xf32>)
    return %3#3 : tensor<4x3xf32>
}
