// Second pass: e = exp(a_i * j) is split along j (one row of 20000 does not
// fit twice in the limit). Its row sums s (a reduce over j, a sink) are
// needed by e * s, which reads e again: no single pass can do that. The
// first loop accumulates s; the ops that need s stay outside it, reading
// the original e, and the next split recomputes e in chunks in a second
// loop that takes s as a live-in. (A gradient reads its forward pass's
// reductions the same way.)
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<8x20000xf32>

// CHECK-LABEL: func.func public @second_pass
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<8x[[C:[0-9]+]]xf32>
// CHECK: "stablehlo.reduce"
// CHECK: "stablehlo.return"
// The remainder step finishes s, which the second loop carries as a live-in.
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<8x32xf32>
// CHECK: %[[S:.*]] = "stablehlo.add"{{.*}} -> tensor<8xf32>
// CHECK: "stablehlo.while"({{.*}}, %[[S]])
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<8x[[D:[0-9]+]]xf32>
// CHECK: "stablehlo.multiply"{{.*}} -> tensor<8x[[D]]xf32>
// CHECK: "stablehlo.reduce"
// CHECK: "stablehlo.return"
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<8xf32>) -> tensor<8xf32>, sym_name = "second_pass", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8x20000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x20000xf32>
    %2 = "stablehlo.multiply"(%1, %0) : (tensor<8x20000xf32>, tensor<8x20000xf32>) -> tensor<8x20000xf32>
    %3 = "stablehlo.exponential"(%2) : (tensor<8x20000xf32>) -> tensor<8x20000xf32>
    %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<8x20000xf32>, tensor<f32>) -> tensor<8xf32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0>}> : (tensor<8xf32>) -> tensor<8x20000xf32>
    %7 = "stablehlo.multiply"(%3, %6) : (tensor<8x20000xf32>, tensor<8x20000xf32>) -> tensor<8x20000xf32>
    %8 = "stablehlo.log"(%7) : (tensor<8x20000xf32>) -> tensor<8x20000xf32>
    %9 = "stablehlo.reduce"(%8, %4) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) : (tensor<8x20000xf32>, tensor<f32>) -> tensor<8xf32>
    "func.return"(%9) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
