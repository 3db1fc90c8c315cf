//===- Passes.td - memfit pass declarations ------------------*- tablegen -*-===//
//
// Every memfit pass and its options. Passes run on `builtin.module` because
// StableHLO arrives as unregistered operations inside `func.func`s, and some
// passes (inlining, profiling across calls) need the whole symbol table.
//
//===----------------------------------------------------------------------===//

#ifndef MEMFIT_TRANSFORMS_PASSES
#define MEMFIT_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def MemfitInline : Pass<"memfit-inline", "::mlir::ModuleOp"> {
  let summary = "Inline func.call of private functions whose bodies are StableHLO";
  let description = [{
    jax lowers helpers (`jax.nn.relu`, softmax, `jnp.where`) to `func.call`s of
    private functions. MLIR's own inliner refuses bodies made of unregistered
    operations (they have no inliner interface), so memfit inlines them itself:
    every `func.call` to a function with a body in this module is replaced by a
    clone of the body, and private functions left without callers are erased.
    Recursive call graphs are rejected with an error and the module is left as
    it was.
  }];
}

def MemfitProfile : Pass<"memfit-profile", "::mlir::ModuleOp"> {
  let summary = "Report the bytes live at each point of each function (fusion-aware)";
  let description = [{
    For each function: the bytes live at each op of the op order (nested
    regions included), the peak, and the largest tensors live at the peak with
    their source locations. Models XLA's fusion: elementwise producers with one
    fusible consumer are not materialised; dot operands and results, sort and
    top_k inputs, values with several consumers and loop-carried values are.
    Arguments and results count, as in XLA's argument + output + temp.
    The IR is not changed.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"table\"",
           "Report format: `table` or `json`">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report (`-` is stdout)">,
    Option<"top", "top", "unsigned", /*default=*/"5",
           "How many of the largest tensors live at the peak to list">,
    Option<"timeline", "timeline", "bool", /*default=*/"false",
           "Include the per-op timeline in the table format">,
  ];
}

#endif // MEMFIT_TRANSFORMS_PASSES
