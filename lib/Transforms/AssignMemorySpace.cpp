//===- AssignMemorySpace.cpp - memfit-assign-memory-space -------------------===//
//
// Writes a memory-space assignment (the solution JSON of
// python/memfit/msa/solution.py, for the instance memfit-export-buffers
// wrote for the same module) into the program the way jax itself writes
// `jax.device_put(x, jax.memory.Space.Host)` inside jit:
//
//   %h = stablehlo.custom_call @annotate_device_placement(%v)
//          {has_side_effect = true,
//           mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}}
//   ...
//   %d = stablehlo.custom_call @annotate_device_placement(%h)
//          {..., mhlo.frontend_attributes = {_xla_buffer_placement = "device"}}
//   ... uses of %v now use %d ...
//
// For a buffer with space "slow" the first annotation goes right after its
// producer (at the top of the block for an argument). For a buffer with
// space "fast" and `evict_after = e`, it goes after schedule entry e, and
// uses up to e keep reading the device value. The uses after that are split
// into groups at the solution's prefetch `use` ops; each group gets its own
// copy back ("device" annotation), placed right before the group's first
// user. XLA on a GPU then moves the data; XLA on CPU ignores the
// annotations. Placement-mode solutions are score-only: the module is left
// as it was, with a warning.
//
// Buffer ids are those of memfit-export-buffers on the same module (both
// build the same BufferSchedule), so run it on the module that was
// exported.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/BufferSchedule.h"
#include "memfit/IR/OpViews.h"
#include "memfit/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include <algorithm>
#include <map>

namespace memfit {
#define GEN_PASS_DEF_MEMFITASSIGNMEMORYSPACE
#include "memfit/Transforms/Passes.h.inc"
} // namespace memfit

using namespace mlir;
using namespace memfit;

namespace {

/// One buffer's decision, as far as XLA can honour it.
struct Decision {
  int id = 0;
  bool slow = false;
  std::optional<int> evictAfter;
  std::vector<int> prefetchUses;
};

/// `stablehlo.custom_call @annotate_device_placement(%v)` exactly as jax
/// 0.12 lowers jax.device_put to a memory space (test/lit/msa has the golden).
Value buildPlacementAnnotation(OpBuilder &b, Location loc, Value v,
                               llvm::StringRef placement) {
  MLIRContext *ctx = b.getContext();
  NamedAttribute props[] = {
      b.getNamedAttr("api_version", b.getI32IntegerAttr(1)),
      b.getNamedAttr("backend_config", b.getStringAttr("")),
      b.getNamedAttr("call_target_name",
                     b.getStringAttr("annotate_device_placement")),
      b.getNamedAttr("called_computations", b.getArrayAttr({})),
      b.getNamedAttr("has_side_effect", b.getBoolAttr(true))};
  Operation *op = buildGenericOp(b, loc, "stablehlo.custom_call", {v},
                                 {v.getType()}, props);
  op->setDiscardableAttr(
      "mhlo.frontend_attributes",
      DictionaryAttr::get(ctx, {b.getNamedAttr("_xla_buffer_placement",
                                               b.getStringAttr(placement))}));
  return op->getResult(0);
}

struct MemfitAssignMemorySpacePass
    : memfit::impl::MemfitAssignMemorySpaceBase<MemfitAssignMemorySpacePass> {
  using MemfitAssignMemorySpaceBase::MemfitAssignMemorySpaceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (policy == "heuristic")
      return fail("policy=heuristic runs in Python: "
                  "memfit.msa.offload.offload_pipeline(text, memory_limit, "
                  "'heuristic') exports the buffers, solves, and runs this pass "
                  "with assignment=<solution.json>");
    if (policy != "file")
      return fail("unknown policy '" + policy + "' (expected 'file')");
    if (assignment.empty())
      return fail("needs assignment=<solution.json> (the solution for the "
                  "instance memfit-export-buffers wrote for this module)");
    std::vector<Decision> decisions;
    std::string mode;
    if (failed(readSolution(decisions, mode)))
      return signalPassFailure();
    if (mode == "placement") {
      module.emitWarning() << "memfit-assign-memory-space: placement-mode "
                              "solutions are score-only; the module is unchanged";
      return markAllAnalysesPreserved();
    }
    if (failed(verifyOpInvariants(module)))
      return signalPassFailure();
    func::FuncOp func = findScheduledFunction(module, functionName);
    if (!func)
      return fail("no function '" +
                  (functionName.empty() ? std::string("main") : functionName) +
                  "' with a body");
    BufferSchedule schedule = buildBufferSchedule(func);
    for (const Decision &d : decisions)
      if (d.id < 0 || d.id >= static_cast<int>(schedule.buffers.size()))
        return fail("the solution names buffer " + std::to_string(d.id) +
                    " but this function has " +
                    std::to_string(schedule.buffers.size()) +
                    " buffers: was it made for another module?");
    for (const Decision &d : decisions)
      if (failed(apply(d, schedule)))
        return signalPassFailure();
  }

  void fail(const std::string &msg) {
    getOperation().emitError() << "memfit-assign-memory-space: " << msg;
    signalPassFailure();
  }

