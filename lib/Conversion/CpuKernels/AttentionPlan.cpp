//===- AttentionPlan.cpp - the shape of a CPU attention kernel ------------===//
#include "AttentionPlan.h"

#include "pe/Dialect/PE/Utils/OperandChecks.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pe;

namespace {

/// Accumulator registers of a micro-tile (of the 32 vector registers).
constexpr int64_t kAccumulators = 24;
/// Stack scratch of one task at most (OpenMP worker stacks are 4 MiB).
constexpr int64_t kMaxScratchBytes = 1 << 20;
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

/// Bytes of a task's scratch: 4 (rows (D + Dv + Bk + 8) + Bk (D + Dv + 2)),
/// and for the bf16 pair kernels (AMX, vdpbf16ps) the bf16 weights, 2 rows Bk.
std::optional<int64_t> scratchBytes(const AttentionPlan &p) {
  std::optional<int64_t> perRow = llvm::checkedAdd(p.headDim + p.valueDim, p.keysPerTile + 8);
  std::optional<int64_t> perKey = llvm::checkedAdd(p.headDim, p.valueDim + 2);
  if (!perRow || !perKey)
    return std::nullopt;
  std::optional<int64_t> rowBytes = llvm::checkedMul(p.rows, *perRow);
  std::optional<int64_t> keyBytes = llvm::checkedMul(p.keysPerTile, *perKey);
  if (!rowBytes || !keyBytes)
    return std::nullopt;
  std::optional<int64_t> total = llvm::checkedAdd(*rowBytes, *keyBytes);
  std::optional<int64_t> bytes = total ? llvm::checkedMul(*total, int64_t(4)) : std::nullopt;
  if (!bytes || (p.kind != AttentionKernelKind::Amx && !p.dotProducts))
    return bytes;
  // The weights as bf16 too: rows x Bk x 2 bytes.
  std::optional<int64_t> weights = llvm::checkedMul(p.rows, p.keysPerTile);
  weights = weights ? llvm::checkedMul(*weights, int64_t(2)) : std::nullopt;
  return weights ? llvm::checkedAdd(*bytes, *weights) : std::nullopt;
}

/// Rows per task: the requested count in whole vectors, fewer when the
/// whole call has fewer (static Sq).
std::optional<int64_t> rowTarget(int64_t requested, int64_t group,
                                 int64_t staticQueries) {
  std::optional<int64_t> target = roundUp(std::max(requested, kLanes), kLanes);
  if (!target || ShapedType::isDynamic(staticQueries))
    return target;
  std::optional<int64_t> all = llvm::checkedMul(std::max<int64_t>(1, staticQueries), group);
  if (!all)
    return target;
  std::optional<int64_t> allRows = roundUp(*all, kLanes);
  return allRows ? std::min(*target, *allRows) : target;
}

} // namespace

std::optional<AttentionPlan> pe::planAttention(AttentionOp op,
                                               const AttentionPlanOptions &options) {
  RankedTensorType qType = op.getQuery().getType();
  std::optional<AttentionHeads> heads = attentionHeads(op);
  if (!heads)
    return std::nullopt;
  AttentionPlan p;
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
  p.hasMask = bool(op.getMask());
  p.threads = options.threads;
  if (RopeAttr rope = op.getRopeAttr()) {
    p.rotaryDim = rope.getRotaryDim();
    p.ropeStyle = rope.getStyle();
  }

  std::optional<int64_t> rows =
      rowTarget(options.rows, p.group, qType.getDimSize(2));
  if (!rows)
    return std::nullopt;
  p.queriesPerTask = std::max<int64_t>(1, *rows / p.group);
  std::optional<int64_t> taskRows =
      roundUp(llvm::checkedMul(p.queriesPerTask, p.group).value_or(-1), kLanes);
  if (!taskRows || *taskRows < 1)
    return std::nullopt;
  p.rows = *taskRows;
  const int64_t vectors = p.rows / kLanes;
  p.rowVectors = vectors % 4 == 0 ? 4 : vectors % 3 == 0 ? 3 : vectors % 2 == 0 ? 2 : 1;
  p.keysPerMicroTile = kAccumulators / p.rowVectors;
  p.channelsPerMicroTile = kAccumulators / p.rowVectors;
  std::optional<int64_t> keys = roundUp(std::max<int64_t>(48, options.blockKeys), 48);
  if (!keys)
    return std::nullopt;
  p.keysPerTile = *keys;

  const bool bf16Dot = options.bf16Dot && p.element.isBF16() && p.valueDim % kLanes == 0;
  if (bf16Dot && p.headDim % 2 == 0) {
    p.kind = AttentionKernelKind::Bf16Dot;
    p.dotProducts = true;
  }
  if (options.amx && p.element.isBF16() && p.headDim % 32 == 0 &&
      p.valueDim % kLanes == 0) {
    p.kind = AttentionKernelKind::Amx;
    p.dotProducts = false;
    // Whole 16-key score tiles and 32-key P V steps.
    p.keysPerTile = roundUp(p.keysPerTile, 96).value_or(0);
    if (p.keysPerTile < 1)
      return std::nullopt;
  }
  const int64_t sq = qType.getDimSize(2);
  std::optional<int64_t> queryRows =
      ShapedType::isDynamic(sq) ? std::nullopt : llvm::checkedMul(sq, p.group);
  if (queryRows && *queryRows <= kMaxDecodeRows && p.headDim % kLanes == 0 &&
      p.valueDim % kLanes == 0) {
    p.kind = AttentionKernelKind::Decode;
    // Scores as dot products of whole 32-channel pair vectors.
    p.dotProducts = bf16Dot && p.headDim % (2 * kLanes) == 0;
    p.queriesPerTask = std::max<int64_t>(1, sq);
    p.validRows = p.queriesPerTask * p.group;
    p.rows = kLanes;
  }

  std::optional<int64_t> bytes = scratchBytes(p);
  if (!bytes || *bytes > kMaxScratchBytes)
    return std::nullopt;
  return p;
}
