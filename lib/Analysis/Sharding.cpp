//===- Sharding.cpp - per-device shards of a sharded program ---------------===//
//
// Forward propagation of Shardy shardings over DimMapping's factors; see
// Sharding.h for the model and why it may only overcount.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/Sharding.h"

#include "memfit/Analysis/DimMapping.h"
#include "memfit/IR/OpTable.h"
#include "memfit/IR/OpViews.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace memfit;

namespace {
constexpr llvm::StringLiteral kShardingAttr = "sdy.sharding";
constexpr llvm::StringLiteral kMeshesAttr = "memfit.meshes";

RankedTensorType rankedOf(Value v) { return llvm::dyn_cast<RankedTensorType>(v.getType()); }
} // namespace

ShardingModel::ShardingModel(func::FuncOp f) {
  if (f.isExternal())
    return;
  if (auto carried = f->getAttrOfType<DictionaryAttr>(kMeshesAttr))
    for (NamedAttribute m : carried)
      readMesh(m.getName().getValue(), m.getValue());
  else if (Operation *module = f->getParentOp())
    readMeshes(module);
  if (!usable)
    return;
  for (BlockArgument a : f.front().getArguments()) {
    auto ranked = rankedOf(a);
    auto attr = f.getArgAttr(a.getArgNumber(), kShardingAttr);
    if (ranked && attr)
      set(a, parseSharding(attrToText(attr), ranked.getRank()));
  }
  // A loop's carried values take the sharding of what its body yields, known
  // only after the body: walk again until nothing changes (each round can
  // only add axes, so this ends; loops nest a few deep at most).
  for (int round = 0; round < 4; ++round) {
    changed = false;
    f.walk<WalkOrder::PreOrder>([&](Operation *op) { propagate(op); });
    if (!changed)
      break;
  }
}

/// The `sdy.mesh` ops of `module`, by symbol name.
static SmallVector<std::pair<StringAttr, Attribute>> meshOps(Operation *module) {
  SmallVector<std::pair<StringAttr, Attribute>> out;
  for (Region &r : module->getRegions())
    for (Block &b : r)
      for (Operation &op : b)
        if (getOpKind(&op) == OpKind::Mesh)
          if (auto name = op.getAttrOfType<StringAttr>("sym_name"))
            if (Attribute mesh = op.getAttr("mesh"))
              out.push_back({name, mesh});
  return out;
}

void ShardingModel::readMeshes(Operation *module) {
  for (auto [name, mesh] : meshOps(module))
    readMesh(name.getValue(), mesh);
}

/// Axes are keyed by name: two meshes that give one name two sizes make the
/// model unusable (every value whole, as without a mesh).
void ShardingModel::readMesh(llvm::StringRef name, Attribute mesh) {
  std::optional<MeshText> text = parseMeshText(attrToText(mesh));
  if (!text || conflicting)
    return;
  for (auto &[axis, size] : text->axes) {
    auto it = axisIndex.find(axis);
    if (it != axisIndex.end()) {
      if (axisSize[it->second] != size) {
        conflicting = true;
        usable = false;
        return;
      }
      continue;
    }
    if (axisSize.size() == 64) {
      conflicting = true;
      usable = false;
      return;
    }
    axisIndex[axis] = axisSize.size();
    axisSize.push_back(size);
  }
  meshes[name] = true;
  usable = true;
}

void memfit::attachMeshes(func::FuncOp detached, Operation *module) {
  if (!module)
    return;
  SmallVector<NamedAttribute> entries;
  for (auto [name, mesh] : meshOps(module))
    entries.push_back(NamedAttribute(name, mesh));
  if (!entries.empty())
    detached->setAttr(kMeshesAttr, DictionaryAttr::get(detached.getContext(), entries));
}

/// Per dimension, the bits of the axes that split it; none for what does
/// not parse or names an unknown mesh or axis.
ShardingModel::Axes ShardingModel::parseSharding(llvm::StringRef text, int64_t rank) const {
  std::optional<ShardingText> sh = parseShardingText(text);
  return sh ? axesFrom(*sh, rank) : Axes(rank, 0);
}

ShardingModel::Axes ShardingModel::axesFrom(const ShardingText &sh, int64_t rank) const {
  Axes out(rank, 0);
  if (!meshes.contains(sh.mesh) || int64_t(sh.dims.size()) != rank)
    return out;
  for (auto [d, axes] : llvm::enumerate(sh.dims))
    for (const std::string &a : axes) {
      auto it = axisIndex.find(a);
      if (it == axisIndex.end())
        return Axes(rank, 0);
      out[d] |= uint64_t(1) << it->second;
    }
  return out;
}

/// Per dimension the sharding of `a` or `b` that splits it more, an axis
/// splitting at most one dimension.
ShardingModel::Axes ShardingModel::combine(const Axes &a, const Axes &b) const {
  if (a.size() != b.size())
    return a;
  Axes out(a.size(), 0);
  uint64_t used = 0;
  for (size_t d = 0; d < a.size(); ++d) {
    uint64_t pick = count(b[d]) > count(a[d]) ? b[d] : a[d];
    if (pick & used)
      pick = (pick == a[d] ? b[d] : a[d]);
    if (pick & used)
      continue;
    out[d] = pick;
    used |= pick;
  }
  return out;
}

