//===- TestOpViews.cpp - memfit-test-op-views ------------------------------===//
//
// A test pass for the op views and builders (lib/IR), in memfit-opt and
// libmemfit-test-passes only (test/lib/CMakeLists.txt):
//  * mode=read (default): prints, for every op memfit knows, what its view
//    reads (dot dimensions, reducer kind, compare direction, slice indices,
//    top_k's k, ...) and the byte size of its first result, one line per op
//    under a `func @name` line, so lit can FileCheck them.
//  * mode=build: appends a function `@memfit_built_ops` made with the
//    builders (one of each op kind), then prints it as in read mode. The
//    module's printed form is what jaxlib must parse and verify
//    (test/python/test_op_views.py).
// Lines go to stdout (or `output`); the IR is unchanged in read mode.
//
//===----------------------------------------------------------------------===//
#include "TestPasses.h"

#include "memfit/IR/OpViews.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace memfit {
#define GEN_PASS_DEF_MEMFITTESTOPVIEWS
#include "TestPasses.h.inc"
} // namespace memfit

using namespace mlir;
using namespace memfit;

namespace {

void printList(llvm::raw_ostream &os, llvm::ArrayRef<int64_t> v) {
  os << "[";
  llvm::interleaveComma(v, os);
  os << "]";
}

const char *reducerName(ReducerKind k) {
  switch (k) {
  case ReducerKind::Add: return "add";
  case ReducerKind::Mul: return "mul";
  case ReducerKind::Max: return "max";
  case ReducerKind::Min: return "min";
  case ReducerKind::And: return "and";
  case ReducerKind::Or: return "or";
  case ReducerKind::Other: return "other";
  }
  return "other";
}

/// One line: what the view of `op` reads. Only called on ops that passed
/// verifyOpInvariants, so every accessor's attribute exists.
void describe(Operation *op, llvm::raw_ostream &os) {
  OpKind kind = getOpKind(op);
  os << "  " << op->getName().getStringRef() << ":";
  switch (kind) {
  case OpKind::Constant: {
    auto v = *ConstantView::match(op);
    os << " elements=" << v.getValue().getNumElements();
    if (std::optional<double> splat = v.getSplatValue())
      os << " splat=" << *splat;
    break;
  }
  case OpKind::ArithConstant: {
    auto v = *ArithConstantView::match(op);
    os << " elements=" << v.getValue().getNumElements() << " type=" << v.getValue().getType();
    break;
  }
  case OpKind::Iota:
    os << " dim=" << IotaView::match(op)->getIotaDimension();
    break;
  case OpKind::BroadcastInDim:
    os << " dims=";
    printList(os, BroadcastInDimView::match(op)->getBroadcastDimensions());
    break;
  case OpKind::Reshape:
    os << " " << ReshapeView::match(op)->getOperand().getType() << " -> "
       << op->getResult(0).getType();
    break;
  case OpKind::Transpose:
    os << " perm=";
    printList(os, TransposeView::match(op)->getPermutation());
    break;
  case OpKind::Convert:
    os << " " << getElementTypeOrSelf(ConvertView::match(op)->getOperand().getType())
       << " -> " << getElementTypeOrSelf(op->getResult(0).getType());
    break;
  case OpKind::ElementwiseUnary:
  case OpKind::ElementwiseBinary:
    os << " elementwise operands=" << op->getNumOperands();
    break;
  case OpKind::Compare: {
    auto v = *CompareView::match(op);
    os << " direction=" << v.getDirection();
    std::string t = v.getCompareType();
    if (!t.empty())
      os << " type=" << t;
    break;
  }
  case OpKind::Select: {
    auto v = *SelectView::match(op);
    os << " pred=" << v.getPred().getType() << " on_true=" << v.getOnTrue().getType();
    break;
  }
  case OpKind::Clamp:
    os << " clamp";
    break;
  case OpKind::DotGeneral: {
    DotDims d = DotGeneralView::match(op)->getDims();
    os << " lhs_batch=";
    printList(os, d.lhsBatch);
    os << " rhs_batch=";
    printList(os, d.rhsBatch);
    os << " lhs_contract=";
    printList(os, d.lhsContract);
    os << " rhs_contract=";
    printList(os, d.rhsContract);
    // The text the builders write must read back to the same numbers.
    std::optional<DotDims> back = DotDims::fromText(d.toText());
    os << " roundtrip=" << (back && *back == d ? "ok" : "FAILED");
    break;
  }
  case OpKind::Reduce: {
    auto v = *ReduceView::match(op);
    os << " inputs=" << v.getNumInputs() << " dims=";
    printList(os, v.getDimensions());
    os << " reducer=" << reducerName(v.getReducerKind());
    break;
  }
  case OpKind::Slice: {
    auto v = *SliceView::match(op);
    os << " start=";
    printList(os, v.getStartIndices());
    os << " limit=";
    printList(os, v.getLimitIndices());
    os << " strides=";
    printList(os, v.getStrides());
    break;
  }
  case OpKind::DynamicSlice: {
    auto v = *DynamicSliceView::match(op);
    os << " starts=" << v.getStartIndices().size() << " sizes=";
    printList(os, v.getSliceSizes());
    break;
  }
  case OpKind::DynamicUpdateSlice: {
    auto v = *DynamicUpdateSliceView::match(op);
    os << " update=" << v.getUpdate().getType()
       << " starts=" << v.getStartIndices().size();
    break;
  }
  case OpKind::Concatenate:
    os << " dim=" << ConcatenateView::match(op)->getDimension()
       << " operands=" << op->getNumOperands();
    break;
  case OpKind::Pad: {
    auto v = *PadView::match(op);
    os << " low=";
    printList(os, v.getLow());
    os << " high=";
    printList(os, v.getHigh());
    os << " interior=";
    printList(os, v.getInterior());
    break;
  }
  case OpKind::While: {
    auto v = *WhileView::match(op);
    os << " carried=" << op->getNumOperands()
       << " cond_args=" << v.getCond().front().getNumArguments()
       << " body_args=" << v.getBody().front().getNumArguments();
    break;
  }
  case OpKind::Return:
  case OpKind::FuncReturn:
    os << " operands=" << op->getNumOperands();
    break;
  case OpKind::Sort: {
    auto v = *SortView::match(op);
    os << " dim=" << v.getDimension() << " stable=" << (v.isStable() ? "true" : "false")
       << " operands=" << op->getNumOperands();
    break;
  }
  case OpKind::TopK:
    os << " k=" << TopKView::match(op)->getK();
    break;
  case OpKind::CustomCall:
    os << " target=" << CustomCallView::match(op)->getTarget();
    break;
  case OpKind::FuncCall:
    os << " callee=" << op->getAttr("callee");
    break;
  case OpKind::Gather:
  case OpKind::Scatter:
  case OpKind::Convolution:
  case OpKind::ReduceWindow:
  case OpKind::SelectAndScatter:
  case OpKind::If:
  case OpKind::Case:
  case OpKind::OptimizationBarrier:
  case OpKind::Cholesky:
  case OpKind::TriangularSolve:
  case OpKind::ShardingConstraint:
  case OpKind::Mesh:
  case OpKind::Other:
    os << " other";
    break;
  case OpKind::Unknown:
    break;
  }
  if (op->getNumResults() != 0)
    if (std::optional<int64_t> bytes = getTensorBytes(op->getResult(0).getType()))
      os << " bytes=" << *bytes;
  os << "\n";
}

/// Appends @memfit_built_ops: one op of each kind, made by the builders.
void buildOneOfEach(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  Location loc = NameLoc::get(StringAttr::get(ctx, "memfit_built_ops"));
  Type f32 = b.getF32Type();
  auto t48 = RankedTensorType::get({4, 8}, f32);
  auto t816 = RankedTensorType::get({8, 16}, f32);
  auto func = func::FuncOp::create(loc, "memfit_built_ops",
                                   b.getFunctionType({t48, t816}, {}));
  SymbolTable(module).insert(func);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value a = entry->getArgument(0), w = entry->getArgument(1);
  SmallVector<Value> results;

  Value c = buildConstantSplat(b, loc, t48, 1.5);
  results.push_back(c);
  results.push_back(buildIota(b, loc, RankedTensorType::get({8}, b.getI32Type()), 0));
  results.push_back(buildBroadcastInDim(b, loc, RankedTensorType::get({2, 4, 8}, f32),
                                        a, {1, 2}));
  results.push_back(buildReshape(b, loc, RankedTensorType::get({32}, f32), a));
  results.push_back(buildTranspose(b, loc, a, {1, 0}));
  results.push_back(buildConvert(b, loc, RankedTensorType::get({4, 8}, b.getF16Type()), a));
  Value sum = buildElementwise(b, loc, "stablehlo.add", {a, c});
  results.push_back(buildElementwise(b, loc, "stablehlo.exponential", {sum}));
  Value pred = buildCompare(b, loc, a, c, "LT", "FLOAT");
  results.push_back(pred);
  results.push_back(buildSelect(b, loc, pred, a, c));
  DotDims dims;
  dims.lhsContract = {1};
  dims.rhsContract = {0};
  results.push_back(buildDotGeneral(b, loc, RankedTensorType::get({4, 16}, f32), a, w, dims));
  Value zero = buildConstantSplat(b, loc, RankedTensorType::get({}, f32), 0.0);
  results.push_back(buildReduce(b, loc, a, zero, {1}, "stablehlo.add"));
  results.push_back(buildSlice(b, loc, a, {0, 2}, {4, 8}, {2, 3}));
  Value i0 = buildScalarI64(b, loc, 1), i1 = buildScalarI64(b, loc, 0);
  Value slice = buildDynamicSlice(b, loc, a, {i0, i1}, {2, 8});
  results.push_back(slice);
  results.push_back(buildDynamicUpdateSlice(b, loc, a, slice, {i0, i1}));
  results.push_back(buildConcatenate(b, loc, {a, c}, 0));
  results.push_back(buildPad(b, loc, a, zero, {1, 0}, {0, 2}, {0, 1}));
  auto [values, indices] = buildTopK(b, loc, a, 3);
  results.push_back(values);
  results.push_back(indices);
  results.push_back(buildSort(b, loc, {a}, 1, /*isStable=*/true)->getResult(0));
  results.push_back(buildCustomCall(b, loc, "memfit_test_target", {a}, {t48})->getResult(0));

  // while (i < 3) { i = i + 1; x = x + x }
  Value start = buildScalarI64(b, loc, 0);
  Operation *loop = buildWhile(b, loc, {start, a});
  {
    OpBuilder::InsertionGuard g(b);
    Block &cond = loop->getRegion(0).front();
    b.setInsertionPointToStart(&cond);
    Value three = buildScalarI64(b, loc, 3);
    buildReturn(b, loc, buildCompare(b, loc, cond.getArgument(0), three, "LT", "SIGNED"));
    Block &body = loop->getRegion(1).front();
    b.setInsertionPointToStart(&body);
    Value one = buildScalarI64(b, loc, 1);
    Value next = buildElementwise(b, loc, "stablehlo.add", {body.getArgument(0), one});
    Value twice = buildElementwise(b, loc, "stablehlo.add",
                                   {body.getArgument(1), body.getArgument(1)});
    buildReturn(b, loc, {next, twice});
  }
  results.push_back(loop->getResult(1));

  func::ReturnOp::create(b, loc, results);
  func.setFunctionType(b.getFunctionType({t48, t816}, ValueRange(results).getTypes()));
}

struct MemfitTestOpViewsPass
    : memfit::impl::MemfitTestOpViewsBase<MemfitTestOpViewsPass> {
  using MemfitTestOpViewsBase::MemfitTestOpViewsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (mode != "read" && mode != "build") {
      module.emitError() << "memfit-test-op-views: unknown mode '" << mode
                         << "' (expected 'read' or 'build')";
      return signalPassFailure();
    }
    if (mode == "build")
      buildOneOfEach(module);
    if (failed(verifyOpInvariants(module)))
      return signalPassFailure();
    std::string text;
    llvm::raw_string_ostream os(text);
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f.isExternal())
        continue;
      os << "func @" << f.getSymName() << "\n";
      f.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (op != f.getOperation() && lookupOpInfo(op))
          describe(op, os);
      });
    }
    if (output == "-") {
      llvm::outs() << text;
      llvm::outs().flush();
    } else {
      std::string error;
      auto file = openOutputFile(output, &error);
      if (!file) {
        module.emitError() << "memfit-test-op-views: " << error;
        return signalPassFailure();
      }
      file->os() << text;
      file->keep();
    }
    if (mode == "read")
      markAllAnalysesPreserved();
  }
};

} // namespace
