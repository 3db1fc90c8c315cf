//===- embed.cpp - memfit's C++ API in a host program ----------------------===//
//
//   embed-cpp FILE LIMIT_BYTES       the memory-limit pipeline
//   embed-cpp FILE --pipeline TEXT   a textual pipeline of memfit passes
//   embed-cpp FILE LIMIT_BYTES --on-functions
//                                    (shows the error for a pass manager
//                                    anchored on func.func)
//
// Prints the module in generic form on stdout; the pipeline it ran and
// MLIR's diagnostics go to stderr.
//
//===----------------------------------------------------------------------===//
#include "memfit/API/Embedding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

int main(int argc, char **argv) {
  if (argc < 3) {
    llvm::errs() << "usage: " << argv[0] << " FILE (LIMIT_BYTES | --pipeline TEXT)\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  memfit::registerDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.allowUnregisteredDialects(); // StableHLO in generic form
  memfit::registerPasses();

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &ctx);
  if (!module)
    return 1; // the parser has reported why

  mlir::PassManager pm(&ctx); // op-agnostic: runs on the module
  std::string arg = argv[2];
  if (arg == "--pipeline") {
    if (argc < 4 || mlir::failed(mlir::parsePassPipeline(argv[3], pm, llvm::errs())))
      return 2;
  } else {
    std::string error;
    bool onFunctions = argc > 3 && std::string(argv[3]) == "--on-functions";
    mlir::OpPassManager &target = onFunctions ? pm.nest<mlir::func::FuncOp>() : pm;
    if (mlir::failed(memfit::buildMemoryLimitPipeline(
            target, std::strtoll(arg.c_str(), nullptr, 10), {}, &error))) {
      llvm::errs() << "error: " << error << "\n";
      return 2;
    }
  }
  llvm::errs() << "memfit " << memfit::version() << " pipeline: ";
  pm.printAsTextualPipeline(llvm::errs());
  llvm::errs() << "\n";
  if (mlir::failed(pm.run(*module)))
    return 1; // errors name the op and its source line
  module->print(llvm::outs(), mlir::OpPrintingFlags().printGenericOpForm());
  llvm::outs() << "\n";
  return 0;
}
