// RUN: memfit-opt %s --memfit-assign-memory-space="function=evict assignment=%S/Inputs/offload-evict.json" | FileCheck %s --check-prefix=EVICT
// RUN: memfit-opt %s --memfit-assign-memory-space="function=argument assignment=%S/Inputs/offload-argument.json" | FileCheck %s --check-prefix=ARG
// RUN: memfit-opt %s --memfit-assign-memory-space="function=argument assignment=%S/Inputs/placement.json" 2>&1 | FileCheck %s --check-prefix=PLACEMENT
// RUN: not memfit-opt %s --memfit-assign-memory-space="function=argument assignment=%S/Inputs/bad-id.json" 2>&1 | FileCheck %s --check-prefix=BADID
// RUN: not memfit-opt %s --memfit-assign-memory-space="policy=heuristic" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not memfit-opt %s --memfit-assign-memory-space 2>&1 | FileCheck %s --check-prefix=NOFILE
//
// memfit-assign-memory-space writes a solution's offload decisions as jax's
// annotate_device_placement custom calls (assign-golden.mlir checks the exact
// form against jax's own output).

// A buffer kept in device memory until entry 1 (evict_after), then offloaded
// and brought back once per prefetch (uses 2 and 4): the use at entry 1
// still reads the device value; each later use reads its own "device" copy.
// EVICT-LABEL: func.func @evict
// EVICT:         %[[C:.*]] = "stablehlo.dot_general"(%arg0, %arg0)
// EVICT-NEXT:    %[[D:.*]] = "stablehlo.dot_general"(%[[C]], %arg0)
// EVICT-NEXT:    %[[H:.*]] = "stablehlo.custom_call"(%[[C]]) {{.*}}call_target_name = "annotate_device_placement"{{.*}}_xla_buffer_placement = "pinned_host"
// EVICT-NEXT:    %[[P1:.*]] = "stablehlo.custom_call"(%[[H]]) {{.*}}_xla_buffer_placement = "device"
// EVICT-NEXT:    %[[E:.*]] = "stablehlo.dot_general"(%[[D]], %[[P1]])
// EVICT-NEXT:    %[[F:.*]] = "stablehlo.dot_general"(%[[E]], %[[E]])
// EVICT-NEXT:    %[[P2:.*]] = "stablehlo.custom_call"(%[[H]]) {{.*}}_xla_buffer_placement = "device"
// EVICT-NEXT:    %[[G:.*]] = "stablehlo.dot_general"(%[[F]], %[[P2]])
// EVICT-NEXT:    return %[[G]]
func.func @evict(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %d = "stablehlo.dot_general"(%c, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = "stablehlo.dot_general"(%d, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %f = "stablehlo.dot_general"(%e, %e) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %g = "stablehlo.dot_general"(%f, %c) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %g : tensor<8x8xf32>
}

// An argument in slow memory: annotated at the top of the function, brought
// back before its first use. A buffer with space "fast" and no eviction is
// left alone.
// ARG-LABEL: func.func @argument
// ARG-NEXT:    %[[H:.*]] = "stablehlo.custom_call"(%arg0) {{.*}}_xla_buffer_placement = "pinned_host"
// ARG-NEXT:    %[[D:.*]] = "stablehlo.custom_call"(%[[H]]) {{.*}}_xla_buffer_placement = "device"
// ARG-NEXT:    %[[C:.*]] = "stablehlo.dot_general"(%[[D]], %[[D]])
// ARG-NEXT:    return %[[C]]
//
// Placement-mode solutions are score-only: a warning, the module unchanged.
// PLACEMENT: warning: memfit-assign-memory-space: placement-mode solutions are score-only; the module is unchanged
// PLACEMENT-LABEL: func.func @argument
// PLACEMENT-NOT:   annotate_device_placement
//
// BADID: error: memfit-assign-memory-space: the solution names buffer 99 but this function has 2 buffers: was it made for another module?
// POLICY: error: memfit-assign-memory-space: policy=heuristic runs in Python: memfit.msa.offload.offload_pipeline(text, memory_limit, 'heuristic')
// NOFILE: error: memfit-assign-memory-space: needs assignment=<solution.json>
func.func @argument(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
