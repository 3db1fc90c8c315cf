// Producer root: the only value over the limit is exp(x - max(x)), a row
// of 65536 logits x = h @ W. Split from exp along its columns, the region
// would need max(x) over the same columns before exp (the seed itself reads
// what the loop accumulates), and its one row cannot be split: no plan. The
// split also tries the value exp is computed from elementwise (x, through
// subtract, broadcasts aside), and from there takes two loops along the
// columns: the first accumulates the max, the second recomputes x's chunks
// for the sum of exponentials. The 256 KiB row is never built.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=4400KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=4400KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<1x65536xf32>

// CHECK-LABEL: func.func public @lse_of_one_row
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dynamic_slice"(%{{.*}}) <{slice_sizes = array<i64: 16, [[C:[0-9]+]]>}>
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<1x[[C]]xf32>
// CHECK: memfit.split = {{{.*}}dim = 1 : i64, kind = "first-of-two-passes"{{.*}}seed = "stablehlo.dot_general"
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<1x[[C]]xf32>
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<1x[[C]]xf32>
// CHECK: memfit.split = {{{.*}}dim = 1 : i64, kind = "accumulate"
// CHECK: return
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<1x16xf32>, tensor<16x65536xf32>) -> tensor<1xf32>, sym_name = "lse_of_one_row", sym_visibility = "public"}> ({
  ^bb0(%h: tensor<1x16xf32>, %w: tensor<16x65536xf32>):
    %x = "stablehlo.dot_general"(%h, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<1x16xf32>, tensor<16x65536xf32>) -> tensor<1x65536xf32>
    %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %m = "stablehlo.reduce"(%x, %ninf) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<1x65536xf32>, tensor<f32>) -> tensor<1xf32>
    %bm = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0>}> : (tensor<1xf32>) -> tensor<1x65536xf32>
    %d = "stablehlo.subtract"(%x, %bm) : (tensor<1x65536xf32>, tensor<1x65536xf32>) -> tensor<1x65536xf32>
    %e = "stablehlo.exponential"(%d) : (tensor<1x65536xf32>) -> tensor<1x65536xf32>
    %zero = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %s = "stablehlo.reduce"(%e, %zero) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<1x65536xf32>, tensor<f32>) -> tensor<1xf32>
    %l = "stablehlo.log"(%s) : (tensor<1xf32>) -> tensor<1xf32>
    %out = "stablehlo.add"(%l, %m) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    "func.return"(%out) : (tensor<1xf32>) -> ()
  }) : () -> ()
}) : () -> ()
