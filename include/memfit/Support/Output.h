//===- Output.h - where analysis passes write their reports ----*- C++ -*-===//
#ifndef MEMFIT_SUPPORT_OUTPUT_H
#define MEMFIT_SUPPORT_OUTPUT_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace memfit {

/// Writes `text` to `path` ("-" is stdout). On failure emits an error at
/// `anchor` prefixed with `passName` and fails.
mlir::LogicalResult writeReport(mlir::Operation *anchor, llvm::StringRef passName,
                                llvm::StringRef path, llvm::StringRef text);

} // namespace memfit

#endif
