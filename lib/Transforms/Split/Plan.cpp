//===- Plan.cpp - memfit-split's plan and shared helpers -------------------===//
#include "Plan.h"

#include "memfit/Support/Diagnostics.h"

using namespace mlir;

namespace memfit::split {

RankedTensorType withDim(RankedTensorType t, int64_t dim, int64_t size) {
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = size;
  return RankedTensorType::get(shape, t.getElementType());
}

bool isProgramLoop(Operation *op) {
  return getOpKind(op) == OpKind::While && !op->hasAttr(kSplitRecordAttr);
}

bool inProgramLoop(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isProgramLoop(p))
      return true;
  return false;
}

bool inLoopBody(const Plan &plan) {
  return !plan.block->empty() && inProgramLoop(&plan.block->front());
}

std::string opLabel(Operation *op) {
  std::string s = "'" + op->getName().getStringRef().str() + "'";
  std::string line = getUserSourceLine(op->getLoc());
  if (!line.empty())
    s += " (at " + line + ")";
  return s;
}

Value zerosLike(OpBuilder &b, Location loc, RankedTensorType t) {
  Value zero = buildConstantSplat(b, loc, RankedTensorType::get({}, t.getElementType()), 0);
  return buildBroadcastInDim(b, loc, t, zero, {});
}

Value broadcastStart(OpBuilder &b, Location loc, Value start, RankedTensorType t) {
  auto scalar = RankedTensorType::get({}, t.getElementType());
  Value s = start;
  if (scalar != start.getType())
    s = buildConvert(b, loc, scalar, start);
  return buildBroadcastInDim(b, loc, t, s, {});
}

static Plan::OnlineSoftmax translateOnlineSoftmax(const Plan::OnlineSoftmax &p,
                                                  IRMapping &m) {
  Plan::OnlineSoftmax o = p;
  for (Operation **x : {&o.maxR, &o.sumR, &o.dot, &o.bm, &o.bl, &o.div, &o.exp})
    if (*x) // the logsumexp form has no dot, div or bl
      *x = m.lookup(*x);
  for (Operation *&x : o.chainM)
    x = m.lookup(x);
  for (Operation *&x : o.chainL)
    x = m.lookup(x);
  return o;
}

Plan translatePlan(const Plan &p, IRMapping &m) {
  Plan q;
  q.block = m.lookup(p.block);
  q.seedOp = m.lookup(p.seedOp);
  q.size = p.size;
  q.minChunk = p.minChunk;
  for (Operation *op : p.order)
    q.order.push_back(m.lookup(op));
  for (Operation *op : p.chunked)
    q.chunked.insert(m.lookup(op));
  for (auto &[op, k] : p.sinks)
    q.sinks[m.lookup(op)] = k;
  for (Operation *op : p.backward)
    q.backward.insert(m.lookup(op));
  for (auto &[v, d] : p.dimOf)
    q.dimOf[m.lookup(v)] = d;
  for (auto &[op, dims] : p.operandDims)
    q.operandDims[m.lookup(op)] = dims;
  for (Value v : p.outputs)
    q.outputs.push_back(m.lookup(v));
  for (Operation *op : p.later)
    q.later.insert(m.lookup(op));
  if (p.osm)
    q.osm = translateOnlineSoftmax(*p.osm, m);
  q.minorContraction = p.minorContraction;
  q.stashed = p.stashed;
  return q;
}

} // namespace memfit::split
