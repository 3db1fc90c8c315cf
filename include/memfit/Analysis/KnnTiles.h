//===- KnnTiles.h - how the exact kNN's candidate stage is tiled -*- C++ -*-===//
//
// The exact nearest-neighbour rewrite takes its candidates from block maxima
// of the expanded distances, computed in a two-level loop: query chunks of C
// rows, and inside each chunk tiles of NB points whose [C, NB] distance tile
// the GEMM runs efficiently on (several L2 caches). This model picks B
// (TopKCost's two-stage model with a candidate's cost growing with d: its
// gathered row and exact distance), NB and C (from the L2 size), S (the rows
// whose candidates are made at once), the wider second pass of the rows
// whose certificate fails, and bounds them by a memory budget.
//
//===----------------------------------------------------------------------===//
#ifndef MEMFIT_ANALYSIS_KNNTILES_H
#define MEMFIT_ANALYSIS_KNNTILES_H

#include "mlir/IR/Types.h"

#include <cstdint>
#include <optional>

namespace memfit {

/// What the caller knows of the machine and the limit.
struct KnnTileOptions {
  /// Bytes of one core's L2 cache; 0: this host's (1 MiB when unknown).
  int64_t cacheBytes = 0;
  /// Bytes the loop's temporaries may take; < 0: no limit.
  int64_t budgetBytes = -1;
};

/// The two-level loop's sizes for m queries against n points of d features.
struct KnnTiles {
  int64_t chunk;      // C: queries per chunk of the outer loop
  int64_t block;      // B: points per block (one maximum each)
  int64_t tileBlocks; // blocks per tile of the inner loop (NB = tileBlocks * B)
  int64_t blocks;     // full blocks, n / B (the last n mod B points are always candidates)
  int64_t keptBlocks; // blocks whose points become candidates (k + 8)
  int64_t subChunk;   // S: rows whose candidates are made at once (<= C)
  int64_t widerBlocks; // blocks of the second pass for rows failing at keptBlocks (== keptBlocks: none)
  int64_t widerPart;   // rows of the second pass made at once (<= S)
  /// Modelled bytes of one chunk's temporaries (what the budget bounds).
  int64_t chunkBytes;
};

/// The sizes for top_k(-d, k) of `et` distances, or none when block maxima
/// do not pay for rows of n (TopKCost) or one query's chunk exceeds the budget.
std::optional<KnnTiles> chooseKnnTiles(mlir::Type et, int64_t m, int64_t n, int64_t d,
                                       int64_t k, const KnnTileOptions &opts);

/// Bytes of one core's L2 cache on this host (sysconf), or 1 MiB.
int64_t hostL2Bytes();

} // namespace memfit

#endif
