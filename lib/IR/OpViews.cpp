//===- OpViews.cpp - typed views over generic StableHLO ops ---------------===//
//
// The accessors of the views declared in OpViews.h. Each reads attributes
// that verifyOpInvariants (Verify.cpp) checked first.
//
//===----------------------------------------------------------------------===//
#include "memfit/IR/OpViews.h"

using namespace mlir;
using namespace memfit;

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

/// The word inside `#stablehlo<comparison_direction LT>`.
static std::string enumWord(Attribute a) {
  if (!a)
    return "";
  std::string s = attrToText(a); // owned: a StringRef of the temporary would dangle
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
  switch (getElementwiseFn(&combiner)) {
  case ElementwiseFn::Add: return ReducerKind::Add;
  case ElementwiseFn::Multiply: return ReducerKind::Mul;
  case ElementwiseFn::Maximum: return ReducerKind::Max;
  case ElementwiseFn::Minimum: return ReducerKind::Min;
  case ElementwiseFn::And: return ReducerKind::And;
  case ElementwiseFn::Or: return ReducerKind::Or;
  default: return ReducerKind::Other;
  }
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

//===-- views of an operand -----------------------------------------------===//

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
