// RUN: not memfit-opt %s --memfit-inline 2>&1 | FileCheck %s
// RUN: memfit-opt %s --memfit-profile -o /dev/null | FileCheck %s --check-prefix=PROFILE
//
// A call tree: each of 24 levels calls the next twice. Inlining it would
// copy the leaf 2^24 times; memfit-inline refuses before changing anything,
// while memfit-profile analyses across the calls, each callee once.

// CHECK: error: inlining every call would give 'f0' more than 2000000 ops; memfit-inline stops here
// Each level keeps its first call's 16 B result while the second runs: a
// callee fN (N = 1..23) needs 16 B more than f(N+1) beyond what it returns,
// f24 nothing; f0 holds two results + f1's 23 x 16 B + its 16 B argument:
// 32 + 368 + 16 = 416 B.
// PROFILE-LABEL: memfit-profile: @f0
// PROFILE:         peak:      416 B (416 B) at func.call
func.func @f0(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f1(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f1(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f2(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f2(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f3(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f3(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f3(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f4(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f4(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f4(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f5(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f5(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f5(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f6(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f6(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f6(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f7(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f7(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f7(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f8(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f8(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f8(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f9(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f9(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f9(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f10(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f10(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f10(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f11(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f11(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f11(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f12(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f12(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f12(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f13(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f13(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f13(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f14(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f14(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f14(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f15(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f15(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f15(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f16(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f16(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f16(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f17(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f17(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f17(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f18(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f18(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f18(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f19(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f19(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f19(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f20(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f20(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f20(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f21(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f21(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f21(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f22(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f22(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f22(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f23(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f23(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f23(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @f24(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @f24(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
func.func private @f24(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = "stablehlo.negate"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}
