// RUN: memfit-opt %s --memfit-export-buffers="function=loop" -o /dev/null | FileCheck %s --check-prefix=LOOP
// RUN: memfit-opt %s --memfit-export-buffers="function=unknown_trips" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
//
// A stablehlo.while is one sub-schedule, weighted by its trip count, not
// unrolled.

// The trip count is read from the cond (i < 8, i from 0, step 1): the body's
// entries have weight 8. The dot before the loop dies at it, so the body's
// new carried value writes its buffer in place (XLA aliases loop operand,
// body parameter and result): one buffer of two values.
// LOOP:         "name": "stablehlo.dot_general",
// LOOP-NEXT:    "location": "{{.*}}",
// LOOP-NEXT:    "flops": 8192,
// LOOP-NEXT:    "weight": 1,
// LOOP:         "name": "stablehlo.add",
// LOOP:         "weight": 8,
// LOOP:         "name": "stablehlo.dot_general",
// LOOP:         "weight": 8,
// LOOP:         "operands": [1],
// LOOP-NEXT:    "results": [3]
// The tanh is fused into the add, which writes the carried buffer in place.
// LOOP:         "name": "stablehlo.add",
// LOOP-NEXT:    "location": "{{.*}}",
// LOOP-NEXT:    "flops": 512,
// LOOP-NEXT:    "weight": 8,
// LOOP:         "operands": [3, 1],
// LOOP-NEXT:    "results": []
// LOOP:         "name": "dot_general:16x16xf32",
// LOOP-NEXT:    "size": 1024,
// LOOP-NEXT:    "start": 0,
// LOOP-NEXT:    "end": 3,
// LOOP-NEXT:    "uses": [2, 3],
// LOOP-NEXT:    "kind": "output",
// LOOP-NEXT:    "values": 2
func.func @loop(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %init = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %r:2 = "stablehlo.while"(%c0, %init) ({
  ^bb0(%i: tensor<i32>, %a: tensor<16x16xf32>):
    %n = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
    %p = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %a: tensor<16x16xf32>):
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %d = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    %t = "stablehlo.tanh"(%d) : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %s = "stablehlo.add"(%t, %a) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
    "stablehlo.return"(%i1, %s) : (tensor<i32>, tensor<16x16xf32>) -> ()
  }) : (tensor<i32>, tensor<16x16xf32>) -> (tensor<i32>, tensor<16x16xf32>)
  return %r#1 : tensor<16x16xf32>
}

// A bound that is not a constant: a warning, and the body weighted 1.
// UNKNOWN: warning: memfit-export-buffers: cannot read this loop's trip count from its cond; its body is weighted 1
// UNKNOWN:      "name": "stablehlo.add",
// UNKNOWN-NEXT: "location": "{{.*}}",
// UNKNOWN-NEXT: "flops": 1,
// UNKNOWN-NEXT: "weight": 1,
func.func @unknown_trips(%n: tensor<i32>, %x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %r:2 = "stablehlo.while"(%c0, %x) ({
  ^bb0(%i: tensor<i32>, %a: tensor<16x16xf32>):
    %p = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %a: tensor<16x16xf32>):
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %t = "stablehlo.tanh"(%a) : (tensor<16x16xf32>) -> tensor<16x16xf32>
    "stablehlo.return"(%i1, %t) : (tensor<i32>, tensor<16x16xf32>) -> ()
  }) : (tensor<i32>, tensor<16x16xf32>) -> (tensor<i32>, tensor<16x16xf32>)
  return %r#1 : tensor<16x16xf32>
}
