//===- OpViews.cpp - typed views and builders over generic StableHLO -------===//
#include "memfit/IR/OpViews.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <complex>

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

int64_t memfit::getElementBytes(Type t) {
  if (auto c = llvm::dyn_cast<ComplexType>(t))
    return 2 * getElementBytes(c.getElementType());
  unsigned bits = t.isIntOrFloat() ? t.getIntOrFloatBitWidth() : 64;
  return std::max<int64_t>(1, (bits + 7) / 8);
}

std::optional<int64_t> memfit::getTensorBytes(Type type) {
  auto t = llvm::dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return std::nullopt;
  return t.getNumElements() * getElementBytes(t.getElementType());
}

//===-- verification -------------------------------------------------------===//

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

//===-- DotDims ------------------------------------------------------------===//

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

//===-- view accessors -----------------------------------------------------===//

ElementsAttr ConstantView::getValue() const {
  return llvm::cast<ElementsAttr>(op->getAttr("value"));
}

std::optional<double> ConstantView::getSplatValue() const {
  auto dense = llvm::dyn_cast<DenseElementsAttr>(op->getAttr("value"));
  if (!dense || !dense.isSplat())
    return std::nullopt;
  Type et = dense.getElementType();
  if (llvm::isa<FloatType>(et))
    return dense.getSplatValue<APFloat>().convertToDouble();
  if (auto it = llvm::dyn_cast<IntegerType>(et)) {
    APInt v = dense.getSplatValue<APInt>();
    if (v.getBitWidth() > 64)
      return std::nullopt;
    bool isUnsigned = it.isUnsigned() || it.getWidth() == 1;
    return isUnsigned ? static_cast<double>(v.getZExtValue())
                      : static_cast<double>(v.getSExtValue());
  }
  return std::nullopt;
}

ElementsAttr ArithConstantView::getValue() const {
  return llvm::cast<ElementsAttr>(op->getAttr("value"));
}

//===-- views of an operand, constants ------------------------------------===//

static bool isIdentityList(const std::optional<SmallVector<int64_t>> &dims) {
  if (!dims)
    return false;
  for (auto [i, d] : llvm::enumerate(*dims))
    if (d != static_cast<int64_t>(i))
      return false;
  return true;
}

bool memfit::isIdentityView(Operation *op) {
  OpKind k = getOpKind(op);
  if (k != OpKind::Reshape && k != OpKind::BroadcastInDim && k != OpKind::Transpose &&
      k != OpKind::Convert)
    return false;
  if (op->getNumOperands() != 1 || op->getNumResults() != 1 ||
      op->getOperand(0).getType() != op->getResult(0).getType())
    return false;
  if (k == OpKind::BroadcastInDim)
    return isIdentityList(getI64Array(op, "broadcast_dimensions"));
  if (k == OpKind::Transpose)
    return isIdentityList(getI64Array(op, "permutation"));
  return true;
}

DenseElementsAttr memfit::getConstantElements(Operation *op) {
  if (!op || !isConstantLike(op))
    return {};
  return llvm::dyn_cast_or_null<DenseElementsAttr>(op->getAttr("value"));
}

/// Signed unless the type says unsigned (i1 counts as unsigned: true is 1).
static bool isSignedInt(IntegerType t) { return !t.isUnsigned() && t.getWidth() != 1; }

