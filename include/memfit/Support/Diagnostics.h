//===- Diagnostics.h - locations people can read ---------------*- C++ -*-===//
#ifndef MEMFIT_SUPPORT_DIAGNOSTICS_H
#define MEMFIT_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Location.h"
#include <string>

namespace memfit {

/// The user's source position recorded in `loc`, as "file:line:col".
/// jax nests locations as name(callsite(callee frame at caller frame)); the
/// innermost frame is the line that made the op. When that line is in an
/// installed package (flax's attention, optax's loss) the innermost frame
/// outside installed packages follows, "lib.py:1:2, called from
/// user.py:3:4": the line of the user's model that called the library.
/// Empty when there is none.
std::string getUserSourceLine(mlir::Location loc);

/// The op name jax recorded (e.g. "jit(knn)/top_k"), or empty.
std::string getRecordedOpName(mlir::Location loc);

} // namespace memfit

#endif
