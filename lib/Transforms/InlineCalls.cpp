//===- InlineCalls.cpp - memfit-inline -------------------------------------===//
//
// MLIR's inliner needs a DialectInlinerInterface for every op it moves;
// unregistered StableHLO ops have none, so `inline` refuses jax's helper
// functions. This pass clones callee bodies itself. It is all-or-nothing:
// recursion is detected before anything changes.
//
//===----------------------------------------------------------------------===//
#include "memfit/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace memfit {
#define GEN_PASS_DEF_MEMFITINLINE
#include "memfit/Transforms/Passes.h.inc"
} // namespace memfit

using namespace mlir;

namespace {

/// Fails (with an error at the call) when a call cycle is reachable.
LogicalResult checkNoRecursion(ModuleOp module, SymbolTable &symbols) {
  llvm::DenseMap<Operation *, int> state; // 1 = on stack, 2 = done
  std::function<LogicalResult(func::FuncOp)> visit = [&](func::FuncOp f) -> LogicalResult {
    state[f] = 1;
    WalkResult r = f.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return WalkResult::advance();
      if (state.lookup(callee) == 1) {
        call.emitError("recursive call to '")
            << call.getCallee() << "'; memfit-inline cannot inline recursion";
        return WalkResult::interrupt();
      }
      if (state.lookup(callee) == 0 && failed(visit(callee)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    state[f] = 2;
    return failure(r.wasInterrupted());
  };
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal() && state.lookup(f) == 0 && failed(visit(f)))
      return failure();
  return success();
}

/// Every defined callee must be a single block, checked before any change.
LogicalResult checkCalleesInlinable(ModuleOp module, SymbolTable &symbols) {
  WalkResult r = module.walk([&](func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (callee && !callee.isExternal() && !callee.getBody().hasOneBlock()) {
      call.emitError("cannot inline '")
          << callee.getSymName() << "': its body has several blocks";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

/// Ops a function would hold once every call in it is inlined, computed
/// over the (acyclic, checked first) call graph; fails with an error when a
/// function would grow past `limit` ops (call trees grow exponentially).
LogicalResult checkInlinedSize(ModuleOp module, SymbolTable &symbols,
                               uint64_t limit) {
  llvm::DenseMap<Operation *, uint64_t> size;
  std::function<uint64_t(func::FuncOp)> sizeOf = [&](func::FuncOp f) -> uint64_t {
    auto it = size.find(f);
    if (it != size.end())
      return it->second;
    uint64_t n = 0;
    f.walk([&](Operation *op) {
      ++n;
      if (auto call = llvm::dyn_cast<func::CallOp>(op)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (callee && !callee.isExternal())
          n = std::min<uint64_t>(n + sizeOf(callee), limit + 1);
      }
    });
    size[f] = n;
    return n;
  };
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isExternal() && sizeOf(f) > limit)
      return f.emitError("inlining every call would give '")
             << f.getSymName() << "' more than " << limit
             << " ops; memfit-inline stops here";
  return success();
}

/// Replaces `call` with a clone of the callee's single-block body.
void inlineCall(func::CallOp call, func::FuncOp callee) {
  Block &body = callee.front();
  IRMapping map;
  for (auto [arg, operand] : llvm::zip(body.getArguments(), call.getOperands()))
    map.map(arg, operand);
  OpBuilder b(call);
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  for (auto [result, returned] :
       llvm::zip(call.getResults(), body.getTerminator()->getOperands()))
    result.replaceAllUsesWith(map.lookupOrDefault(returned));
  call.erase();
}

struct MemfitInlinePass : memfit::impl::MemfitInlineBase<MemfitInlinePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    if (failed(checkNoRecursion(module, symbols)) ||
        failed(checkCalleesInlinable(module, symbols)) ||
        failed(checkInlinedSize(module, symbols, /*limit=*/2000000)))
      return signalPassFailure();
    // Inline until no call to a defined function remains (callees may call).
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<func::CallOp> calls;
      module.walk([&](func::CallOp c) { calls.push_back(c); });
      for (func::CallOp call : calls) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (!callee || callee.isExternal())
          continue;
        inlineCall(call, callee);
        changed = true;
      }
    }
    eraseUnusedPrivateFunctions(module, symbols);
  }

  /// SymbolTable::symbolKnownUseEmpty cannot answer for modules holding an
  /// unregistered op with one region (stablehlo.reduce, sort: it might be a
  /// symbol table), so uses are collected from every op's attributes and
  /// properties instead. Repeats until no dead private function is left.
  void eraseUnusedPrivateFunctions(ModuleOp module, SymbolTable &symbols) {
    while (true) {
      llvm::DenseSet<StringAttr> used;
      auto collect = [&](Attribute attr) {
        if (attr)
          attr.walk([&](SymbolRefAttr ref) { used.insert(ref.getRootReference()); });
      };
      module.walk([&](Operation *op) {
        collect(op->getRawDictionaryAttrs());
        collect(op->getPropertiesAsAttribute());
      });
      SmallVector<func::FuncOp> dead;
      for (auto f : module.getOps<func::FuncOp>())
        if (f.isPrivate() && !used.contains(f.getSymNameAttr()))
          dead.push_back(f);
      if (dead.empty())
        return;
      for (func::FuncOp f : dead)
        symbols.erase(f);
    }
  }
};

} // namespace