/// One element of a `stablehlo.convert` from `from` to `to`, as an
/// attribute; null when memfit does not fold that conversion.
static Attribute convertOne(Type from, Type to, Attribute v) {
  auto toF = llvm::dyn_cast<FloatType>(to);
  auto toI = llvm::dyn_cast<IntegerType>(to);
  if (auto f = llvm::dyn_cast<FloatAttr>(v)) {
    if (!toF)
      return {}; // float -> integer: out-of-range values are implementation-defined
    APFloat x = f.getValue();
    bool lost = false;
    x.convert(toF.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return FloatAttr::get(toF, x);
  }
  auto i = llvm::dyn_cast<IntegerAttr>(v);
  auto fromI = llvm::dyn_cast<IntegerType>(from);
  if (!i || !fromI)
    return {};
  APInt x = i.getValue();
  if (toF) {
    APFloat y(toF.getFloatSemantics());
    y.convertFromAPInt(x, isSignedInt(fromI), APFloat::rmNearestTiesToEven);
    return FloatAttr::get(toF, y);
  }
  if (!toI)
    return {};
  if (toI.getWidth() == 1) // to a boolean: non-zero is true
    return IntegerAttr::get(toI, APInt(1, x.isZero() ? 0 : 1));
  unsigned w = toI.getWidth();
  return IntegerAttr::get(toI, isSignedInt(fromI) ? x.sextOrTrunc(w) : x.zextOrTrunc(w));
}

DenseElementsAttr memfit::convertElements(DenseElementsAttr value, Type to,
                                          int64_t maxElements) {
  Type from = value.getElementType();
  if (!llvm::isa<FloatType, IntegerType>(from) || !llvm::isa<FloatType, IntegerType>(to))
    return {};
  auto type = RankedTensorType::get(value.getType().getShape(), to);
  if (value.isSplat()) {
    Attribute one = convertOne(from, to, value.getSplatValue<Attribute>());
    return one ? DenseElementsAttr::get(type, one) : DenseElementsAttr();
  }
  if (value.getNumElements() > maxElements)
    return {};
  SmallVector<Attribute> out;
  for (Attribute v : value.getValues<Attribute>()) {
    Attribute c = convertOne(from, to, v);
    if (!c)
      return {};
    out.push_back(c);
  }
  return DenseElementsAttr::get(type, out);
}

Value memfit::buildConstant(OpBuilder &b, Location loc, DenseElementsAttr value) {
  return buildGenericOp(b, loc, "stablehlo.constant", {}, {value.getType()},
                        {b.getNamedAttr("value", value)})
      ->getResult(0);
}

/// The word inside `#stablehlo<comparison_direction LT>`.
static std::string enumWord(Attribute a) {
  if (!a)
    return "";
  llvm::StringRef text(attrToText(a));
  std::string s = text.str();
  llvm::StringRef t(s);
  t = t.rtrim('>');
  size_t space = t.rfind(' ');
  return space == llvm::StringRef::npos ? "" : t.drop_front(space + 1).str();
}

std::string CompareView::getDirection() const {
  return enumWord(op->getAttr("comparison_direction"));
}
std::string CompareView::getCompareType() const {
  return enumWord(op->getAttr("compare_type"));
}

DotDims DotGeneralView::getDims() const {
  return *DotDims::fromText(attrToText(op->getAttr("dot_dimension_numbers")));
}

ReducerKind memfit::getCombinerKind(Region &region) {
  if (!region.hasOneBlock())
    return ReducerKind::Other;
  Block &body = region.front();
  if (body.getOperations().size() != 2 || body.getNumArguments() != 2)
    return ReducerKind::Other;
  Operation &combiner = body.front();
  Operation &ret = body.back();
  if (combiner.getNumOperands() != 2 || ret.getNumOperands() != 1 ||
      ret.getOperand(0) != combiner.getResult(0))
    return ReducerKind::Other;
  // Both arguments, once each: add(a, a) is not a sum of the two.
  Value x = combiner.getOperand(0), y = combiner.getOperand(1);
  if (x == y || !llvm::isa<BlockArgument>(x) || !llvm::isa<BlockArgument>(y) ||
      x.getParentBlock() != &body || y.getParentBlock() != &body)
    return ReducerKind::Other;
  llvm::StringRef n = combiner.getName().getStringRef();
  if (n == "stablehlo.add") return ReducerKind::Add;
  if (n == "stablehlo.multiply") return ReducerKind::Mul;
  if (n == "stablehlo.maximum") return ReducerKind::Max;
  if (n == "stablehlo.minimum") return ReducerKind::Min;
  if (n == "stablehlo.and") return ReducerKind::And;
  if (n == "stablehlo.or") return ReducerKind::Or;
  return ReducerKind::Other;
}

ReducerKind ReduceView::getReducerKind() const { return getCombinerKind(getBody()); }

bool SortView::isStable() const {
  auto b = llvm::dyn_cast_or_null<BoolAttr>(op->getAttr("is_stable"));
  return b && b.getValue();
}

std::string CustomCallView::getTarget() const {
  return llvm::cast<StringAttr>(op->getAttr("call_target_name")).str();
}

std::optional<int64_t> CustomCallView::getBackendConfigInt(llvm::StringRef key) const {
  auto dict = llvm::dyn_cast_or_null<DictionaryAttr>(op->getAttr("mhlo.backend_config"));
  auto v = dict ? llvm::dyn_cast_or_null<IntegerAttr>(dict.get(key)) : nullptr;
  if (!v)
    return std::nullopt;
  return static_cast<int64_t>(v.getValue().getZExtValue());
}

bool CustomCallView::isTriangularSolve() const {
  std::string target = getTarget();
  llvm::StringRef t(target);
  return t.size() == 16 && t.starts_with("lapack_") && t.ends_with("trsm_ffi") &&
         op->getNumOperands() == 2 && op->getNumResults() == 1;
}

int64_t CustomCallView::getNumBatchDims() const {
  auto dict = llvm::dyn_cast_or_null<DictionaryAttr>(op->getAttr("mhlo.frontend_attributes"));
  auto v = dict ? llvm::dyn_cast_or_null<StringAttr>(dict.get("num_batch_dims")) : nullptr;
  int64_t n = 0;
  if (v && !v.getValue().getAsInteger(10, n))
    return n;
  return 0;
}

//===-- builders -----------------------------------------------------------===//

void memfit::setInherentAttr(Operation *op, llvm::StringRef name, Attribute value) {
  NamedAttrList attrs;
  if (auto dict = llvm::dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute()))
    attrs.append(dict.getValue());
  attrs.set(name, value);
  LogicalResult ok = op->setPropertiesFromAttribute(
      attrs.getDictionary(op->getContext()), /*emitError=*/nullptr);
  if (failed(ok)) // a registered op without such a property
    op->setAttr(name, value);
}

