//===- Memfit.cpp - memfit's C API -----------------------------------------===//
//
// Thin wrappers over memfit/API/Embedding.h, unwrapping MLIR's C handles
// with MLIR's own helpers (mlir/CAPI/*.h), as MLIR's C API does.
//
//===----------------------------------------------------------------------===//
#include "memfit-c/Memfit.h"

#include "memfit/API/Embedding.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"

#include <cstring>

void mlirMemfitRegisterPasses(void) { memfit::registerPasses(); }

void mlirMemfitRegisterDialects(MlirDialectRegistry registry) {
  memfit::registerDialects(*unwrap(registry));
}

MlirLogicalResult mlirMemfitBuildMemoryLimitPipeline(MlirOpPassManager passManager,
                                                     int64_t memoryLimitBytes,
                                                     MlirStringCallback errorCallback,
                                                     void *userData) {
  std::string error;
  if (mlir::failed(memfit::buildMemoryLimitPipeline(*unwrap(passManager), memoryLimitBytes,
                                                    {}, &error))) {
    if (errorCallback)
      errorCallback(mlirStringRefCreate(error.data(), error.size()), userData);
    return mlirLogicalResultFailure();
  }
  return mlirLogicalResultSuccess();
}

MlirStringRef mlirMemfitGetVersion(void) {
  const char *v = memfit::version();
  return mlirStringRefCreate(v, std::strlen(v));
}
