// When the greedy split steps get stuck (several oversized values live
// together, so no loop fits while the others are whole), the probe's plans
// are replayed as projected steps. A projected loop that fits the limit on
// its own takes the largest chunk that does, as a greedy step's loop would;
// only a loop that values split by later steps keep over the limit is sized
// by the budget of what it may add.
// RUN: memfit-opt %S/Inputs/preln-block-sgd.mlir --pass-pipeline='builtin.module(memfit-split{memory-limit=120000})' | FileCheck %s

// A pre-layernorm transformer block's SGD step (S = 96, d = 16, 4 heads of
// 4, MLP 4x; jax's program after memfit-inline) at its arguments and
// outputs + 1/6 of jax's temporaries. The split is one loop over the rows
// that keeps dq W_q^T for its second pass (Stash.h), after which the rest
// fits whole; it fits the limit beside what lives around it with 3 rows.
// CHECK-LABEL: func.func public @main
// CHECK:       memfit.split = {chunk = 3 : i64, chunks = 32 : i64, {{.*}}kind = "first-of-two-passes"{{.*}}step = 0 : i64
// CHECK-NOT:   memfit.split
