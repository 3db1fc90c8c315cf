//===- ElementTypes.cpp - element types and constant values ---------------===//
//
// The one place that knows StableHLO's element types: their byte sizes,
// which memfit handles, how they are ordered, the splat of a value in each,
// and the elements of a constant (converted as stablehlo.convert does).
//
//===----------------------------------------------------------------------===//
#include "memfit/IR/OpViews.h"

#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <complex>

using namespace mlir;
using namespace memfit;

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
