//===- FusionModel.cpp - what XLA materialises, and what it recomputes ----===//
//
// The model, checked against XLA:CPU's memory_analysis() with ynn fusions off
// (bench/bench_profile.py prints the comparison):
//  * Ops run in XLA's post-order: a depth-first walk of the dataflow graph
//    from the block's terminator, operands in order (what XLA's post-order
//    scheduler produces; jax's emission order can differ, e.g. in gradients).
//  * A fusible op (elementwise, broadcast, reshape, transpose, slice, iota,
//    convert, compare, select) is fused into its consumers. Its result is
//    materialised only when a consumer cannot fuse it (dot_general, sort,
//    top_k, custom_call, while, call, return, or a reduce over a dimension
//    longer than 32, which XLA:CPU rewrites into reduce-window + reduce) or
//    when it has several consumers and is too expensive for XLA to
//    duplicate (exp, log, divide by a non-constant..). A cheap one that is
//    materialised for some consumers is still recomputed inside the others,
//    so its inputs stay live until those consumers run, unless that would
//    read more than its buffer: two or more large inputs (not broadcasts,
//    iotas or scalars) holding more elements than its result (a select of
//    scores by a mask), whose other consumers read its buffer.
//  * A reshape of a value already in memory is a bitcast (so is a
//    broadcast_in_dim that only inserts unit dimensions), and a transpose
//    feeding a dot folds into the dot: neither takes a buffer of its own.
//  * A dot_general operand read from a buffer whose batch dimensions are not
//    its leading ones, in order (an argument, a loop result, a value with
//    other readers, through a folded transpose), is copied transposed while
//    the dot runs (DotDecomposer's canonical form): "bqhd,bkhd->bhqk" holds
//    a copy of q and of k.
//  * Every other op is a fusion root: its results are buffers.
//  * A buffer lives from its producer to the last fusion root that reads it.
//  * Loop results and in-place updates (dynamic_update_slice, scatter) reuse
//    an operand's buffer when that operand dies at the op (XLA's buffer
//    assignment shares them); a value a loop passes through unchanged stays
//    in its operand's buffer. In a loop body, an in-place update of a
//    carried value nothing else reads (a scan's stacked outputs, row by row)
//    writes into the loop's buffer, which the parent block counts: it is no
//    buffer of the body.
//  * In a while body, the new value of a loop-carried slot is written into
//    that slot's buffer (XLA aliases the body's parameter and root) when the
//    slot's old value is dead by then: it is counted once, outside, as the
//    loop's operand.
//  * An optimization_barrier's results are its operands' buffers (XLA's
//    dataflow analysis forwards the values through it, as through a tuple):
//    it materialises its operands and extends their lives to the last reader
//    of its results, but takes no buffer of its own.
//  * Constants are not counted (XLA keeps them outside the temp allocation).
//  * Arguments are live throughout; returned values until the end.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/FusionModel.h"

#include "memfit/IR/OpTable.h"
#include "memfit/IR/OpViews.h"

#include <algorithm>

using namespace mlir;
using namespace memfit;

namespace {

bool isConstantExpr(Value v, unsigned depth);

/// Elementwise ops XLA's fusion does not duplicate into several consumers
/// (OpTable's `costly`: xla::InstructionFusion::IsExpensive).
bool isExpensiveToDuplicate(Operation *op) {
  // XLA's algebraic simplifier rewrites a division by a constant into a
  // multiplication by its reciprocal, which is cheap.
  if (getElementwiseFn(op) == ElementwiseFn::Divide &&
      op->getNumOperands() == 2 && isConstantExpr(op->getOperand(1), 0))
    return false;
  const OpInfo *info = lookupOpInfo(op);
  return info && info->costly;
}

bool isFusible(Operation *op) { return FusionModel::isFusible(op); }

/// stablehlo.optimization_barrier: XLA forwards its operands' values (no
/// buffer of its own, no copy), and fuses nothing across it.
bool isBarrier(Operation *op) {
  return op && getOpKind(op) == OpKind::OptimizationBarrier;
}

/// A reduce that XLA fuses with the producers of its inputs.
bool reduceFusesInputs(Operation *reduce) {
  if (reduce->getNumOperands() == 0)
    return false;
  auto type = llvm::dyn_cast<RankedTensorType>(reduce->getOperand(0).getType());
  std::optional<SmallVector<int64_t>> dims = getI64Array(reduce, "dimensions");
  if (!type || !dims)
    return false;
  for (int64_t d : *dims)
    if (d < 0 || d >= type.getRank() || type.getDimSize(d) > FusionModel::kTreeReductionWindow)
      return false;
  return true;
}

bool acceptsFusedOperand(Operation *user) { return FusionModel::acceptsFusedOperand(user); }

/// A value computed from constants only (XLA folds it to a constant).
bool isConstantExpr(Value v, unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 8)
    return false;
  if (isConstantLike(def))
    return true;
  if (!isFusible(def) || def->getNumRegions() != 0)
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return isConstantExpr(o, depth + 1); });
}

