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

def MemfitSplit : Pass<"memfit-split", "::mlir::ModuleOp"> {
  let summary = "Rewrite the computations around oversized tensors into loops over chunks";
  let description = [{
    Finds the tensors that push a function over `memory-limit` (the
    fusion-aware profile of memfit-profile: arguments + outputs + temporaries,
    as XLA counts argument + output + temp) and rewrites the computation that
    produces and consumes each into a `stablehlo.while` over chunks of one
    dimension, so the tensor is never materialised whole. How far a split
    travels is decided by the per-op dimension table (DimMapping.h): through
    ops that pass the dimension through, ending where it is reduced
    (accumulated with the reducer), contracted (accumulated dot), taken by
    chlo.top_k (running top-k) or lands in a result (dynamic_update_slice).
    Chunks are static; a size that does not divide gets a straight-line
    remainder step. When the limit cannot be met the function is left as it
    was and an error names the op, the user's source line and the smallest
    limit memfit can reach. Run memfit-inline first. With
    `minor-contraction`, an accumulated dot whose lhs is contracted on its
    major dimension is written with the lhs contracted on its minor one
    (XLA:CPU's ynn fusions take only those; memfit's XLA pipeline sets it).
  }];
  let options = [
    Option<"memoryLimit", "memory-limit", "std::string", /*default=*/"\"\"",
           "Memory limit: bytes, or with a unit (KB/MB/GB = 1000^n, KiB/MiB/GiB = 1024^n)">,
    Option<"tempMargin", "temp-margin", "double", /*default=*/"2.0",
           "How many times over a loop's modelled temporaries are budgeted "
           "when choosing its chunk size (> 0; memfit.jit calibrates it "
           "against XLA's memory analysis)">,
    Option<"minorContraction", "minor-contraction", "bool", /*default=*/"false",
           "Write accumulated dots whose lhs is contracted on its major dimension "
           "so that the lhs is contracted on its minor one (operands swapped, or "
           "the smaller one transposed behind an optimization_barrier): XLA:CPU's "
           "ynn fusions take only those (lib/Transforms/Split/MinorContraction.h)">,
  ];
}

