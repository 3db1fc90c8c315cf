// RUN: memfit-opt %s --memfit-rewrite | FileCheck %s
// RUN: memfit-opt %s --memfit-rewrite="top-k=false" | FileCheck %s --check-prefix=OFF

// A long f32 row: keys of the total order (bitcast, flip negatives), the
// maximum of each block of 32, the maxima back as f32 for XLA's fast TopK,
// the k picked blocks in increasing order, their elements gathered (batched
// gather), top_k of the candidates, positions mapped back to the row.
// CHECK-LABEL: func.func @long_row_f32
// CHECK: "stablehlo.reshape"(%arg0) : (tensor<8x65536xf32>) -> tensor<8x2048x32xf32>
// CHECK: "stablehlo.bitcast_convert"{{.*}} -> tensor<8x2048x32xi32>
// CHECK: "stablehlo.shift_right_arithmetic"
// CHECK: "stablehlo.xor"
// CHECK: "stablehlo.reduce"{{.*}}dimensions = array<i64: 2>
// CHECK: "stablehlo.maximum"
// CHECK: "stablehlo.bitcast_convert"{{.*}} -> tensor<8x2048xf32>
// CHECK: %[[BLK:.*]]:2 = "chlo.top_k"({{.*}}) <{k = 10 : i64}> {memfit.two_stage} : (tensor<8x2048xf32>)
// CHECK: %[[ORD:.*]] = "stablehlo.sort"(%[[BLK]]#1)
// CHECK: "stablehlo.gather"{{.*}}operand_batching_dims = [0]{{.*}} -> tensor<8x10x32xf32>
// CHECK: %[[CAND:.*]]:2 = "chlo.top_k"({{.*}}) <{k = 10 : i64}> {memfit.two_stage} : (tensor<8x320xf32>)
// CHECK: "stablehlo.multiply"
// CHECK: "stablehlo.iota"
// CHECK: %[[IDX:.*]] = "stablehlo.gather"({{.*}} -> tensor<8x10xi32>
// CHECK: return %[[CAND]]#0, %[[IDX]]
// OFF-LABEL: func.func @long_row_f32
// OFF-NEXT: "chlo.top_k"(%arg0) <{k = 10 : i64}> : (tensor<8x65536xf32>)
// OFF-NEXT: return
func.func @long_row_f32(%arg0: tensor<8x65536xf32>) -> (tensor<8x10xf32>, tensor<8x10xi32>) {
  %0:2 = "chlo.top_k"(%arg0) <{k = 10 : i64}> : (tensor<8x65536xf32>) -> (tensor<8x10xf32>, tensor<8x10xi32>)
  return %0#0, %0#1 : tensor<8x10xf32>, tensor<8x10xi32>
}

// A row the block does not divide: the full blocks are sliced off and the
// remainder joins the candidates whole, last (it holds the highest
// positions). f16 has no fast TopK on XLA:CPU: the top_k run on the keys
// converted to f32, and the values are gathered.
// CHECK-LABEL: func.func @remainder_f16
// CHECK: "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 4, 4096>, start_indices = array<i64: 0, 0>
// CHECK: "stablehlo.convert"{{.*}} -> tensor<4x128xf32>
// CHECK: "chlo.top_k"{{.*}} : (tensor<4x128xf32>)
// CHECK: %[[REM:.*]] = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 4, 4099>, start_indices = array<i64: 0, 4096>
// CHECK: %[[CAT:.*]] = "stablehlo.concatenate"({{.*}}, %[[REM]])
// CHECK: "chlo.top_k"{{.*}} : (tensor<4x99xf32>)
// CHECK: %[[VALS:.*]] = "stablehlo.gather"(%[[CAT]],
// CHECK: return %[[VALS]]
func.func @remainder_f16(%arg0: tensor<4x4099xf16>) -> (tensor<4x3xf16>, tensor<4x3xi32>) {
  %0:2 = "chlo.top_k"(%arg0) <{k = 3 : i64}> : (tensor<4x4099xf16>) -> (tensor<4x3xf16>, tensor<4x3xi32>)
  return %0#0, %0#1 : tensor<4x3xf16>, tensor<4x3xi32>
}

// Integers are their own keys; 32-bit keys become f64 exactly.
// CHECK-LABEL: func.func @int32_row
// CHECK-NOT: "stablehlo.bitcast_convert"
// CHECK: "stablehlo.convert"{{.*}} -> tensor<2x256xf64>
func.func @int32_row(%arg0: tensor<2x8192xi32>) -> (tensor<2x4xi32>, tensor<2x4xi32>) {
  %0:2 = "chlo.top_k"(%arg0) <{k = 4 : i64}> : (tensor<2x8192xi32>) -> (tensor<2x4xi32>, tensor<2x4xi32>)
  return %0#0, %0#1 : tensor<2x4xi32>, tensor<2x4xi32>
}

// Leading dims are flattened into rows and restored.
// CHECK-LABEL: func.func @rank3
// CHECK: "stablehlo.reshape"(%arg0) : (tensor<2x3x65536xf32>) -> tensor<6x65536xf32>
// CHECK: "stablehlo.reshape"{{.*}} : (tensor<6x5xf32>) -> tensor<2x3x5xf32>
// CHECK: "stablehlo.reshape"{{.*}} : (tensor<6x5xi32>) -> tensor<2x3x5xi32>
func.func @rank3(%arg0: tensor<2x3x65536xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xi32>) {
  %0:2 = "chlo.top_k"(%arg0) <{k = 5 : i64}> : (tensor<2x3x65536xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xi32>)
  return %0#0, %0#1 : tensor<2x3x5xf32>, tensor<2x3x5xi32>
}

// A short row stays one top_k (the model predicts no gain).
// CHECK-LABEL: func.func @short_row
// CHECK-NEXT: "chlo.top_k"(%arg0) <{k = 10 : i64}> : (tensor<4x64xf32>)
// CHECK-NEXT: return
func.func @short_row(%arg0: tensor<4x64xf32>) -> (tensor<4x10xf32>, tensor<4x10xi32>) {
  %0:2 = "chlo.top_k"(%arg0) <{k = 10 : i64}> : (tensor<4x64xf32>) -> (tensor<4x10xf32>, tensor<4x10xi32>)
  return %0#0, %0#1 : tensor<4x10xf32>, tensor<4x10xi32>
}
