// The worked example of docs/architecture.md: support for a new op is one
// row of the op table. jax writes jax.scipy.special.i1e as chlo.bessel_i1e;
// its row in lib/IR/OpTable.cpp,
//   COSTLY_UNARY("chlo.bessel_i1e"),
// says it is elementwise (so DimMapping passes every dimension through it),
// fusible (so the FusionModel fuses it into its consumer, and memfit-split
// recomputes it per chunk) and costly (XLA does not duplicate it into
// several consumers). Without the row the profile materialises its 781 KiB
// result and memfit-split stops at it ("'chlo.bessel_i1e' needs the split
// dimension whole").
// RUN: memfit-opt %s --memfit-profile -o /dev/null | FileCheck %s --check-prefix=PROFILE
// RUN: memfit-opt %s --pass-pipeline='builtin.module(memfit-split{memory-limit=900KB})' | FileCheck %s

// The products a_i * b_j are fused into the Bessel function, which is fused
// into the reduce: only its 781 KiB result is a buffer.
// PROFILE: peak: 1.14 MiB (1200016 B) at stablehlo.reduce
// PROFILE-NOT: stablehlo.multiply
// PROFILE: 781.25 KiB  tensor<2x100000xf32>  chlo.bessel_i1e

// CHECK-LABEL: func.func public @bessel_sums
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dynamic_slice"({{.*}}slice_sizes = array<i64: 25088>}>
// CHECK: %[[P:.*]] = "stablehlo.multiply"({{.*}}) : (tensor<2x25088xf32>, tensor<2x25088xf32>)
// CHECK: "chlo.bessel_i1e"(%[[P]]) : (tensor<2x25088xf32>) -> tensor<2x25088xf32>
// CHECK: "stablehlo.reduce"
// CHECK: "chlo.bessel_i1e"({{.*}}) : (tensor<2x24736xf32>) -> tensor<2x24736xf32>
// CHECK-NOT: tensor<2x100000xf32>
// CHECK: return
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2xf32>, tensor<100000xf32>) -> tensor<2xf32>, sym_name = "bessel_sums", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<100000xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x100000xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<100000xf32>) -> tensor<2x100000xf32>
    %2 = "stablehlo.multiply"(%0, %1) : (tensor<2x100000xf32>, tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %3 = "chlo.bessel_i1e"(%2) : (tensor<2x100000xf32>) -> tensor<2x100000xf32>
    %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %6 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%6) : (tensor<f32>) -> ()
    }) : (tensor<2x100000xf32>, tensor<f32>) -> tensor<2xf32>
    "func.return"(%5) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
