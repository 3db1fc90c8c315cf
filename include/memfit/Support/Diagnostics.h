//===- Diagnostics.h - locations people can read ---------------*- C++ -*-===//
#ifndef MEMFIT_SUPPORT_DIAGNOSTICS_H
#define MEMFIT_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Location.h"
#include <string>

namespace memfit {

/// The user's source position recorded in `loc`, as "file:line:col".
/// jax nests locations as name(callsite(user frame at caller frame)); the
/// innermost callee frame is the user's line. Empty when there is none.
std::string getUserSourceLine(mlir::Location loc);

/// The op name jax recorded (e.g. "jit(knn)/top_k"), or empty.
std::string getRecordedOpName(mlir::Location loc);

} // namespace memfit

#endif
