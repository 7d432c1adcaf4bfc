//===- AttentionPlan.cpp - the shape of a CPU attention kernel ------------===//
#include "AttentionPlan.h"

#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Target/CpuSchedule.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::pe;

namespace {

/// Head dims up to this are unrolled into vector code.
constexpr int64_t kMaxHeadDim = 1024;
/// A decode kernel holds at most this many rows.
constexpr int64_t kMaxDecodeRows = 8;

std::optional<int64_t> roundUp(int64_t x, int64_t m) {
  std::optional<int64_t> sum = llvm::checkedAdd(x, m - 1);
  if (!sum)
    return std::nullopt;
  return *sum / m * m;
}

/// At least the scratch buffers a task allocates (AttentionTask::allocate
/// and its variant's): each may take kScratchSkewBytes more than its
/// elements.
constexpr int64_t kTaskScratchBuffers = 24;

/// Bytes of a task's scratch: 4 (rows (D + Dv + Bk + 9) + Bk (D + Dv + 2))
/// (per row: Q, O, the scores, the row statistics, positions, slopes, mask
/// offsets and the scores' max) and the buffers' skews, and for the bf16
/// pair kernels (AMX, vdpbf16ps) the bf16 weights, 2 rows Bk.
std::optional<int64_t> scratchBytes(const AttentionPlan &p) {
  std::optional<int64_t> perRow = llvm::checkedAdd(p.headDim + p.valueDim, p.keysPerTile + 9);
  std::optional<int64_t> perKey = llvm::checkedAdd(p.headDim, p.valueDim + 2);
  if (!perRow || !perKey)
    return std::nullopt;
  std::optional<int64_t> rowBytes = llvm::checkedMul(p.rows, *perRow);
  std::optional<int64_t> keyBytes = llvm::checkedMul(p.keysPerTile, *perKey);
  if (!rowBytes || !keyBytes)
    return std::nullopt;
  std::optional<int64_t> total = llvm::checkedAdd(*rowBytes, *keyBytes);
  std::optional<int64_t> bytes = total ? llvm::checkedMul(*total, int64_t(4)) : std::nullopt;
  if (bytes)
    bytes = llvm::checkedAdd(*bytes, kTaskScratchBuffers * kScratchSkewBytes);
  if (!bytes || (p.kind != AttentionKernelKind::Amx && !p.dotProducts))
    return bytes;
  // The weights as bf16 too: rows x Bk x 2 bytes.
  std::optional<int64_t> weights = llvm::checkedMul(p.rows, p.keysPerTile);
  weights = weights ? llvm::checkedMul(*weights, int64_t(2)) : std::nullopt;
  return weights ? llvm::checkedAdd(*bytes, *weights) : std::nullopt;
}

/// Bytes of the state of one block of queries a task holds (Q, O and the
/// row statistics): 4 rows (D + Dv + 8), overflow-checked.
std::optional<int64_t> blockStateBytes(const AttentionPlan &p) {
  std::optional<int64_t> perRow = llvm::checkedAdd(p.headDim, p.valueDim);
  perRow = perRow ? llvm::checkedAdd(*perRow, int64_t(8)) : std::nullopt;
  std::optional<int64_t> bytes = perRow ? llvm::checkedMul(p.rows, *perRow) : std::nullopt;
  return bytes ? llvm::checkedMul(*bytes, int64_t(4)) : std::nullopt;
}

/// Rows per task: the requested count in whole vectors, fewer when the
/// whole call has fewer (static Sq).
std::optional<int64_t> rowTarget(int64_t requested, int64_t group, int64_t staticQueries,
                                 int64_t lanes) {
  std::optional<int64_t> target = roundUp(std::max(requested, lanes), lanes);
  if (!target || ShapedType::isDynamic(staticQueries))
    return target;
  std::optional<int64_t> all = llvm::checkedMul(std::max<int64_t>(1, staticQueries), group);
  if (!all)
    return target;
  std::optional<int64_t> allRows = roundUp(*all, lanes);
  return allRows ? std::min(*target, *allRows) : target;
}

/// The keys of a decode tile. Its per-tile work is one softmax of at most 8
/// rows, so short tiles cost little, and with the heads walked inside a
/// tile of a paged cache, the other heads' pieces of the tile's rows are
/// still near when read: 16 keys, and 32 over hnd pages (and nhd pages of
/// one KV head, the same rows), where a head's 16 rows of a page lie side by
/// side and a tile of two pages reads two such runs per head. Measured (decode of 8 sequences of 1k..32k keys, GQA
/// 32/8, D = 128, page size 16, Xeon, 2 threads, f32 / bf16, ms, the
/// same rounds): nhd pages 31.8 / 19.0 at 16 keys, 34.5 / 19.3 at 24,
/// 35.1 / 20.4 at 32; dense 31.9 / 22.1 at 16, 31.9 / 21.8 at 32; hnd
/// pages 33.5 / 20.9 at 32, 34.9 / 21.3 at 16. Other ISAs keep 32 keys
/// (not measured there; with 16, LLVM spills address registers in SVE's
/// score loop of a static key count).
int64_t decodeKeysPerTile(const AttentionPlan &p, const CpuTarget &target) {
  const bool headRuns = p.cacheLayout == CacheLayout::hnd ||
                        (p.cacheLayout == CacheLayout::nhd && p.kvHeads == 1);
  if (target.isa != CpuIsa::X86 || headRuns)
    return 32;
  return 16;
}

/// The keys of a tile are a multiple of this: whole key pairs (the bf16
/// pair kernels), whole micro-tiles, whole AMX tiles of 96.
int64_t keyTileMultiple(const AttentionPlan &p) {
  int64_t multiple = p.kind == AttentionKernelKind::Decode
                         ? 2
                         : std::lcm<int64_t>(p.keysPerMicroTile, 2);
  if (p.kind == AttentionKernelKind::Amx)
    multiple = std::lcm<int64_t>(multiple, 96);
  return multiple;
}

/// The tile of keys the task streams, from the target's L1d and L2
/// (CpuSchedule.h): a multiple of the micro-tile's keys and of 2 (bf16
/// pairs); the decode kernel, which has no micro-tile, of 2; AMX takes whole
/// 16-key score tiles and 32-key P V steps (multiples of 96). Decode
/// prefers short tiles (decodeKeysPerTile), the FMA prefill kernel the
/// tiles whose rows stay in L1d (prefillKeysPerTile). Measured (Xeon, 48
/// KiB L1d, 2 threads, f32 causal prefill with llama3 RoPE, D = 128, 64
/// rows, ms, same rounds): GQA 32/8 S = 2048 123.5 / 122.9 / 120.5 / 127.0
/// / 126.5 with 24 / 36 / 48 / 72 / 96 keys; S = 512 9.7 -> 9.0 and MHA
/// S = 2048 133.7 -> 128.7 from 96 keys to 48; bf16 on the FMAs, GQA S =
/// 2048, 125 -> 120.
int64_t keysPerTile(const AttentionPlan &p, const TileAttentionOptions &options) {
  const int64_t multiple = keyTileMultiple(p);
  // Scratch per key: K and S^T; per task: Q, O and the row statistics.
  int64_t bytesPerKey = 4 * (p.headDim + p.valueDim + p.rows + 2);
  int64_t preferred = 96;
  if (p.kind == AttentionKernelKind::Decode)
    preferred = decodeKeysPerTile(p, options.target);
  else if (p.kind == AttentionKernelKind::Tiled)
    preferred = prefillKeysPerTile(options.target, std::max(p.headDim, p.valueDim), p.rows,
                                   multiple);
  return attentionKeysPerTile(options.target, options.blockKeys, multiple, bytesPerKey,
                              p.blockStateBytes, preferred);
}

/// The kind of kernel: decode for at most 8 static rows, else the bf16
/// pair kernels where the options and the target allow them, else Tiled.
void chooseKind(AttentionPlan &p, const TileAttentionOptions &options, int64_t sq) {
  const int64_t lanes = p.lanes;
  // The instructions the bf16 pair dot products become: vdpbf16ps on 512-bit
  // vectors of 16 f32 lanes, BFDOT on NEON's 4 (not SVE's longer ones).
  const CpuIsa isa = options.target.isa;
  const bool dotLanes = (isa == CpuIsa::X86 && lanes == 16) ||
                        (isa == CpuIsa::AArch64 && lanes == 4);
  const bool bf16Dot = options.bf16Dot && dotLanes && p.element.isBF16() &&
                       p.valueDim % lanes == 0;
  if (bf16Dot && p.headDim % 2 == 0) {
    p.kind = AttentionKernelKind::Bf16Dot;
    p.dotProducts = true;
  }
  if (options.amx && isa == CpuIsa::X86 && lanes == 16 && p.element.isBF16() && p.headDim % 32 == 0 &&
      p.valueDim % lanes == 0) {
    p.kind = AttentionKernelKind::Amx;
    p.dotProducts = false;
  }
  std::optional<int64_t> queryRows =
      ShapedType::isDynamic(sq) ? std::nullopt : llvm::checkedMul(sq, p.group);
  if (queryRows && *queryRows <= kMaxDecodeRows && p.headDim % lanes == 0 &&
      p.valueDim % lanes == 0) {
    p.kind = AttentionKernelKind::Decode;
    // Scores as dot products of whole pair vectors.
    p.dotProducts = bf16Dot && p.headDim % (2 * lanes) == 0;
    p.queriesPerTask = std::max<int64_t>(1, sq);
    p.validRows = p.queriesPerTask * p.group;
    p.rows = *roundUp(p.validRows, lanes);
  }
}

} // namespace