Operation *memfit::buildGenericOp(OpBuilder &b, Location loc, llvm::StringRef name,
                                  ValueRange operands, TypeRange resultTypes,
                                  llvm::ArrayRef<NamedAttribute> attrs,
                                  unsigned numRegions) {
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addTypes(resultTypes);
  if (!attrs.empty())
    state.propertiesAttr = b.getDictionaryAttr(attrs);
  for (unsigned i = 0; i < numRegions; ++i)
    state.addRegion();
  return b.create(state);
}

static RankedTensorType scalarOf(Type elementType) {
  return RankedTensorType::get({}, elementType);
}

//===-- element types ------------------------------------------------------===//

std::string memfit::whyUnsupportedElementType(Type t) {
  if (llvm::isa<FloatType, IntegerType, IndexType>(t))
    return "";
  if (auto c = llvm::dyn_cast<ComplexType>(t))
    if (llvm::isa<FloatType>(c.getElementType()))
      return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "element type " << t
     << " is not a float, integer or complex type (quantized and dialect-specific "
        "element types are not supported)";
  return s;
}

bool memfit::isOrderedElementType(Type t) { return !llvm::isa<ComplexType>(t); }

llvm::StringRef memfit::orderedCompareType(Type t) {
  if (llvm::isa<FloatType>(t))
    return "TOTALORDER";
  auto it = llvm::dyn_cast<IntegerType>(t);
  return it && (it.isUnsigned() || it.getWidth() == 1) ? "UNSIGNED" : "SIGNED";
}

/// `value` in float format `ft`; +-inf saturate where `ft` has no infinity
/// (the f8 "FN" kinds), so that a max/min identity stays an identity.
static APFloat floatValue(FloatType ft, double value) {
  const llvm::fltSemantics &sem = ft.getFloatSemantics();
  if (std::isinf(value) && !APFloat::semanticsHasInf(sem))
    return APFloat::getLargest(sem, /*Negative=*/value < 0);
  APFloat f(value);
  bool lost = false;
  f.convert(sem, APFloat::rmNearestTiesToEven, &lost);
  return f;
}

/// `value` as an integer of `it`: truncated toward zero, +-inf (and values
/// out of int64's range) at the type's extremes.
static APInt intValue(IntegerType it, double value) {
  unsigned w = it.getWidth();
  bool isUnsigned = it.isUnsigned() || w == 1;
  bool tooBig = value >= 9.2e18, tooSmall = value <= -9.2e18;
  if (tooBig || tooSmall || std::isnan(value)) {
    if (isUnsigned)
      return tooBig ? APInt::getMaxValue(w) : APInt::getMinValue(w);
    return tooBig ? APInt::getSignedMaxValue(w) : APInt::getSignedMinValue(w);
  }
  return APInt(w, static_cast<uint64_t>(static_cast<int64_t>(value)), /*isSigned=*/true,
               /*implicitTrunc=*/true);
}

