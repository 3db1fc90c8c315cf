// Queries and keys from the same hidden rows h (attention in a transformer
// block). Splitting the scores by query rows pulls h = x * x into the
// region; k = h wk, reached forward from h, needs h whole (all keys), so it
// is kept out of the region: computed once before the loop from the
// original h, and carried in whole, while q = h wq is computed per chunk.
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB})' | FileCheck %s
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=100KB})' | FileCheck %s --check-prefix=NOBIG
// NOBIG-NOT: tensor<256x256xf32>

// CHECK-LABEL: func.func public @keys_from_same_rows
// CHECK: %[[K:.*]] = "stablehlo.dot_general"(%{{.*}}, %arg2){{.*}} -> tensor<256x4xf32>
// CHECK: "stablehlo.while"({{.*}}%[[K]]
// CHECK: "stablehlo.multiply"{{.*}} -> tensor<[[C:[0-9]+]]x4xf32>
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C]]x4xf32>
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C]]x256xf32>
// CHECK: "stablehlo.return"
// The same rows give the values v = h wv, and the scores reach the product
// with v through several elementwise ops (a causal mask, a scale, the
// softmax's shift): v's rows reach that product first, as a sink along the
// keys. v is reached forward from the pulled-in h, so the edge is cut and
// the product joins from the scores' rows; v is kept out like k (both
// computed once before the loop), and the split is along the query rows.
// CHECK-LABEL: func.func public @values_from_same_rows
// CHECK: %[[K:.*]] = "stablehlo.dot_general"(%{{.*}}, %arg2){{.*}} -> tensor<256x4xf32>
// CHECK: %[[V:.*]] = "stablehlo.dot_general"(%{{.*}}, %arg3){{.*}} -> tensor<256x4xf32>
// CHECK: "stablehlo.while"({{.*}}%[[K]], %[[V]])
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C:[0-9]+]]x4xf32>
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C]]x256xf32>
// CHECK: "stablehlo.exponential"{{.*}} -> tensor<[[C]]x256xf32>
// CHECK: "stablehlo.dot_general"{{.*}} -> tensor<[[C]]x4xf32>
// CHECK: "stablehlo.return"
// CHECK: memfit.split = {{{.*}}dim = 0 : i64, kind = "map"
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<256x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<256x4xf32>) -> tensor<256x4xf32>, sym_name = "keys_from_same_rows", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<256x4xf32>):
    %0 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<256x4xf32>, tensor<256x4xf32>) -> tensor<256x4xf32>
    %1 = "stablehlo.dot_general"(%0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x4xf32>, tensor<4x4xf32>) -> tensor<256x4xf32>
    %2 = "stablehlo.dot_general"(%0, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x4xf32>, tensor<4x4xf32>) -> tensor<256x4xf32>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 1, 0>}> : (tensor<256x4xf32>) -> tensor<4x256xf32>
    %4 = "stablehlo.dot_general"(%1, %3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x4xf32>, tensor<4x256xf32>) -> tensor<256x256xf32>
    %5 = "stablehlo.exponential"(%4) : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %6 = "stablehlo.dot_general"(%5, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256x4xf32>) -> tensor<256x4xf32>
    "func.return"(%6) : (tensor<256x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<256x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<256x4xf32>, sym_name = "values_from_same_rows", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<256x4xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>):
    %0 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<256x4xf32>, tensor<256x4xf32>) -> tensor<256x4xf32>
    %1 = "stablehlo.dot_general"(%0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x4xf32>, tensor<4x4xf32>) -> tensor<256x4xf32>
    %2 = "stablehlo.dot_general"(%0, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x4xf32>, tensor<4x4xf32>) -> tensor<256x4xf32>
    %v = "stablehlo.dot_general"(%0, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x4xf32>, tensor<4x4xf32>) -> tensor<256x4xf32>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 1, 0>}> : (tensor<256x4xf32>) -> tensor<4x256xf32>
    %4 = "stablehlo.dot_general"(%1, %3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x4xf32>, tensor<4x256xf32>) -> tensor<256x256xf32>
    %a = "stablehlo.negate"(%4) : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %b = "stablehlo.negate"(%a) : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %c = "stablehlo.tanh"(%b) : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %5 = "stablehlo.exponential"(%c) : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %6 = "stablehlo.dot_general"(%5, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<256x256xf32>, tensor<256x4xf32>) -> tensor<256x4xf32>
    "func.return"(%6) : (tensor<256x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
