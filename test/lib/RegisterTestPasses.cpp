//===- RegisterTestPasses.cpp - libmemfit-test-passes.so -------------------===//
//
// A C entry point that registers memfit's test passes with MLIR's global
// pass registry, so that a Python test can load this library with ctypes
// and name the passes in memfit.transform pipelines.
//
//===----------------------------------------------------------------------===//
#include "TestPasses.h"

extern "C" void memfitRegisterTestPasses() { memfit::registerMemfitTestPasses(); }
