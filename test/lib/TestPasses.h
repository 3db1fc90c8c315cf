//===- TestPasses.h - memfit's test-only passes -----------------*- C++ -*-===//
//
// Passes that exist for tests only (test/lib): registered by memfit-opt and
// by libmemfit-test-passes.so, never by the pass library.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_TEST_LIB_TESTPASSES_H
#define MEMFIT_TEST_LIB_TESTPASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace memfit {

// Declares each test pass's options and create function, and
// registerMemfitTestPasses().
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "TestPasses.h.inc"

} // namespace memfit

#endif
