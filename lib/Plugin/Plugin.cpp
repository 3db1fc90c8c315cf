//===- Plugin.cpp - memfit as a pass plugin for a stock mlir-opt -----------===//
//
//   mlir-opt-22 --load-pass-plugin=$(memfit --plugin-path) \
//     --allow-unregistered-dialect --memfit-profile file.mlir
//
// Linked against libMLIR.so, the same library mlir-opt-22 uses, so the
// passes share its registry and its LLVM. Its version is memfit's
// (MEMFIT_VERSION, from pyproject.toml).
//
//===----------------------------------------------------------------------===//
#include "memfit/Transforms/Passes.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "memfit", MEMFIT_VERSION,
          []() { memfit::registerMemfitPasses(); }};
}
