//===- DimMapping.cpp - the per-op dimension mapping table -----------------===//
//
// One switch over op kinds; each case declares the op's factors through a
// small builder (see DimMapping.h for what a factor is).
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/DimMapping.h"

#include "memfit/IR/OpViews.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace memfit;

const DimFactor *OpDimRule::forOperand(unsigned operand, int64_t dim) const {
  for (const DimFactor &f : factors)
    if (operand < f.operandDims.size() && f.operandDims[operand] == dim)
      return &f;
  return nullptr;
}

const DimFactor *OpDimRule::forResult(unsigned result, int64_t dim) const {
  for (const DimFactor &f : factors)
    if (result < f.resultDims.size() && f.resultDims[result] == dim)
      return &f;
  return nullptr;
}

namespace {

RankedTensorType typeOf(Value v) {
  return llvm::dyn_cast<RankedTensorType>(v.getType());
}

/// Declares factors one at a time: `add(kind, size).operand(i, d).result(r, d)`.
class RuleBuilder {
public:
  explicit RuleBuilder(Operation *op)
      : numOperands(op->getNumOperands()), numResults(op->getNumResults()) {}

  RuleBuilder &add(FactorKind kind, int64_t size) {
    DimFactor f;
    f.kind = kind;
    f.size = size;
    f.operandDims.assign(numOperands, -1);
    f.resultDims.assign(numResults, -1);
    rule.factors.push_back(std::move(f));
    return *this;
  }
  RuleBuilder &operand(unsigned i, int64_t d) {
    rule.factors.back().operandDims[i] = d;
    return *this;
  }
  RuleBuilder &result(unsigned r, int64_t d) {
    rule.factors.back().resultDims[r] = d;
    return *this;
  }
  /// Turns the last factor into NeedReplication, saying why.
  /// Marks the last factor as one whose chunks shift the op's indices.
  RuleBuilder &shiftingIndices() {
    rule.factors.back().shiftsIndices = true;
    return *this;
  }
  RuleBuilder &whole(const char *why) {
    rule.factors.back().kind = FactorKind::NeedReplication;
    rule.factors.back().why = why;
    return *this;
  }
  /// Marks the last factor as one XLA partitions without gathering it.
  RuleBuilder &localOnShards(bool local) {
    rule.factors.back().localOnShards = local;
    return *this;
  }
  OpDimRule take() { return std::move(rule); }

private:
  unsigned numOperands, numResults;
  OpDimRule rule;
};

/// Same-shape ops: each result dim is one factor shared by every operand of
/// the result's rank (scalar operands, e.g. a select predicate, hold none).
std::optional<OpDimRule> elementwiseRule(Operation *op, RuleBuilder &b) {
  auto rt = typeOf(op->getResult(0));
  if (!rt)
    return std::nullopt;
  for (int64_t d = 0; d < rt.getRank(); ++d) {
    b.add(FactorKind::PassThrough, rt.getDimSize(d));
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      auto t = typeOf(v);
      if (!t)
        return std::nullopt;
      if (t.getRank() == rt.getRank()) {
        if (t.getDimSize(d) != rt.getDimSize(d))
          return std::nullopt;
        b.operand(i, d);
      } else if (t.getRank() != 0) {
        return std::nullopt;
      }
    }
    for (unsigned r = 0; r < op->getNumResults(); ++r)
      b.result(r, d);
  }
  return b.take();
}

/// reshape: dimensions that survive one-to-one (same size, in a group of
/// their own once size-1 dimensions are set aside) map through.
std::optional<OpDimRule> reshapeRule(Operation *op, RuleBuilder &b) {
  auto in = typeOf(op->getOperand(0)), out = typeOf(op->getResult(0));
  if (!in || !out)
    return std::nullopt;
  SmallVector<int64_t> is, os; // non-1 dims
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (in.getDimSize(d) != 1)
      is.push_back(d);
  for (int64_t d = 0; d < out.getRank(); ++d)
    if (out.getDimSize(d) != 1)
      os.push_back(d);
  size_t i = 0, o = 0;
  while (i < is.size() && o < os.size()) {
    int64_t a = in.getDimSize(is[i]), c = out.getDimSize(os[o]);
    if (a == c) {
      b.add(FactorKind::PassThrough, a).operand(0, is[i]).result(0, os[o]);
      ++i, ++o;
      continue;
    }
    // Skip one merged/split group: advance until the products agree.
    int64_t pa = a, pc = c;
    ++i, ++o;
    while (pa != pc) {
      if (pa < pc) {
        if (i >= is.size())
          return b.take();
        pa *= in.getDimSize(is[i++]);
      } else {
        if (o >= os.size())
          return b.take();
        pc *= out.getDimSize(os[o++]);
      }
    }
  }
  return b.take();
}

