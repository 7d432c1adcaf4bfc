//===- AttentionPlan.h - the shape of a CPU attention kernel ----*- C++ -*-===//
//
// Everything the flash-attention kernel of pe-tile-attention is specialized
// on: the variant, the task and tile sizes, and the attention's attributes.
// Planning fails (the op keeps the reference lowering) where the kernel has
// nothing to gain or its scratch would not fit a thread's stack.
//
//===----------------------------------------------------------------------===//
#ifndef PE_LIB_CONVERSION_CPUKERNELS_ATTENTIONPLAN_H
#define PE_LIB_CONVERSION_CPUKERNELS_ATTENTIONPLAN_H

#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/AttentionBuilders.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Codegen/CPU/Kernels.h"
#include "pe/Target/CpuTarget.h"

#include "KernelBuilder.h"

#include <optional>

namespace mlir::pe {

/// The kernel variants.
enum class AttentionKernelKind {
  /// Prefill: Q^T and O^T with vectors along the rows; both products are
  /// broadcast-FMA micro-tiles.
  Tiled,
  /// Decode (at most 8 rows): Q and O row-major; scores are dot products
  /// along D and P V runs along Dv, so no lane holds a padding row.
  Decode,
  /// bf16 prefill on AVX512-BF16 dot products (vdpbf16ps): the Tiled
  /// schedule with Q^T, P^T and V in bf16 pairs.
  Bf16Dot,
  /// bf16 prefill on AMX tiles: Q^T and V in VNNI pairs, P transposed to
  /// bf16 rows, O row-major.
  Amx,
};

struct AttentionPlan {
  AttentionKernelKind kind = AttentionKernelKind::Tiled;
  int64_t queryHeads = 0, kvHeads = 0, group = 0;
  int64_t headDim = 0, valueDim = 0;
  /// f32 lanes of the target's vectors: every vector of the kernel.
  int64_t lanes = 16;
  /// Queries per task, and its rows (query, head of the group) rounded up to
  /// whole vectors; `validRows` of them hold queries in a decode kernel.
  int64_t queriesPerTask = 0, rows = 0, validRows = 0;
  /// Keys per streamed K/V tile.
  int64_t keysPerTile = 0;
  /// The layout of the K/V operands the kernel reads: dense tensors or the
  /// pages of a cache.
  CacheLayout cacheLayout = CacheLayout::dense;
  /// A micro-tile of the Tiled kernel: `rowVectors` vectors of rows times
  /// `keysPerMicroTile` keys (S^T = K Q^T) or `channelsPerMicroTile` value
  /// channels (O^T += V^T P), as the target's registers hold them
  /// (chooseMicroTile).
  int64_t rowVectors = 0, keysPerMicroTile = 0, channelsPerMicroTile = 0;
  /// Steps of a micro-tile's loop a trip (kMicroTileUnroll).
  int64_t microTileUnroll = 1;
  /// Value channels of a micro-tile whose FMAs skip keys of weight 0 (one
  /// mask and one temporary register more).
  int64_t maskedChannelsPerMicroTile = 0;
  /// Accumulators of the decode kernel's P V chunks.
  int64_t decodeAccumulators = 16;
  /// The same for FMAs that skip keys of weight 0.
  int64_t decodeMaskedAccumulators = 16;
  /// Fused RoPE: the rotated channels (0: none), the first of them and the
  /// pairing.
  int64_t rotaryDim = 0, rotaryOffset = 0;
  RopeStyle ropeStyle = RopeStyle::half;
  /// Channels of every key head read from the shared block (pe.attention's
  /// shared_key): the last `sharedKeyDim` of `headDim`; 0 without one.
  int64_t sharedKeyDim = 0;
  Type element;
  /// bf16 pair products on vdpbf16ps: both products of the Bf16Dot kernel;
  /// the scores, and P V in tiles without masked keys, of the decode kernel.
  bool dotProducts = false;
  double scale = 1.0;
  PositionMask positionMask;
  std::optional<double> alibiMaxBias;
  /// Logit soft-capping: scores c tanh(s / c) before the fixes.
  std::optional<double> softcap;
  /// Query temperature tuning by position (Llama 4), or null.
  TemperatureAttr temperature;
  bool hasMask = false;
  int64_t threads = 1;
  /// Bytes of a task's stack scratch with the state of one block of queries
  /// (at most kMaxTaskScratchBytes), and of each further block's state (Q,
  /// O, row statistics) where a task holds several.
  int64_t taskScratchBytes = 0, blockStateBytes = 0;

  int64_t rotaryHalf() const { return rotaryDim / 2; }
  /// The key channels of each head's own rows (those before the shared
  /// block).
  int64_t ownKeyDim() const { return headDim - sharedKeyDim; }
  /// Whether the kernels read keys through the key tile (packKeys) rather
  /// than in place: rotated keys, or heads that span two tensors.
  bool packsKeys() const { return rotaryDim != 0 || sharedKeyDim != 0; }
  RotatedChannels rotation() const { return {ropeStyle, rotaryDim, rotaryOffset}; }
  /// O and its partials row-major [rows][Dv] rather than [Dv][rows].
  bool outputRowMajor() const {
    return kind == AttentionKernelKind::Decode || kind == AttentionKernelKind::Amx;
  }
  /// The rows that O holds.
  int64_t outputRows() const {
    return kind == AttentionKernelKind::Decode ? validRows : rows;
  }
};

/// The stack scratch a task may take (OpenMP worker stacks are 4 MiB; with
/// one thread it is the caller's).
constexpr int64_t kMaxTaskScratchBytes = 1 << 20;

/// The plan of the kernel for `op` under pe-tile-attention's options, or
/// std::nullopt when the op keeps the reference lowering: dynamic head
/// dims, an empty head, heads wider than the kernel unrolls, or scratch
/// above the stack budget. The arithmetic is
/// overflow-checked. `queries` plans for that query count instead of the
/// op's (static) one: a kernel for one length of a dynamic Sq. `layout` is
/// that of the K/V the kernel reads (the pages of a cache, or dense).
std::optional<AttentionPlan> planAttention(AttentionOp op,
                                           const TileAttentionOptions &options,
                                           std::optional<int64_t> queries = std::nullopt,
                                           CacheLayout layout = CacheLayout::dense);

} // namespace mlir::pe

#endif // PE_LIB_CONVERSION_CPUKERNELS_ATTENTIONPLAN_H
