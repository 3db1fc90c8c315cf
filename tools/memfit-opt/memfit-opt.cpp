//===- memfit-opt.cpp - mlir-opt with memfit's passes ----------------------===//
//
// The lit-test driver: func and arith registered, every other dialect allowed
// unregistered (StableHLO arrives in generic form), memfit passes and its
// test-only passes (test/lib) registered alongside MLIR's own.
//
//===----------------------------------------------------------------------===//
#include "TestPasses.h"
#include "memfit/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  mlir::registerTransformsPasses();
  memfit::registerMemfitPasses();
  memfit::registerMemfitTestPasses();
  mlir::MlirOptMainConfig::registerCLOptions(registry);
  // StableHLO is never registered here: allow it by default so that
  // `memfit-opt file.mlir --memfit-profile` needs no extra flag.
  std::vector<char *> args(argv, argv + argc);
  static char allow[] = "--allow-unregistered-dialect";
  args.insert(args.begin() + 1, allow);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      static_cast<int>(args.size()), args.data(), "memfit optimizer driver\n",
      registry));
}