DenseElementsAttr memfit::getSplatAttr(RankedTensorType type, double value) {
  Type et = type.getElementType();
  if (!whyUnsupportedElementType(et).empty())
    return {};
  if (auto ft = llvm::dyn_cast<FloatType>(et))
    return DenseElementsAttr::get(type, FloatAttr::get(ft, floatValue(ft, value)));
  if (auto it = llvm::dyn_cast<IntegerType>(et))
    return DenseElementsAttr::get(type, IntegerAttr::get(it, intValue(it, value)));
  if (llvm::isa<IndexType>(et))
    return DenseElementsAttr::get(type, IntegerAttr::get(et, static_cast<int64_t>(value)));
  auto ft = llvm::cast<FloatType>(llvm::cast<ComplexType>(et).getElementType());
  std::complex<APFloat> c(floatValue(ft, value), floatValue(ft, 0.0));
  return DenseElementsAttr::get(type, llvm::ArrayRef(c));
}

Value memfit::buildConstantSplat(OpBuilder &b, Location loc,
                                 RankedTensorType type, double value) {
  DenseElementsAttr dense = getSplatAttr(type, value);
  assert(dense && "element type not checked by verifyOpInvariants");
  return buildGenericOp(b, loc, "stablehlo.constant", {}, {type},
                        {b.getNamedAttr("value", dense)})
      ->getResult(0);
}

Value memfit::buildIntegerSplat(OpBuilder &b, Location loc, RankedTensorType type,
                                const APInt &bits) {
  auto dense = DenseElementsAttr::get(type, b.getIntegerAttr(type.getElementType(), bits));
  return buildGenericOp(b, loc, "stablehlo.constant", {}, {type},
                        {b.getNamedAttr("value", dense)})
      ->getResult(0);
}

Value memfit::buildScalarI64(OpBuilder &b, Location loc, int64_t v) {
  return buildConstantSplat(b, loc, scalarOf(b.getI64Type()), static_cast<double>(v));
}

Value memfit::buildIota(OpBuilder &b, Location loc, RankedTensorType type,
                        int64_t dim) {
  return buildGenericOp(b, loc, "stablehlo.iota", {}, {type},
                        {b.getNamedAttr("iota_dimension", b.getI64IntegerAttr(dim))})
      ->getResult(0);
}

Value memfit::buildBroadcastInDim(OpBuilder &b, Location loc,
                                  RankedTensorType type, Value operand,
                                  llvm::ArrayRef<int64_t> dims) {
  return buildGenericOp(b, loc, "stablehlo.broadcast_in_dim", {operand}, {type},
                        {b.getNamedAttr("broadcast_dimensions",
                                        b.getDenseI64ArrayAttr(dims))})
      ->getResult(0);
}

Value memfit::buildReshape(OpBuilder &b, Location loc, RankedTensorType type,
                           Value operand) {
  return buildGenericOp(b, loc, "stablehlo.reshape", {operand}, {type})->getResult(0);
}

Operation *memfit::buildOptimizationBarrier(OpBuilder &b, Location loc,
                                            ValueRange operands) {
  return buildGenericOp(b, loc, "stablehlo.optimization_barrier", operands,
                        operands.getTypes());
}

Value memfit::buildTranspose(OpBuilder &b, Location loc, Value operand,
                             llvm::ArrayRef<int64_t> perm) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in.getDimSize(p));
  auto type = RankedTensorType::get(shape, in.getElementType());
  return buildGenericOp(b, loc, "stablehlo.transpose", {operand}, {type},
                        {b.getNamedAttr("permutation", b.getDenseI64ArrayAttr(perm))})
      ->getResult(0);
}

Value memfit::buildConvert(OpBuilder &b, Location loc, RankedTensorType type,
                           Value operand) {
  return buildGenericOp(b, loc, "stablehlo.convert", {operand}, {type})->getResult(0);
}

Value memfit::buildElementwise(OpBuilder &b, Location loc, llvm::StringRef name,
                               ValueRange operands) {
  // Select's result follows its value operands, not its predicate.
  Type resultType = operands.size() == 3 ? operands[1].getType() : operands[0].getType();
  return buildGenericOp(b, loc, name, operands, {resultType})->getResult(0);
}