/// Ops whose i-th result may reuse the buffer of their i-th operand: loops,
/// and in-place updates (dynamic_update_slice; scatter, whose results are
/// its first operands updated: jax's segment_sum scatters into zeros that
/// XLA writes once, in the buffer the scatter then updates).
bool mayReuseOperandBuffer(Operation *op) {
  OpKind k = getOpKind(op);
  return k == OpKind::While || k == OpKind::DynamicUpdateSlice ||
         op->getName().getStringRef() == "stablehlo.scatter";
}

int64_t bytesOf(Value v) { return getTensorBytes(v.getType()).value_or(0); }

/// Dimensions longer than 1.
int64_t trueRank(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t ? llvm::count_if(t.getShape(), [](int64_t d) { return d != 1; }) : 0;
}

int64_t elementsOf(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t.getNumElements() : 0;
}

/// Whether XLA recomputes a producer inside the consumers that can fuse it
/// while others read its buffer (InstructionFusion::ComputeGloballyUnfusible):
/// when it reads at most one large input (broadcasts, iotas and scalar
/// constants do not count; an input counts when its true rank is the
/// result's), or when its distinct inputs hold no more elements than its
/// result. A select of a score matrix by a mask reads two matrices to write
/// one: the consumers that could fuse it read its buffer instead.
bool duplicatedIntoFusingConsumers(Operation *op) {
  int64_t rank = trueRank(op->getResult(0)), large = 0, inputs = 0;
  llvm::SmallPtrSet<Value, 4> seen;
  for (Value o : op->getOperands()) {
    if (!seen.insert(o).second)
      continue;
    inputs += elementsOf(o);
    Operation *def = o.getDefiningOp();
    OpKind k = def ? getOpKind(def) : OpKind::Unknown;
    bool negligible = k == OpKind::BroadcastInDim || k == OpKind::Iota ||
                      (def && isConstantLike(def) && elementsOf(o) == 1);
    if (!negligible && trueRank(o) >= rank)
      ++large;
  }
  return large <= 1 || inputs <= elementsOf(op->getResult(0));
}

} // namespace

//===-- FusionModel --------------------------------------------------------===//

bool FusionModel::isFusible(Operation *op) {
  const OpInfo *info = lookupOpInfo(op);
  return info && info->fusible;
}

/// XLA's input fusion puts the producers of a short reduce inside it.
Value FusionModel::forwardedThroughBarriers(Value v) {
  while (auto r = llvm::dyn_cast<OpResult>(v)) {
    if (!isBarrier(r.getOwner()))
      break;
    v = r.getOwner()->getOperand(r.getResultNumber());
  }
  return v;
}

bool FusionModel::acceptsFusedOperand(Operation *user) {
  return isFusible(user) || (getOpKind(user) == OpKind::Reduce && reduceFusesInputs(user));
}

FusionModel::FusionModel(Block &block) : block(block) {
  schedule();
  for (Operation *op : ops)
    classify(op);
  computeLiveRanges();
}

