//===- Verify.cpp - verifyOpInvariants ------------------------------------===//
//
// Every known op is checked against its OpTable row (operand, result and
// region counts, required attributes), for static shapes and supported
// element types, and for the invariants of its kind that the views and the
// passes reading them rely on.
//
//===----------------------------------------------------------------------===//
#include "memfit/IR/OpViews.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace memfit;

static bool attrHasKind(Attribute a, AttrKind kind) {
  switch (kind) {
  case AttrKind::I64Array:
    return llvm::isa<DenseI64ArrayAttr, DenseIntElementsAttr>(a);
  case AttrKind::Integer:
    return llvm::isa<IntegerAttr>(a);
  case AttrKind::String:
    return llvm::isa<StringAttr>(a);
  case AttrKind::Dense:
    return llvm::isa<ElementsAttr>(a);
  case AttrKind::Bool:
    return llvm::isa<BoolAttr>(a);
  case AttrKind::Dialect:
  case AttrKind::Any:
    return true;
  }
  return false;
}

static LogicalResult checkCount(Operation *op, llvm::StringRef what,
                                int expected, unsigned actual) {
  if (expected < 0 || static_cast<unsigned>(expected) == actual)
    return success();
  return op->emitError() << "'" << op->getName() << "' expects " << expected
                         << " " << what << ", got " << actual;
}

static LogicalResult checkStaticTypes(Operation *op) {
  auto check = [&](Type t, llvm::StringRef what, unsigned i) -> LogicalResult {
    if (auto tt = llvm::dyn_cast<TensorType>(t)) {
      if (!tt.hasRank() || !tt.hasStaticShape())
        return op->emitError() << "'" << op->getName() << "' " << what << " #"
                               << i << " has dynamic shape " << t
                               << "; memfit needs static shapes";
      // Passes build constants of the types they meet (accumulators, fills).
      std::string why = whyUnsupportedElementType(tt.getElementType());
      if (!why.empty())
        return op->emitError() << "'" << op->getName() << "' " << what << " #" << i
                               << ": " << why;
    }
    return success();
  };
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(t, "operand", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(t, "result", i)))
      return failure();
  return success();
}

static int64_t rankOf(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getRank() : -1;
}

/// Every entry of `dims` in [0, rank), and no repeats; a failure names
/// `what`.
static LogicalResult checkDims(Operation *op, llvm::StringRef what,
                               llvm::ArrayRef<int64_t> dims, int64_t rank) {
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t d : dims)
    if (d < 0 || (rank >= 0 && d >= rank) || !seen.insert(d).second)
      return op->emitError() << "'" << op->getName() << "' has " << what
                             << " out of range or repeated for rank " << rank;
  return success();
}

static LogicalResult checkListSize(Operation *op, llvm::StringRef attr,
                                   size_t size, int64_t rank) {
  if (rank >= 0 && static_cast<int64_t>(size) != rank)
    return op->emitError() << "'" << op->getName() << "' attribute '" << attr
                           << "' has " << size << " entries for rank " << rank;
  return success();
}

/// A region's single block takes `numArgs` arguments and its terminator
/// returns `numReturned` values.
static LogicalResult checkBlock(Operation *op, Region &region, llvm::StringRef what,
                                unsigned numArgs, unsigned numReturned) {
  Block &b = region.front();
  if (b.getNumArguments() != numArgs || b.empty() ||
      b.back().getNumOperands() != numReturned || b.back().getNumResults() != 0)
    return op->emitError() << "'" << op->getName() << "' " << what << " must take "
                           << numArgs << " arguments and return " << numReturned
                           << " values";
  return success();
}

