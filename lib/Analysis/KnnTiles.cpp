//===- KnnTiles.cpp - how the exact kNN's candidate stage is tiled --------===//
//
// The tile: C queries x NB points, whose [C, NB] GEMM output the block
// maxima read back. Measured on this 2-core machine in jax's defaults
// (README, "Tiles sized for the GEMM", hand replicas of the loop, N = 200k,
// M = 2k, D = 32): the GEMM is most of the time, and it runs fastest, on
// both cores, when the tile is large: C = 250, NB = 3,040 (the earlier
// L2-sized pick) 0.36 s; C = 500, NB = 4,000: 0.30 s; C = 500, NB = 8,000
// or C = 1,000, NB = 4,000 (16 MiB of distances, 8x one core's L2): 0.27 s;
// C = 1,000, NB = 2,016: 0.32 s. Those five fit t0 + a / C + b / NB with
// b = 8 a (kAspect) within 0.01 s: a chunk costs the re-centring of every
// point tile, a tile the loop's per-iteration work. The pick minimises
// that model among the sizes whose modelled bytes fit the budget, with
// tiles of at most kTileL2Multiple L2s (16 MiB here: not measured beyond).
// The candidates (stage 2') are made S rows at a time (subChunk): their
// gathered rows, S x KB B x D, would otherwise cap C. Rows whose
// certificate fails at KB = k + 8 blocks get a second pass over
// kWiderFactor KB blocks, fewer rows at a time so that its candidates take
// no more than the first pass's.
//
//===----------------------------------------------------------------------===//
#include "memfit/Analysis/KnnTiles.h"

#include "memfit/Analysis/TopKCost.h"

#include <algorithm>
#include <cmath>
#include <unistd.h>

using namespace memfit;

