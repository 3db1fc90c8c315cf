//===- Stash.cpp - keep what a second pass would recompute at a cost ------===//
//
// A plan with a second pass leaves the ops that need its sums (Plan::later)
// outside the loop; what they read of the region they read from the
// original ops, which a later split recomputes in chunks in a second loop.
// When such a value sits behind a contraction of the region (attention's
// scores and their gradient, read by the input gradient dq W_q^T), that
// second loop repeats the first one's costliest work. Assembled by the
// first loop instead (an output: a buffer of the value's bytes, counted by
// the chunk search like any other output), the second loop reads it.
//
//===----------------------------------------------------------------------===//
#include "Stash.h"

#include "memfit/IR/OpTable.h"

using namespace mlir;

namespace memfit::split {
namespace {

/// Whether computing `v`'s chunk takes a dot_general of the region reached
/// forward from the seed. Pulled-in producers do not count: what they
/// compute (a projection of the input rows) the second pass recomputes for
/// each chunk as cheaply as the first.
bool behindContraction(const Plan &plan, Value v) {
  llvm::DenseSet<Operation *> seen;
  SmallVector<Operation *> stack;
  if (Operation *d = v.getDefiningOp())
    stack.push_back(d);
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    if (!plan.chunked.contains(op) || plan.backward.contains(op) || !seen.insert(op).second)
      continue;
    if (getOpKind(op) == OpKind::DotGeneral)
      return true;
    for (Value o : op->getOperands())
      if (Operation *d = o.getDefiningOp())
        stack.push_back(d);
  }
  return false;
}

/// Whether an op of the second pass reads `v`.
bool readBySecondPass(const Plan &plan, Value v) {
  for (OpOperand &use : v.getUses()) {
    Operation *u = plan.block->findAncestorOpInBlock(*use.getOwner());
    if (u && plan.later.contains(u))
      return true;
  }
  return false;
}

} // namespace

bool stashForSecondPass(Plan &plan, int64_t budget) {
  // An online softmax's loop emits its ops its own way (OnlineSoftmax.h).
  if (plan.later.empty() || plan.osm)
    return false;
  SmallVector<Value> stash;
  int64_t bytes = 0;
  for (Operation *op : plan.chunked) {
    // A pulled-in producer's original stays outside the loop anyway.
    if (plan.backward.contains(op))
      continue;
    for (Value v : op->getResults()) {
      if (!plan.dimOf.count(v) || llvm::is_contained(plan.outputs, v) ||
          !readBySecondPass(plan, v) || !behindContraction(plan, v))
        continue;
      stash.push_back(v);
      bytes += bytesOf(v);
    }
  }
  if (stash.empty() || bytes > budget)
    return false;
  // In program order: the set is ordered by address, and the loop's
  // results follow this order.
  llvm::sort(stash, [&](Value a, Value b) {
    Operation *x = plan.block->findAncestorOpInBlock(*a.getDefiningOp());
    Operation *y = plan.block->findAncestorOpInBlock(*b.getDefiningOp());
    if (x != y)
      return x->isBeforeInBlock(y);
    return llvm::cast<OpResult>(a).getResultNumber() < llvm::cast<OpResult>(b).getResultNumber();
  });
  plan.outputs.append(stash.begin(), stash.end());
  plan.stashed = true;
  return true;
}

} // namespace memfit::split
