//===- Output.cpp - where analysis passes write their reports --------------===//
#include "memfit/Support/Output.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

mlir::LogicalResult memfit::writeReport(mlir::Operation *anchor,
                                        llvm::StringRef passName,
                                        llvm::StringRef path, llvm::StringRef text) {
  if (path == "-") {
    llvm::outs() << text;
    llvm::outs().flush();
    return mlir::success();
  }
  std::string error;
  auto file = mlir::openOutputFile(path, &error);
  if (!file)
    return anchor->emitError() << passName << ": " << error;
  file->os() << text;
  file->keep();
  return mlir::success();
}
