//===- BufferSchedule.cpp - a function as scheduled buffers -----------------===//
//
//  * The schedule follows the FusionModel (FusionModel.h): one entry per
//    fusion root (dot_general, reduce, sort, custom_call, ...) and per
//    fusible op whose result XLA materialises; fused producers are folded
//    into their consumer's entry (their FLOPs too). Constants are not
//    buffers (XLA keeps them outside the temp allocation).
//  * A stablehlo.while is one sub-schedule, its body's entries in order,
//    weighted by the trip count (read from the cond's compare against a
//    constant), not unrolled. Reads of a loop-carried value map to the
//    buffer of the loop's initial operand; the body's new carried value
//    writes that same buffer in place when the initial value dies at the
//    loop (XLA aliases while operands, body parameters and body results),
//    otherwise it is a buffer of its own; uses after the loop read it. The
//    cond region is not scheduled (scalar work).
//  * Buffer intervals follow the instance rules: an argument starts at 0, a
//    temp or output at its producer; each ends at its last use (its start
//    when unused).
//  * XLA's aliases are not buffers of their own: a reshape, or a
//    broadcast_in_dim that only adds unit dimensions, is a bitcast of its
//    operand's buffer; optimization_barrier results alias its operands; a
//    result written over an operand that dies at its op (in-place
//    elementwise fusion, dynamic_update_slice) shares that operand's buffer,
//    when every value already in that buffer is dead.
//  * Regions of other ops (reduce and sort bodies, case/if branches) are not
//    scheduled; the op is one entry.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/BufferSchedule.h"

#include "memfit/Analysis/FusionModel.h"
#include "memfit/IR/OpTable.h"
#include "memfit/IR/OpViews.h"
#include "memfit/Support/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace memfit;

namespace {

std::string locationText(Location loc) {
  std::string name = getRecordedOpName(loc);
  std::string line = getUserSourceLine(loc);
  if (!name.empty() && !line.empty())
    return name + " @ " + line;
  return name.empty() ? line : name;
}

/// The scalar value of a splat constant feeding `v`, through converts and
/// reshapes/broadcasts of a scalar.
std::optional<double> constantValue(Value v) {
  Operation *def = v.getDefiningOp();
  while (def && (getOpKind(def) == OpKind::Convert || getOpKind(def) == OpKind::Reshape ||
                 getOpKind(def) == OpKind::BroadcastInDim)) {
    v = def->getOperand(0);
    def = v.getDefiningOp();
  }
  if (!def)
    return std::nullopt;
  if (auto c = ConstantView::match(def))
    return c->getSplatValue();
  if (auto c = ArithConstantView::match(def)) {
    ElementsAttr e = c->getValue();
    if (e && e.isSplat()) {
      Type t = e.getElementType();
      if (t.isInteger())
        return static_cast<double>(e.getSplatValue<APInt>().getSExtValue());
      if (llvm::isa<FloatType>(t))
        return e.getSplatValue<APFloat>().convertToDouble();
    }
  }
  return std::nullopt;
}

/// The trip count of `whileOp` when its cond is `compare(dir, iv, bound)`
/// with a constant bound (or a loop-invariant carried constant), the
/// induction variable starting at a constant and stepping by a constant.
} // namespace

