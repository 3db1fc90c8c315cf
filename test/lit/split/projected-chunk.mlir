// When the greedy split steps get stuck (several oversized values live
// together, so no loop fits while the others are whole), the probe's plans
// are replayed as projected steps. A projected loop that fits the limit on
// its own takes the largest chunk that does, as a greedy step's loop would;
// only a loop that values split by later steps keep over the limit is sized
// by the budget of what it may add.
// RUN: memfit-opt %S/Inputs/preln-block-sgd.mlir --pass-pipeline='builtin.module(memfit-split{memory-limit=120000})' | FileCheck %s

// A pre-layernorm transformer block's SGD step (S = 96, d = 16, 4 heads of
// 4, MLP 4x; jax's program after memfit-inline) at its arguments and
// outputs + 1/6 of jax's temporaries. The greedy steps split the [4, 96, 96]
// scores by keys until no plan fits; the probe's plan is two loops over the
// rows. The first reads the scores beside the whole values the second
// splits and takes one row (the budget); the second fits the limit beside
// what lives around it and takes 3 rows, where the budget alone gives 1.
// CHECK-LABEL: func.func public @main
// CHECK:       memfit.split = {chunk = 1 : i64, chunks = 96 : i64, {{.*}}kind = "first-of-two-passes"{{.*}}step = 0 : i64
// CHECK:       memfit.split = {chunk = 3 : i64, chunks = 32 : i64, {{.*}}kind = "accumulate"{{.*}}step = 1 : i64
