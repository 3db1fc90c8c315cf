//===- Version.h - memfit's version -----------------------------*- C++ -*-===//
#ifndef MEMFIT_SUPPORT_VERSION_H
#define MEMFIT_SUPPORT_VERSION_H

namespace memfit {

/// memfit's version, from pyproject.toml (CMakeLists.txt defines
/// MEMFIT_VERSION from it): the library, the plugin and memfit._core agree
/// with the Python package by construction.
const char *version();

} // namespace memfit

#endif