void ShardingModel::set(Value v, Axes axes) {
  auto hint = hints.find(v);
  if (hint != hints.end())
    axes = combine(axes, hint->second);
  bool sharded = llvm::any_of(axes, [](uint64_t m) { return m != 0; });
  auto it = dims.find(v);
  if (it == dims.end()) {
    if (sharded) {
      dims[v] = std::move(axes);
      changed = true;
    }
    return;
  }
  if (it->second != axes) {
    changed = true;
    if (sharded)
      it->second = std::move(axes);
    else
      dims.erase(it);
  }
}

/// A splat (a constant, or a broadcast scalar) takes whatever sharding its
/// user gives it: XLA's partitioner propagates backwards too, and a loop's
/// zero-initialised accumulator is sharded like the loop.
static bool isSplat(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  OpKind k = getOpKind(def);
  if (k == OpKind::Constant || k == OpKind::ArithConstant)
    return true;
  if (k != OpKind::BroadcastInDim)
    return false;
  auto in = llvm::dyn_cast<RankedTensorType>(def->getOperand(0).getType());
  return in && in.getRank() == 0;
}

ShardingModel::Axes ShardingModel::axesOf(Value v) const {
  auto it = dims.find(v);
  if (it != dims.end())
    return it->second;
  auto t = rankedOf(v);
  return Axes(t ? t.getRank() : 0, 0);
}

int64_t ShardingModel::count(uint64_t mask) const {
  int64_t n = 1;
  for (unsigned i = 0; i < axisSize.size(); ++i)
    if (mask & (uint64_t(1) << i))
      n *= axisSize[i];
  return n;
}

void ShardingModel::propagate(Operation *op) {
  // What the program states wins over what propagation would give.
  if (getOpKind(op) == OpKind::ShardingConstraint) {
    if (auto t = rankedOf(op->getResult(0)); t && op->getAttr("sharding"))
      set(op->getResult(0), parseSharding(attrToText(op->getAttr("sharding")), t.getRank()));
    return;
  }
  if (Attribute stated = op->getAttr(kShardingAttr)) {
    auto per = parseShardingPerValueText(attrToText(stated));
    if (per && per->size() == op->getNumResults()) {
      for (auto [r, sh] : llvm::zip(op->getResults(), *per))
        if (auto t = rankedOf(r))
          set(r, axesFrom(sh, t.getRank()));
      return;
    }
  }
  if (getOpKind(op) == OpKind::While) {
    // Carried values keep their sharding: XLA's partitioner gives a while
    // loop's operands, block arguments and results one sharding.
    Region &body = op->getRegion(op->getNumRegions() - 1);
    Operation *yield = body.empty() ? nullptr : body.front().getTerminator();
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      Axes a = axesOf(v);
      if (yield && i < yield->getNumOperands())
        a = combine(a, axesOf(yield->getOperand(i)));
      if (isSplat(v) && axesOf(v) != a) {
        hints[v] = a;
        set(v, a);
      }
      if (i < op->getNumResults())
        set(op->getResult(i), a);
      for (Region &r : op->getRegions())
        if (!r.empty() && i < r.front().getNumArguments())
          set(r.front().getArgument(i), a);
    }
    return;
  }
  std::optional<OpDimRule> rule = getOpDimRule(op);
  if (!rule)
    return;
  for (auto [ri, r] : llvm::enumerate(op->getResults())) {
    auto t = rankedOf(r);
    if (!t)
      continue;
    Axes out(t.getRank(), 0);
    uint64_t used = 0; // an axis splits at most one dimension of a tensor
    for (int64_t d = 0; d < t.getRank(); ++d) {
      const DimFactor *f = rule->forResult(ri, d);
      if (!f || f->kind != FactorKind::PassThrough)
        continue;
      uint64_t best = 0;
      for (auto [oi, od] : llvm::enumerate(f->operandDims)) {
        if (od < 0)
          continue;
        Axes in = axesOf(op->getOperand(oi));
        if (od < int64_t(in.size()) && count(in[od]) > count(best))
          best = in[od];
      }
      if (best & used)
        continue;
      out[d] = best;
      used |= best;
    }
    set(r, std::move(out));
  }
}

int64_t ShardingModel::shardsAlong(Value v, int64_t d) const {
  auto it = dims.find(v);
  if (it == dims.end() || d < 0 || d >= int64_t(it->second.size()))
    return 1;
  return count(it->second[d]);
}

/// Whether some user of `v` needs dimension `d` whole on each device (XLA
/// all-gathers it for that user).
bool ShardingModel::neededWhole(Value v, int64_t d) const {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    OpKind kind = getOpKind(user);
    if (isTerminatorLike(user) || kind == OpKind::While ||
        kind == OpKind::ShardingConstraint)
      continue;
    std::optional<OpDimRule> rule = getOpDimRule(user);
    if (!rule)
      return true;
    const DimFactor *f = rule->forOperand(use.getOperandNumber(), d);
    if (!f || (f->kind != FactorKind::PassThrough && f->kind != FactorKind::Reduction &&
               !f->localOnShards))
      return true;
  }
  return false;
}

int64_t ShardingModel::deviceBytes(Value v) const {
  std::optional<int64_t> whole = getTensorBytes(v.getType());
  if (!whole)
    return 0;
  auto it = dims.find(v);
  auto t = rankedOf(v);
  if (it == dims.end() || !t)
    return *whole;
  auto cached = byteCache.find(v);
  if (cached != byteCache.end())
    return cached->second;
  int64_t elems = 1;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    int64_t size = t.getDimSize(d), n = count(it->second[d]);
    if (n > 1 && !neededWhole(v, d))
      size = (size + n - 1) / n; // XLA pads an uneven last shard
    elems *= size;
  }
  return byteCache[v] = elems * getElementBytes(t.getElementType());
}