namespace {

std::optional<AttentionPlan> planWithOptions(AttentionOp op, const TileAttentionOptions &options,
                                             std::optional<int64_t> queries,
                                             CacheLayout layout) {
  RankedTensorType qType = op.getQuery().getType();
  const int64_t sq = queries.value_or(qType.getDimSize(2));
  std::optional<AttentionHeads> heads = attentionHeads(op);
  if (!heads)
    return std::nullopt;
  const CpuTarget &target = options.target;
  AttentionPlan p;
  p.lanes = target.f32Lanes();
  p.queryHeads = heads->queryHeads;
  p.kvHeads = heads->kvHeads;
  p.headDim = heads->headDim;
  p.valueDim = heads->valueDim;
  if (p.headDim > kMaxHeadDim || p.valueDim > kMaxHeadDim)
    return std::nullopt;
  p.group = p.queryHeads / p.kvHeads;
  p.element = qType.getElementType();
  p.scale = op.getEffectiveScale();
  p.positionMask = PositionMask::of(op);
  if (std::optional<APFloat> alibi = op.getAlibi())
    p.alibiMaxBias = alibi->convertToDouble();
  if (std::optional<APFloat> softcap = op.getSoftcap())
    p.softcap = softcap->convertToDouble();
  p.temperature = op.getTemperatureAttr();
  p.hasMask = bool(op.getMask());
  p.threads = options.threads;
  if (RopeAttr rope = op.getRopeAttr()) {
    p.rotaryDim = rope.getRotaryDim();
    p.rotaryOffset = rope.getRotaryOffset();
    p.ropeStyle = rope.getStyle();
  }
  if (op.getSharedKey()) {
    // Read in place from a dense block, with no rotated pair split between
    // the head's channels and the block's.
    p.sharedKeyDim = op.getSharedKeyDim();
    if (layout != CacheLayout::dense || rotationStraddlesSharedKey(op))
      return std::nullopt;
  }

  int64_t requestedRows = options.rows > 0 ? options.rows : defaultAttentionRows(target);
  std::optional<int64_t> rows = rowTarget(requestedRows, p.group, sq, p.lanes);
  if (!rows)
    return std::nullopt;
  p.queriesPerTask = std::max<int64_t>(1, *rows / p.group);
  std::optional<int64_t> taskRows =
      roundUp(llvm::checkedMul(p.queriesPerTask, p.group).value_or(-1), p.lanes);
  // The task's Q and O rows alone must fit the scratch bound.
  if (!taskRows || *taskRows < 1 || *taskRows > kMaxTaskScratchBytes / 4)
    return std::nullopt;
  p.rows = *taskRows;
  MicroTile tile =
      chooseMicroTile(target.vectorRegisters, p.rows / p.lanes, minFmaChains(target));
  p.rowVectors = tile.vectors;
  p.keysPerMicroTile = tile.columns;
  p.channelsPerMicroTile = tile.columns;
  p.microTileUnroll = kMicroTileUnroll;
  p.maskedChannelsPerMicroTile = maskedMicroTileColumns(tile, target);
  p.decodeAccumulators = decodeAccumulators(target, /*masked=*/false);
  p.decodeMaskedAccumulators = decodeAccumulators(target, /*masked=*/true);

  chooseKind(p, options, sq);
  p.cacheLayout = layout;
  std::optional<int64_t> state = blockStateBytes(p);
  if (!state)
    return std::nullopt;
  p.blockStateBytes = *state;
  p.keysPerTile = keysPerTile(p, options);
  std::optional<int64_t> bytes = scratchBytes(p);
  // Wide heads with many rows (absorbed latent attention: 576 channels, 128
  // query heads on one KV head) take shorter tiles until the task's scratch
  // fits; a tile size the options named stays as named.
  const int64_t multiple = keyTileMultiple(p);
  while ((!bytes || *bytes > kMaxTaskScratchBytes) && options.blockKeys <= 0 &&
         p.keysPerTile > multiple) {
    p.keysPerTile = std::max(multiple, p.keysPerTile / 2 / multiple * multiple);
    bytes = scratchBytes(p);
  }
  if (!bytes || *bytes > kMaxTaskScratchBytes)
    return std::nullopt;
  p.taskScratchBytes = *bytes;
  return p;
}

} // namespace

std::optional<AttentionPlan> pe::planAttention(AttentionOp op,
                                               const TileAttentionOptions &options,
                                               std::optional<int64_t> queries,
                                               CacheLayout layout) {
  if (std::optional<AttentionPlan> plan = planWithOptions(op, options, queries, layout))
    return plan;
  // The bf16 pair kernels hold more scratch (AMX tiles of 96 keys, the
  // weights in bf16): where theirs does not fit (wide heads, such as
  // absorbed latent attention's 576 channels), the dot products or the f32
  // FMA kernel may, which is far better than the reference lowering.
  TileAttentionOptions fallback = options;
  for (bool *option : {&fallback.amx, &fallback.bf16Dot}) {
    if (!*option)
      continue;
    *option = false;
    if (std::optional<AttentionPlan> plan = planWithOptions(op, fallback, queries, layout))
      return plan;
  }
  return std::nullopt;
}
