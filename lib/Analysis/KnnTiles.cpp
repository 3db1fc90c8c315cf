//===- KnnTiles.cpp - how the exact kNN's candidate stage is tiled --------===//
//
// The tile: C queries x NB points. Its distances ([C, NB]), the centred
// points ([NB, d]) and the centred queries ([C, d]) should stay in L2 while
// the GEMM writes the tile and the key maxima read it back: kL2Share of L2.
// Measured by hand (bench/bench_knn_tiles.py, README): 400 x 800 tiles
// (1.3 MB of a 2 MiB L2, 0.68 of it with the point and query tiles) ran at
// 0.69x the one-level loop. The number of tile iterations, m n / (C NB), is
// fixed by the area; NB = 2 C (the hand form's shape) reads each point tile
// for as many queries as fit while keeping the GEMM's rows long.
// Swept afterwards (bench_knn_tiles.py --sweep, README): against a 3 x 3
// grid of C and NB around the pick, on four shapes (D = 3, 16, 32, 128),
// the pick was within 4-6% of the best CPU time, and 11-15% at D = 3.
// D = 3 wanted smaller tiles and D = 128 longer ones, so no one rule won.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/KnnTiles.h"

#include "memfit/Analysis/TopKCost.h"

#include <algorithm>
#include <cmath>
#include <unistd.h>

using namespace memfit;

namespace {

constexpr double kL2Share = 0.65;
constexpr int64_t kTileLength = 4;
constexpr int64_t kUnknownL2 = 1 << 20;

int64_t elementBytes(mlir::Type et) { return et.getIntOrFloatBitWidth() / 8; }

/// The last of ceil(n / size) slices starts early so that it ends at n, and
/// recomputes what the one before covered: the smallest size (a multiple of
/// `multiple` when size was) that keeps their number leaves the least.
int64_t balanced(int64_t n, int64_t size, int64_t multiple) {
  int64_t count = (n + size - 1) / size;
  int64_t even = (n + count - 1) / count;
  if (size % multiple == 0)
    even = (even + multiple - 1) / multiple * multiple;
  return std::min(size, even);
}

/// Modelled temporaries of one query chunk: the block maxima (keys, and the
/// float image top_k reads), the distance tile and its keys, the point tile
/// with its norms, and the candidates (positions, gathered rows, distances).
/// The gathered rows count whole, as memfit's profile counts them (XLA fuses
/// the gather into the distances' reduction): memfit-split acts on that
/// profile.
int64_t chunkBytes(int64_t c, int64_t tile, int64_t blocks, int64_t cand, int64_t d,
                   int64_t s) {
  int64_t perQuery = 2 * blocks * s + 2 * tile * s + cand * (4 + d * s + s) + 2 * d * s;
  return c * perQuery + tile * (d + 1) * s;
}

} // namespace

int64_t memfit::hostL2Bytes() {
#ifdef _SC_LEVEL2_CACHE_SIZE
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 > 0)
    return l2;
#endif
  return kUnknownL2;
}

std::optional<KnnTiles> memfit::chooseKnnTiles(mlir::Type et, int64_t m, int64_t n,
                                               int64_t d, int64_t k,
                                               const KnnTileOptions &opts) {
  int64_t kept = k + 8;
  std::optional<TwoStageBlocks> two = twoStageTopK(et, n, kept);
  if (!two || m < 1 || d < 1)
    return std::nullopt;
  int64_t s = elementBytes(et), block = two->block, blocks = n / block;
  int64_t cand = kept * block + n % block;
  // The tile's elements, NB = 2 C: C NB + (NB + C) d elements in the L2 share.
  double elems = kL2Share * static_cast<double>(opts.cacheBytes > 0 ? opts.cacheBytes
                                                                     : hostL2Bytes()) /
                 static_cast<double>(s);
  double c0 = (-1.5 * d + std::sqrt(2.25 * d * d + 2.0 * elems)) / 2.0;
  int64_t tileBlocks = balanced(
      blocks, std::clamp<int64_t>(std::llround(2.0 * c0 / block), 1, blocks), 1);
  int64_t tile = tileBlocks * block;
  int64_t chunk = static_cast<int64_t>((elems - tile * d) / (tile + d));
  // The chunk fills the L2 share with an NB = 2C tile; the tile itself is
  // then kTileLength times longer. Measured on the quiet machine (README,
  // bench_knn_tiles.py --sweep): 4x longer tiles at the same chunk ran at
  // 0.82x (D=32), 0.83x (D=3), 1.00x (D=16) and, loaded, 0.96-0.97x
  // (D=128) of the L2-sized tile's time: a longer GEMM per iteration keeps
  // both cores busy and halves the loop's per-tile overhead, while the
  // block maxima still read the tile back in one pass.
  tileBlocks = balanced(blocks, std::min<int64_t>(blocks, tileBlocks * kTileLength), 1);
  tile = tileBlocks * block;
  if (chunk >= 16)
    chunk -= chunk % 8;
  chunk = std::clamp<int64_t>(chunk, 1, m);
  if (opts.budgetBytes >= 0) {
    while (chunk > 1 && chunkBytes(chunk, tile, blocks, cand, d, s) > opts.budgetBytes)
      chunk = chunk > 16 ? chunk - std::max<int64_t>(8, chunk / 16) : chunk - 1;
    if (chunkBytes(chunk, tile, blocks, cand, d, s) > opts.budgetBytes)
      return std::nullopt;
  }
  chunk = balanced(m, chunk, 8);
  return KnnTiles{chunk, block, tileBlocks, blocks, kept,
                  chunkBytes(chunk, tile, blocks, cand, d, s)};
}