std::optional<int64_t> memfit::readTripCount(Operation *whileOp) {
  WhileView loop(whileOp);
  if (loop.getCond().empty() || loop.getBody().empty())
    return std::nullopt;
  Block &cond = loop.getCond().front();
  Block &body = loop.getBody().front();
  Operation *condRet = cond.getTerminator();
  if (!condRet || condRet->getNumOperands() != 1)
    return std::nullopt;
  auto cmp = CompareView::match(condRet->getOperand(0).getDefiningOp());
  if (!cmp)
    return std::nullopt;
  std::string dir = cmp->getDirection();
  Value ivArg = cmp->getLhs(), boundVal = cmp->getRhs();
  auto argIndex = [&](Value v) -> std::optional<unsigned> {
    auto a = llvm::dyn_cast<BlockArgument>(v);
    if (a && a.getOwner() == &cond)
      return a.getArgNumber();
    return std::nullopt;
  };
  if (!argIndex(ivArg)) {
    std::swap(ivArg, boundVal);
    // bound < iv  <=>  iv > bound
    if (dir == "LT") dir = "GT";
    else if (dir == "GT") dir = "LT";
    else if (dir == "LE") dir = "GE";
    else if (dir == "GE") dir = "LE";
  }
  std::optional<unsigned> iv = argIndex(ivArg);
  if (!iv)
    return std::nullopt;
  Operation *bodyRet = body.getTerminator();
  auto initOf = [&](unsigned i) { return constantValue(whileOp->getOperand(i)); };
  // The bound: a constant in the cond, or a carried value that starts as a
  // constant and that the body passes through unchanged.
  std::optional<double> bound;
  if (std::optional<unsigned> b = argIndex(boundVal)) {
    if (bodyRet->getOperand(*b) == body.getArgument(*b))
      bound = initOf(*b);
  } else {
    bound = constantValue(boundVal);
  }
  std::optional<double> init = initOf(*iv);
  // The step: the body returns iv + constant.
  std::optional<double> step;
  Operation *next = bodyRet->getOperand(*iv).getDefiningOp();
  if (getElementwiseFn(next) == ElementwiseFn::Add) {
    for (unsigned k = 0; k < 2; ++k)
      if (next->getOperand(k) == body.getArgument(*iv))
        step = constantValue(next->getOperand(1 - k));
  } else if (getElementwiseFn(next) == ElementwiseFn::Subtract &&
             next->getOperand(0) == body.getArgument(*iv)) {
    if (std::optional<double> s = constantValue(next->getOperand(1)))
      step = -*s;
  }
  if (!bound || !init || !step || *step == 0)
    return std::nullopt;
  double span = *bound - *init;
  double trips;
  if ((dir == "LT" || dir == "NE") && *step > 0)
    trips = std::ceil(span / *step);
  else if (dir == "LE" && *step > 0)
    trips = std::floor(span / *step) + 1;
  else if ((dir == "GT" || dir == "NE") && *step < 0)
    trips = std::ceil(span / *step);
  else if (dir == "GE" && *step < 0)
    trips = std::floor(span / *step) + 1;
  else
    return std::nullopt;
  return static_cast<int64_t>(std::max(0.0, trips));
}

namespace {

class Exporter {
public:
  explicit Exporter(func::FuncOp func, BufferSchedule &out)
      : func(func), ops(out.ops), buffers(out.buffers), out(out) {}

  void run();

private:
  void exportBlock(Block &block, double weight);
  void exportWhile(Operation *op, const FusionModel &outer, double weight);
  int newBuffer(Value v, llvm::StringRef kind, int producer);
  int bufferOf(Value v) const { return valueBuffer.lookup(v) - 1; }
  void setBuffer(Value v, int id) {
    valueBuffer[v] = id + 1;
    valuesOf[id].push_back(v);
  }
  bool aliasWithoutCopy(Operation *op, const FusionModel &m);
  std::string valueName(Value v) const;
  int findDonor(Operation *op, Value result, const FusionModel &m,
                llvm::ArrayRef<Value> inputs,
                const llvm::SmallDenseSet<int, 2> &taken) const;

  func::FuncOp func;
  std::vector<ScheduledOp> &ops;
  std::vector<ScheduledBuffer> &buffers;
  BufferSchedule &out;
  llvm::DenseMap<Value, int> valueBuffer; // id + 1; 0 = no buffer
  /// Every SSA value mapped to each buffer (in-place results, loop carries,
  /// bitcasts): a buffer may be written over only when all of them are dead.
  llvm::DenseMap<int, llvm::SmallVector<Value, 2>> valuesOf;
  /// Body results that write a carried buffer in place.
  llvm::DenseMap<Value, int> inPlace;
  llvm::DenseSet<Value> returned;
};

std::string Exporter::valueName(Value v) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto a = llvm::dyn_cast<BlockArgument>(v)) {
    os << "arg" << a.getArgNumber();
  } else {
    Operation *def = v.getDefiningOp();
    llvm::StringRef n = def->getName().getStringRef();
    n.consume_front("stablehlo.");
    os << n;
    if (def->getNumResults() > 1)
      os << "#" << llvm::cast<OpResult>(v).getResultNumber();
  }
  if (auto t = llvm::dyn_cast<RankedTensorType>(v.getType())) {
    os << ":";
    for (int64_t d : t.getShape())
      os << d << "x";
    t.getElementType().print(os);
  }
  return s;
}

int Exporter::newBuffer(Value v, llvm::StringRef kind, int producer) {
  ScheduledBuffer b;
  b.size = getTensorBytes(v.getType()).value_or(0);
  b.start = producer;
  b.kind = kind.str();
  b.name = valueName(v);
  b.value = v;
  buffers.push_back(b);
  int id = buffers.size() - 1;
  setBuffer(v, id);
  return id;
}

