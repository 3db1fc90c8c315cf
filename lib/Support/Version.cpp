//===- Version.cpp - memfit's version --------------------------------------===//
#include "memfit/Support/Version.h"

const char *memfit::version() { return MEMFIT_VERSION; }