  LogicalResult readSolution(std::vector<Decision> &out, std::string &mode) {
    auto file = llvm::MemoryBuffer::getFile(assignment);
    if (!file) {
      fail("cannot read '" + assignment + "': " + file.getError().message());
      return failure();
    }
    llvm::Expected<llvm::json::Value> json =
        llvm::json::parse((*file)->getBuffer());
    if (!json) {
      fail("'" + assignment + "' is not JSON: " + llvm::toString(json.takeError()));
      return failure();
    }
    const llvm::json::Object *root = json->getAsObject();
    const llvm::json::Array *bufs = root ? root->getArray("buffers") : nullptr;
    if (!bufs) {
      fail("'" + assignment + "' has no 'buffers' list (expected a solution, "
           "see python/memfit/msa/solution.py)");
      return failure();
    }
    if (auto m = root->getString("mode"))
      mode = m->str();
    for (const llvm::json::Value &v : *bufs) {
      const llvm::json::Object *b = v.getAsObject();
      std::optional<int64_t> id = b ? b->getInteger("id") : std::nullopt;
      if (!id) {
        fail("'" + assignment + "': every buffer needs an integer 'id'");
        return failure();
      }
      Decision d;
      d.id = *id;
      auto space = b->getString("space");
      d.slow = space && *space == "slow";
      if (space && *space != "slow" && *space != "fast") {
        fail("buffer " + std::to_string(d.id) + ": space '" + space->str() +
             "' (expected 'fast' or 'slow')");
        return failure();
      }
      if (auto e = b->getInteger("evict_after"))
        d.evictAfter = *e;
      if (const llvm::json::Array *pfs = b->getArray("prefetches"))
        for (const llvm::json::Value &p : *pfs)
          if (const llvm::json::Object *po = p.getAsObject())
            if (auto u = po->getInteger("use"))
              d.prefetchUses.push_back(*u);
      out.push_back(d);
    }
    return success();
  }

  LogicalResult apply(const Decision &d, const BufferSchedule &s) {
    if (!d.slow && !d.evictAfter)
      return success(); // stays in device memory: nothing to write
    const ScheduledBuffer &buf = s.buffers[d.id];
    Value v = buf.value;
    if (!v || v.use_empty() || !llvm::isa<RankedTensorType>(v.getType()))
      return success();
    Block *block = v.getParentBlock();
    // Where the data leaves device memory: after the producer, or after the
    // eviction point's op (its ancestor in the value's block).
    Operation *after = v.getDefiningOp();
    if (d.evictAfter) {
      int e = *d.evictAfter;
      if (e < buf.start || e >= static_cast<int>(s.ops.size()))
        return getOperation().emitError()
               << "memfit-assign-memory-space: buffer " << d.id
               << " evict_after " << e << " is outside its interval ["
               << buf.start << ", " << buf.end() << "]";
      Operation *at = block->findAncestorOpInBlock(*s.ops[e].op);
      if (at && (!after || after->isBeforeInBlock(at)))
        after = at;
    }
    // The uses to move: in the value's block, after `after`.
    std::map<unsigned, std::vector<OpOperand *>> byPosition;
    llvm::DenseMap<Operation *, unsigned> position;
    unsigned i = 0;
    for (Operation &op : *block)
      position[&op] = i++;
    unsigned evictPos = after ? position.lookup(after) : 0;
    for (OpOperand &use : v.getUses()) {
      Operation *owner = block->findAncestorOpInBlock(*use.getOwner());
      if (!owner)
        continue;
      unsigned pos = position.lookup(owner);
      if (after && pos <= evictPos)
        continue; // served from device memory before the eviction
      byPosition[pos].push_back(&use);
    }
    if (byPosition.empty())
      return success();
    // Split points: the first user of each prefetched use.
    std::vector<unsigned> splits;
    for (int u : d.prefetchUses)
      if (u >= 0 && u < static_cast<int>(s.ops.size()))
        if (Operation *at = block->findAncestorOpInBlock(*s.ops[u].op))
          splits.push_back(position.lookup(at));
    std::sort(splits.begin(), splits.end());
    auto groupOf = [&](unsigned pos) {
      return std::upper_bound(splits.begin(), splits.end(), pos) - splits.begin();
    };
    Location loc = NameLoc::get(StringAttr::get(v.getContext(), "memfit.offload"),
                                v.getLoc());
    OpBuilder b(v.getContext());
    if (after)
      b.setInsertionPointAfter(after);
    else
      b.setInsertionPointToStart(block);
    Value host = buildPlacementAnnotation(b, loc, v, "pinned_host");
    // byPosition is in block order, so the first user seen of a group is
    // where its copy back goes.
    std::map<long, std::vector<OpOperand *>> groups;
    std::map<long, Operation *> firstUser;
    for (auto &[pos, uses] : byPosition) {
      long g = groupOf(pos);
      if (!firstUser.count(g))
        firstUser[g] = block->findAncestorOpInBlock(*uses.front()->getOwner());
      auto &list = groups[g];
      list.insert(list.end(), uses.begin(), uses.end());
    }
    for (auto &[g, uses] : groups) {
      b.setInsertionPoint(firstUser[g]);
      Value device = buildPlacementAnnotation(b, loc, host, "device");
      for (OpOperand *use : uses)
        use->set(device);
    }
    return success();
  }
};

} // namespace
