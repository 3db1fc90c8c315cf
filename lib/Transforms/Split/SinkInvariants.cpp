//===- SinkInvariants.cpp - recompute hoisted loop invariants in the body -===//
//
// jax lowers a scan's closure constants (a causal mask, an iota, a
// broadcast fill value) as values computed before the loop and carried
// through it unchanged. A loop operand is a buffer, so XLA materialises
// each whole for the loop's lifetime: a [H, S, S] mask of a scanned
// decoder layer is live through every layer, and the body reads it as a
// block argument that no split of the body can chunk. Recomputing such a
// value at the top of the body costs a few fused ops per iteration and
// no buffer (XLA fuses it into its consumers); the split then chunks it
// like any other iota-derived value.
//
// A carried value qualifies when the body returns it unchanged, the loop's
// condition does not read it, and it is computed (in the loop's block) by
// constants and cheap fusible ops (OpTable: fusible and not costly; no
// regions) from inputs whose bytes, apart from values the loop already
// carries unchanged, are at most a quarter of the value's. Those inputs
// are carried instead.
//
//===----------------------------------------------------------------------===//
#include "SinkInvariants.h"

#include "memfit/Analysis/FusionModel.h"
#include "memfit/IR/OpTable.h"
#include "memfit/IR/OpViews.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace memfit::split {
namespace {

int64_t bytesOf(Value v) { return getTensorBytes(v.getType()).value_or(0); }

/// Longest producer chain recomputed for one value.
constexpr unsigned kMaxChainOps = 64;

bool isCheapToRecompute(Operation *op) {
  if (isConstantLike(op))
    return true;
  const OpInfo *info = lookupOpInfo(op);
  return op->getNumRegions() == 0 && op->getNumResults() == 1 &&
         FusionModel::isFusible(op) && info && !info->costly;
}

/// The position of `v` among the loop's operands when the body returns
/// that position's argument unchanged.
std::optional<unsigned> carriedUnchanged(Operation *loop, Value v) {
  Block &body = WhileView(loop).getBody().front();
  Operation *ret = body.getTerminator();
  for (OpOperand &use : v.getUses())
    if (use.getOwner() == loop) {
      unsigned i = use.getOperandNumber();
      if (ret->getOperand(i) == body.getArgument(i))
        return i;
    }
  return std::nullopt;
}

/// What recomputing one carried value in the body takes.
struct Sinkable {
  unsigned index;                   // among the loop's values
  SmallVector<Operation *> chain;   // producers, in block order
  SmallVector<Value> inputs;        // what the chain reads (not constants)
};

/// The producers of `v` (in the loop's block) that the body would
/// recompute, and the values they read; none when `v` is not worth it.
std::optional<Sinkable> findSinkable(Operation *loop, unsigned i) {
  Value v = loop->getOperand(i);
  Block &body = WhileView(loop).getBody().front();
  Block &cond = WhileView(loop).getCond().front();
  if (body.getTerminator()->getOperand(i) != body.getArgument(i) ||
      !cond.getArgument(i).use_empty())
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != loop->getBlock() || !isCheapToRecompute(def))
    return std::nullopt;
  Sinkable s{i, {}, {}};
  llvm::SetVector<Operation *> chain;
  llvm::SetVector<Value> inputs;
  SmallVector<Operation *> stack{def};
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    if (!chain.insert(op))
      continue;
    if (chain.size() > kMaxChainOps)
      return std::nullopt;
    for (Value o : op->getOperands()) {
      Operation *p = o.getDefiningOp();
      if (p && p->getBlock() == loop->getBlock() && isCheapToRecompute(p))
        stack.push_back(p);
      else
        inputs.insert(o);
    }
  }
  int64_t added = 0;
  for (Value in : inputs)
    if (!carriedUnchanged(loop, in))
      added += bytesOf(in);
  if (added * 4 > bytesOf(v))
    return std::nullopt;
  s.chain.assign(chain.begin(), chain.end());
  llvm::sort(s.chain, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  s.inputs.assign(inputs.begin(), inputs.end());
  return s;
}

