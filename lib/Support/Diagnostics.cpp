//===- Diagnostics.cpp - locations people can read -------------------------===//
#include "memfit/Support/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string memfit::getUserSourceLine(Location loc) {
  if (auto file = llvm::dyn_cast<FileLineColRange>(loc)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << file.getFilename().getValue() << ":" << file.getStartLine() << ":"
       << file.getStartColumn();
    return s;
  }
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return getUserSourceLine(name.getChildLoc());
  if (auto call = llvm::dyn_cast<CallSiteLoc>(loc)) {
    std::string inner = getUserSourceLine(call.getCallee());
    return inner.empty() ? getUserSourceLine(call.getCaller()) : inner;
  }
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations()) {
      std::string s = getUserSourceLine(l);
      if (!s.empty())
        return s;
    }
  }
  return "";
}

std::string memfit::getRecordedOpName(Location loc) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc)) {
    llvm::StringRef n = name.getName().getValue();
    // jax wraps the user frame in a NameLoc of the function name; the op name
    // is the outer one containing a '/'.
    if (n.contains('/'))
      return n.str();
    return getRecordedOpName(name.getChildLoc());
  }
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations()) {
      std::string s = getRecordedOpName(l);
      if (!s.empty())
        return s;
    }
  return "";
}