void FusionModel::schedule() {
  // The ops of this block that `op` (or an op nested in it) reads, in
  // operand order.
  auto depsOf = [&](Operation *op) {
    SmallVector<Operation *, 4> deps;
    auto add = [&](Value v) {
      if (Operation *def = v.getDefiningOp())
        if (def->getBlock() == &block && def != op)
          deps.push_back(def);
    };
    for (Value v : op->getOperands())
      add(v);
    if (op->getNumRegions() != 0)
      op->walk([&](Operation *nested) {
        if (nested != op)
          for (Value v : nested->getOperands())
            add(v);
      });
    return deps;
  };
  llvm::DenseSet<Operation *> visited;
  auto emit = [&](Operation *op) {
    index[op] = ops.size();
    ops.push_back(op);
  };
  // Iterative depth-first post-order (programs can be long chains).
  struct Frame {
    Operation *op;
    SmallVector<Operation *, 4> deps;
    unsigned next = 0;
  };
  auto visit = [&](Operation *root) {
    if (!visited.insert(root).second)
      return;
    SmallVector<Frame> stack;
    stack.push_back({root, depsOf(root), 0});
    while (!stack.empty()) {
      Frame &f = stack.back();
      if (f.next < f.deps.size()) {
        Operation *d = f.deps[f.next++];
        if (visited.insert(d).second)
          stack.push_back({d, depsOf(d), 0});
        continue;
      }
      emit(f.op);
      stack.pop_back();
    }
  };
  Operation *terminator =
      !block.empty() && isTerminatorLike(&block.back()) ? &block.back() : nullptr;
  if (terminator) {
    visited.insert(terminator);
    for (Operation *d : depsOf(terminator))
      visit(d);
  }
  // Ops the terminator does not need (dead code, side effects), in order.
  for (Operation &op : block)
    visit(&op);
  if (terminator)
    emit(terminator);
}

Operation *FusionModel::userInBlock(OpOperand &use) const {
  return block.findAncestorOpInBlock(*use.getOwner());
}

/// A broadcast_in_dim that keeps the element count and the order of the
/// operand's dimensions: only unit dimensions are inserted.
static bool isUnitDimBroadcast(Operation *op) {
  auto in = llvm::dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  std::optional<SmallVector<int64_t>> dims = getI64Array(op, "broadcast_dimensions");
  if (!in || !out || !dims || !in.hasStaticShape() || !out.hasStaticShape() ||
      in.getNumElements() != out.getNumElements())
    return false;
  return llvm::is_sorted(*dims);
}

/// A reshape is a bitcast of a buffer already in memory, and a transpose
/// feeding a dot folds into the dot's dimension numbers: neither needs a
/// buffer of its own for the consumers in `needers`.
static bool isViewOfOperandBuffer(Operation *op, bool operandInMemory,
                                  llvm::ArrayRef<OpOperand *> needers) {
  OpKind kind = getOpKind(op);
  // A broadcast_in_dim that only inserts unit dimensions is a reshape.
  if (kind == OpKind::BroadcastInDim && isUnitDimBroadcast(op))
    kind = OpKind::Reshape;
  if ((kind != OpKind::Reshape && kind != OpKind::Transpose) || !operandInMemory)
    return false;
  bool operandIsArgument = llvm::isa<BlockArgument>(op->getOperand(0));
  for (OpOperand *use : needers) {
    Operation *u = use->getOwner();
    if (u->getBlock() != op->getBlock())
      return false; // read inside a loop body: kept as its own buffer
    OpKind uk = getOpKind(u);
    bool readOnlyRoot = uk == OpKind::DotGeneral;
    // A reshaped update that dynamic_update_slice copies into its operand
    // (a scan's output row) is read from the value's own buffer.
    if (kind == OpKind::Reshape)
      readOnlyRoot |= uk == OpKind::Reduce || uk == OpKind::TopK ||
                      (uk == OpKind::DynamicUpdateSlice && use->getOperandNumber() == 1) ||
                      (isTerminatorLike(u) && !operandIsArgument);
    if (!readOnlyRoot)
      return false;
  }
  return true;
}

