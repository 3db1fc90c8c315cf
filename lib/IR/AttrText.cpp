//===- AttrText.cpp - attribute text and attribute readers ----------------===//
//
// Dialect attributes (#stablehlo.dot<...>, #stablehlo<comparison_direction
// LT>) are read and written through their text, which is the same whether or
// not the host process registers StableHLO; and the builtin attributes every
// view reads (i64 arrays, integers).
//
//===----------------------------------------------------------------------===//
#include "memfit/IR/OpViews.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace memfit;

//===-- attribute text -----------------------------------------------------===//

std::string memfit::attrToText(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

Attribute memfit::attrFromText(MLIRContext *ctx, llvm::StringRef text) {
  // Parsing reports failures through the context's diagnostic engine; a
  // failed parse here is a programming error in memfit, not user input, but
  // stay silent and let the caller decide.
  ScopedDiagnosticHandler silence(ctx, [](Diagnostic &) { return success(); });
  return parseAttribute(text, ctx);
}

std::optional<SmallVector<int64_t>> memfit::getI64Array(Operation *op,
                                                        llvm::StringRef name) {
  Attribute attr = op->getAttr(name);
  if (auto arr = llvm::dyn_cast_or_null<DenseI64ArrayAttr>(attr))
    return SmallVector<int64_t>(arr.asArrayRef());
  if (auto dense = llvm::dyn_cast_or_null<DenseIntElementsAttr>(attr)) {
    SmallVector<int64_t> out;
    for (const APInt &v : dense.getValues<APInt>())
      out.push_back(v.getSExtValue());
    return out;
  }
  return std::nullopt;
}

std::optional<int64_t> memfit::getInteger(Operation *op, llvm::StringRef name) {
  if (auto i = llvm::dyn_cast_or_null<IntegerAttr>(op->getAttr(name)))
    return i.getValue().getSExtValue();
  return std::nullopt;
}

//===-- DotDims ------------------------------------------------------------===//

/// Reads `key = [a, b]` (or `key = a`) from a dialect attribute's text.
SmallVector<int64_t> memfit::readAttrField(llvm::StringRef text, llvm::StringRef key) {
  SmallVector<int64_t> out;
  size_t pos = text.find((key + " = ").str());
  if (pos == llvm::StringRef::npos)
    return out;
  llvm::StringRef rest = text.drop_front(pos + key.size() + 3);
  if (rest.consume_front("[")) {
    rest = rest.take_until([](char c) { return c == ']'; });
  } else {
    rest = rest.take_until([](char c) { return c == ',' || c == '>'; });
  }
  SmallVector<llvm::StringRef> parts;
  rest.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef p : parts) {
    int64_t v;
    if (!p.trim().getAsInteger(10, v))
      out.push_back(v);
  }
  return out;
}

static void printList(llvm::raw_ostream &os, llvm::StringRef key,
                      llvm::ArrayRef<int64_t> v, bool &first) {
  if (v.empty())
    return;
  if (!first)
    os << ", ";
  first = false;
  os << key << " = [";
  llvm::interleaveComma(v, os);
  os << "]";
}

std::string DotDims::toText() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  bool first = true;
  os << "#stablehlo.dot<";
  printList(os, "lhs_batching_dimensions", lhsBatch, first);
  printList(os, "rhs_batching_dimensions", rhsBatch, first);
  printList(os, "lhs_contracting_dimensions", lhsContract, first);
  printList(os, "rhs_contracting_dimensions", rhsContract, first);
  os << ">";
  return s;
}

/// Reads `key = [a, b]` from `text`; an absent key is an empty list.
static bool readList(llvm::StringRef text, llvm::StringRef key,
                     SmallVector<int64_t> &out) {
  size_t pos = text.find((key + " = [").str());
  if (pos == llvm::StringRef::npos)
    return true;
  llvm::StringRef rest = text.drop_front(pos + key.size() + 4);
  size_t end = rest.find(']');
  if (end == llvm::StringRef::npos)
    return false;
  SmallVector<llvm::StringRef> parts;
  rest.take_front(end).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < 0)
      return false;
    out.push_back(v);
  }
  return true;
}

std::optional<DotDims> DotDims::fromText(llvm::StringRef text) {
  if (!text.starts_with("#stablehlo.dot<"))
    return std::nullopt;
  DotDims d;
  if (!readList(text, "lhs_batching_dimensions", d.lhsBatch) ||
      !readList(text, "rhs_batching_dimensions", d.rhsBatch) ||
      !readList(text, "lhs_contracting_dimensions", d.lhsContract) ||
      !readList(text, "rhs_contracting_dimensions", d.rhsContract))
    return std::nullopt;
  if (d.lhsBatch.size() != d.rhsBatch.size() ||
      d.lhsContract.size() != d.rhsContract.size())
    return std::nullopt;
  return d;
}
