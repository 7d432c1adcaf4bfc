//===- SimtAttention.h - the threads of the SIMT attention kernels -*- C++ -*-===//
//
// One thread of the GPU attention kernels without tensor cores: it holds one
// query row's rotated channels and the online softmax of one chunk of its
// output channels in registers and streams the keys of its KV head:
//
//   q' = rope(q[row, :])                      once per thread (per visible
//                                             tile of 32 keys with causal
//                                             or window masks)
//   for each key j:  k' = rope(k[j, :])       as it is read (a paged cache
//                                             holds its keys rotated)
//     s = scale (q' . k') (+ ALiBi, + mask; -inf where masked)
//     m' = max(m, s), p = exp(s - m'), alpha = exp(m - m')
//     l = alpha l + p,  acc = alpha acc + p v[j, chunk]
//   out[row, chunk] = acc / l  (0 for a row without a visible key)
//
// with the formulas of the shared builders (RopeBuilders, AttentionBuilders).
// The rows are those of a dense pe.attention ([B, H, S, D] tensors, at
// (b, h, i)) or of a pe.paged_attention (packed queries [T, Hq, D] at (t, h),
// the keys of the row's sequence read in place from its pages). Keys split
// across threads leave (m, l, acc) partial states that a second loop merges.
//
//===----------------------------------------------------------------------===//
#ifndef PE_CODEGEN_GPU_KERNELS_SIMTATTENTION_H
#define PE_CODEGEN_GPU_KERNELS_SIMTATTENTION_H

#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/AttentionBuilders.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir::pe::simt {

/// Value channels of one thread at most (its output chunk in registers):
/// wider chunks push D = 64 kernels to the 255-register limit on sm_80.
constexpr int64_t kMaxChunk = 8;
/// Head dims up to this keep the rotated query row in registers: D = 128
/// would need more than the 255 registers of a thread (ptxas spills).
/// Wider heads, up to kMaxStreamedHeadDim, read the query again per key:
/// no register holds more than a few of their channels (absorbed latent
/// attention, D = 576 and Dv = 512: at most 128 registers, no spills on
/// sm_90a; on sm_80 ptxas spills 52 bytes in the dense decode kernel with
/// a dynamic key count), and the bound only caps the work a thread repeats per key
/// (a row's Dv / 8 chunk threads each take the whole dot product).
constexpr int64_t kMaxHeadDim = 64;
constexpr int64_t kMaxStreamedHeadDim = 1024;
/// Decode splits the keys into up to kMaxSplits ranges of at least
/// kMinSplitKeys keys, so that a single sequence still spreads over the
/// threads the chip holds at once at this kernel's kRegisters registers
/// (GpuChip::residentThreads).
constexpr int64_t kMinSplitKeys = 32;
constexpr int64_t kMaxSplits = 128;
constexpr int64_t kRegisters = 255;
/// Keys per tile of the causal/window tile skipping.
constexpr int64_t kSkipTileKeys = 32;

/// What the kernel is specialized on.
struct GpuAttentionShape {
  AttentionHeads heads;
  int64_t chunk = 0;
  /// Few static queries: keys split across threads, then merged.
  bool decode = false;
  Type element;
  double scale = 1.0;
  PositionMask positionMask;
  bool alibi = false;
  RopeAttr rope;
  /// Whether the keys are rotated by `rope` as they are read (a paged
  /// cache holds them rotated: only the query is).
  bool rotateKeys = true;
  std::optional<double> softcap;
  TemperatureAttr temperature;
  /// Channels of every key head read from the shared block
  /// (GpuAttentionBuffers::sharedKey): the last `sharedKeyDim` of the head.
  int64_t sharedKeyDim = 0;

  int64_t group() const { return heads.queryHeads / heads.kvHeads; }
  /// The largest power of two up to kMaxChunk that divides the value dim.
  static int64_t chunkOf(int64_t valueDim);
};

/// The buffers the kernel reads and writes (null where absent).
struct GpuAttentionBuffers {
  Value q, k, v, mask, qPos, kPos, qCos, qSin, kCos, kSin, slopes, sinks, out;
  /// The key channels every head shares (pe.attention's shared_key,
  /// [B, 1, Skv, Ds]), or null.
  Value sharedKey;
  /// Split keys: the state of each split, the unnormalized output
  /// [rows..., splits, Dv] and (max, sum) [rows..., splits, 2], f32.
  Value partialOut, partialStats;
};

/// Where a paged thread's keys are: the pages of sequence `seq`, its block
/// table row `table[seq, :]`, `pageSize` keys per page in the `layout` of
/// the caches; key j at position j, the query at `queryPosition` (i64).
struct PagedRows {
  Value table, seq, pageSize, queryPosition;
  CacheLayout layout = CacheLayout::nhd;
};

