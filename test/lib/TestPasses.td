//===- TestPasses.td - memfit's test-only passes ------------*- tablegen -*-===//
//
// Passes that exist for tests (test/lit/ir, test/python/test_op_views.py);
// memfit-opt registers them, the pass library does not.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFIT_TEST_PASSES
#define MEMFIT_TEST_PASSES

include "mlir/Pass/PassBase.td"

def MemfitTestOpViews : Pass<"memfit-test-op-views", "::mlir::ModuleOp"> {
  let summary = "Test pass: print what the op views read; build one op of each kind";
  let description = [{
    For lit tests of the op views and builders (lib/IR). `mode=read`
    prints, for each op memfit knows, what its view reads (dot dimensions,
    reducer kind, compare direction, slice indices, top_k's k, ...) and its
    first result's bytes.
    `mode=build` first appends `@memfit_built_ops`, one op of each kind made
    with the builders, so that its printed generic form can be checked by
    FileCheck and by jaxlib's StableHLO verifier.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"read\"",
           "`read` (print views) or `build` (build one op of each kind, then print)">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the lines (`-` is stdout)">,
  ];
}

#endif // MEMFIT_TEST_PASSES