std::optional<OpDimRule> dotRule(Operation *op, RuleBuilder &b) {
  DotGeneralView dot(op);
  auto lt = typeOf(dot.getLhs()), rt = typeOf(dot.getRhs());
  if (!lt || !rt)
    return std::nullopt;
  DotDims dims = dot.getDims();
  int64_t out = 0;
  for (auto [l, r] : llvm::zip(dims.lhsBatch, dims.rhsBatch))
    b.add(FactorKind::PassThrough, lt.getDimSize(l)).operand(0, l).operand(1, r).result(0, out++);
  for (int64_t d = 0; d < lt.getRank(); ++d)
    if (!llvm::is_contained(dims.lhsBatch, d) && !llvm::is_contained(dims.lhsContract, d))
      b.add(FactorKind::PassThrough, lt.getDimSize(d)).operand(0, d).result(0, out++);
  for (int64_t d = 0; d < rt.getRank(); ++d)
    if (!llvm::is_contained(dims.rhsBatch, d) && !llvm::is_contained(dims.rhsContract, d))
      b.add(FactorKind::PassThrough, rt.getDimSize(d)).operand(1, d).result(0, out++);
  for (auto [l, r] : llvm::zip(dims.lhsContract, dims.rhsContract))
    b.add(FactorKind::Reduction, lt.getDimSize(l)).operand(0, l).operand(1, r);
  return b.take();
}

std::optional<OpDimRule> reduceRule(Operation *op, RuleBuilder &b) {
  ReduceView reduce(op);
  unsigned n = reduce.getNumInputs();
  auto in = typeOf(op->getOperand(0));
  if (!in)
    return std::nullopt;
  SmallVector<int64_t> reduced = reduce.getDimensions();
  // A running max/min needs an order; complex has none.
  ReducerKind rk = reduce.getReducerKind();
  bool unordered = (rk == ReducerKind::Max || rk == ReducerKind::Min) &&
                   !isOrderedElementType(in.getElementType());
  int64_t out = 0;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    bool isReduced = llvm::is_contained(reduced, d);
    b.add(isReduced ? FactorKind::Reduction : FactorKind::PassThrough, in.getDimSize(d));
    if (isReduced && unordered)
      b.whole("it takes a maximum or minimum of complex values, which have no order");
    for (unsigned i = 0; i < n; ++i)
      b.operand(i, d);
    if (!isReduced) {
      for (unsigned r = 0; r < n; ++r)
        b.result(r, out);
      ++out;
    }
  }
  return b.take();
}

/// Ops that keep a dimension whole when `keep(d)` is false and pass it
/// through otherwise; operands beyond the first `numShaped` hold no dims.
template <typename Keep>
std::optional<OpDimRule> windowRule(Operation *op, RuleBuilder &b,
                                    unsigned numShaped, Keep keep) {
  auto rt = typeOf(op->getResult(0));
  if (!rt)
    return std::nullopt;
  for (int64_t d = 0; d < rt.getRank(); ++d) {
    bool pass = keep(d);
    b.add(pass ? FactorKind::PassThrough : FactorKind::NeedReplication, rt.getDimSize(d));
    for (unsigned i = 0; i < numShaped; ++i)
      b.operand(i, d);
    for (unsigned r = 0; r < op->getNumResults(); ++r)
      b.result(r, d);
  }
  return b.take();
}


