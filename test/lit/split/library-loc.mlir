// An op made inside an installed library (flax's attention, called from the
// user's model) is named by the library's line and by the user's line that
// called it: the innermost frame outside site-packages.
// RUN: not memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=300KB})' 2>&1 | FileCheck %s
// CHECK: the 781.25 KiB result of 'stablehlo.multiply' (at /venv/lib/python3.12/site-packages/flax/linen/attention.py:146:19, called from model.py:12:5) cannot be split
#lib = loc("/venv/lib/python3.12/site-packages/flax/linen/attention.py":146:19)
#lib_caller = loc("/venv/lib/python3.12/site-packages/flax/linen/module.py":700:3)
#user = loc("model.py":12:5)
#top = loc("train.py":30:1)
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<50000xf32>) -> tensor<4xf32>, sym_name = "attention", sym_visibility = "public"}> ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<50000xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%a) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x50000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%b) <{broadcast_dimensions = array<i64: 1>}> : (tensor<50000xf32>) -> tensor<4x50000xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<4x50000xf32>, tensor<4x50000xf32>) -> tensor<4x50000xf32> loc(callsite(#lib at callsite(#lib_caller at callsite(#user at #top))))
    %3 = "stablehlo.sort"(%2) <{dimension = 1 : i64, is_stable = false}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %c = "stablehlo.compare"(%x, %y) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%c) : (tensor<i1>) -> ()
    }) : (tensor<4x50000xf32>) -> tensor<4x50000xf32>
    %4 = "stablehlo.slice"(%3) <{limit_indices = array<i64: 4, 50000>, start_indices = array<i64: 0, 49999>, strides = array<i64: 1, 1>}> : (tensor<4x50000xf32>) -> tensor<4x1xf32>
    %5 = "stablehlo.reshape"(%4) : (tensor<4x1xf32>) -> tensor<4xf32>
    "func.return"(%5) : (tensor<4xf32>) -> ()
  }) : () -> () loc(unknown)
}) : () -> ()
