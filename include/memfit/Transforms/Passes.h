//===- Passes.h - memfit passes ---------------------------------*- C++ -*-===//
#ifndef MEMFIT_TRANSFORMS_PASSES_H
#define MEMFIT_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace memfit {

// Declares each pass's options struct and create function, and
// registerMemfitPasses(), which registers every memfit pass with MLIR's global
// registry (so that `--memfit-*` flags and `--pass-pipeline` strings know them).
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "memfit/Transforms/Passes.h.inc"

} // namespace memfit

#endif
