// When the greedy split steps get stuck (several oversized values live
// together, so no loop fits while the others are whole), the probe's plans
// are replayed as projected steps. A projected loop that fits the limit on
// its own takes the largest chunk that does, as a greedy step's loop would;
// only a loop that values split by later steps keep over the limit is sized
// by the budget of what it may add.
// RUN: memfit-opt %S/Inputs/clip-loss-grad.mlir --pass-pipeline='builtin.module(memfit-split{memory-limit=10860})' | FileCheck %s

// A CLIP-style contrastive loss's value and gradient (B = 64, d = 4; jax's
// program after memfit-inline), at its arguments and outputs + 1/8 of jax's
// temporaries. The loops of steps 0 and 2 read the [64, 64] logits beside
// other whole [64, 64] values and take one row (the budget); those of steps
// 1 and 3 fit the limit beside what lives around them and take 3 columns
// and 32 rows, where the budget alone gave 1 and 2.
// CHECK-LABEL: func.func public @main
// CHECK:       memfit.split = {chunk = 32 : i64, {{.*}}kind = "first-of-two-passes"{{.*}}step = 3 : i64
// CHECK:       memfit.split = {chunk = 1 : i64, {{.*}}step = 0 : i64
// CHECK:       memfit.split = {chunk = 3 : i64, {{.*}}dim = 1 : i64{{.*}}step = 1 : i64
// CHECK:       memfit.split = {chunk = 1 : i64, {{.*}}kind = "accumulate"{{.*}}step = 2 : i64
