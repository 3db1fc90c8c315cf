// An output assembled chunk by chunk goes into the buffer of a whole value
// of its type that the region reads only as the same chunks and that dies
// at the loop: in a loop body that adds a full-size partial product to its
// accumulator (acc + a . b, as a split gradient's dot accumulates), a split
// of the partial product by rows updates acc in place, its state starting
// as acc itself, instead of filling a second buffer of acc's size.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=800KB})' | FileCheck %s

// CHECK-LABEL: func.func @accumulate_in_place
// CHECK: "stablehlo.while"
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i32>, %[[ACC:[a-z0-9]+]]: tensor<64x2048xf32>
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i32>, %[[ACC2:[a-z0-9]+]]: tensor<64x2048xf32>
// The body's split: its state starts as the accumulator, which is not
// carried a second time (and no zeros of its size are made).
// CHECK-NOT: "stablehlo.broadcast_in_dim"
// CHECK: %[[IN:[0-9]+]]:{{[0-9]+}} = "stablehlo.while"(%{{[0-9]+}}, %[[ACC2]], %{{[a-z0-9]+}}, %{{[a-z0-9]+}})
// CHECK: ^bb0(%{{[a-z0-9]+}}: tensor<i64>, %[[ST:[a-z0-9]+]]: tensor<64x2048xf32>
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C:[0-9]+]]x2048xf32>
// CHECK: %[[OLD:[0-9]+]] = "stablehlo.dynamic_slice"(%[[ST]],
// CHECK: %[[NEW:[0-9]+]] = "stablehlo.add"(%[[OLD]], %{{[0-9]+}}) : (tensor<[[C]]x2048xf32>
// CHECK: "stablehlo.dynamic_update_slice"(%[[ST]], %[[NEW]],
func.func @accumulate_in_place(%a: tensor<64x8xf32>, %b: tensor<8x2048xf32>) -> tensor<64x2048xf32> {
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %init = "stablehlo.broadcast_in_dim"(%zero) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<64x2048xf32>
  %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %r:4 = "stablehlo.while"(%c0, %init, %a, %b) ({
  ^bb0(%i: tensor<i32>, %acc: tensor<64x2048xf32>, %x: tensor<64x8xf32>, %y: tensor<8x2048xf32>):
    %n = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %lt = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %acc: tensor<64x2048xf32>, %x: tensor<64x8xf32>, %y: tensor<8x2048xf32>):
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %d = "stablehlo.dot_general"(%x, %y) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x8xf32>, tensor<8x2048xf32>) -> tensor<64x2048xf32>
    %s = "stablehlo.add"(%acc, %d) : (tensor<64x2048xf32>, tensor<64x2048xf32>) -> tensor<64x2048xf32>
    "stablehlo.return"(%i1, %s, %x, %y) : (tensor<i32>, tensor<64x2048xf32>, tensor<64x8xf32>, tensor<8x2048xf32>) -> ()
  }) : (tensor<i32>, tensor<64x2048xf32>, tensor<64x8xf32>, tensor<8x2048xf32>) -> (tensor<i32>, tensor<64x2048xf32>, tensor<64x8xf32>, tensor<8x2048xf32>)
  return %r#1 : tensor<64x2048xf32>
}
