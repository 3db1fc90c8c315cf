/*===- embed.c - memfit's C API in a host program --------------------------===*\
 *
 *   embed-c FILE LIMIT_BYTES       the memory-limit pipeline
 *   embed-c FILE --pipeline TEXT   a textual pipeline of memfit passes
 *
 * Prints the module in generic form on stdout; the pipeline it ran and
 * MLIR's diagnostics go to stderr.
\*===----------------------------------------------------------------------===*/
#include "memfit-c/Memfit.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void writeTo(MlirStringRef text, void *file) {
  fwrite(text.data, 1, text.length, (FILE *)file);
}

static void reportError(MlirStringRef why, void *unused) {
  (void)unused;
  fprintf(stderr, "error: %.*s\n", (int)why.length, why.data);
}

static char *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  *size = fread(text, 1, (size_t)n, f);
  text[*size] = 0;
  fclose(f);
  return text;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s FILE (LIMIT_BYTES | --pipeline TEXT)\n", argv[0]);
    return 2;
  }
  size_t size = 0;
  char *text = readFile(argv[1], &size);
  if (!text) {
    fprintf(stderr, "error: cannot read %s\n", argv[1]);
    return 2;
  }

  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirMemfitRegisterDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/false);
  mlirDialectRegistryDestroy(registry);
  mlirContextSetAllowUnregisteredDialects(ctx, true); /* StableHLO, generic form */
  mlirMemfitRegisterPasses();

  int rc = 0;
  MlirModule module = mlirModuleCreateParse(ctx, mlirStringRefCreate(text, size));
  MlirPassManager pm = mlirPassManagerCreate(ctx); /* op-agnostic */
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  if (mlirModuleIsNull(module)) {
    rc = 1; /* the parser has reported why */
  } else if (strcmp(argv[2], "--pipeline") == 0) {
    if (argc < 4 || mlirLogicalResultIsFailure(mlirOpPassManagerAddPipeline(
                        opm, mlirStringRefCreateFromCString(argv[3]), writeTo, stderr)))
      rc = 2;
  } else {
    if (mlirLogicalResultIsFailure(mlirMemfitBuildMemoryLimitPipeline(
            opm, strtoll(argv[2], NULL, 10), reportError, NULL)))
      rc = 2;
  }
  if (rc == 0) {
    MlirStringRef version = mlirMemfitGetVersion();
    fprintf(stderr, "memfit %.*s pipeline: ", (int)version.length, version.data);
    mlirPrintPassPipeline(opm, writeTo, stderr);
    fputs("\n", stderr);
    MlirOperation op = mlirModuleGetOperation(module);
    if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, op))) {
      rc = 1; /* errors name the op and its source line */
    } else {
      MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
      mlirOpPrintingFlagsPrintGenericOpForm(flags);
      mlirOperationPrintWithFlags(op, flags, writeTo, stdout);
      fputs("\n", stdout);
      mlirOpPrintingFlagsDestroy(flags);
    }
  }
  mlirPassManagerDestroy(pm);
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  free(text);
  return rc;
}
