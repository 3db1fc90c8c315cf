// RUN: memfit-opt %s --memfit-profile=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: memfit-opt %s --memfit-profile=timeline=true -o /dev/null | FileCheck %s --check-prefix=TIMELINE
// RUN: memfit-opt %s --memfit-profile=top=1 -o /dev/null | FileCheck %s --check-prefix=TOP
// RUN: memfit-opt %s --memfit-profile="output=%t.json format=json" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: memfit-opt %s --memfit-profile | FileCheck %s --check-prefix=UNCHANGED
//
// The profile pass's options: JSON, the per-op timeline, how many tensors to
// list, writing to a file; and it leaves the IR unchanged.

// JSON:      "functions": [
// JSON:          "argument_bytes": 262144,
// JSON:          "name": "straight_line",
// JSON:          "output_bytes": 262144,
// JSON:          "peak_bytes": 524288,
// JSON:          "peak_op": "stablehlo.dot_general",

// The dot's result joins the argument; tanh then writes over the dot.
// TIMELINE-LABEL: memfit-profile: @straight_line
// TIMELINE:       timeline:
// TIMELINE-NEXT:    512.00 KiB  stablehlo.dot_general
// TIMELINE-NEXT:    512.00 KiB  stablehlo.tanh
// TIMELINE-NOT:   func.return

// TOP-LABEL: memfit-profile: @straight_line
// TOP:       largest tensors live at the peak:
// TOP-NEXT:    256.00 KiB  tensor<256x256xf32>
// TOP-NOT:     argument #0

// UNCHANGED-LABEL: func.func @straight_line
// UNCHANGED-NEXT:    "stablehlo.dot_general"
// UNCHANGED-NEXT:    "stablehlo.tanh"
// UNCHANGED-NEXT:    return
func.func @straight_line(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "stablehlo.tanh"(%0) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}