/// Ops XLA turns into aliases of their operands' buffers: a reshape, or a
/// broadcast_in_dim that only adds unit dimensions (both bitcasts in XLA's
/// default row-major layouts), and optimization_barrier (results alias
/// operands). Maps their results to the operands' buffers.
bool Exporter::aliasWithoutCopy(Operation *op, const FusionModel &m) {
  OpKind kind = getOpKind(op);
  if (kind == OpKind::OptimizationBarrier) {
    if (op->getNumOperands() != op->getNumResults())
      return false;
    // Every operand needs a buffer to alias (constants have none and need
    // none); otherwise the barrier stays an entry of its own.
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (bufferOf(v) < 0 && !(def && isConstantLike(def)))
        return false;
    }
    for (auto [v, r] : llvm::zip(op->getOperands(), op->getResults()))
      if (int b = bufferOf(v); b >= 0) {
        setBuffer(r, b);
        if (returned.contains(r) && buffers[b].kind == "temp")
          buffers[b].kind = "output";
      }
    return true;
  }
  if (kind != OpKind::Reshape && kind != OpKind::BroadcastInDim)
    return false;
  Value in = op->getOperand(0), out = op->getResult(0);
  auto inT = llvm::dyn_cast<RankedTensorType>(in.getType());
  auto outT = llvm::dyn_cast<RankedTensorType>(out.getType());
  if (!inT || !outT || !inT.hasStaticShape() || !outT.hasStaticShape() ||
      inT.getNumElements() != outT.getNumElements() || !m.isMaterialised(out))
    return false;
  if (kind == OpKind::BroadcastInDim) {
    llvm::SmallVector<int64_t> dims = BroadcastInDimView(op).getBroadcastDimensions();
    for (size_t i = 1; i < dims.size(); ++i)
      if (dims[i] <= dims[i - 1])
        return false; // a transpose, not a bitcast
  }
  int b = bufferOf(in);
  if (b < 0)
    return false;
  setBuffer(out, b);
  if (returned.contains(out) && buffers[b].kind == "temp")
    buffers[b].kind = "output";
  return true;
}

/// The buffer of the operand whose memory `op`'s result takes over (the
/// FusionModel's rule: a same-sized materialised operand, not a caller's
/// argument, that dies at `op`; operand 0 of a dynamic_update_slice).
int Exporter::findDonor(Operation *op, Value result, const FusionModel &m,
                        llvm::ArrayRef<Value> inputs,
                        const llvm::SmallDenseSet<int, 2> &taken) const {
  unsigned pos = m.indexOf(op);
  Block *block = op->getBlock();
  // A barrier's results are its operands' buffers, whose last use covers
  // the results' readers (an in-place update behind a barrier: a split's
  // remainder step).
  auto deadAfterHere = [&](Value w) {
    w = FusionModel::forwardedThroughBarriers(w);
    return !llvm::isa<BlockArgument>(w) && w.getDefiningOp()->getBlock() == block &&
           m.isMaterialised(w) && m.lastUse(w) <= pos;
  };
  auto usable = [&](Value v, int64_t bytes) {
    v = FusionModel::forwardedThroughBarriers(v);
    int b = bufferOf(v);
    return b >= 0 && !llvm::isa<BlockArgument>(v) && m.isMaterialised(v) &&
           m.lastUse(v) == pos && buffers[b].kind != "argument" &&
           !taken.contains(b) && getTensorBytes(v.getType()) == bytes &&
           llvm::all_of(valuesOf.lookup(b), deadAfterHere);
  };
  int64_t bytes = getTensorBytes(result.getType()).value_or(-1);
  if (getOpKind(op) == OpKind::DynamicUpdateSlice)
    return usable(op->getOperand(0), bytes) ? bufferOf(op->getOperand(0)) : -1;
  for (Value v : inputs)
    if (usable(v, bytes))
      return bufferOf(v);
  return -1;
}

