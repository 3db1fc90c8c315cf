//===- Diagnostics.cpp - locations people can read -------------------------===//
#include "memfit/Support/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

/// The file frames recorded in `loc`, innermost first (a fused location
/// contributes its first one that has any).
void collectFrames(Location loc, llvm::SmallVectorImpl<FileLineColRange> &frames) {
  if (auto file = llvm::dyn_cast<FileLineColRange>(loc)) {
    frames.push_back(file);
  } else if (auto name = llvm::dyn_cast<NameLoc>(loc)) {
    collectFrames(name.getChildLoc(), frames);
  } else if (auto call = llvm::dyn_cast<CallSiteLoc>(loc)) {
    collectFrames(call.getCallee(), frames);
    collectFrames(call.getCaller(), frames);
  } else if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations()) {
      size_t before = frames.size();
      collectFrames(l, frames);
      if (frames.size() > before)
        return;
    }
  }
}

bool isInstalledPackage(FileLineColRange frame) {
  llvm::StringRef file = frame.getFilename().getValue();
  return file.contains("/site-packages/") || file.contains("/dist-packages/");
}

std::string formatFrame(FileLineColRange frame) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << frame.getFilename().getValue() << ":" << frame.getStartLine() << ":"
     << frame.getStartColumn();
  return s;
}

} // namespace

std::string memfit::getUserSourceLine(Location loc) {
  llvm::SmallVector<FileLineColRange> frames;
  collectFrames(loc, frames);
  if (frames.empty())
    return "";
  std::string line = formatFrame(frames.front());
  if (!isInstalledPackage(frames.front()))
    return line;
  for (FileLineColRange frame : frames)
    if (!isInstalledPackage(frame))
      return line + ", called from " + formatFrame(frame);
  return line;
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
