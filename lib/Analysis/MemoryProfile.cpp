//===- MemoryProfile.cpp - fusion-aware peak memory ------------------------===//
//
// The live bytes of a function at each op of its FusionModel's order
// (FusionModel.cpp states the model and how it was checked against XLA):
// every materialised value from its first live index to its last use,
// arguments throughout, plus the peak of nested regions and callees at the
// op that holds them.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/MemoryProfile.h"

#include "memfit/Analysis/Sharding.h"
#include "memfit/IR/OpTable.h"
#include "memfit/IR/OpViews.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <algorithm>
#include <memory>

using namespace mlir;
using namespace memfit;

namespace {

int64_t bytesOf(Value v) { return getTensorBytes(v.getType()).value_or(0); }

} // namespace

//===-- profiles -----------------------------------------------------------===//

namespace {

struct BlockResult {
  int64_t peakBytes = 0; // beyond the block's own arguments
  Operation *peakOp = nullptr;
  std::vector<LiveTensor> liveAtPeak;
};

class Profiler {
public:
  Profiler(std::vector<TimelinePoint> *timeline, const ShardingModel *sharding)
      : timeline(timeline), sharding(sharding) {}

  /// `entry`: the function's entry block, its outputs counted from the
  /// start (profileFunction's `reserveOutputs`).
  FailureOr<BlockResult> profileBlock(Block &block, int64_t outerBytes,
                                      unsigned depth, bool entry = false);
  FailureOr<int64_t> nestedExtra(Operation *op, int64_t outerBytes,
                                 unsigned depth, std::vector<LiveTensor> *peakSet);

private:
  FailureOr<int64_t> calleeExtra(func::CallOp call);

  /// A sharded program's limit is per device: its values count one
  /// device's shard (Sharding.h). Null for callees (inlined before a split).
  int64_t bytes(Value v) const { return sharding ? sharding->deviceBytes(v) : bytesOf(v); }
  /// The transposed operand copies that live while `op` (a dot) runs.
  int64_t transposedCopyBytes(const FusionModel &model, Operation *op) const {
    SmallVector<Value, 2> copied;
    model.collectTransposedDotOperands(op, copied);
    int64_t total = 0;
    for (Value v : copied)
      total += bytes(v);
    return total;
  }

  std::vector<TimelinePoint> *timeline;
  const ShardingModel *sharding;
  llvm::SmallPtrSet<Operation *, 8> activeCallees;
  /// Each callee's extra bytes, computed once and shared with the profilers
  /// of callees (a call tree would otherwise be walked once per path).
  std::shared_ptr<llvm::DenseMap<Operation *, int64_t>> calleeCache =
      std::make_shared<llvm::DenseMap<Operation *, int64_t>>();
};

FailureOr<int64_t> Profiler::calleeExtra(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isExternal())
    return 0;
  auto cached = calleeCache->find(callee);
  if (cached != calleeCache->end())
    return cached->second;
  if (!activeCallees.insert(callee).second)
    return call->emitError("recursive call to '")
           << call.getCallee() << "'; memfit cannot profile recursion";
  Profiler inner(nullptr, nullptr);
  inner.activeCallees = activeCallees;
  inner.calleeCache = calleeCache;
  FailureOr<BlockResult> r = inner.profileBlock(callee.front(), 0, 0);
  activeCallees.erase(callee);
  if (failed(r))
    return failure();
  // The callee's returned values are the call's results, counted outside.
  int64_t returned = 0;
  for (Value v : callee.front().getTerminator()->getOperands())
    if (!llvm::isa<BlockArgument>(v))
      returned += bytesOf(v);
  int64_t extra = std::max<int64_t>(0, r->peakBytes - returned);
  (*calleeCache)[callee] = extra;
  return extra;
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
  // A branch of stablehlo.if/case writes what it returns into the op's
  // results, which its parent already counts.
  bool branchesReturnResults = kind == OpKind::If || kind == OpKind::Case;
  int64_t extra = 0;
  for (Region &region : op->getRegions()) {
    if (region.empty())
      continue;
    FailureOr<BlockResult> r = profileBlock(region.front(), outerBytes, depth + 1);
    if (failed(r))
      return failure();
    int64_t peak = r->peakBytes;
    if (branchesReturnResults && !region.front().empty()) {
      int64_t returned = 0;
      for (Value v : region.front().back().getOperands())
        if (v.getParentBlock() == &region.front() && !llvm::isa<BlockArgument>(v))
          returned += bytes(v);
      peak = std::max<int64_t>(0, peak - returned);
    }
    if (peak > extra) {
      extra = peak;
      if (peakSet)
        *peakSet = r->liveAtPeak;
    }
  }
  return extra;
}

/// The values whose buffers are the entry block's outputs: each returned
/// value and the values whose buffer it took over in place (an accumulator,
/// a loop's initial value), each mapped to the first op index at which its
/// chain's buffer is written.
llvm::DenseMap<Value, unsigned> outputBufferChains(Block &block, const FusionModel &model) {
  llvm::DenseMap<Value, unsigned> chains;
  for (Value v : block.getTerminator()->getOperands()) {
    unsigned written = model.firstLive(v);
    for (Value b = v; b && llvm::isa<OpResult>(b) && model.isMaterialised(b) &&
                      chains.try_emplace(b, 0).second;
         b = model.bufferDonor(b))
      written = std::min(written, model.firstLive(b));
    if (chains.count(v))
      chains[v] = written;
  }
  return chains;
}

