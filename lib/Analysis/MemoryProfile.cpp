//===- MemoryProfile.cpp - fusion-aware peak memory ------------------------===//
//
// The model, checked against XLA:CPU's memory_analysis() with ynn fusions off:
//  * A fusible op (elementwise, broadcast, reshape, transpose, slice, iota,
//    convert, compare, select) is fused into its consumers. Its result is
//    materialised only when a consumer cannot fuse it (dot_general, sort,
//    top_k, custom_call, while, call, return) or when it has several
//    consumers and is too expensive for XLA to duplicate (exp, log, divide..).
//  * Every other op is a fusion root: its results are buffers.
//  * A buffer lives from its producer to the last fusion root that reads it.
//  * Loop results and in-place updates reuse an operand's buffer when that
//    operand dies at the op (XLA's buffer assignment shares them).
//  * Constants are not counted (XLA keeps them outside the temp allocation).
//  * Arguments are live throughout; returned values until the end.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/MemoryProfile.h"

#include "memfit/IR/OpTable.h"
#include "memfit/IR/OpViews.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include <algorithm>

using namespace mlir;
using namespace memfit;

namespace {

/// Elementwise ops XLA's fusion does not duplicate into several consumers
/// (xla::HloInstruction::IsOpElementwise + InstructionFusion::IsExpensive).
bool isExpensiveToDuplicate(Operation *op) {
  static const llvm::StringSet<> expensive = {
      "stablehlo.divide", "stablehlo.remainder", "stablehlo.power",
      "stablehlo.exponential", "stablehlo.exponential_minus_one",
      "stablehlo.log", "stablehlo.log_plus_one", "stablehlo.logistic",
      "stablehlo.sqrt", "stablehlo.rsqrt", "stablehlo.cbrt", "stablehlo.tanh",
      "stablehlo.tan", "stablehlo.sine", "stablehlo.cosine", "stablehlo.atan2",
      "chlo.erf", "chlo.erfc", "chlo.erf_inv", "chlo.lgamma", "chlo.digamma"};
  return expensive.contains(op->getName().getStringRef());
}

bool isFusible(Operation *op) {
  const OpInfo *info = lookupOpInfo(op);
  return info && info->fusible;
}

/// A consumer that can take a fused producer: fusible ops, and reduce
/// (XLA's input fusion puts the producers of a reduce inside it).
bool acceptsFusedOperand(Operation *user) {
  return isFusible(user) || getOpKind(user) == OpKind::Reduce;
}

bool isConstantLike(Operation *op) {
  OpKind k = getOpKind(op);
  return k == OpKind::Constant || k == OpKind::ArithConstant;
}

/// Ops whose i-th result may reuse the buffer of their i-th operand.
bool mayReuseOperandBuffer(Operation *op) {
  OpKind k = getOpKind(op);
  return k == OpKind::While || k == OpKind::DynamicUpdateSlice;
}

int64_t bytesOf(Value v) { return getTensorBytes(v.getType()).value_or(0); }

} // namespace

//===-- FusionModel --------------------------------------------------------===//

FusionModel::FusionModel(Block &block) : block(block) {
  for (Operation &op : block) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  for (Operation *op : ops)
    classify(op);
  computeLiveRanges();
}

Operation *FusionModel::userInBlock(OpOperand &use) const {
  return block.findAncestorOpInBlock(*use.getOwner());
}

void FusionModel::classify(Operation *op) {
  if (isConstantLike(op) || op->hasTrait<OpTrait::IsTerminator>())
    return;
  for (Value r : op->getResults()) {
    if (!isFusible(op)) {
      materialised.insert(r);
      continue;
    }
    llvm::SmallPtrSet<Operation *, 4> users;
    bool needsBuffer = false;
    for (OpOperand &use : r.getUses()) {
      Operation *u = userInBlock(use);
      if (!u)
        continue;
      users.insert(u);
      // A use inside a nested region (a loop body reading an outer value)
      // needs the value in memory; so does any non-fusing consumer.
      if (u != use.getOwner() || !acceptsFusedOperand(u))
        needsBuffer = true;
    }
    if (users.size() > 1 && isExpensiveToDuplicate(op))
      needsBuffer = true;
    if (needsBuffer)
      materialised.insert(r);
  }
}

