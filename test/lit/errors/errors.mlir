// RUN: not memfit-opt %s --split-input-file --memfit-profile -o /dev/null 2>&1 | FileCheck %s
// RUN: not memfit-opt %s --split-input-file --memfit-inline -o /dev/null 2>&1 | FileCheck %s --check-prefix=INLINE
//
// Malformed ops are rejected by verifyOpInvariants with a message naming
// the op and what is wrong, before any view reads them. One case per split.

// CHECK: error: 'stablehlo.dot_general' is missing its required attribute 'dot_dimension_numbers'
func.func @missing_attribute(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.dot_general"(%x, %x) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK: error: 'stablehlo.transpose' has a malformed attribute 'permutation'
func.func @malformed_attribute(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.transpose"(%x) <{permutation = "1, 0"}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK: error: 'stablehlo.dot_general' has unreadable dot_dimension_numbers "lhs"
func.func @unreadable_dot_dims(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = "lhs"}> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK: error: 'stablehlo.add' expects 2 operands, got 3
func.func @wrong_operand_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.add"(%x, %x, %x) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK: error: 'chlo.top_k' expects 2 results, got 1
func.func @wrong_result_count(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %0 = "chlo.top_k"(%x) <{k = 2 : i64}> : (tensor<4x8xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// CHECK: error: 'stablehlo.while' expects 2 regions, got 0
func.func @while_without_regions(%x: tensor<i32>) -> tensor<i32> {
  %0 = "stablehlo.while"(%x) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// CHECK: error: 'stablehlo.while' needs non-empty cond and body regions
func.func @while_with_empty_regions(%x: tensor<i32>) -> tensor<i32> {
  %0 = "stablehlo.while"(%x) ({}, {}) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// CHECK: error: 'stablehlo.reduce' needs N inputs, N init values and N results
func.func @reduce_odd_operands(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = "stablehlo.reduce"(%x) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    "stablehlo.return"(%a) : (tensor<f32>) -> ()
  }) : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK: error: 'stablehlo.dynamic_slice' needs one start index per operand dimension
func.func @dynamic_slice_indices(%x: tensor<4x4xf32>, %i: tensor<i32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.dynamic_slice"(%x, %i) <{slice_sizes = array<i64: 2, 4>}> : (tensor<4x4xf32>, tensor<i32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK: error: 'stablehlo.exponential' operand #0 has dynamic shape 'tensor<?x4xf32>'; memfit needs static shapes
func.func @dynamic_shape(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = "stablehlo.exponential"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK: error: 'func.return' operand #0 has dynamic shape 'tensor<?xf32>'; memfit needs static shapes
func.func @dynamic_result(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

// An argument with a dynamic shape that no op reads.
// CHECK: error: argument #0 has dynamic shape 'tensor<?xf32>'; memfit needs static shapes
func.func @dynamic_argument(%x: tensor<?xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  return %y : tensor<4xf32>
}

// -----

// The profile cannot follow recursion (memfit-inline rejects it too).
// CHECK: error: recursive call to 'self'; memfit cannot profile recursion
// INLINE: error: recursive call to 'self'; memfit-inline cannot inline recursion
func.func @recursion(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @self(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @self(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @self(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// No operands at all (this used to crash: the check read operand #0).
// CHECK: error: 'stablehlo.dynamic_slice' needs one start index per operand dimension
func.func @dynamic_slice_no_operands() -> tensor<2xf32> {
  %0 = "stablehlo.dynamic_slice"() <{slice_sizes = array<i64: 2>}> : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK: error: 'stablehlo.transpose' has permutation out of range or repeated for rank 2
func.func @not_a_permutation(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.transpose"(%x) <{permutation = array<i64: 0, 0>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK: error: 'stablehlo.reduce' has dimensions out of range or repeated for rank 1
func.func @reduce_dimension_out_of_range(%x: tensor<4xf32>, %z: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK: error: 'stablehlo.dot_general' has rhs batching/contracting dimensions out of range or repeated for rank 2
func.func @dot_dimension_out_of_range(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [7]>}> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// CHECK: error: 'stablehlo.broadcast_in_dim' attribute 'broadcast_dimensions' has 1 entries for rank 2
func.func @broadcast_dims_for_wrong_rank(%x: tensor<4x4xf32>) -> tensor<2x4x4xf32> {
  %0 = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4x4xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// CHECK: error: 'stablehlo.slice' attribute 'limit_indices' has 1 entries for rank 2
func.func @slice_indices_for_wrong_rank(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.slice"(%x) <{start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2>, strides = array<i64: 1, 1>}> : (tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK: error: 'stablehlo.while' body must take 2 arguments and return 2 values
func.func @while_body_returns_too_few(%i: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = "stablehlo.while"(%i, %x) ({
  ^bb0(%a: tensor<i32>, %b: tensor<4xf32>):
    %c = "stablehlo.compare"(%a, %a) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%a: tensor<i32>, %b: tensor<4xf32>):
    "stablehlo.return"(%a) : (tensor<i32>) -> ()
  }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
  return %0#1 : tensor<4xf32>
}

// -----

// CHECK: error: 'stablehlo.sort' dimension 2 is out of range for rank 1
func.func @sort_dimension_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.sort"(%x) <{dimension = 2 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%t) : (tensor<i1>) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Quantized element types are refused before any pass builds constants of
// them (issue 16).
// CHECK: error: 'stablehlo.add' operand #0: element type !quant.uniform<i8:f32, 0.5> is not a float, integer or complex type (quantized and dialect-specific element types are not supported)
func.func @quantized(%x: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>> {
  %0 = "stablehlo.add"(%x, %x) : (tensor<4x!quant.uniform<i8:f32, 0.5>>, tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>>
  return %0 : tensor<4x!quant.uniform<i8:f32, 0.5>>
}