void FusionModel::classify(Operation *op) {
  if (isConstantLike(op) || isTerminatorLike(op) || isBarrier(op))
    return;
  if (getOpKind(op) == OpKind::While && op->getNumRegions() == 2 &&
      !op->getRegion(1).empty() && !op->getRegion(1).front().empty()) {
    // Values the body returns unchanged stay in the operand's buffer.
    Block &body = op->getRegion(1).front();
    Operation &ret = body.back();
    for (auto [i, r] : llvm::enumerate(op->getResults())) {
      bool passThrough = i < ret.getNumOperands() && i < body.getNumArguments() &&
                         ret.getOperand(i) == body.getArgument(i);
      if (!passThrough)
        materialised.insert(r);
    }
    return;
  }
  for (Value r : op->getResults()) {
    if (!isFusible(op)) {
      materialised.insert(r);
      continue;
    }
    llvm::SmallPtrSet<Operation *, 4> users;
    SmallVector<OpOperand *> needers; // uses that need the value in memory
    bool fusingUse = false;
    for (OpOperand &use : r.getUses()) {
      Operation *u = userInBlock(use);
      if (!u)
        continue;
      users.insert(u);
      // A use inside a nested region (a loop body reading an outer value)
      // needs the value in memory; so does any non-fusing consumer.
      if (u != use.getOwner() || !acceptsFusedOperand(u))
        needers.push_back(&use);
      else
        fusingUse = true;
    }
    bool expensive = isExpensiveToDuplicate(op);
    if (!needers.empty()) {
      Value src = op->getNumOperands() ? op->getOperand(0) : Value();
      bool srcInMemory =
          src && (llvm::isa<BlockArgument>(src) || src.getParentBlock() != &block ||
                  materialised.contains(src) || isBarrier(src.getDefiningOp()) ||
                  (src.getDefiningOp() && isConstantLike(src.getDefiningOp())));
      if (isViewOfOperandBuffer(op, srcInMemory, needers))
        continue;
      materialised.insert(r);
      if (fusingUse && !expensive && duplicatedIntoFusingConsumers(op))
        duplicated.insert(r);
    } else if (users.size() > 1 && expensive) {
      materialised.insert(r);
    }
  }
}

void FusionModel::computeLiveRanges() {
  unsigned end = ops.size();
  // Walk backwards so that each fused (virtual) value knows the latest fusion
  // root that reads it before its producers are visited.
  llvm::DenseMap<Value, unsigned> rootOfVirtual;
  auto isFusingUse = [&](OpOperand &use) {
    Operation *u = userInBlock(use);
    return u && u == use.getOwner() && !isTerminatorLike(u) &&
           acceptsFusedOperand(u);
  };
  auto rootIndexOfUse = [&](OpOperand &use) -> unsigned {
    Operation *u = userInBlock(use);
    if (!u)
      return 0;
    if (isTerminatorLike(u))
      return end;
    if (u == use.getOwner() && acceptsFusedOperand(u) && isFusible(u)) {
      unsigned latest = index.lookup(u);
      for (Value r : u->getResults())
        if (!isMaterialised(r) || isDuplicated(r))
          latest = std::max(latest, rootOfVirtual.lookup(r));
      return latest;
    }
    // A loop's pass-through result, and a barrier's result, live in this
    // operand's buffer.
    if (u == use.getOwner() && (getOpKind(u) == OpKind::While || isBarrier(u)) &&
        use.getOperandNumber() < u->getNumResults()) {
      Value r = u->getResult(use.getOperandNumber());
      if (!isMaterialised(r))
        return std::max(index.lookup(u), rootOfVirtual.lookup(r));
    }
    return index.lookup(u);
  };
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation *op = *it;
    unsigned pos = index.lookup(op);
    for (Value r : op->getResults()) {
      unsigned last = pos, lastFused = pos;
      bool dup = isDuplicated(r);
      for (OpOperand &use : r.getUses()) {
        unsigned at = rootIndexOfUse(use);
        if (dup && isFusingUse(use))
          lastFused = std::max(lastFused, at);
        else
          last = std::max(last, at);
      }
      if (isMaterialised(r))
        lastUseIndex[r] = last;
      if (dup)
        rootOfVirtual[r] = lastFused;
      else if (!isMaterialised(r))
        rootOfVirtual[r] = last;
    }
  }
  for (Operation *op : ops) {
    unsigned pos = index.lookup(op);
    llvm::SmallPtrSet<Value, 4> taken; // operand buffers already reused here
    for (auto [i, r] : llvm::enumerate(op->getResults())) {
      if (!isMaterialised(r))
        continue;
      firstLiveIndex[r] = pos;
      if (updatesCarriedArgument(op, i)) {
        carried.insert(r);
        continue;
      }
      if (Value donor = findReusableOperand(op, i, r, taken)) {
        taken.insert(donor);
        donorOf[r] = donor;
        firstLiveIndex[r] = pos + 1; // takes over the operand's buffer
        if (carried.contains(donor))
          carried.insert(r);
      }
    }
  }
  placeInLoopCarriedBuffers([&](BlockArgument a) {
    unsigned last = 0;
    for (OpOperand &use : a.getUses())
      last = std::max(last, rootIndexOfUse(use));
    return last;
  });
}