void FusionModel::computeLiveRanges() {
  unsigned end = ops.size();
  // Walk backwards so that each fused (virtual) value knows the latest fusion
  // root that reads it before its producers are visited.
  llvm::DenseMap<Value, unsigned> rootOfVirtual;
  auto rootIndexOfUse = [&](OpOperand &use) -> unsigned {
    Operation *u = userInBlock(use);
    if (!u)
      return 0;
    if (u->hasTrait<OpTrait::IsTerminator>())
      return end;
    if (u == use.getOwner() && acceptsFusedOperand(u) && isFusible(u)) {
      unsigned latest = index.lookup(u);
      for (Value r : u->getResults())
        latest = std::max(latest, isMaterialised(r) ? index.lookup(u)
                                                    : rootOfVirtual.lookup(r));
      return latest;
    }
    return index.lookup(u);
  };
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Operation *op = *it;
    unsigned pos = index.lookup(op);
    for (Value r : op->getResults()) {
      unsigned last = pos;
      for (OpOperand &use : r.getUses())
        last = std::max(last, rootIndexOfUse(use));
      if (isMaterialised(r))
        lastUseIndex[r] = last;
      else
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
      if (Value donor = findReusableOperand(op, i, r, taken)) {
        taken.insert(donor);
        firstLiveIndex[r] = pos + 1; // takes over the operand's buffer
      }
    }
  }
}

/// Materialised values read by `op`, through the fused producers it absorbs.
static void collectFusionInputs(Operation *op, const FusionModel &m,
                                llvm::SmallVectorImpl<Value> &out) {
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (llvm::isa<BlockArgument>(v) || m.isMaterialised(v) || !def)
      out.push_back(v);
    else if (def->getBlock() == op->getBlock())
      collectFusionInputs(def, m, out);
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
  // Loops and in-place updates: result i reuses operand i.
  if (mayReuseOperandBuffer(op)) {
    if (resultIndex < op->getNumOperands() && diesHere(op->getOperand(resultIndex)))
      return op->getOperand(resultIndex);
    return Value();
  }
  // Elementwise fusions write in place over a same-sized input that dies
  // (XLA's CanShareOperandBufferWithUser).
  if (!isFusible(op))
    return Value();
  int64_t bytes = getTensorBytes(result.getType()).value_or(-1);
  SmallVector<Value> inputs;
  collectFusionInputs(op, *this, inputs);
  for (Value v : inputs)
    if (diesHere(v) && getTensorBytes(v.getType()).value_or(-2) == bytes)
      return v;
  return Value();
}

//===-- profiles -----------------------------------------------------------===//

namespace {

struct BlockResult {
  int64_t peakBytes = 0; // beyond the block's own arguments
  Operation *peakOp = nullptr;
  std::vector<LiveTensor> liveAtPeak;
};

class Profiler {
public:
  explicit Profiler(std::vector<TimelinePoint> *timeline) : timeline(timeline) {}

  FailureOr<BlockResult> profileBlock(Block &block, int64_t outerBytes,
                                      unsigned depth);
  FailureOr<int64_t> nestedExtra(Operation *op, int64_t outerBytes,
                                 unsigned depth, std::vector<LiveTensor> *peakSet);

private:
  FailureOr<int64_t> calleeExtra(func::CallOp call);

  std::vector<TimelinePoint> *timeline;
  llvm::SmallPtrSet<Operation *, 8> activeCallees;
};

FailureOr<int64_t> Profiler::calleeExtra(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isExternal())
    return 0;
  if (!activeCallees.insert(callee).second)
    return call->emitError("recursive call to '")
           << call.getCallee() << "'; memfit cannot profile recursion";
  Profiler inner(nullptr);
  inner.activeCallees = activeCallees;
  FailureOr<BlockResult> r = inner.profileBlock(callee.front(), 0, 0);
  activeCallees.erase(callee);
  if (failed(r))
    return failure();
  // The callee's returned values are the call's results, counted outside.
  int64_t returned = 0;
  for (Value v : callee.front().getTerminator()->getOperands())
    if (!llvm::isa<BlockArgument>(v))
      returned += bytesOf(v);
  return std::max<int64_t>(0, r->peakBytes - returned);
}

