// RUN: memfit-opt %s --memfit-profile -o /dev/null | FileCheck %s
//
// memfit-profile on hand-written generic StableHLO. Every expected number is
// worked out in the comment above its function from the model in
// lib/Analysis/MemoryProfile.cpp: arguments are live throughout, fused
// (elementwise/layout) values take no memory, fusion roots' results are
// buffers that live until their last reader, and a same-sized input that
// dies at an elementwise op lends it its buffer.

// dot 256x256xf32 (256 KiB) then tanh of it: tanh writes over the dot's
// buffer, so the peak is the argument + one 256 KiB buffer.
// CHECK-LABEL: memfit-profile: @straight_line
// CHECK-NEXT:    arguments: 256.00 KiB (262144 B)
// CHECK-NEXT:    outputs:   256.00 KiB (262144 B)
// CHECK-NEXT:    peak:      512.00 KiB (524288 B) at stablehlo.dot_general
func.func @straight_line(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = "stablehlo.tanh"(%0) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}

// A kNN distance: the 512x512x16 broadcasts (16 MiB) fuse into the reduce
// over the 16-wide dimension; only the 512x512 result (1 MiB) is a buffer.
// Peak = 2 x 32 KiB arguments + 1 MiB.
// CHECK-LABEL: memfit-profile: @fused_broadcast_chain
// CHECK:         peak:      1.06 MiB (1114112 B) at stablehlo.reduce
// CHECK-NEXT:    largest tensors live at the peak:
// CHECK-NEXT:      1.00 MiB  tensor<512x512xf32>  stablehlo.reduce
// CHECK-NEXT:     32.00 KiB  tensor<512x16xf32>  argument #0
// CHECK-NEXT:     32.00 KiB  tensor<512x16xf32>  argument #1
// CHECK-NOT:     tensor<512x512x16xf32>
func.func @fused_broadcast_chain(%x: tensor<512x16xf32>, %q: tensor<512x16xf32>) -> tensor<512x512xf32> {
  %bx = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<512x16xf32>) -> tensor<512x512x16xf32>
  %bq = "stablehlo.broadcast_in_dim"(%q) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<512x16xf32>) -> tensor<512x512x16xf32>
  %d = "stablehlo.subtract"(%bq, %bx) : (tensor<512x512x16xf32>, tensor<512x512x16xf32>) -> tensor<512x512x16xf32>
  %s = "stablehlo.multiply"(%d, %d) : (tensor<512x512x16xf32>, tensor<512x512x16xf32>) -> tensor<512x512x16xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %r = "stablehlo.reduce"(%s, %z) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<512x512x16xf32>, tensor<f32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