/// The dims of a rank-`rank` tensor not in `excluded`, in order (a gather
/// result's or scatter update's dims that follow the indices' batch dims).
SmallVector<int64_t> dimsExcept(int64_t rank, ArrayRef<int64_t> excluded) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(excluded, d))
      dims.push_back(d);
  return dims;
}

const char *const kGatherIndexed =
    "the gather reads this dimension of its operand at the indices' positions: "
    "any result element may come from anywhere along it";
const char *const kScatterIndexed =
    "the scatter's indices address this dimension of its input: any chunk of "
    "updates may land anywhere along it";
const char *const kScatterCombiner =
    "it is a scatter dimension of the updates and indices, and the scatter's update "
    "computation is not an addition, multiplication, maximum or minimum: chunks of "
    "updates scattered one after another may give another result";

/// Whether the indices hold one index component (index_vector_dim of size
/// 1, or past the last dimension) addressing one operand dimension.
bool hasOneIndexComponent(RankedTensorType idx, int64_t ivd, ArrayRef<int64_t> indexMap) {
  return indexMap.size() == 1 && (ivd == idx.getRank() || idx.getDimSize(ivd) == 1);
}

/// gather: the batch dimensions of the indices (all but index_vector_dim)
/// are the result's non-offset dimensions, in order; an operand batching
/// dimension joins its indices batching dimension. An operand dimension
/// taken whole and never indexed is its offset dimension of the result
/// (table[idx] split along the table's columns). A collapsed dimension
/// addressed by the only index component is an IndexedSelect factor (each
/// chunk gathers where the index falls in it); other indexed dimensions are
/// needed whole (a live-in when the split runs along the indices).
std::optional<OpDimRule> gatherRule(Operation *op, RuleBuilder &b) {
  Attribute attr = op->getAttr("dimension_numbers");
  std::optional<SmallVector<int64_t>> sliceSizes = getI64Array(op, "slice_sizes");
  if (!attr || !sliceSizes)
    return std::nullopt;
  std::string text = attrToText(attr);
  SmallVector<int64_t> offsetDims = readAttrField(text, "offset_dims");
  SmallVector<int64_t> collapsed = readAttrField(text, "collapsed_slice_dims");
  SmallVector<int64_t> opBatch = readAttrField(text, "operand_batching_dims");
  SmallVector<int64_t> idxBatch = readAttrField(text, "start_indices_batching_dims");
  SmallVector<int64_t> startMap = readAttrField(text, "start_index_map");
  SmallVector<int64_t> ivd = readAttrField(text, "index_vector_dim");
  auto in = typeOf(op->getOperand(0)), idx = typeOf(op->getOperand(1)),
       rt = typeOf(op->getResult(0));
  if (ivd.size() != 1 || opBatch.size() != idxBatch.size() ||
      int64_t(sliceSizes->size()) != in.getRank())
    return std::nullopt;
  SmallVector<int64_t> batchResultDims = dimsExcept(rt.getRank(), offsetDims);
  unsigned next = 0;
  for (int64_t i = 0; i < idx.getRank(); ++i) {
    if (i == ivd[0])
      continue;
    if (next >= batchResultDims.size())
      return std::nullopt;
    int64_t r = batchResultDims[next++];
    b.add(FactorKind::PassThrough, idx.getDimSize(i)).operand(1, i).result(0, r);
    for (auto [ob, ib] : llvm::zip(opBatch, idxBatch))
      if (ib == i)
        b.operand(0, ob);
  }
  unsigned k = 0;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (llvm::is_contained(opBatch, d))
      continue;
    bool indexed = llvm::is_contained(startMap, d);
    if (llvm::is_contained(collapsed, d)) {
      if (indexed && hasOneIndexComponent(idx, ivd[0], startMap)) {
        b.add(FactorKind::IndexedSelect, in.getDimSize(d)).operand(0, d);
        b.localOnShards((*sliceSizes)[d] == 1);
      } else if (indexed) {
        b.add(FactorKind::PassThrough, in.getDimSize(d)).operand(0, d).whole(kGatherIndexed);
        b.localOnShards((*sliceSizes)[d] == 1);
      }
      continue;
    }
    if (k >= offsetDims.size())
      return std::nullopt;
    int64_t r = offsetDims[k++];
    b.add(FactorKind::PassThrough, in.getDimSize(d)).operand(0, d).result(0, r);
    if (indexed)
      b.whole(kGatherIndexed);
    else if ((*sliceSizes)[d] != in.getDimSize(d))
      b.whole(nullptr);
  }
  return b.take();
}