FailureOr<BlockResult> Profiler::profileBlock(Block &block, int64_t outerBytes,
                                              unsigned depth, bool entry) {
  for (Operation &op : block)
    for (Value r : op.getResults())
      if (llvm::isa<TensorType>(r.getType()) && !getTensorBytes(r.getType()))
        return op.emitError("dynamic or unranked shape ")
               << r.getType() << "; memfit needs static shapes";
  FusionModel model(block);
  auto ops = model.getOps();
  // Bytes that become live / die at each index: a sweep over the op order.
  // `reserved`: of those, outputs' buffers not yet written.
  std::vector<int64_t> delta(ops.size() + 2, 0), reserved(ops.size() + 2, 0);
  llvm::DenseMap<Value, unsigned> outputBuffers;
  if (entry) {
    // Every output from the start, whatever computes it (XLA copies a
    // constant or an argument returned into an output of its own).
    outputBuffers = outputBufferChains(block, model);
    for (Value v : block.getTerminator()->getOperands()) {
      delta[0] += bytes(v);
      reserved[0] += bytes(v);
      auto it = outputBuffers.find(v);
      if (it != outputBuffers.end())
        reserved[std::min<size_t>(it->second, ops.size() + 1)] -= bytes(v);
    }
  }
  for (Operation *op : ops)
    for (Value r : op->getResults())
      if (model.isMaterialised(r) && !model.isInCarriedBuffer(r) &&
          !outputBuffers.contains(r)) {
        unsigned first = model.firstLive(r), last = model.lastUse(r);
        if (first > last)
          continue;
        delta[first] += bytes(r);
        delta[last + 1] -= bytes(r);
      }
  BlockResult result;
  int64_t live = 0, unwritten = 0, peakUnwritten = 0;
  for (Operation *op : ops) {
    unsigned pos = model.indexOf(op);
    live += delta[pos];
    unwritten += reserved[pos];
    std::vector<LiveTensor> nestedPeak;
    size_t slot = timeline ? timeline->size() : 0;
    FailureOr<int64_t> extra = nestedExtra(op, outerBytes + live, depth, &nestedPeak);
    if (failed(extra))
      return failure();
    int64_t here = live + *extra + transposedCopyBytes(model, op);
    // The op itself comes before the ops of its regions in the timeline.
    if (timeline && !isTerminatorLike(op))
      timeline->insert(timeline->begin() + slot, {op, depth, outerBytes + here, outerBytes});
    // Of equal peaks, the one where the most is written names the op (an
    // output's reserved buffer does not move the peak before its producer).
    if (here > result.peakBytes || !result.peakOp ||
        (here == result.peakBytes && unwritten < peakUnwritten && !isTerminatorLike(op))) {
      peakUnwritten = unwritten;
      result.peakBytes = here;
      result.peakOp = op;
      result.liveAtPeak = nestedPeak;
      for (Operation *other : ops)
        for (Value r : other->getResults())
          if (model.isMaterialised(r) && !model.isInCarriedBuffer(r) &&
              model.firstLive(r) <= pos &&
              pos <= model.lastUse(r))
            result.liveAtPeak.push_back({r, bytes(r), false, depth});
    }
  }
  return result;
}

} // namespace

FailureOr<FunctionProfile> memfit::profileFunction(func::FuncOp func, bool reserveOutputs) {
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
  }
  ShardingModel sharding(func);
  p.perDevice = sharding.isSharded();
  for (BlockArgument a : entry.getArguments())
    p.argumentBytes += sharding.deviceBytes(a);
  for (Value v : entry.getTerminator()->getOperands())
    p.outputBytes += sharding.deviceBytes(v);

  Profiler profiler(&p.timeline, &sharding);
  FailureOr<BlockResult> r = profiler.profileBlock(entry, p.argumentBytes, 0, reserveOutputs);
  if (failed(r))
    return failure();
  p.peakBytes = p.argumentBytes + r->peakBytes;
  p.peakOp = r->peakOp;
  p.liveAtPeak = r->liveAtPeak;
  for (BlockArgument a : entry.getArguments())
    p.liveAtPeak.push_back({a, sharding.deviceBytes(a), true, 0});
  std::stable_sort(p.liveAtPeak.begin(), p.liveAtPeak.end(),
                   [](const LiveTensor &a, const LiveTensor &b) {
                     return a.bytes > b.bytes;
                   });
  return p;
}

int64_t memfit::getNestedExtraBytes(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  std::optional<ShardingModel> sharding;
  if (func)
    sharding.emplace(func);
  Profiler profiler(nullptr, sharding ? &*sharding : nullptr);
  FailureOr<int64_t> r = profiler.nestedExtra(op, 0, 0, nullptr);
  return succeeded(r) ? *r : 0;
}