void Exporter::exportBlock(Block &block, double weight) {
  FusionModel m(block);
  for (Operation *op : m.getOps()) {
    // Unregistered terminators (stablehlo.return) have no IsTerminator trait.
    if (isConstantLike(op) || op == &block.back() ||
        op->hasTrait<OpTrait::IsTerminator>())
      continue;
    if (getOpKind(op) == OpKind::While) {
      exportWhile(op, m, weight);
      continue;
    }
    bool anyMaterialised = llvm::any_of(
        op->getResults(), [&](Value r) { return m.isMaterialised(r); });
    if (FusionModel::isFusible(op) && !anyMaterialised)
      continue; // fused into its consumer's entry
    if (aliasWithoutCopy(op, m))
      continue; // a bitcast or optimization_barrier: no new buffer, no work
    int pos = ops.size();
    ScheduledOp rec;
    rec.op = op;
    rec.name = op->getName().getStringRef().str();
    rec.location = locationText(op->getLoc());
    // The fused producers' work and inputs belong to this entry.
    llvm::SmallVector<Value> inputs;
    llvm::SmallVector<Operation *> fused;
    m.collectFusionInputs(op, inputs, &fused);
    rec.flops = opFlops(op);
    for (Operation *f : fused)
      rec.flops += opFlops(f);
    rec.weight = weight;
    if (getOpKind(op) == OpKind::DotGeneral || getOpKind(op) == OpKind::Convolution) {
      auto t = llvm::dyn_cast<RankedTensorType>(op->getOperand(0).getType());
      (t && isLowPrecisionFloat(t.getElementType()) ? out.lowPrecisionDotFlops
                                                    : out.otherDotFlops) +=
          opFlops(op) * weight;
    }
    auto addOperand = [&](int id) {
      if (id < 0 || llvm::is_contained(rec.operands, id))
        return;
      rec.operands.push_back(id);
      buffers[id].uses.push_back(pos);
    };
    for (Value v : inputs)
      addOperand(bufferOf(v));
    llvm::SmallDenseSet<int, 2> takenDonors;
    for (Value r : op->getResults()) {
      if (!m.isMaterialised(r) || !getTensorBytes(r.getType()))
        continue;
      auto it = inPlace.find(r);
      if (it != inPlace.end()) {
        // Writes a loop-carried buffer in place: XLA aliases it.
        addOperand(it->second);
        setBuffer(r, it->second);
        buffers[it->second].values++;
        continue;
      }
      if (m.firstLive(r) == m.indexOf(op) + 1) {
        // XLA writes this result over an operand that dies here (an
        // in-place elementwise fusion or dynamic_update_slice): one buffer.
        if (int donor = findDonor(op, r, m, inputs, takenDonors); donor >= 0) {
          takenDonors.insert(donor);
          addOperand(donor);
          setBuffer(r, donor);
          buffers[donor].values++;
          if (returned.contains(r))
            buffers[donor].kind = "output";
          continue;
        }
      }
      int id = newBuffer(r, returned.contains(r) ? "output" : "temp", pos);
      rec.results.push_back(id);
    }
    ops.push_back(std::move(rec));
  }
}

void Exporter::exportWhile(Operation *op, const FusionModel &outer,
                           double weight) {
  WhileView loop(op);
  std::optional<int64_t> trips = readTripCount(op);
  if (!trips)
    out.unknownTripCounts.push_back(op);
  double w = weight * static_cast<double>(trips.value_or(1));
  if (w <= 0)
    w = weight; // a loop that never runs still appears once, cheaply
  Block &body = loop.getBody().front();
  Operation *bodyRet = body.getTerminator();
  unsigned whileIndex = outer.indexOf(op);
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    Value init = op->getOperand(i);
    int b = bufferOf(init);
    if (b < 0)
      continue;
    setBuffer(body.getArgument(i), b);
    // The body's new value for slot i writes the initial value's buffer in
    // place when that value dies here and is not a caller-owned argument.
    Value next = bodyRet->getOperand(i);
    bool dies = !llvm::isa<BlockArgument>(init) &&
                outer.isMaterialised(init) && outer.lastUse(init) == whileIndex;
    if (dies && !llvm::isa<BlockArgument>(next) &&
        next.getDefiningOp()->getBlock() == &body &&
        getTensorBytes(next.getType()) == getTensorBytes(init.getType()) &&
        !inPlace.count(next) && buffers[b].kind != "argument")
      inPlace[next] = b;
  }
  size_t first = ops.size();
  exportBlock(body, w);
  if (ops.size() == first) {
    // An empty body: one entry for the loop itself.
    ScheduledOp rec;
    rec.op = op;
    rec.name = op->getName().getStringRef().str();
    rec.location = locationText(op->getLoc());
    rec.weight = w;
    ops.push_back(rec);
  }
  // The loop's results are the body's last values.
  for (unsigned i = 0; i < op->getNumResults(); ++i) {
    int b = bufferOf(bodyRet->getOperand(i));
    if (b >= 0)
      setBuffer(op->getResult(i), b);
    if (b >= 0 && returned.contains(op->getResult(i)) && buffers[b].kind == "temp")
      buffers[b].kind = "output";
  }
}