/// XLA aliases a while body's parameter and its root slot by slot: the
/// body's new value for slot i is written into argument i's buffer (the
/// loop's operand, counted outside the body) when argument i is dead by
/// then, read last before the value's producer or by the producer itself
/// writing in place (an in-place update of that operand, an elementwise
/// fusion over it). Such a value takes no bytes of the body's own: a split
/// loop's accumulator (a running sum, a scatter's result, an output
/// assembled chunk by chunk) is one buffer, not two.
void FusionModel::placeInLoopCarriedBuffers(
    llvm::function_ref<unsigned(mlir::BlockArgument)> lastUseOfArgument) {
  Operation *parent = block.getParentOp();
  if (!parent || getOpKind(parent) != OpKind::While || parent->getNumRegions() != 2 ||
      block.getParent() != &parent->getRegion(1) || block.empty())
    return;
  Operation *ret = &block.back();
  llvm::SmallPtrSet<Value, 8> placed;
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    if (i >= block.getNumArguments())
      break;
    Operation *def = v.getDefiningOp();
    BlockArgument arg = block.getArgument(i);
    if (!def || def->getBlock() != &block || !isMaterialised(v) || placed.contains(v) ||
        arg.getType() != v.getType())
      continue;
    unsigned pos = index.lookup(def), argLast = lastUseOfArgument(arg);
    if (argLast > pos || (argLast == pos && !writesInPlaceOver(def, v, arg)))
      continue;
    placed.insert(v);
    firstLiveIndex[v] = lastUseIndex.lookup(v) + 1;
  }
}

/// Whether `def`, reading `operand` (which dies there), may write its
/// result `v` over it: an in-place update of that very operand, or an
/// elementwise fusion reading it with `v`'s type.
bool FusionModel::writesInPlaceOver(Operation *def, Value v, Value operand) const {
  unsigned r = llvm::cast<OpResult>(v).getResultNumber();
  if (mayReuseOperandBuffer(def))
    return r < def->getNumOperands() && def->getOperand(r) == operand;
  if (!isFusible(def) || operand.getType() != v.getType())
    return false;
  SmallVector<Value> inputs;
  collectFusionInputs(def, inputs);
  return llvm::is_contained(inputs, operand);
}

/// In a loop body, an in-place update (dynamic_update_slice, or a nested
/// loop) of a carried value that nothing else reads writes into the
/// buffer the loop carries, which the loop's parent block counts: a
/// scan's stacked outputs are written row by row into the loop's operand.
bool FusionModel::updatesCarriedArgument(Operation *op, unsigned resultIndex) const {
  if (!mayReuseOperandBuffer(op) || resultIndex >= op->getNumOperands())
    return false;
  auto arg = llvm::dyn_cast<BlockArgument>(op->getOperand(resultIndex));
  Operation *loop = block.getParentOp();
  if (!arg || arg.getOwner() != &block || !loop || getOpKind(loop) != OpKind::While ||
      block.getParent() != &loop->getRegion(1))
    return false;
  return arg.hasOneUse();
}

bool FusionModel::isRecomputedBy(Value v, Operation *consumer) const {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &block || isConstantLike(def))
    return false;
  if (!isMaterialised(v))
    return true;
  return isDuplicated(v) && consumer->getBlock() == &block && acceptsFusedOperand(consumer);
}

