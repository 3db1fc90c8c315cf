// RUN: not memfit-opt %s --memfit-profile=format=xml -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not memfit-opt %s --memfit-profile=colour=red -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not memfit-opt %s --memfit-test-op-views=mode=paint -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not memfit-opt %s --memfit-profile="output=%t.missing/dir/profile.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTPUT
//
// Bad pass options give an error that says what is accepted.

// FORMAT: error: memfit-profile: unknown format 'xml' (expected 'table' or 'json')
// OPTION: no such option colour
// MODE: error: memfit-test-op-views: unknown mode 'paint' (expected 'read' or 'build')
// OUTPUT: error: memfit-profile: {{.*}}profile.json
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
