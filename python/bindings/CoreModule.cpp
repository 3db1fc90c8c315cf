// memfit._core: the thin nanobind layer over memfit's plain C++ API. This is
// the only code built with exceptions; the library it calls never throws.
#include "memfit/Support/Version.h"

#include <nanobind/nanobind.h>

namespace nb = nanobind;

void memfitBindPipeline(nb::module_ &m);
#ifdef MEMFIT_HAVE_PACKING
void memfitBindPacking(nb::module_ &m);
#endif

NB_MODULE(_core, m) {
  m.doc() = "memfit's C++ passes (MLIR 22) over StableHLO text";
  m.attr("__version__") = memfit::version();
  memfitBindPipeline(m);
#ifdef MEMFIT_HAVE_PACKING
  memfitBindPacking(m);
#endif
}