/// Iterative, and each producer once: fused producers form a DAG (x + x),
/// which a plain recursion would walk exponentially often. A loop's result
/// that the model leaves unmaterialised (the body passes it through) is
/// read from the buffer of the loop's matching operand.
void FusionModel::collectFusionInputs(Operation *root, SmallVectorImpl<Value> &inputs,
                                      SmallVectorImpl<Operation *> *fused) const {
  llvm::SmallPtrSet<Operation *, 16> seenOps{root};
  llvm::SmallPtrSet<Value, 16> seenValues;
  struct Frame {
    Operation *op;
    unsigned next;
  };
  SmallVector<Frame> stack{{root, 0}};
  while (!stack.empty()) {
    Frame &f = stack.back();
    if (f.next == f.op->getNumOperands()) {
      stack.pop_back();
      continue;
    }
    Operation *consumer = f.op;
    Value v = consumer->getOperand(f.next++);
    Operation *def = v.getDefiningOp();
    if (def && (getOpKind(def) == OpKind::While || isBarrier(def)) &&
        isRecomputedBy(v, consumer))
      v = def->getOperand(llvm::cast<OpResult>(v).getResultNumber());
    def = v.getDefiningOp();
    if (def && isConstantLike(def))
      continue;
    if (!isRecomputedBy(v, consumer)) {
      if (seenValues.insert(v).second)
        inputs.push_back(v);
      continue;
    }
    if (!seenOps.insert(def).second)
      continue;
    if (fused)
      fused->push_back(def);
    stack.push_back({def, 0});
  }
}

Value FusionModel::findReusableOperand(Operation *op, unsigned resultIndex,
                                       Value result,
                                       const llvm::SmallPtrSetImpl<Value> &taken) const {
  unsigned pos = index.lookup(op);
  auto diesHere = [&](Value v) {
    return !llvm::isa<BlockArgument>(v) && isMaterialised(v) &&
           lastUse(v) == pos && !taken.contains(v);
  };
  // Loops and in-place updates: result i reuses operand i's buffer, also
  // when an optimization_barrier forwards it (a split's remainder step
  // updates its loop's accumulator through one).
  if (mayReuseOperandBuffer(op)) {
    if (resultIndex >= op->getNumOperands())
      return Value();
    Value v = forwardedThroughBarriers(op->getOperand(resultIndex));
    return diesHere(v) ? v : Value();
  }
  // Elementwise fusions write in place over an input of the same shape that
  // dies (XLA's CanShareOperandBufferWithUser wants equal shapes, not just
  // equal sizes).
  if (!isFusible(op))
    return Value();
  // XLA:CPU collapses a chlo.top_k operand of rank > 2 to 2-D: the fusion
  // feeding it emits that shape, which no input has.
  auto shaped = llvm::dyn_cast<RankedTensorType>(result.getType());
  for (Operation *user : result.getUsers())
    if (getOpKind(user) == OpKind::TopK && (!shaped || shaped.getRank() > 2))
      return Value();
  SmallVector<Value> inputs;
  collectFusionInputs(op, inputs);
  for (Value v : inputs)
    if (diesHere(v) && v.getType() == result.getType())
      return v;
  return Value();
}


/// The order in memory of `v`'s dimensions as a consumer reads them: the
/// identity, or a folded transpose's permutation (its result's dimension i
/// is dimension perm[i] of the buffer it reads).
static SmallVector<int64_t> physicalPositions(Value v, const FusionModel &model) {
  auto t = llvm::cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> pos = llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
  Operation *def = v.getDefiningOp();
  if (def && getOpKind(def) == OpKind::Transpose && !model.isMaterialised(v))
    pos = TransposeView(def).getPermutation();
  return pos;
}

/// Whether the dimensions `batch` are the leading ones of the buffer, in
/// their order, given each dimension's position in memory.
static bool batchDimsLead(ArrayRef<int64_t> batch, ArrayRef<int64_t> positions) {
  for (auto [i, d] : llvm::enumerate(batch))
    if (positions[d] != static_cast<int64_t>(i))
      return false;
  return true;
}

void FusionModel::collectTransposedDotOperands(Operation *dot,
                                               SmallVectorImpl<Value> &copied) const {
  if (getOpKind(dot) != OpKind::DotGeneral)
    return;
  DotGeneralView view(dot);
  DotDims dims = view.getDims();
  for (auto [v, batch] : {std::make_pair(view.getLhs(), dims.lhsBatch),
                          std::make_pair(view.getRhs(), dims.rhsBatch)}) {
    if (batch.empty() || batchDimsLead(batch, physicalPositions(v, *this)))
      continue;
    // A producer fused only into this dot writes its buffer transposed.
    Operation *def = v.getDefiningOp();
    bool fusedHere = def && def->getBlock() == &block && isFusible(def) &&
                     getOpKind(def) != OpKind::Transpose && v.hasOneUse();
    if (!fusedHere)
      copied.push_back(v);
  }
}
