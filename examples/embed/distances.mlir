// The largest squared distance from each of 2 points to 100000 others, as
// jax writes it: the distances (a 781 KiB temporary) in a private helper
// reached by func.call. Under a 900000-byte limit memfit inlines the helper
// and splits the distances into a stablehlo.while over chunks.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2xf32>, tensor<100000xf32>) -> tensor<2xf32>, sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<100000xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x100000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<100000xf32>) -> tensor<2x100000xf32>
    %2 = "func.call"(%0, %1) <{callee = @_sqdist}> : (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %3 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.reduce"(%2, %3) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %5 = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%5) : (tensor<f32>) -> ()
    }) : (tensor<2x100000xf32>, tensor<f32>) -> tensor<2xf32>
    "func.return"(%4) : (tensor<2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>, sym_name = "_sqdist", sym_visibility = "private"}> ({
  ^bb0(%x: tensor<2x100000xf32>, %y: tensor<2x100000xf32>):
    %d = "stablehlo.subtract"(%x, %y) : (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %s = "stablehlo.multiply"(%d, %d) : (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>
    "func.return"(%s) : (tensor<2x100000xf32>) -> ()
  }) : () -> ()
}) : () -> ()
