// RUN: memfit-opt %s --memfit-assign-memory-space="assignment=%S/Inputs/offload-golden.json" -mlir-print-op-generic | FileCheck %s
//
// memfit-assign-memory-space writes an offload decision exactly as jax does.
// The golden below is what jax 0.12.0.1 emits (generic form) for
//
//   def f(x):
//       y = jnp.sin(x) @ x
//       h = jax.device_put(y, jax.memory.Space.Host)
//       z = jnp.cos(x) @ x
//       d = jax.device_put(h, jax.memory.Space.Device)
//       return z + d
//   jax.jit(f).trace(jnp.ones((8, 8))).lower(lowering_platforms=("cuda",))
//
// The input is the same program without the two device_puts; the solution
// (Inputs/offload-golden.json) puts buffer 4 (the sin-dot result, as
// memfit-export-buffers numbers it) in slow memory. Only the result's
// `mhlo.memory_kind = "device"` attribute, which jax adds to every result
// when lowering for a GPU, differs. test_msa_passes.py re-derives the
// golden from jax and compares.

// CHECK-LABEL: "func.func"() <{{.*}}sym_name = "main"
// CHECK:       ^bb0(%arg0: tensor<8x8xf32>):
// CHECK-NEXT:    %0 = "stablehlo.sine"(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %1 = "stablehlo.dot_general"(%0, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %2 = "stablehlo.custom_call"(%1) <{api_version = 1 : i32, backend_config = "", call_target_name = "annotate_device_placement", called_computations = [], has_side_effect = true}> {mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %3 = "stablehlo.cosine"(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %4 = "stablehlo.dot_general"(%3, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %5 = "stablehlo.custom_call"(%2) <{api_version = 1 : i32, backend_config = "", call_target_name = "annotate_device_placement", called_computations = [], has_side_effect = true}> {mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %6 = "stablehlo.add"(%4, %5) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    "func.return"(%6) : (tensor<8x8xf32>) -> ()
"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<8x8xf32>) -> tensor<8x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8x8xf32>):
    %0 = "stablehlo.sine"(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = "stablehlo.dot_general"(%0, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = "stablehlo.cosine"(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %3 = "stablehlo.dot_general"(%2, %arg0) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %4 = "stablehlo.add"(%3, %1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    "func.return"(%4) : (tensor<8x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