namespace {

constexpr int64_t kTileL2Multiple = 8;
constexpr double kAspect = 8.0;
constexpr int64_t kPartL2Multiple = 8;
constexpr int64_t kUnknownL2 = 1 << 20;
/// ns per kNN candidate: the two-stage top-k's per-candidate cost, and per
/// feature of its gathered row and exact distance. Fitted to hand replicas
/// of the loop at N = 50k, M = 4k, D = 256, k = 100 (bench_knn_tiles.py
/// --floor --blocks 4,5,10,20 --shapes 3; AMD EPYC, 2 shared cores): B = 4,
/// 5, 10, 20 took 1.66, 1.80, 2.22 and 3.04x the GEMM alone's CPU time,
/// about 200 ns a candidate. Blocks down to kMinBlock: B = 4 was the
/// fastest measured.
constexpr double kCandidateNanos = 20.0;
constexpr double kCandidateFeatureNanos = 0.7;
constexpr int64_t kMinBlock = 4;
/// The second pass's blocks, in first passes' (KB). Clustered data
/// (bench_knn_tiles.py --floor, N = 100k, M = 2k, D = 128, k = 50) fails
/// 1,990 of 2,000 rows at KB blocks and none at 2 KB.
constexpr int64_t kWiderFactor = 2;

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

/// Modelled temporaries of one query chunk of c rows: its block maxima
/// (keys) and centred queries, live throughout, and the larger of its two
/// stages, which run one after the other (XLA reuses one's buffers for the
/// other's): the tile loop's [c, tile] distances and centred point tile
/// with its norms, or one part of `part` rows in stage 2' (the float image
/// of its maxima, and its candidates: positions, gathered rows,
/// distances; the second pass's parts likewise). The gathered rows count whole, as memfit's profile counts
/// them: memfit-split acts on that profile.
int64_t chunkBytes(int64_t c, int64_t tile, int64_t part, int64_t blocks, int64_t cand,
                   int64_t widerPart, int64_t widerCand, int64_t d, int64_t s) {
  int64_t tileStage = c * tile * s + tile * (d + 1) * s;
  auto partBytes = [&](int64_t rows, int64_t cands) {
    return rows * (blocks * s + cands * (4 + d * s + s));
  };
  int64_t partStage = std::max(partBytes(part, cand), partBytes(widerPart, widerCand));
  return c * (blocks * s + 2 * d * s + s) + std::max(tileStage, partStage);
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
  // Whether block maxima pay: the two-stage top-k's model. Which block: the
  // same model with what a kNN candidate costs, its gathered row and its
  // distance by the program's formula, which grow with d.
  std::optional<TwoStageBlocks> two = twoStageTopK(et, n, kept);
  if (!two || m < 1 || d < 1)
    return std::nullopt;
  std::optional<TwoStageBlocks> cheapest =
      cheapestBlock(n, kept, kCandidateNanos + kCandidateFeatureNanos * d, kMinBlock);
  int64_t s = elementBytes(et), block = cheapest ? cheapest->block : two->block;
  int64_t blocks = n / block;
  int64_t cand = kept * block + n % block;
  // The second pass only when it leaves blocks unpicked: its certificate
  // needs an unpicked block's bound.
  int64_t wider = kWiderFactor * kept < blocks ? kWiderFactor * kept : kept;
  int64_t widerCand = wider * block + n % block;
  int64_t l2 = opts.cacheBytes > 0 ? opts.cacheBytes : hostL2Bytes();
  int64_t partRowBytes = blocks * s + cand * (4 + d * s + s);
  // The tile of `area` elements for a chunk of c queries, the part of c
  // whose candidates are made at once, and their bytes.
  struct Pick {
    int64_t chunk, tileBlocks, part, widerPart, bytes;
  };
  auto pick = [&](int64_t c, double area) {
    int64_t tb = balanced(
        blocks,
        std::clamp<int64_t>(std::llround(area / static_cast<double>(c * block)), 1, blocks), 1);
    int64_t part = balanced(c, std::clamp<int64_t>(kPartL2Multiple * l2 / partRowBytes, 1, c), 8);
    int64_t widerPart = balanced(part, std::clamp<int64_t>(part * cand / widerCand, 1, part), 1);
    return Pick{c, tb, part, widerPart,
                chunkBytes(c, tb * block, part, blocks, cand, widerPart, widerCand, d, s)};
  };
  auto fits = [&](const Pick &p) { return opts.budgetBytes < 0 || p.bytes <= opts.budgetBytes; };
  auto fewer = [](int64_t c) { return c > 16 ? c - std::max<int64_t>(8, c / 16) : c - 1; };
  // The modelled time per query and point is t0 + a / C + b / NB, b = kAspect
  // a (README, fitted to the measured picks above): the fitting pick with
  // the least 1 / C + kAspect / NB, over tile areas from kTileL2Multiple
  // L2s down (halving) and chunks from all m queries down. At one area the
  // best chunk has NB = kAspect C.
  auto cost = [&](const Pick &p) {
    return 1.0 / static_cast<double>(p.chunk) +
           kAspect / static_cast<double>(p.tileBlocks * block);
  };
  std::optional<Pick> best;
  for (double area = static_cast<double>(kTileL2Multiple * l2 / s);
       area >= static_cast<double>(block); area /= 2)
    for (int64_t c = m; c >= 1; c = fewer(c)) {
      Pick p = pick(c, area);
      if (fits(p) && (!best || cost(p) < cost(*best)))
        best = p;
    }
  if (!best)
    return std::nullopt;
  // Even chunks (the last one recomputes least); the same area leaves the
  // tile a little longer, so keep the uneven pick if that no longer fits.
  Pick p = pick(balanced(m, best->chunk, 8),
                static_cast<double>(best->tileBlocks * block * best->chunk));
  if (!fits(p))
    p = *best;
  return KnnTiles{p.chunk, block, p.tileBlocks, blocks, kept, p.part, wider, p.widerPart,
                  p.bytes};
}