def MemfitRewrite : Pass<"memfit-rewrite", "::mlir::ModuleOp"> {
  let summary = "Algebraic rewrites that shrink intermediates";
  let description = [{
    Rewrites that keep the math and avoid big temporaries (each switchable).
    None may make a result less accurate against float64 than the program
    was (README, "numerics contract"):
     * `distance`: the k nearest neighbours top_k(-sum((q - x)^2)) through
       one GEMM, exactly: candidates from the expanded distances of centred
       data, their distances recomputed as written, a rounding-error
       certificate per row, and an exact loop over rows it does not certify;
     * `fast-distance` (off by default): every sum((x - y)^2) over a
       dimension both carry, with x and y broadcasts of smaller tensors,
       -> |x|^2 + |y|^2 - 2 x.y (one GEMM), for squares written as
       multiply(d, d), power(d, 2) or chlo.square, also of |d| for real d,
       batch dims too. Its error grows with |x|^2 + |y|^2: opt-in;
     * `matrix-chain`: chains of matrix products (through transposes)
       re-associated by dynamic programming on FLOPs ((A B) v -> A (B v));
     * `reduce-to-dot`: sum(a * b) over a shared dimension -> dot_general;
     * `factor-sums`: a sum of matrix products sharing a factor,
       G1 A + G2 A -> (G1 + G2) A (jax's gradient of a Gram matrix A A^T);
     * `top-k`: chlo.top_k over a long row -> top_k of block maxima picks k
       blocks, top_k of their elements finishes; exact, ties and NaN as
       lax.top_k. memfit's pipeline runs it after memfit-split (with the
       other rewrites off), so that split loops see one top_k and their
       chunks get the two-stage form;
     * `invariant-solve`: a triangular solve (jax's lapack trsm) in a loop
       body against a factor the loop carries unchanged -> blocked
       substitution: the inverses of op(A)'s diagonal blocks formed once
       before the loop, every flop in the loop a GEMM, one refinement step
       per block; as accurate as the solve against float64 on
       ill-conditioned factors (test_invariant_solve.py);
     * `scale-after-dot`: in split loops (loops memfit-split made),
       dot(x * broadcast(c), y) -> dot(x, y) * broadcast(c) (also x / c)
       when c varies only along dimensions the result keeps, every reader
       of x * c is such a dot, and the result is smaller than x (a split
       attention's dS = P (dP - rowsum) scale, then dS k);
     * `batched-gemv`: in split loops, a batched matrix-vector dot_general
       (one operand has only batch and contracting dimensions) whose matrix
       operand's batch dimensions do not lead (a decode step's q against a
       [B, S, H, D] cache chunk) -> reduce(add, broadcast(vector) * matrix),
       which XLA:CPU runs in one fused loop over the matrix as it lies
       instead of copying it batch-first for a library dot.
    Rewrites change rounding (see README for the contract). Ops they replace
    are erased.
  }];
  let options = [
    Option<"distance", "distance", "bool", /*default=*/"true",
           "Exact k nearest neighbours through a GEMM (certified candidates)">,
    Option<"memoryLimit", "memory-limit", "std::string", /*default=*/"\"\"",
           "The function's memory limit (as memfit-split's): bounds the query chunk of "
           "the nearest-neighbour rewrite's two-level loop">,
    Option<"tempMargin", "temp-margin", "double", /*default=*/"2.0",
           "Budget the two-level loop's temporaries this many times over (as memfit-split)">,
    Option<"cacheBytes", "cache-bytes", "int64_t", /*default=*/"0",
           "One core's L2 cache in bytes for the two-level loop's tiles (0: this host's)">,
    Option<"fastDistance", "fast-distance", "bool", /*default=*/"false",
           "Expand every squared distance into norms and a dot product (less accurate)">,
    Option<"topK", "top-k", "bool", /*default=*/"true",
           "Exact two-stage top_k over long rows (block maxima, then candidates)">,
    Option<"invariantSolve", "invariant-solve", "bool", /*default=*/"true",
           "Loop-invariant triangular solves: blocked substitution with the diagonal blocks' "
           "inverses formed once, GEMMs per iteration">,
    Option<"matrixChain", "matrix-chain", "bool", /*default=*/"true",
           "Re-associate chains of matrix products">,
    Option<"reduceToDot", "reduce-to-dot", "bool", /*default=*/"true",
           "Turn sums of broadcast products into dot_general">,
    Option<"factorSums", "factor-sums", "bool", /*default=*/"true",
           "Factor a shared matrix out of a sum of products (G1 A + G2 A -> (G1 + G2) A)">,
    Option<"scaleAfterDot", "scale-after-dot", "bool", /*default=*/"true",
           "In split loops, dot(x * broadcast(c), y) -> dot(x, y) * broadcast(c) when c "
           "varies along dims the result keeps and the result is smaller than x">,
    Option<"batchedGemv", "batched-gemv", "bool", /*default=*/"true",
           "In split loops, batched matrix-vector dots whose matrix's batch dims do not "
           "lead -> multiply + reduce (no batch-first copy of the matrix)">,
  ];
}

def MemfitExportBuffers : Pass<"memfit-export-buffers", "::mlir::ModuleOp"> {
  let summary = "Write a function's schedule and buffers as a memory-space-assignment instance";
  let description = [{
    Writes the instance JSON of python/memfit/msa/instance.py for one
    function: the schedule (one entry per fusion root or materialising op,
    following memfit-profile's fusion model; fused producers are folded into
    their consumer), every buffer XLA would materialise (size, live interval
    [start, end] in schedule positions, uses, kind argument/output/temp),
    per-op FLOPs (dot_general 2*M*N*K*batch, elementwise one per element,
    reduce one per input element) and bytes, the device preset and the
    capacity of fast memory. A stablehlo.while is one sub-schedule weighted
    by its trip count (read from the cond's compare against a constant), not
    unrolled. Run memfit-inline first. The IR is not changed.
  }];
  let options = [
    Option<"deviceName", "device", "std::string", /*default=*/"\"h200\"",
           "Device preset: h200, tpu-like or cpu (numbers and sources in lib/Analysis/CostModel.cpp)">,
    Option<"capacity", "capacity", "std::string", /*default=*/"\"50%\"",
           "Fast-memory capacity: bytes (\"1GiB\", \"1048576\") or a percentage of the function's fusion-aware peak (\"50%\")">,
    Option<"mode", "mode", "std::string", /*default=*/"\"offload\"",
           "offload (device vs host memory) or placement (scratchpad vs HBM)">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the instance (`-` is stdout)">,
    Option<"program", "program", "std::string", /*default=*/"\"\"",
           "Program name recorded in the instance (default: the module's name)">,
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "Function to export (default: main, else the first public function)">,
  ];
}

def MemfitAssignMemorySpace : Pass<"memfit-assign-memory-space", "::mlir::ModuleOp"> {
  let summary = "Write a memory-space assignment into the program as jax's host-offload annotations";
  let description = [{
    Reads a solution (python/memfit/msa/solution.py) for the instance that
    memfit-export-buffers wrote for this module, and for each buffer with
    space "slow" (or "fast" with evict_after) inserts, as jax does for
    jax.device_put(x, jax.memory.Space.Host) inside jit,
    `stablehlo.custom_call @annotate_device_placement` with
    `mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}` after
    the producer (or after evict_after), and a second one with "device"
    before the uses (one per prefetch group), which then read it. Placement
    solutions are score-only and leave the module unchanged. policy=heuristic
    is served by the Python API (memfit.msa.offload.offload_pipeline).
  }];
  let options = [
    Option<"assignment", "assignment", "std::string", /*default=*/"\"\"",
           "The solution JSON file">,
    Option<"policy", "policy", "std::string", /*default=*/"\"file\"",
           "file: read `assignment` (heuristic/exact: use the Python API)">,
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "Function the solution is for (default: main, else the first public function)">,
  ];
}

#endif // MEMFIT_TRANSFORMS_PASSES