Value memfit::buildCompare(OpBuilder &b, Location loc, Value lhs, Value rhs,
                           llvm::StringRef direction, llvm::StringRef compareType) {
  MLIRContext *ctx = b.getContext();
  SmallVector<NamedAttribute> attrs;
  attrs.push_back(b.getNamedAttr(
      "comparison_direction",
      attrFromText(ctx, ("#stablehlo<comparison_direction " + direction + ">").str())));
  if (!compareType.empty())
    attrs.push_back(b.getNamedAttr(
        "compare_type",
        attrFromText(ctx, ("#stablehlo<comparison_type " + compareType + ">").str())));
  auto in = llvm::cast<RankedTensorType>(lhs.getType());
  auto type = RankedTensorType::get(in.getShape(), b.getI1Type());
  return buildGenericOp(b, loc, "stablehlo.compare", {lhs, rhs}, {type}, attrs)
      ->getResult(0);
}

Value memfit::buildSelect(OpBuilder &b, Location loc, Value pred, Value onTrue,
                          Value onFalse) {
  return buildElementwise(b, loc, "stablehlo.select", {pred, onTrue, onFalse});
}

Value memfit::buildDotGeneral(OpBuilder &b, Location loc, RankedTensorType type,
                              Value lhs, Value rhs, const DotDims &dims) {
  Attribute dd = attrFromText(b.getContext(), dims.toText());
  return buildGenericOp(b, loc, "stablehlo.dot_general", {lhs, rhs}, {type},
                        {b.getNamedAttr("dot_dimension_numbers", dd)})
      ->getResult(0);
}

Value memfit::buildReduce(OpBuilder &b, Location loc, Value input, Value init,
                          llvm::ArrayRef<int64_t> dims, llvm::StringRef combiner) {
  auto in = llvm::cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      shape.push_back(in.getDimSize(i));
  auto type = RankedTensorType::get(shape, in.getElementType());
  Operation *op = buildGenericOp(b, loc, "stablehlo.reduce", {input, init}, {type},
                                 {b.getNamedAttr("dimensions", b.getDenseI64ArrayAttr(dims))},
                                 /*numRegions=*/1);
  auto scalar = scalarOf(in.getElementType());
  OpBuilder::InsertionGuard g(b); // createBlock moves the insertion point
  Block *body = b.createBlock(&op->getRegion(0), {}, {scalar, scalar}, {loc, loc});
  Value r = buildElementwise(b, loc, combiner, body->getArguments());
  buildReturn(b, loc, r);
  return op->getResult(0);
}

Value memfit::buildSlice(OpBuilder &b, Location loc, Value operand,
                         llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> limit,
                         llvm::ArrayRef<int64_t> strides) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < start.size(); ++i)
    shape.push_back((limit[i] - start[i] + strides[i] - 1) / strides[i]);
  auto type = RankedTensorType::get(shape, in.getElementType());
  return buildGenericOp(b, loc, "stablehlo.slice", {operand}, {type},
                        {b.getNamedAttr("start_indices", b.getDenseI64ArrayAttr(start)),
                         b.getNamedAttr("limit_indices", b.getDenseI64ArrayAttr(limit)),
                         b.getNamedAttr("strides", b.getDenseI64ArrayAttr(strides))})
      ->getResult(0);
}

Value memfit::buildDynamicSlice(OpBuilder &b, Location loc, Value operand,
                                ValueRange starts, llvm::ArrayRef<int64_t> sizes) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  auto type = RankedTensorType::get(sizes, in.getElementType());
  SmallVector<Value> operands{operand};
  operands.append(starts.begin(), starts.end());
  return buildGenericOp(b, loc, "stablehlo.dynamic_slice", operands, {type},
                        {b.getNamedAttr("slice_sizes", b.getDenseI64ArrayAttr(sizes))})
      ->getResult(0);
}

Value memfit::buildDynamicUpdateSlice(OpBuilder &b, Location loc, Value operand,
                                      Value update, ValueRange starts) {
  SmallVector<Value> operands{operand, update};
  operands.append(starts.begin(), starts.end());
  return buildGenericOp(b, loc, "stablehlo.dynamic_update_slice", operands,
                        {operand.getType()})
      ->getResult(0);
}

