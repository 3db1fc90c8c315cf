// jax gives functions no location; an error about the whole function (its
// arguments and outputs alone exceed the limit) points at its return, which
// carries the user's line, instead of `loc(unknown)` (issue 16's fuzzer
// counts an error without a location as a failure).
// RUN: not memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100B})' 2>&1 | FileCheck %s
// CHECK: user.py:7:3: error: memfit-split: cannot fit @main into 100 B (100 bytes): its arguments and outputs alone take 256 B
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<32xf32>) -> tensor<32xf32>, sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%x: tensor<32xf32>):
    %0 = "stablehlo.sine"(%x) : (tensor<32xf32>) -> tensor<32xf32> loc("user.py":6:3)
    "func.return"(%0) : (tensor<32xf32>) -> () loc("user.py":7:3)
  }) : () -> () loc(unknown)
}) : () -> ()