/// Whether a scatter's update computation gives the same result whatever
/// order the updates come in (up to float rounding for add and multiply),
/// so that chunks of updates may be scattered one after another.
bool combinesInAnyOrder(Operation *op, Type element) {
  switch (getCombinerKind(op->getRegion(0))) {
  case ReducerKind::Add:
  case ReducerKind::Mul:
  case ReducerKind::And:
  case ReducerKind::Or:
    return true;
  case ReducerKind::Max:
  case ReducerKind::Min:
    return isOrderedElementType(element);
  case ReducerKind::Other:
    return false;
  }
  return false;
}

/// scatter (N inputs, indices, N updates): a batch dimension of the indices
/// (input_batching_dims joined with scatter_indices_batching_dims) is one
/// factor of every input, result and update (the update's scatter dims are
/// the indices' dims but index_vector_dim, in order): each chunk scatters
/// only into its own slice of the inputs, so the indices stay valid. A window
/// dimension taken whole and never indexed also passes through. The other
/// scatter dimensions of the indices and updates are ScatterInto factors
/// (segment_sum's rows, an embedding gradient's tokens): with one input and
/// an update computation that combines in any order, a split along them
/// scatters each chunk's updates into the running result. An inserted
/// dimension of the input that the only index component addresses passes
/// through with shifted indices (each chunk of the input takes the updates
/// that land in it; the gradient of take_along_axis split by the
/// vocabulary); other indexed dimensions are needed whole (a chunk of
/// updates may land anywhere).
std::optional<OpDimRule> scatterRule(Operation *op, RuleBuilder &b) {
  Attribute attr = op->getAttr("scatter_dimension_numbers");
  if (!attr || op->getNumOperands() % 2 != 1 || op->getNumRegions() != 1)
    return std::nullopt;
  std::string text = attrToText(attr);
  SmallVector<int64_t> windowDims = readAttrField(text, "update_window_dims");
  SmallVector<int64_t> inserted = readAttrField(text, "inserted_window_dims");
  SmallVector<int64_t> opBatch = readAttrField(text, "input_batching_dims");
  SmallVector<int64_t> idxBatch = readAttrField(text, "scatter_indices_batching_dims");
  SmallVector<int64_t> toOperand = readAttrField(text, "scatter_dims_to_operand_dims");
  SmallVector<int64_t> ivd = readAttrField(text, "index_vector_dim");
  unsigned n = op->getNumOperands() / 2;
  auto in = typeOf(op->getOperand(0)), idx = typeOf(op->getOperand(n)),
       up = typeOf(op->getOperand(n + 1));
  if (ivd.size() != 1 || opBatch.size() != idxBatch.size())
    return std::nullopt;
  auto addFactor = [&](FactorKind kind, int64_t size, int64_t opDim, int64_t idxDim,
                       int64_t upDim) {
    b.add(kind, size);
    for (unsigned k = 0; k < n; ++k) {
      if (opDim >= 0)
        b.operand(k, opDim).result(k, opDim);
      if (upDim >= 0)
        b.operand(n + 1 + k, upDim);
    }
    if (idxDim >= 0)
      b.operand(n, idxDim);
  };
  bool combines = n == 1 && combinesInAnyOrder(op, in.getElementType());
  SmallVector<int64_t> upScatter = dimsExcept(up.getRank(), windowDims);
  unsigned next = 0;
  for (int64_t i = 0; i < idx.getRank(); ++i) {
    if (i == ivd[0])
      continue;
    if (next >= upScatter.size())
      return std::nullopt;
    int64_t u = upScatter[next++];
    if (!llvm::is_contained(idxBatch, i)) {
      addFactor(FactorKind::ScatterInto, idx.getDimSize(i), -1, i, u);
      if (!combines)
        b.whole(kScatterCombiner);
      continue;
    }
    for (auto [ob, ib] : llvm::zip(opBatch, idxBatch))
      if (ib == i && in.getDimSize(ob) == idx.getDimSize(i))
        addFactor(FactorKind::PassThrough, idx.getDimSize(i), ob, i, u);
  }
  unsigned w = 0;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (llvm::is_contained(opBatch, d))
      continue;
    bool indexed = llvm::is_contained(toOperand, d);
    if (llvm::is_contained(inserted, d)) {
      if (indexed) {
        addFactor(FactorKind::PassThrough, in.getDimSize(d), d, -1, -1);
        if (hasOneIndexComponent(idx, ivd[0], toOperand))
          b.shiftingIndices();
        else
          b.whole(kScatterIndexed);
      }
      continue;
    }
    if (w >= windowDims.size())
      return std::nullopt;
    int64_t u = windowDims[w++];
    addFactor(FactorKind::PassThrough, in.getDimSize(d), d, -1, u);
    if (indexed)
      b.whole(kScatterIndexed);
    else if (up.getDimSize(u) != in.getDimSize(d))
      b.whole(nullptr);
  }
  return b.take();
}