/// Recomputes the sinkable values at the top of the body, carrying their
/// inputs, and rebuilds the loop without the values themselves.
void sinkInto(Operation *loop, ArrayRef<Sinkable> sinkables) {
  Block &body = WhileView(loop).getBody().front();
  Block &cond = WhileView(loop).getCond().front();
  Operation *ret = body.getTerminator();
  // The chains' inputs: a value the loop carries unchanged is read from
  // the body's argument; any other becomes a new carried value.
  IRMapping m;
  SmallVector<Value> extra;
  llvm::DenseSet<unsigned> sunk;
  for (const Sinkable &s : sinkables)
    sunk.insert(s.index);
  for (const Sinkable &s : sinkables)
    for (Value in : s.inputs) {
      if (m.contains(in))
        continue;
      std::optional<unsigned> j = carriedUnchanged(loop, in);
      if (j && !sunk.contains(*j)) {
        m.map(in, body.getArgument(*j));
        continue;
      }
      extra.push_back(in);
      cond.addArgument(in.getType(), loop->getLoc());
      m.map(in, body.addArgument(in.getType(), loop->getLoc()));
    }
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  for (const Sinkable &s : sinkables) {
    for (Operation *op : s.chain)
      if (!m.contains(op->getResult(0)))
        b.clone(*op, m);
    body.getArgument(s.index).replaceAllUsesWith(m.lookup(loop->getOperand(s.index)));
  }
  // The rebuilt loop: kept values in their order, then the new inputs.
  SmallVector<Value> operands;
  SmallVector<unsigned> kept;
  for (unsigned i = 0; i < loop->getNumOperands(); ++i)
    if (!sunk.contains(i)) {
      operands.push_back(loop->getOperand(i));
      kept.push_back(i);
    }
  operands.append(extra);
  SmallVector<Value> yields;
  for (unsigned i : kept)
    yields.push_back(ret->getOperand(i));
  unsigned oldCount = loop->getNumOperands();
  for (unsigned k = 0; k < extra.size(); ++k)
    yields.push_back(body.getArgument(oldCount + k));
  ret->setOperands(yields);
  for (unsigned i = oldCount; i-- > 0;)
    if (sunk.contains(i)) {
      body.eraseArgument(i);
      cond.eraseArgument(i);
    }
  OpBuilder lb(loop);
  Operation *narrow = buildGenericOp(lb, loop->getLoc(), "stablehlo.while", operands,
                                     ValueRange(operands).getTypes(), {}, /*numRegions=*/2);
  narrow->setAttrs(loop->getAttrs());
  for (unsigned r = 0; r < 2; ++r)
    narrow->getRegion(r).takeBody(loop->getRegion(r));
  for (auto [k, i] : llvm::enumerate(kept))
    loop->getResult(i).replaceAllUsesWith(narrow->getResult(k));
  // A value carried unchanged comes out as it went in.
  for (unsigned i : sunk)
    loop->getResult(i).replaceAllUsesWith(loop->getOperand(i));
  SmallVector<Operation *> chains;
  for (const Sinkable &s : sinkables)
    chains.append(s.chain.begin(), s.chain.end());
  loop->erase();
  // Producers nothing reads any more (MLIR's DCE keeps unregistered ops).
  llvm::sort(chains, [](Operation *a, Operation *c) { return c->isBeforeInBlock(a); });
  chains.erase(std::unique(chains.begin(), chains.end()), chains.end());
  for (Operation *op : chains)
    if (op->use_empty())
      op->erase();
}

} // namespace

bool sinkLoopInvariants(func::FuncOp f) {
  // Outer loops first: a value sunk into a body may be carried by a loop
  // nested in it, and is then sunk further.
  SmallVector<Operation *> loops;
  f.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (getOpKind(op) == OpKind::While && op->getNumRegions() == 2 &&
        !op->getRegion(0).empty() && !op->getRegion(1).empty())
      loops.push_back(op);
  });
  bool changed = false;
  for (Operation *loop : loops) {
    SmallVector<Sinkable> sinkables;
    for (unsigned i = 0; i < loop->getNumOperands(); ++i)
      if (std::optional<Sinkable> s = findSinkable(loop, i))
        sinkables.push_back(std::move(*s));
    if (sinkables.empty())
      continue;
    sinkInto(loop, sinkables);
    changed = true;
  }
  return changed;
}

} // namespace memfit::split
