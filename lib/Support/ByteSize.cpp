//===- ByteSize.cpp - parse and print memory sizes -------------------------===//
#include "memfit/Support/ByteSize.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <cstdlib>

using namespace memfit;

std::optional<int64_t> memfit::parseByteSize(llvm::StringRef text, std::string &error) {
  llvm::StringRef s = text.trim();
  if (s.empty()) {
    error = "empty memory size; write a number of bytes such as 268435456 or 256MiB";
    return std::nullopt;
  }
  if (s.starts_with("-")) {
    error = "memory size '" + text.str() + "' is negative; it must be positive";
    return std::nullopt;
  }
  size_t numEnd = 0;
  while (numEnd < s.size() && (llvm::isDigit(s[numEnd]) || s[numEnd] == '.'))
    ++numEnd;
  llvm::StringRef number = s.take_front(numEnd);
  llvm::StringRef unit = s.drop_front(numEnd).trim();
  double value;
  if (number.empty() || number.count('.') > 1 || number == "." ||
      number.getAsDouble(value)) {
    error = "malformed memory size '" + text.str() +
            "'; write a number of bytes with an optional unit (B, KB, MB, GB, "
            "TB, KiB, MiB, GiB, TiB), e.g. 256MiB";
    return std::nullopt;
  }
  std::optional<double> scale = llvm::StringSwitch<std::optional<double>>(unit)
                                    .Cases({"", "B"}, 1.0)
                                    .Case("KB", 1e3)
                                    .Case("MB", 1e6)
                                    .Case("GB", 1e9)
                                    .Case("TB", 1e12)
                                    .Case("KiB", 1024.0)
                                    .Case("MiB", 1024.0 * 1024)
                                    .Case("GiB", 1024.0 * 1024 * 1024)
                                    .Case("TiB", 1024.0 * 1024 * 1024 * 1024)
                                    .Default(std::nullopt);
  if (!scale) {
    error = "unknown unit '" + unit.str() + "' in memory size '" + text.str() +
            "'; use B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB "
            "(powers of 1024)";
    return std::nullopt;
  }
  double bytes = std::floor(value * *scale);
  if (bytes < 1) {
    error = "memory size '" + text.str() + "' is zero; it must be at least 1 byte";
    return std::nullopt;
  }
  if (bytes > 9.0e18) {
    error = "memory size '" + text.str() + "' is too large";
    return std::nullopt;
  }
  return static_cast<int64_t>(bytes);
}

std::string memfit::formatBytes(int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  if (u == 0)
    os << bytes << " B";
  else
    os << llvm::format("%.2f", v) << " " << units[u];
  return s;
}