/// LAPACK triangular solve (jax's lapack_?trsm_ffi): op(a) x = b (side 'L')
/// or x op(a) = b (side 'R'), with leading batch dimensions. Each column of
/// b (side L; each row for side R) is solved on its own, so that dimension
/// of b and x is one factor; batch dimensions of a, b and x are one factor
/// each. The dimension a acts on is in no factor.
std::optional<OpDimRule> triangularSolveRule(Operation *op, RuleBuilder &b) {
  CustomCallView call(op);
  std::optional<int64_t> side = call.getBackendConfigInt("side");
  if (!call.isTriangularSolve() || !side)
    return std::nullopt;
  auto a = typeOf(op->getOperand(0)), rhs = typeOf(op->getOperand(1));
  int64_t nb = call.getNumBatchDims(), r = rhs.getRank();
  if (r < 2 || a.getRank() != r || nb != r - 2)
    return std::nullopt;
  for (int64_t d = 0; d < nb; ++d)
    b.add(FactorKind::PassThrough, rhs.getDimSize(d)).operand(0, d).operand(1, d).result(0, d);
  int64_t free = *side == 'L' ? r - 1 : *side == 'R' ? r - 2 : -1;
  if (free < 0)
    return std::nullopt;
  b.add(FactorKind::PassThrough, rhs.getDimSize(free)).operand(1, free).result(0, free);
  return b.take();
}

} // namespace