/// Op-specific invariants the views (and the passes reading them) rely on
/// beyond the table's counts: operand/result/region structure, and
/// dimension attributes that index shapes being in range.
static LogicalResult checkKindInvariants(Operation *op, OpKind kind) {
  switch (kind) {
  case OpKind::Reduce: {
    if (op->getNumOperands() == 0 || op->getNumOperands() % 2 != 0 ||
        op->getNumResults() != op->getNumOperands() / 2)
      return op->emitError("'stablehlo.reduce' needs N inputs, N init values "
                           "and N results");
    if (op->getRegion(0).empty() ||
        op->getRegion(0).front().getNumArguments() != op->getNumOperands())
      return op->emitError("'stablehlo.reduce' body must take 2N arguments");
    unsigned n = op->getNumOperands() / 2;
    if (failed(checkBlock(op, op->getRegion(0), "body", 2 * n, n)))
      return failure();
    return checkDims(op, "dimensions", *getI64Array(op, "dimensions"),
                     rankOf(op->getOperand(0)));
  }
  case OpKind::While: {
    if (op->getRegion(0).empty() || op->getRegion(1).empty())
      return op->emitError("'stablehlo.while' needs non-empty cond and body regions");
    if (op->getNumResults() != op->getNumOperands())
      return op->emitError("'stablehlo.while' must have as many results as operands");
    unsigned n = op->getNumOperands();
    if (failed(checkBlock(op, op->getRegion(0), "cond", n, 1)) ||
        failed(checkBlock(op, op->getRegion(1), "body", n, n)))
      return failure();
    return success();
  }
  case OpKind::Sort: {
    if (op->getNumOperands() == 0 || op->getNumResults() != op->getNumOperands() ||
        op->getRegion(0).empty())
      return op->emitError("'stablehlo.sort' needs a comparator and one result per operand");
    if (failed(checkBlock(op, op->getRegion(0), "comparator", 2 * op->getNumOperands(), 1)))
      return failure();
    int64_t dim = *getInteger(op, "dimension"), rank = rankOf(op->getOperand(0));
    if (dim < -rank || (rank >= 0 && dim >= rank))
      return op->emitError() << "'stablehlo.sort' dimension " << dim
                             << " is out of range for rank " << rank;
    return success();
  }
  case OpKind::DotGeneral: {
    std::string text = attrToText(op->getAttr("dot_dimension_numbers"));
    std::optional<DotDims> d = DotDims::fromText(text);
    if (!d)
      return op->emitError() << "'stablehlo.dot_general' has unreadable "
                                "dot_dimension_numbers "
                             << text;
    int64_t lr = rankOf(op->getOperand(0)), rr = rankOf(op->getOperand(1));
    SmallVector<int64_t> lhs(d->lhsBatch), rhs(d->rhsBatch);
    lhs.append(d->lhsContract.begin(), d->lhsContract.end());
    rhs.append(d->rhsContract.begin(), d->rhsContract.end());
    if (failed(checkDims(op, "lhs batching/contracting dimensions", lhs, lr)) ||
        failed(checkDims(op, "rhs batching/contracting dimensions", rhs, rr)))
      return failure();
    return success();
  }
  case OpKind::DynamicSlice:
  case OpKind::DynamicUpdateSlice: {
    unsigned fixed = kind == OpKind::DynamicSlice ? 1 : 2;
    if (op->getNumOperands() < fixed ||
        op->getNumOperands() != fixed + std::max<int64_t>(0, rankOf(op->getOperand(0))))
      return op->emitError() << "'" << op->getName()
                             << "' needs one start index per operand dimension";
    if (kind == OpKind::DynamicSlice)
      return checkListSize(op, "slice_sizes", getI64Array(op, "slice_sizes")->size(),
                           rankOf(op->getOperand(0)));
    return success();
  }
  case OpKind::BroadcastInDim: {
    SmallVector<int64_t> dims = *getI64Array(op, "broadcast_dimensions");
    if (failed(checkListSize(op, "broadcast_dimensions", dims.size(),
                             rankOf(op->getOperand(0)))))
      return failure();
    return checkDims(op, "broadcast_dimensions", dims, rankOf(op->getResult(0)));
  }
  case OpKind::Transpose: {
    SmallVector<int64_t> perm = *getI64Array(op, "permutation");
    int64_t rank = rankOf(op->getOperand(0));
    if (failed(checkListSize(op, "permutation", perm.size(), rank)))
      return failure();
    return checkDims(op, "permutation", perm, rank);
  }
  case OpKind::Iota:
    return checkDims(op, "iota_dimension", {*getInteger(op, "iota_dimension")},
                     rankOf(op->getResult(0)));
  case OpKind::Concatenate:
    if (op->getNumOperands() == 0)
      return op->emitError("'stablehlo.concatenate' needs at least one operand");
    return checkDims(op, "dimension", {*getInteger(op, "dimension")},
                     rankOf(op->getOperand(0)));
  case OpKind::Slice: {
    int64_t rank = rankOf(op->getOperand(0));
    for (llvm::StringRef name : {"start_indices", "limit_indices", "strides"})
      if (failed(checkListSize(op, name, getI64Array(op, name)->size(), rank)))
        return failure();
    return success();
  }
  case OpKind::Pad: {
    int64_t rank = rankOf(op->getOperand(0));
    for (llvm::StringRef name : {"edge_padding_low", "edge_padding_high", "interior_padding"})
      if (failed(checkListSize(op, name, getI64Array(op, name)->size(), rank)))
        return failure();
    return success();
  }
  case OpKind::TopK: {
    int64_t k = *getInteger(op, "k"), rank = rankOf(op->getOperand(0));
    if (rank == 0 || k < 0)
      return op->emitError() << "'chlo.top_k' needs an operand of rank >= 1 and k >= 0";
    return success();
  }
  default:
    return success();
  }
}

LogicalResult memfit::verifyOpInvariants(Operation *root) {
  WalkResult r = root->walk([&](Operation *op) -> WalkResult {
    const OpInfo *info = lookupOpInfo(op);
    if (!info)
      return WalkResult::advance();
    if (failed(checkCount(op, "operands", info->numOperands, op->getNumOperands())) ||
        failed(checkCount(op, "results", info->numResults, op->getNumResults())) ||
        failed(checkCount(op, "regions", info->numRegions, op->getNumRegions())))
      return WalkResult::interrupt();
    for (const RequiredAttr &ra : info->requiredAttrs) {
      Attribute a = op->getAttr(ra.name);
      if (!a || !attrHasKind(a, ra.kind)) {
        op->emitError() << "'" << op->getName() << "' "
                        << (a ? "has a malformed" : "is missing its required")
                        << " attribute '" << ra.name << "'";
        return WalkResult::interrupt();
      }
    }
    if (failed(checkStaticTypes(op)) || failed(checkKindInvariants(op, info->kind)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}