/// Builds the loop bodies of the threads.
class AttentionThread {
public:
  /// The thread of row (bi, h, i) and value chunk c of a dense attention.
  AttentionThread(ImplicitLocOpBuilder &b, const GpuAttentionShape &s,
                  const GpuAttentionBuffers &buf, Value bi, Value h, Value i, Value c);
  /// The thread of packed query row (t, h) and value chunk c of a paged
  /// attention (out and partials indexed like the queries, [T, Hq, ...]).
  AttentionThread(ImplicitLocOpBuilder &b, const GpuAttentionShape &s,
                  const GpuAttentionBuffers &buf, const PagedRows &paged, Value t, Value h,
                  Value c);

  /// The online softmax of the thread's row and chunk over keys [k0, k1):
  /// (running max m, sum l, unnormalized output chunk acc). With causal or
  /// window masks the keys go in tiles of kSkipTileKeys, and a tile whose
  /// every key they hide is skipped: such keys would change nothing (weight
  /// 0, correction 1 once a key was visible, or 0 before). With sinks, the
  /// head's sink starts the state where `withSinks` (i1; null: always)
  /// holds: once per row, by the first split of its keys.
  SmallVector<Value> streamKeys(Value k0, Value k1, Value withSinks = nullptr);
  /// out[row, chunk] = acc / l (0 for l = 0).
  void storeOutput(ValueRange state);
  /// The state of key split `split` into the partial buffers (the row's
  /// (m, l) by its first chunk's thread).
  void storePartial(ValueRange state, Value split);
  /// The splits' states merged as the online softmax merges keys, a split of
  /// max m_s, sum l_s and output acc_s weighing like a key of score m_s:
  ///   M' = max(M, m_s), w = exp(m_s - M'), alpha = exp(M - M'),
  ///   L = alpha L + w l_s, O = alpha O + w acc_s;
  /// then out = O / L. A split without a visible key (m_s = -inf) adds 0.
  void combinePartials(Value splits);

private:
  /// A row of q or k: the buffer, every index but the channel, its tables
  /// ([S, r/2] or [B, S, r/2]) and its row `i` in them; channel c of the
  /// head is the buffer's c - firstChannel (the shared key block's channels
  /// follow the key's own).
  struct Row {
    Value x;
    SmallVector<Value> at;
    Value cos, sin, i;
    int64_t firstChannel = 0;
  };
  /// A rotated piece of a row and its first channel.
  struct Piece {
    Value value, channel;
  };

  ImplicitLocOpBuilder &b;
  const GpuAttentionShape &s;
  const GpuAttentionBuffers &buf;
  std::optional<PagedRows> paged;
  /// The row's indices in q, out and the partials (without the channel).
  SmallVector<Value> rowAt;
  Value bi, h, i, kvh, e0;

  Value index(int64_t v);
  Value f32(double v);
  Value splat(Value scalar, int64_t lanes);
  bool needsPositions() const;
  /// rowAt followed by `more`.
  SmallVector<Value> rowAnd(ArrayRef<Value> more) const;
  /// The indices of key (or value) row j but the channel.
  SmallVector<Value> keyAt(Value j);
  /// The i64 positions of the thread's query and of key j.
  Value queryPosition();
  Value keyPosition(Value j);
  /// (min, max) of the i64 positions of keys [t0, t1).
  std::pair<Value, Value> keyPositionRange(Value t0, Value t1);
  Value loadChannels(const Row &row, Value c, int64_t n);
  SmallVector<Piece> rotatedPieces(const Row &row, Value pair, int64_t lanes);
  Value dotRotated(const Row &q, const Row &k, const Row *kShared = nullptr);
  /// The score of key j (at `keyRow` in K, keyAt(j)).
  Value keyScore(const Row &query, Value j, ArrayRef<Value> keyRow, Value qp, Value slope,
                 Value rowScale);
  Value maskEntry(Value j);
  SmallVector<Value> initialState();
  Value loadValueChunk(Value buffer, ValueRange at, Type element);
  SmallVector<Value> softmaxStep(ValueRange state, Value score, Value weight, Value value);
};

/// A new buffer of `sizes` and element type `element`.
Value alloc(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes, Type element);

/// One scf.parallel over [0, sizes), its body built by `body(ivs)`.
void parallelLoop(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes,
                  function_ref<void(ValueRange)> body);

/// How decode splits `keys` keys among the `threads` threads of the rows
/// and chunks: splits = clamp(ceil(keys / kMinSplitKeys), 1, cap) ranges of
/// len = ceil(keys / splits) keys, cap = clamp(ceil(targetThreads /
/// threads), 1, kMaxSplits) (a call with many rows needs few splits), with
/// `targetThreads` the threads the chip holds at once. The last ranges may
/// be short or empty.
std::pair<Value, Value> keySplits(ImplicitLocOpBuilder &b, Value keys, Value threads,
                                  int64_t targetThreads);

} // namespace mlir::pe::simt

#endif // PE_CODEGEN_GPU_KERNELS_SIMTATTENTION_H