static std::optional<OpDimRule> buildRule(Operation *op) {
  OpKind kind = getOpKind(op);
  RuleBuilder b(op);
  for (Value v : op->getOperands())
    if (!typeOf(v))
      return std::nullopt;
  for (Value v : op->getResults())
    if (!typeOf(v))
      return std::nullopt;

  switch (kind) {
  case OpKind::ElementwiseUnary:
  case OpKind::ElementwiseBinary:
  case OpKind::Convert:
  case OpKind::Compare:
  case OpKind::Select:
  case OpKind::Clamp: {
    if (typeOf(op->getOperand(0)).getRank() != typeOf(op->getResult(0)).getRank() &&
        kind != OpKind::Select && kind != OpKind::Clamp)
      return std::nullopt; // bitcast_convert changing the rank
    return elementwiseRule(op, b);
  }
  case OpKind::Constant:
  case OpKind::ArithConstant:
  case OpKind::Iota: {
    auto rt = typeOf(op->getResult(0));
    for (int64_t d = 0; d < rt.getRank(); ++d)
      b.add(FactorKind::PassThrough, rt.getDimSize(d)).result(0, d);
    return b.take();
  }
  case OpKind::BroadcastInDim: {
    auto in = typeOf(op->getOperand(0)), rt = typeOf(op->getResult(0));
    SmallVector<int64_t> bdims = BroadcastInDimView(op).getBroadcastDimensions();
    if (static_cast<int64_t>(bdims.size()) != in.getRank())
      return std::nullopt;
    for (int64_t d = 0; d < rt.getRank(); ++d) {
      b.add(FactorKind::PassThrough, rt.getDimSize(d)).result(0, d);
      for (auto [k, bd] : llvm::enumerate(bdims))
        if (bd == d && in.getDimSize(k) == rt.getDimSize(d))
          b.operand(0, k);
    }
    return b.take();
  }
  case OpKind::Reshape:
    return reshapeRule(op, b);
  case OpKind::Transpose: {
    auto in = typeOf(op->getOperand(0));
    SmallVector<int64_t> perm = TransposeView(op).getPermutation();
    for (auto [d, p] : llvm::enumerate(perm))
      b.add(FactorKind::PassThrough, in.getDimSize(p)).operand(0, p).result(0, d);
    return b.take();
  }
  case OpKind::DotGeneral:
    return dotRule(op, b);
  case OpKind::Reduce:
    return reduceRule(op, b);
  case OpKind::Slice: {
    SliceView s(op);
    auto in = typeOf(op->getOperand(0));
    auto start = s.getStartIndices(), limit = s.getLimitIndices(), stride = s.getStrides();
    return windowRule(op, b, 1, [&](int64_t d) {
      return start[d] == 0 && stride[d] == 1 && limit[d] == in.getDimSize(d);
    });
  }
  case OpKind::DynamicSlice: {
    auto in = typeOf(op->getOperand(0));
    auto sizes = DynamicSliceView(op).getSliceSizes();
    return windowRule(op, b, 1, [&](int64_t d) { return sizes[d] == in.getDimSize(d); });
  }
  case OpKind::DynamicUpdateSlice: {
    auto in = typeOf(op->getOperand(0)), up = typeOf(op->getOperand(1));
    return windowRule(op, b, 2, [&](int64_t d) { return up.getDimSize(d) == in.getDimSize(d); });
  }
  case OpKind::Pad: {
    PadView p(op);
    auto lo = p.getLow(), hi = p.getHigh(), in = p.getInterior();
    return windowRule(op, b, 1, [&](int64_t d) { return lo[d] == 0 && hi[d] == 0 && in[d] == 0; });
  }
  case OpKind::Concatenate: {
    int64_t cd = ConcatenateView(op).getDimension();
    return windowRule(op, b, op->getNumOperands(), [&](int64_t d) { return d != cd; });
  }
  case OpKind::Sort: {
    int64_t sd = SortView(op).getDimension();
    std::optional<OpDimRule> rule =
        windowRule(op, b, op->getNumOperands(), [&](int64_t d) { return d != sd; });
    if (rule && sd >= 0 && sd < int64_t(rule->factors.size()))
      rule->factors[sd].kind = FactorKind::SortPrefix;
    return rule;
  }
  case OpKind::TopK: {
    auto in = typeOf(op->getOperand(0));
    int64_t last = in.getRank() - 1;
    for (int64_t d = 0; d < last; ++d)
      b.add(FactorKind::PassThrough, in.getDimSize(d)).operand(0, d).result(0, d).result(1, d);
    b.add(FactorKind::TopK, in.getDimSize(last)).operand(0, last);
    if (!isOrderedElementType(in.getElementType()))
      b.whole("it ranks complex values, which have no order");
    return b.take();
  }
  case OpKind::CustomCall:
    return triangularSolveRule(op, b);
  case OpKind::Gather:
    return gatherRule(op, b);
  case OpKind::Scatter:
    return scatterRule(op, b);
  // A sharding constraint is the identity on values; its sharding names
  // dimensions by position, so a chunk of a dimension keeps it valid.
  case OpKind::ShardingConstraint:
    return elementwiseRule(op, b);
  default:
    return std::nullopt;
  }
}

std::optional<OpDimRule> memfit::getOpDimRule(Operation *op) {
  std::optional<OpDimRule> rule = buildRule(op);
  if (rule)
    rule->scalarRegions = getOpKind(op) == OpKind::Reduce || getOpKind(op) == OpKind::Sort ||
                          getOpKind(op) == OpKind::Scatter;
  return rule;
}