FailureOr<int64_t> Profiler::nestedExtra(Operation *op, int64_t outerBytes,
                                         unsigned depth,
                                         std::vector<LiveTensor> *peakSet) {
  if (auto call = llvm::dyn_cast<func::CallOp>(op))
    return calleeExtra(call);
  OpKind kind = getOpKind(op);
  // Reducer and comparator bodies are scalar computations.
  if (kind == OpKind::Reduce || kind == OpKind::Sort || op->getNumRegions() == 0)
    return 0;
  int64_t extra = 0;
  for (Region &region : op->getRegions()) {
    if (region.empty())
      continue;
    FailureOr<BlockResult> r = profileBlock(region.front(), outerBytes, depth + 1);
    if (failed(r))
      return failure();
    if (r->peakBytes > extra) {
      extra = r->peakBytes;
      if (peakSet)
        *peakSet = r->liveAtPeak;
    }
  }
  return extra;
}

FailureOr<BlockResult> Profiler::profileBlock(Block &block, int64_t outerBytes,
                                              unsigned depth) {
  for (Operation &op : block)
    for (Value r : op.getResults())
      if (llvm::isa<TensorType>(r.getType()) && !getTensorBytes(r.getType()))
        return op.emitError("dynamic or unranked shape ")
               << r.getType() << "; memfit needs static shapes";
  FusionModel model(block);
  auto ops = model.getOps();
  // Bytes that become live / die at each index: a sweep over the op order.
  std::vector<int64_t> delta(ops.size() + 2, 0);
  for (Operation *op : ops)
    for (Value r : op->getResults())
      if (model.isMaterialised(r)) {
        unsigned first = model.firstLive(r), last = model.lastUse(r);
        if (first > last)
          continue;
        delta[first] += bytesOf(r);
        delta[last + 1] -= bytesOf(r);
      }
  BlockResult result;
  int64_t live = 0;
  for (Operation *op : ops) {
    unsigned pos = model.indexOf(op);
    live += delta[pos];
    std::vector<LiveTensor> nestedPeak;
    size_t slot = timeline ? timeline->size() : 0;
    FailureOr<int64_t> extra = nestedExtra(op, outerBytes + live, depth, &nestedPeak);
    if (failed(extra))
      return failure();
    int64_t here = live + *extra;
    // The op itself comes before the ops of its regions in the timeline.
    if (timeline && !op->hasTrait<OpTrait::IsTerminator>())
      timeline->insert(timeline->begin() + slot, {op, depth, outerBytes + here});
    if (here > result.peakBytes || !result.peakOp) {
      result.peakBytes = here;
      result.peakOp = op;
      result.liveAtPeak = nestedPeak;
      for (Operation *other : ops)
        for (Value r : other->getResults())
          if (model.isMaterialised(r) && model.firstLive(r) <= pos &&
              pos <= model.lastUse(r))
            result.liveAtPeak.push_back({r, bytesOf(r), false, depth});
    }
  }
  return result;
}

} // namespace

FailureOr<FunctionProfile> memfit::profileFunction(func::FuncOp func) {
  FunctionProfile p;
  p.name = func.getSymName().str();
  if (func.isExternal())
    return p;
  Block &entry = func.front();
  for (BlockArgument a : entry.getArguments()) {
    std::optional<int64_t> b = getTensorBytes(a.getType());
    if (llvm::isa<TensorType>(a.getType()) && !b)
      return func.emitError("argument #")
             << a.getArgNumber() << " has dynamic shape " << a.getType()
             << "; memfit needs static shapes";
    p.argumentBytes += b.value_or(0);
  }
  for (Value v : entry.getTerminator()->getOperands())
    p.outputBytes += bytesOf(v);

  Profiler profiler(&p.timeline);
  FailureOr<BlockResult> r = profiler.profileBlock(entry, p.argumentBytes, 0);
  if (failed(r))
    return failure();
  p.peakBytes = p.argumentBytes + r->peakBytes;
  p.peakOp = r->peakOp;
  p.liveAtPeak = r->liveAtPeak;
  for (BlockArgument a : entry.getArguments())
    p.liveAtPeak.push_back({a, bytesOf(a), true, 0});
  std::stable_sort(p.liveAtPeak.begin(), p.liveAtPeak.end(),
                   [](const LiveTensor &a, const LiveTensor &b) {
                     return a.bytes > b.bytes;
                   });
  return p;
}

int64_t memfit::getNestedExtraBytes(Operation *op) {
  Profiler profiler(nullptr);
  FailureOr<int64_t> r = profiler.nestedExtra(op, 0, 0, nullptr);
  return succeeded(r) ? *r : 0;
}
