//===- Pipeline.cpp - memfit's plain C++ entry points ----------------------===//
#include "memfit/API/Pipeline.h"

#include "memfit/Analysis/ProfileReport.h"
#include "memfit/IR/OpViews.h"
#include "memfit/Support/ByteSize.h"
#include "memfit/Support/Diagnostics.h"
#include "memfit/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace memfit {

std::string Diagnostic::str() const {
  std::string s = location + ": " + severity + ": " + message;
  if (!sourceLine.empty())
    s += " [at " + sourceLine + "]";
  return s;
}

std::string PipelineResult::diagnosticsText() const {
  std::string s;
  for (const Diagnostic &d : diagnostics)
    s += d.str() + "\n";
  return s;
}

namespace {

const char *severityName(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Error: return "error";
  case DiagnosticSeverity::Warning: return "warning";
  case DiagnosticSeverity::Note: return "note";
  case DiagnosticSeverity::Remark: return "remark";
  }
  return "error";
}

std::string locationText(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return s;
}

/// A context that reads what jax and other producers emit: func and arith
/// registered, every other dialect (stablehlo, chlo, sdy, mhlo) unregistered.
void configureContext(MLIRContext &ctx) {
  DialectRegistry registry;
  registry.insert<func::FuncDialect, arith::ArithDialect>();
  ctx.appendDialectRegistry(registry);
  ctx.loadAllAvailableDialects();
  ctx.allowUnregisteredDialects();
  ctx.disableMultithreading();
}

/// Collects diagnostics (notes included) instead of printing them.
struct DiagnosticCollector {
  DiagnosticCollector(MLIRContext &ctx, std::vector<memfit::Diagnostic> &out)
      : handler(&ctx, [&out](mlir::Diagnostic &d) {
          record(d, out);
          for (mlir::Diagnostic &note : d.getNotes())
            record(note, out);
          return success();
        }) {}
  static void record(mlir::Diagnostic &d, std::vector<memfit::Diagnostic> &out) {
    out.push_back({severityName(d.getSeverity()), d.str(),
                   locationText(d.getLocation()),
                   getUserSourceLine(d.getLocation())});
  }
  ScopedDiagnosticHandler handler;
};

void addError(PipelineResult &r, std::string message) {
  r.ok = false;
  r.diagnostics.push_back({"error", std::move(message), "memfit", ""});
}

/// Parses `text`; on failure `result` says why (the parser's diagnostics,
/// or a generic message when it gave none).
OwningOpRef<ModuleOp> parseModule(MLIRContext &ctx, const std::string &text,
                                  PipelineResult &result) {
  ParserConfig config(&ctx);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config, "-");
  if (!module && result.diagnostics.empty())
    addError(result, "could not parse the module");
  return module;
}

std::string printModule(ModuleOp module, const PipelineOptions &options) {
  std::string s;
  llvm::raw_string_ostream os(s);
  OpPrintingFlags flags;
  if (options.printGeneric)
    flags.printGenericOpForm();
  if (options.debugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(os, flags);
  return s;
}

/// The pass list inside an optional `builtin.module(...)` anchor: the pass
/// manager is already anchored on the module.
std::string unanchored(const std::string &pipeline) {
  llvm::StringRef p = llvm::StringRef(pipeline).trim();
  if (p.consume_front("builtin.module(") && p.consume_back(")"))
    return p.trim().str();
  return p.str();
}

} // namespace

PipelineResult runPipeline(const std::string &moduleText, const std::string &pipeline,
                           const PipelineOptions &options) {
  registerMemfitPasses();
  PipelineResult result;
  MLIRContext ctx;
  configureContext(ctx);
  DiagnosticCollector collector(ctx, result.diagnostics);

  OwningOpRef<ModuleOp> module = parseModule(ctx, moduleText, result);
  if (!module)
    return result;
  PassManager pm(&ctx, ModuleOp::getOperationName());
  std::string pipelineError;
  llvm::raw_string_ostream errs(pipelineError);
  // An empty pipeline is the identity (parsePassPipeline rejects
  // `builtin.module()`); the module still gets parsed, recorded and printed.
  if (!llvm::StringRef(pipeline).trim().empty() &&
      failed(parsePassPipeline(unanchored(pipeline), pm, errs))) {
    addError(result, "invalid pass pipeline '" + pipeline + "': " + pipelineError);
    return result;
  }
  if (failed(pm.run(*module))) {
    if (result.diagnostics.empty())
      addError(result, "pass pipeline '" + pipeline + "' failed");
    result.ok = false;
    return result;
  }
  if (options.recordPipeline) {
    std::string ran;
    llvm::raw_string_ostream os(ran);
    pm.printAsTextualPipeline(os);
    (*module)->setAttr("memfit.pipeline", StringAttr::get(&ctx, ran));
  }
  result.output = printModule(*module, options);
  result.ok = true;
  return result;
}

PipelineResult profileModuleText(const std::string &moduleText, unsigned top,
                                 bool timeline) {
  registerMemfitPasses();
  PipelineResult result;
  MLIRContext ctx;
  configureContext(ctx);
  DiagnosticCollector collector(ctx, result.diagnostics);
  OwningOpRef<ModuleOp> module = parseModule(ctx, moduleText, result);
  if (!module)
    return result;
  PassManager pm(&ctx, ModuleOp::getOperationName());
  pm.addPass(createMemfitInline());
  if (failed(verifyOpInvariants(*module)) || failed(pm.run(*module)))
    return result;
  FailureOr<std::vector<FunctionProfile>> profiles = profileModule(*module);
  if (failed(profiles))
    return result;
  result.output = renderProfileJson(*profiles, {top, timeline});
  result.ok = true;
  return result;
}

std::optional<int64_t> parseMemorySize(const std::string &text, std::string &error) {
  return parseByteSize(text, error);
}

} // namespace memfit