void Exporter::run() {
  Block &entry = func.front();
  for (Value v : entry.getTerminator()->getOperands())
    returned.insert(v);
  for (BlockArgument a : entry.getArguments())
    if (getTensorBytes(a.getType()))
      newBuffer(a, "argument", 0);
  exportBlock(entry, 1.0);
  // A returned bitcast (reshape) the fusion model leaves virtual: the
  // buffer behind it is an output.
  for (Value v : returned) {
    Value w = v;
    while (bufferOf(w) < 0 && w.getDefiningOp() &&
           (getOpKind(w.getDefiningOp()) == OpKind::Reshape ||
            getOpKind(w.getDefiningOp()) == OpKind::BroadcastInDim) &&
           getTensorBytes(w.getType()) ==
               getTensorBytes(w.getDefiningOp()->getOperand(0).getType()))
      w = w.getDefiningOp()->getOperand(0);
    if (int b = bufferOf(w); b >= 0 && buffers[b].kind == "temp")
      buffers[b].kind = "output";
  }
}

} // namespace

BufferSchedule memfit::buildBufferSchedule(func::FuncOp func) {
  BufferSchedule s;
  if (!func.isExternal())
    Exporter(func, s).run();
  return s;
}

int64_t BufferSchedule::peakBytes() const {
  std::vector<int64_t> delta(ops.size() + 2, 0);
  for (const ScheduledBuffer &b : buffers) {
    delta[b.start] += b.size;
    delta[b.end() + 1] -= b.size;
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return peak;
}

func::FuncOp memfit::findScheduledFunction(ModuleOp module, llvm::StringRef name) {
  func::FuncOp main, firstPublic;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal())
      continue;
    if (!name.empty() && f.getSymName() == name)
      return f;
    if (f.getSymName() == "main")
      main = f;
    if (!firstPublic && f.isPublic())
      firstPublic = f;
  }
  if (!name.empty())
    return {};
  return main ? main : firstPublic;
}

std::string memfit::instanceToJson(const BufferSchedule &s,
                                   const DeviceModel &device, int64_t capacity,
                                   llvm::StringRef program,
                                   llvm::StringRef function,
                                   llvm::StringRef mode) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, /*IndentSize=*/1);
  // Id lists on one line: [3, 7].
  auto intList = [&](llvm::StringRef key, const std::vector<int> &xs) {
    std::string list = "[";
    for (auto [i, x] : llvm::enumerate(xs))
      list += (i ? ", " : "") + std::to_string(x);
    list += "]";
    j.attributeBegin(key);
    j.rawValue(list);
    j.attributeEnd();
  };
  j.object([&] {
    j.attribute("version", 1);
    j.attribute("program", program);
    j.attribute("function", function);
    j.attribute("mode", mode);
    j.attributeObject("device", [&] {
      j.attribute("name", device.name);
      j.attribute("fast_capacity", device.fastCapacity);
      j.attribute("fast_bandwidth", device.fastBandwidth);
      j.attribute("slow_bandwidth", device.slowBandwidth);
      j.attribute("copy_bandwidth", device.copyBandwidth);
      j.attribute("flops", device.flops);
      j.attribute("copy_overlaps_compute", device.copyOverlapsCompute);
    });
    j.attribute("capacity", capacity);
    j.attributeArray("ops", [&] {
      for (auto [i, o] : llvm::enumerate(s.ops)) {
        double bytes = 0;
        for (int b : o.operands)
          bytes += s.buffers[b].size;
        for (int b : o.results)
          bytes += s.buffers[b].size;
        j.object([&] {
          j.attribute("id", static_cast<int64_t>(i));
          j.attribute("name", o.name);
          j.attribute("location", o.location);
          j.attribute("flops", o.flops);
          j.attribute("weight", o.weight);
          j.attribute("bytes", bytes);
          intList("operands", o.operands);
          intList("results", o.results);
        });
      }
    });
    j.attributeArray("buffers", [&] {
      for (auto [i, b] : llvm::enumerate(s.buffers))
        j.object([&] {
          j.attribute("id", static_cast<int64_t>(i));
          j.attribute("name", b.name);
          j.attribute("size", b.size);
          j.attribute("start", b.start);
          j.attribute("end", b.end());
          intList("uses", b.uses);
          j.attribute("kind", b.kind);
          j.attribute("values", b.values);
        });
    });
  });
  os << "\n";
  return text;
}