Value memfit::buildConcatenate(OpBuilder &b, Location loc, ValueRange operands,
                               int64_t dim) {
  auto first = llvm::cast<RankedTensorType>(operands[0].getType());
  SmallVector<int64_t> shape(first.getShape());
  shape[dim] = 0;
  for (Value v : operands)
    shape[dim] += llvm::cast<RankedTensorType>(v.getType()).getDimSize(dim);
  auto type = RankedTensorType::get(shape, first.getElementType());
  return buildGenericOp(b, loc, "stablehlo.concatenate", operands, {type},
                        {b.getNamedAttr("dimension", b.getI64IntegerAttr(dim))})
      ->getResult(0);
}

Value memfit::buildPad(OpBuilder &b, Location loc, Value operand, Value padValue,
                       llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
                       llvm::ArrayRef<int64_t> interior) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i) {
    int64_t n = in.getDimSize(i);
    shape.push_back(low[i] + high[i] + n + std::max<int64_t>(n - 1, 0) * interior[i]);
  }
  auto type = RankedTensorType::get(shape, in.getElementType());
  return buildGenericOp(b, loc, "stablehlo.pad", {operand, padValue}, {type},
                        {b.getNamedAttr("edge_padding_low", b.getDenseI64ArrayAttr(low)),
                         b.getNamedAttr("edge_padding_high", b.getDenseI64ArrayAttr(high)),
                         b.getNamedAttr("interior_padding", b.getDenseI64ArrayAttr(interior))})
      ->getResult(0);
}

std::pair<Value, Value> memfit::buildTopK(OpBuilder &b, Location loc,
                                          Value operand, int64_t k) {
  auto in = llvm::cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape(in.getShape());
  shape.back() = k;
  auto vt = RankedTensorType::get(shape, in.getElementType());
  auto it = RankedTensorType::get(shape, b.getI32Type());
  Operation *op = buildGenericOp(b, loc, "chlo.top_k", {operand}, {vt, it},
                                 {b.getNamedAttr("k", b.getI64IntegerAttr(k))});
  return {op->getResult(0), op->getResult(1)};
}

Operation *memfit::buildWhile(OpBuilder &b, Location loc, ValueRange operands) {
  Operation *op = buildGenericOp(b, loc, "stablehlo.while", operands,
                                 operands.getTypes(), {}, /*numRegions=*/2);
  SmallVector<Location> locs(operands.size(), loc);
  OpBuilder::InsertionGuard g(b);
  b.createBlock(&op->getRegion(0), {}, operands.getTypes(), locs);
  b.createBlock(&op->getRegion(1), {}, operands.getTypes(), locs);
  return op;
}

Operation *memfit::buildReturn(OpBuilder &b, Location loc, ValueRange operands) {
  return buildGenericOp(b, loc, "stablehlo.return", operands, {});
}

Operation *memfit::buildSort(OpBuilder &b, Location loc, ValueRange operands,
                             int64_t dim, bool isStable) {
  Operation *op = buildGenericOp(
      b, loc, "stablehlo.sort", operands, operands.getTypes(),
      {b.getNamedAttr("dimension", b.getI64IntegerAttr(dim)),
       b.getNamedAttr("is_stable", b.getBoolAttr(isStable))},
      /*numRegions=*/1);
  SmallVector<Type> argTypes;
  for (Value v : operands) {
    Type scalar = scalarOf(llvm::cast<RankedTensorType>(v.getType()).getElementType());
    argTypes.append({scalar, scalar});
  }
  SmallVector<Location> locs(argTypes.size(), loc);
  OpBuilder::InsertionGuard g(b);
  Block *body = b.createBlock(&op->getRegion(0), {}, argTypes, locs);
  b.setInsertionPointToStart(body);
  Value lt = buildCompare(b, loc, body->getArgument(0), body->getArgument(1), "LT");
  buildReturn(b, loc, lt);
  return op;
}

Operation *memfit::buildCustomCall(OpBuilder &b, Location loc,
                                   llvm::StringRef target, ValueRange operands,
                                   TypeRange resultTypes) {
  return buildGenericOp(b, loc, "stablehlo.custom_call", operands, resultTypes,
                        {b.getNamedAttr("call_target_name", b.getStringAttr(target))});
}

//===-- Shardy (sdy) attribute text ----------------------------------------===//

