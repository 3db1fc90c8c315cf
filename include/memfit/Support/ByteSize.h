//===- ByteSize.h - memory limits written by users ------------*- C++ -*-===//
#ifndef MEMFIT_SUPPORT_BYTESIZE_H
#define MEMFIT_SUPPORT_BYTESIZE_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>

namespace memfit {

/// Parses a memory size: a positive number of bytes, optionally with a unit.
/// KB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB powers of 1024, B is
/// bytes; spaces between number and unit are allowed, fractions too
/// ("1.5GiB"). On failure returns nullopt and sets `error` to a message that
/// says what is wrong.
std::optional<int64_t> parseByteSize(llvm::StringRef text, std::string &error);

/// Formats bytes for people: "1.50 GiB", "512 B".
std::string formatBytes(int64_t bytes);

} // namespace memfit

#endif
