/*===-- memfit-c/Memfit.h - memfit's C API ------------------------*- C -*-===*\
|*                                                                            *|
|* memfit's passes for a compiler that drives MLIR through its C API, in the  *|
|* style of MLIR's own (mlir-c/Pass.h): plain functions over MLIR's handles.  *|
|*                                                                            *|
|*   find_package(memfit CONFIG REQUIRED)                                     *|
|*   target_link_libraries(mycompiler PRIVATE memfit::memfit-c)               *|
|*                                                                            *|
|* libmemfit-c carries MLIR's core C API (mlir-c/IR.h, mlir-c/Pass.h, built   *|
|* from MLIR's libMLIRCAPIIR.a) linked against the same libMLIR.so as memfit, *|
|* so a C program that links it gets one MLIR in its process: linking MLIR's  *|
|* static C API libraries as well would bring a second copy.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef MEMFIT_C_MEMFIT_H
#define MEMFIT_C_MEMFIT_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Registers every memfit pass with MLIR's global pass registry, so that
/// mlirParsePassPipeline and mlirOpPassManagerAddPipeline know
/// "memfit-inline", "memfit-split{memory-limit=1GiB}", ... Safe to call
/// more than once.
MLIR_CAPI_EXPORTED void mlirMemfitRegisterPasses(void);

/// Inserts into `registry` the dialects memfit reads and creates as
/// registered ops (func, arith). StableHLO may stay unregistered: call
/// mlirContextSetAllowUnregisteredDialects(ctx, true) to read its generic
/// form.
MLIR_CAPI_EXPORTED void mlirMemfitRegisterDialects(MlirDialectRegistry registry);

/// Appends memfit's memory-limit pipeline (memfit-inline, memfit-rewrite,
/// memfit-split{memory-limit=<bytes>}, memfit-rewrite's top-k), the one
/// memfit.jit runs, to `passManager`, which must be anchored on
/// builtin.module or op-agnostic (mlirPassManagerGetAsOpPassManager of
/// mlirPassManagerCreate's) and run on a module. Returns failure, adding
/// nothing, when it is anchored elsewhere (nested on func.func) or
/// `memoryLimitBytes` is not positive; then, when
/// `errorCallback` is not NULL, it is called with the reason.
MLIR_CAPI_EXPORTED MlirLogicalResult mlirMemfitBuildMemoryLimitPipeline(
    MlirOpPassManager passManager, int64_t memoryLimitBytes,
    MlirStringCallback errorCallback, void *userData);

/// memfit's version, e.g. "0.1.0" (static storage).
MLIR_CAPI_EXPORTED MlirStringRef mlirMemfitGetVersion(void);

#ifdef __cplusplus
}
#endif

#endif /* MEMFIT_C_MEMFIT_H */