// A reduce over a 64-wide dimension does not fuse its producer (XLA:CPU
// splits reductions longer than 32): exp(x) is a 64 KiB buffer.
// Peak = 64 KiB argument + 64 KiB exp + 1 KiB result.
// CHECK-LABEL: memfit-profile: @long_reduce_materialises
// CHECK:         peak:      129.00 KiB (132096 B) at stablehlo.reduce
func.func @long_reduce_materialises(%x: tensor<256x64xf32>) -> tensor<256xf32> {
  %e = "stablehlo.exponential"(%x) : (tensor<256x64xf32>) -> tensor<256x64xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %r = "stablehlo.reduce"(%e, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<256x64xf32>, tensor<f32>) -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// The same over a 32-wide dimension fuses: 32 KiB argument + 1 KiB result.
// CHECK-LABEL: memfit-profile: @short_reduce_fuses
// CHECK:         peak:      33.00 KiB (33792 B) at stablehlo.reduce
func.func @short_reduce_fuses(%x: tensor<256x32xf32>) -> tensor<256xf32> {
  %e = "stablehlo.exponential"(%x) : (tensor<256x32xf32>) -> tensor<256x32xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %r = "stablehlo.reduce"(%e, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<256x32xf32>, tensor<f32>) -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// exp is too expensive to compute twice: with two consumers it is a buffer.
// Peak = 8 KiB argument + 8 KiB exp + two 512 B results.
// CHECK-LABEL: memfit-profile: @expensive_value_shared
// CHECK:         peak:      17.00 KiB (17408 B)
func.func @expensive_value_shared(%x: tensor<128x16xf32>) -> (tensor<128xf32>, tensor<128xf32>) {
  %e = "stablehlo.exponential"(%x) : (tensor<128x16xf32>) -> tensor<128x16xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %r1 = "stablehlo.reduce"(%e, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<128x16xf32>, tensor<f32>) -> tensor<128xf32>
  %r2 = "stablehlo.reduce"(%e, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<128x16xf32>, tensor<f32>) -> tensor<128xf32>
  return %r1, %r2 : tensor<128xf32>, tensor<128xf32>
}

// An add is cheap: each consumer recomputes it, no buffer.
// Peak = 8 KiB argument + two 512 B results.
// CHECK-LABEL: memfit-profile: @cheap_value_shared
// CHECK:         peak:      9.00 KiB (9216 B)
func.func @cheap_value_shared(%x: tensor<128x16xf32>) -> (tensor<128xf32>, tensor<128xf32>) {
  %e = "stablehlo.add"(%x, %x) : (tensor<128x16xf32>, tensor<128x16xf32>) -> tensor<128x16xf32>
  %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %r1 = "stablehlo.reduce"(%e, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<128x16xf32>, tensor<f32>) -> tensor<128xf32>
  %r2 = "stablehlo.reduce"(%e, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<128x16xf32>, tensor<f32>) -> tensor<128xf32>
  return %r1, %r2 : tensor<128xf32>, tensor<128xf32>
}

// A transpose feeding a dot folds into the dot: no 32 KiB copy of %w.
// Peak = 2 x 32 KiB arguments + 16 KiB result.
// CHECK-LABEL: memfit-profile: @dot_transpose_folds
// CHECK:         peak:      80.00 KiB (81920 B) at stablehlo.dot_general
// CHECK-NOT:     stablehlo.transpose
func.func @dot_transpose_folds(%x: tensor<64x128xf32>, %w: tensor<64x128xf32>) -> tensor<64x64xf32> {
  %t = "stablehlo.transpose"(%w) <{permutation = array<i64: 1, 0>}> : (tensor<64x128xf32>) -> tensor<128x64xf32>
  %d = "stablehlo.dot_general"(%x, %t) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// A reshape of an argument feeding a dot is a bitcast: no copy either.
// CHECK-LABEL: memfit-profile: @reshape_is_bitcast
// CHECK:         peak:      80.00 KiB (81920 B) at stablehlo.dot_general
// CHECK-NOT:     stablehlo.reshape
func.func @reshape_is_bitcast(%x: tensor<64x2x64xf32>, %w: tensor<128x64xf32>) -> tensor<64x64xf32> {
  %r = "stablehlo.reshape"(%x) : (tensor<64x2x64xf32>) -> tensor<64x128xf32>
  %d = "stablehlo.dot_general"(%r, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
  return %d : tensor<64x64xf32>
}

// A loop carrying a counter, an accumulator and %w (passed through):
//   outside: %w 256 KiB + %init 256 KiB (the accumulator's first buffer)
//            + the counter result 4 B (its operand is a constant, no buffer)
//   body:    dot 256 KiB; i+1 and acc+dot are written into their slots'
//            buffers (XLA aliases the body's parameter and root; the old
//            counter and accumulator die there)
//   => 262144 + 262144 + 4 + 262144 = 786436 B at the while.
// The pass-through %w is not copied, and the loop's accumulator result
// takes over %init's buffer.
// CHECK-LABEL: memfit-profile: @while_loop
// CHECK:         peak:      768.00 KiB (786436 B) at stablehlo.while
func.func @while_loop(%w: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %init = "stablehlo.broadcast_in_dim"(%zero) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x256xf32>
  %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %r:3 = "stablehlo.while"(%c0, %init, %w) ({
  ^bb0(%i: tensor<i32>, %acc: tensor<256x256xf32>, %ww: tensor<256x256xf32>):
    %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %acc: tensor<256x256xf32>, %ww: tensor<256x256xf32>):
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %d = "stablehlo.dot_general"(%acc, %ww) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    %s = "stablehlo.add"(%acc, %d) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    "stablehlo.return"(%i1, %s, %ww) : (tensor<i32>, tensor<256x256xf32>, tensor<256x256xf32>) -> ()
  }) : (tensor<i32>, tensor<256x256xf32>, tensor<256x256xf32>) -> (tensor<i32>, tensor<256x256xf32>, tensor<256x256xf32>)
  return %r#1 : tensor<256x256xf32>
}

// jax's segment_sum scatters into zeros: XLA writes the zeros once, into the
// buffer the scatter then updates in place (the result takes over its input).
//   arguments 256 B + 64 KiB, zeros 256 KiB, the update region's scalar
//   4 B => 327940 B at the scatter (the result is not a second buffer).
// CHECK-LABEL: memfit-profile: @scatter_in_place
// CHECK:         peak:      320.25 KiB (327940 B) at stablehlo.scatter
func.func @scatter_in_place(%idx: tensor<64x1xi32>, %u: tensor<64x256xf32>) -> tensor<256x256xf32> {
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %z = "stablehlo.broadcast_in_dim"(%zero) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x256xf32>
  %s = "stablehlo.scatter"(%z, %idx, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%t) : (tensor<f32>) -> ()
  }) : (tensor<256x256xf32>, tensor<64x1xi32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  return %s : tensor<256x256xf32>
}

// A loop body whose old accumulator is still read after the new one is
// made (the second dot reads %acc after acc+dot): the new value cannot take
// the slot's buffer, and the body holds both.
//   outside: %w 256 KiB + %init 256 KiB + the counter 4 B + the second
//            slot's result 256 KiB (a new value each iteration; its operand
//            %w is an argument)
//   body:    dot 256 KiB, acc+dot over it, then the second dot 256 KiB
//   => 786436 + 524288 = 1310724 B at the while.
// CHECK-LABEL: memfit-profile: @while_reads_old_value
// CHECK:         peak:      1.25 MiB (1310724 B) at stablehlo.while
func.func @while_reads_old_value(%w: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %init = "stablehlo.broadcast_in_dim"(%zero) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<256x256xf32>
  %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %r:3 = "stablehlo.while"(%c0, %init, %w) ({
  ^bb0(%i: tensor<i32>, %acc: tensor<256x256xf32>, %ww: tensor<256x256xf32>):
    %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %acc: tensor<256x256xf32>, %ww: tensor<256x256xf32>):
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %d = "stablehlo.dot_general"(%acc, %ww) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    %s = "stablehlo.add"(%acc, %d) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    %e = "stablehlo.dot_general"(%ww, %acc) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    "stablehlo.return"(%i1, %s, %e) : (tensor<i32>, tensor<256x256xf32>, tensor<256x256xf32>) -> ()
  }) : (tensor<i32>, tensor<256x256xf32>, tensor<256x256xf32>) -> (tensor<i32>, tensor<256x256xf32>, tensor<256x256xf32>)
  return %r#1 : tensor<256x256xf32>
}

// A branch writes its result into the if's result buffer: the dot in the
// taken branch is the result, not extra. Peak = 1 B + 64 KiB + 64 KiB.
// CHECK-LABEL: memfit-profile: @conditional_region
// CHECK:         peak:      128.00 KiB (131073 B) at stablehlo.if
func.func @conditional_region(%p: tensor<i1>, %x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %r = "stablehlo.if"(%p) ({
    %d = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
    "stablehlo.return"(%d) : (tensor<128x128xf32>) -> ()
  }, {
    "stablehlo.return"(%x) : (tensor<128x128xf32>) -> ()
  }) : (tensor<i1>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// Calls are analysed across: @helper holds two 64 KiB dots at once, one of
// which it returns (the call's result). Peak = 64 KiB argument + 64 KiB
// result + 64 KiB inside the call.
// CHECK-LABEL: memfit-profile: @calls_profiled_across
// CHECK:         peak:      192.00 KiB (196608 B) at func.call
// CHECK-LABEL: memfit-profile: @helper
// CHECK:         peak:      192.00 KiB (196608 B) at stablehlo.dot_general
func.func @calls_profiled_across(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %r = func.call @helper(%x) : (tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
func.func private @helper(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %d = "stablehlo.dot_general"(%x, %x) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %e = "stablehlo.dot_general"(%d, %d) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  return %e : tensor<128x128xf32>
}

// A chain of 40 fused `x + x`: a DAG whose paths double at each step. The
// fusion inputs must be collected once per producer (this used to take 2^40
// steps). Peak = argument + the dot operand + the dot, 64 B each.
// CHECK-LABEL: memfit-profile: @fused_diamond_chain
// CHECK:         peak:      192 B (192 B) at stablehlo.dot_general
func.func @fused_diamond_chain(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a0 = "stablehlo.add"(%x, %x) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a1 = "stablehlo.add"(%a0, %a0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a2 = "stablehlo.add"(%a1, %a1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a3 = "stablehlo.add"(%a2, %a2) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a4 = "stablehlo.add"(%a3, %a3) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a5 = "stablehlo.add"(%a4, %a4) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a6 = "stablehlo.add"(%a5, %a5) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a7 = "stablehlo.add"(%a6, %a6) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a8 = "stablehlo.add"(%a7, %a7) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a9 = "stablehlo.add"(%a8, %a8) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a10 = "stablehlo.add"(%a9, %a9) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a11 = "stablehlo.add"(%a10, %a10) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a12 = "stablehlo.add"(%a11, %a11) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a13 = "stablehlo.add"(%a12, %a12) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a14 = "stablehlo.add"(%a13, %a13) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a15 = "stablehlo.add"(%a14, %a14) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a16 = "stablehlo.add"(%a15, %a15) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a17 = "stablehlo.add"(%a16, %a16) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a18 = "stablehlo.add"(%a17, %a17) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a19 = "stablehlo.add"(%a18, %a18) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a20 = "stablehlo.add"(%a19, %a19) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a21 = "stablehlo.add"(%a20, %a20) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a22 = "stablehlo.add"(%a21, %a21) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a23 = "stablehlo.add"(%a22, %a22) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a24 = "stablehlo.add"(%a23, %a23) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a25 = "stablehlo.add"(%a24, %a24) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a26 = "stablehlo.add"(%a25, %a25) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a27 = "stablehlo.add"(%a26, %a26) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a28 = "stablehlo.add"(%a27, %a27) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a29 = "stablehlo.add"(%a28, %a28) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a30 = "stablehlo.add"(%a29, %a29) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a31 = "stablehlo.add"(%a30, %a30) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a32 = "stablehlo.add"(%a31, %a31) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a33 = "stablehlo.add"(%a32, %a32) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a34 = "stablehlo.add"(%a33, %a33) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a35 = "stablehlo.add"(%a34, %a34) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a36 = "stablehlo.add"(%a35, %a35) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a37 = "stablehlo.add"(%a36, %a36) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a38 = "stablehlo.add"(%a37, %a37) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a39 = "stablehlo.add"(%a38, %a38) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = "stablehlo.dot_general"(%a39, %a39) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}