namespace {

/// `"name"` at the front of `s` (consumed), or nullopt.
std::optional<std::string> takeQuoted(llvm::StringRef &s) {
  s = s.ltrim();
  if (!s.consume_front("\""))
    return std::nullopt;
  size_t end = s.find('"');
  if (end == llvm::StringRef::npos)
    return std::nullopt;
  std::string name = s.take_front(end).str();
  s = s.drop_front(end + 1);
  return name;
}

/// The text between the bracket at the front of `s` and its match.
std::optional<llvm::StringRef> bracketed(llvm::StringRef s, char open, char close) {
  s = s.ltrim();
  if (s.empty() || s.front() != open)
    return std::nullopt;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == open)
      ++depth;
    else if (s[i] == close && --depth == 0)
      return s.slice(1, i);
  }
  return std::nullopt;
}

/// `@mesh, [{"x", ?}, {}] ...`: the mesh reference and the dimension list.
std::optional<ShardingText> parseShardingBody(llvm::StringRef s) {
  s = s.ltrim();
  if (!s.consume_front("@"))
    return std::nullopt; // an inline mesh: not read
  ShardingText out;
  size_t comma = s.find(',');
  if (comma == llvm::StringRef::npos)
    return std::nullopt;
  out.mesh = s.take_front(comma).trim().str();
  std::optional<llvm::StringRef> list = bracketed(s.drop_front(comma + 1), '[', ']');
  if (!list)
    return std::nullopt;
  llvm::StringRef rest = *list;
  while (!(rest = rest.ltrim()).empty()) {
    std::optional<llvm::StringRef> dim = bracketed(rest, '{', '}');
    if (!dim)
      return std::nullopt;
    rest = rest.ltrim().drop_front(dim->size() + 2).ltrim();
    rest.consume_front(",");
    llvm::SmallVector<std::string, 2> axes;
    llvm::StringRef d = *dim;
    bool exact = true;
    while (!(d = d.ltrim()).empty()) {
      if (d.consume_front("?")) { // an open dimension: what is listed holds
      } else if (std::optional<std::string> name = takeQuoted(d)) {
        if (d.ltrim().starts_with(":")) { // a sub-axis "x":(1)2
          exact = false;
          d = d.drop_until([](char c) { return c == ','; });
        } else {
          axes.push_back(*name);
        }
      } else {
        return std::nullopt;
      }
      d = d.ltrim();
      d.consume_front(",");
    }
    if (!exact) {
      out.exact = false;
      axes.clear();
    }
    out.dims.push_back(std::move(axes));
  }
  return out;
}

} // namespace

std::optional<MeshText> memfit::parseMeshText(llvm::StringRef text) {
  size_t at = text.find('[');
  if (!text.starts_with("#sdy.mesh<") || at == llvm::StringRef::npos)
    return std::nullopt;
  std::optional<llvm::StringRef> list = bracketed(text.drop_front(at), '[', ']');
  if (!list)
    return std::nullopt;
  MeshText mesh;
  llvm::StringRef s = *list;
  while (!(s = s.ltrim()).empty()) {
    std::optional<std::string> name = takeQuoted(s);
    int64_t size = 0;
    s = s.ltrim();
    if (!name || !s.consume_front("="))
      return std::nullopt;
    if (s.consumeInteger(10, size) || size <= 0)
      return std::nullopt;
    mesh.axes.push_back({*name, size});
    s = s.ltrim();
    s.consume_front(",");
  }
  return mesh;
}

std::optional<ShardingText> memfit::parseShardingText(llvm::StringRef text) {
  if (!text.consume_front("#sdy.sharding<"))
    return std::nullopt;
  return parseShardingBody(text);
}

std::optional<llvm::SmallVector<ShardingText, 2>>
memfit::parseShardingPerValueText(llvm::StringRef text) {
  if (!text.consume_front("#sdy.sharding_per_value<"))
    return std::nullopt;
  std::optional<llvm::StringRef> list = bracketed(text, '[', ']');
  if (!list)
    return std::nullopt;
  llvm::SmallVector<ShardingText, 2> out;
  llvm::StringRef s = *list;
  while (!(s = s.ltrim()).empty()) {
    std::optional<llvm::StringRef> one = bracketed(s, '<', '>');
    if (!one)
      return std::nullopt;
    std::optional<ShardingText> sh = parseShardingBody(*one);
    if (!sh)
      return std::nullopt;
    out.push_back(std::move(*sh));
    s = s.ltrim().drop_front(one->size() + 2).ltrim();
    s.consume_front(",");
  }
  return out;
}
