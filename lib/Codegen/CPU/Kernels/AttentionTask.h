//===- AttentionTask.h - one task of the CPU attention kernel ---*- C++ -*-===//
//
// A task of the flash-attention kernel: the rows (query i, head g of the KV
// head's group) of a block of queries, against a range of K/V tiles; a task
// may hold the state of several slots (KV heads for decode over a paged
// cache, blocks of queries for prefill) and select one at a time.
// This class holds the steps every kernel variant shares; a variant
// (TiledKernel.cpp, DecodeKernel.cpp, AmxKernel.cpp) decides the layout of
// its query and output buffers and how one K/V tile is processed.
//
// Buffers of a task (f32 unless a variant says otherwise; rows padded to
// whole vectors):
//   St[Bk][rows]      scores, then weights, of one key tile (S^T)
//   Kr[Bk][D]         the rotated key tile (Vp[Bk][Dv]: values as f32)
//   m, l, alpha[rows] online-softmax statistics
//   Q and O           in the variant's layout
//
//===----------------------------------------------------------------------===//
#ifndef PE_LIB_CONVERSION_CPUKERNELS_ATTENTIONTASK_H
#define PE_LIB_CONVERSION_CPUKERNELS_ATTENTIONTASK_H

#include "AttentionPlan.h"
#include "KernelBuilder.h"

#include <memory>

namespace mlir::pe {

/// The operands of a kernel, as buffers (null where absent).
struct AttentionBuffers {
  Value q, k, v, mask, maskFlat, qPos, kPos, qCos, qSin, kCos, kSin, slopes, sinks, out;
  /// Keys and values read in place from a paged cache (pe.gather_pages
  /// operands, `layout` nhd or hnd): k and v are the caches, keys
  /// [0, keyCount) of the call's one sequence are at the pages of row
  /// `sequence` of `pageTable`. Null, and `layout` dense, for [B, Hkv, S, D]
  /// keys and values.
  Value pageTable, sequence, keyCount;
  /// A batch of paged sequences instead (pe-tile-paged-decode): batch row bi
  /// reads row bi of `pageTable` and its keys [0, kvLens[bi]); `sequence` and
  /// `keyCount` are null.
  Value kvLens;
  CacheLayout layout = CacheLayout::dense;
  /// The block of key channels every head shares (pe.attention's
  /// shared_key, dense [B, 1, Skv, Ds]), or null.
  Value sharedKey;
};

/// The number of keys of a call: keyCount for a paged cache, else Skv; for
/// a batch of paged sequences, those of batch row `bi`.
Value keyCountOf(KernelBuilder &g, const AttentionBuffers &buf, Value bi = nullptr);

/// The indices of channel `c` of key (or value) row `key` of batch row `bi`
/// and KV head `kvh` in buf.k or buf.v: [bi, kvh, key, c] for dense
/// operands, for a paged cache row key mod page_size of page
/// pageTable[sequence, key / page_size] (sequence bi for a batch of paged
/// sequences).
SmallVector<Value> kvIndex(KernelBuilder &g, const AttentionBuffers &buf, Value bi,
                           Value kvh, Value key, Value c);

/// How one K/V tile must be masked.
struct TileMasking {
  /// i1: some score of the tile needs a fix (position masks, the key tail,
  /// ALiBi, the mask operand); false: every key is visible to every row.
  Value partial;
  /// i1: some key of the tile may have weight 0 because it is masked (by
  /// position or by the mask operand), so P V must skip weight-0 keys.
  Value maskedKeys;
  /// i1: every query and key position of the tile lies within 2^24 of
  /// `base` (i64), so distances are exact in f32.
  Value nearby;
  Value base;
};

class AttentionTask {
public:
  AttentionTask(KernelBuilder &g, const AttentionPlan &p,
                const AttentionBuffers &buf)
      : g(g), p(p), buf(buf) {}
  virtual ~AttentionTask() = default;

  /// Allocates the task's scratch on the stack (before the task loops for
  /// sequential code, in each task otherwise). With `heads` > 1 the state
  /// that lives across tiles (Q, O, row statistics, row positions) is held
  /// for that many KV heads at once, and selectHead() picks one; the scratch
  /// of a tile is shared.
  void allocate(int64_t heads = 1);
  /// The task's KV head: with several heads allocated, the state becomes
  /// that of head `h` (views of the heads' scratch).
  void selectHead(Value h);
  /// The state of slot `s` of those allocate() holds (a KV head, or a block
  /// of queries of one head), without changing the task's KV head.
  void selectSlot(Value s);
  /// The i64 scratch [slots, 2] where a task of several query blocks keeps
  /// each block's (min, max) query position (allocate() with slots > 1, where sharesTiles()).
  Value slotQueryRanges() const { return queryRanges; }
  /// The tile of `keys` keys whose rows the task reads for each of its KV
  /// heads in turn (a task that walks the heads inside each tile), or null:
  /// where the prefetches ahead of a head's last rows go (prefetchAhead).
  void setHeadWalkTile(Value keys) { walkTileKeys = keys; }
  /// The sizes of the call: queries and keys.
  void setSizes(Value queries, Value keys) {
    sq = queries;
    skv = keys;
  }
  /// The task: batch row, KV head, first query and query count.
  void setTask(Value batchRow, Value kvHead, Value firstQuery, Value queryCount) {
    bi = batchRow;
    kvh = kvHead;
    q0 = firstQuery;
    qCount = queryCount;
  }

  /// Zeroes Q and O, m = -inf, l = 0; with sinks, where `withSinks` (i1)
  /// holds, m = sink and l = exp(sink - m) instead: the sink as a key of
  /// value 0 seen before the others (by one split of the keys only).
  void initialize(Value withSinks = nullptr);
  /// Q = scale * rope(q) for the task's rows, in the variant's layout, with
  /// each row's position, slope and mask offset. Returns (min, max) of the
  /// task's query positions.
  std::pair<Value, Value> packQueries();
  /// Positions of keys [k0, k0 + kCount) into the tile; returns their range.
  std::pair<Value, Value> keyPositions(Value k0, Value kCount);
  /// The keys of [k0, k0 + kCount) that the position masks leave visible to
  /// some query at [qMin, qMax]: (first, count) of the range from the first
  /// to the last such key (count 0: none). Keys outside it are hidden from
  /// every row, so a tile may skip them (they would add nothing).
  std::pair<Value, Value> visibleKeyRange(Value k0, Value kCount, Value qMin, Value qMax);
  /// The online-softmax update with the K/V tile [k0, k0 + kCount): by
  /// default the tile prepared and processed at once.
  virtual void processTile(Value k0, Value kCount, const TileMasking &masking) {
    prepareTile(k0, kCount);
    processPreparedTile(k0, kCount, masking);
  }
  /// Whether the variant can pack a K/V tile once (prepareTile) for several
  /// blocks of queries that then each take processPreparedTile.
  virtual bool sharesTiles() const { return false; }
  /// Packs the K/V tile [k0, k0 + kCount) (keys and values) for
  /// processPreparedTile: once for several blocks of queries where
  /// sharesTiles(), or for one (the default processTile).
  virtual void prepareTile(Value k0, Value kCount) {}
  /// processTile on the tile prepareTile packed.
  virtual void processPreparedTile(Value k0, Value kCount, const TileMasking &masking) {}
  /// out[bi, h, q0 + i, :] = O / l for the task's rows.
  void writeOutput();
  /// partials[slot] = (O, m, l) flattened, for the key-split combine.
  void writePartials(Value partials, Value slot);

protected:
  KernelBuilder &g;
  const AttentionPlan &p;
  const AttentionBuffers &buf;
  Value sq, skv, bi, kvh, q0, qCount;
  // Scratch.
  Value queries, scores, output, keys, rowMax, rowSum, alpha, rowPositions,
      rowSlopes, rowMaskOffsets, keyPositionTile, queryRows, queryRanges;
  /// [rows]: max_j S^T[j][r] of the tile's scores (every score row, keys
  /// past kCount included), where the variant computes it with the scores;
  /// softmax then takes it for a tile whose scores need no fix. Null else.
  Value scoreRowMax;
  /// setHeadWalkTile's keys.
  Value walkTileKeys;
  /// The slots allocate() holds state for.
  int64_t slotCount() const { return heads; }

  /// How a variant lays out the rotated, scaled queries.
  enum class QueryLayout {
    RowMajor,   // Q[r][d]
    Transposed, // Q^T[d][r]
    Pairs,      // Q^T in pairs along d: Qv[d / 2][2 r + d % 2]
  };

  /// Variant hooks: Q and O buffers, the layout of Q, where element
  /// (channel, row) of O lives; extra scratch.
  virtual Value allocateQueries() = 0;
  virtual Value allocateOutput() = 0;
  virtual QueryLayout queryLayout() = 0;
  virtual SmallVector<Value> outputIndex(Value e, Value r) = 0;
  /// The element of the key tile; null where the variant reads the keys in
  /// place and has no tile.
  virtual Type keyTileType() { return g.f32(); }
  virtual void allocateVariant() {}
  /// Scratch of the state that lives across tiles: `shape`, or
  /// [heads, shape...] when the task holds several heads (allocate()).
  Value stateScratch(ArrayRef<int64_t> shape, Type element);

  /// One step of a micro-tile product into O^T: the accumulators (index
  /// ec * rowVectors + v) after step `s` of the micro-tile of rows
  /// [r0, r0 + lanes rowVectors) and value channels [e0, e0 + channels).
  using MicroTileStep = function_ref<SmallVector<Value>(Value s, Value r0, Value e0,
                                                        int64_t channels, ValueRange acc)>;
  /// O^T = alpha O^T + the sum over steps [0, steps) of `step`, on micro-tiles
  /// of `microChannels` value channels x rowVectors row vectors (the
  /// O^T layout of the Tiled and Bf16Dot kernels).
  void accumulateOutputTiles(Value steps, int64_t microChannels, MicroTileStep step);

  /// O^T[e][r] = alpha[r] O^T[e][r] + sum_{j < kCount} V[j][e] P^T[j][r]
  /// with f32 FMAs on the f32 weights, `value(j, e)` an f32 element of V;
  /// with `skipZeroWeights`, keys of weight 0 add nothing even where their
  /// value is NaN or inf.
  void accumulateWeightedValues(Value kCount, function_ref<Value(Value, Value)> value,
                                bool skipZeroWeights);

  /// The i64 position of key `key`: from kPos, or the key's index where the
  /// call has no key positions (a paged batch: keys 0 .. L-1).
  Value keyPositionAt(Value key);
  /// Channel `c` of key (or value) row `key` of the task in buf.k or buf.v.
  SmallVector<Value> kvAt(Value key, Value c) { return kvIndex(g, buf, bi, kvh, key, c); }
  /// The buffer holding the task's key channels from `begin` on (up to the
  /// end of the range they lie in) and the index of channel `c` of key row
  /// `key` in it: buf.k, or, from channel D - Ds on, the shared block
  /// (channel c - (D - Ds) of its one head).
  Value keyBuffer(int64_t begin) const;
  SmallVector<Value> keyAt(int64_t begin, Value key, Value c);
  /// Where element (channel d, row r) of Q lives.
  SmallVector<Value> queryIndex(Value d, Value r);
  /// Whether whole rows of Q are rotated as vectors (`lanes` channels at a
  /// time).
  bool vectorQueries() const;
  /// The f32 factor of a query row at i64 `position`: the softmax scale,
  /// times the row's temperature where the op tunes it.
  Value rowScale(Value position);
  /// Rows [r0, r0 + lanes) of scale * rope(q) (zero past `rowCount` rows)
  /// into the lanes x D f32 tile `queryRows`.
  void rotateQueryRows(Value r0, Value rowCount);
  /// Those rows from `queryRows` into Q in the variant's layout: lanes x lanes
  /// blocks transposed by shuffles for the transposed layouts.
  void storeQueryRows(Value r0);

  /// Kr[j, :] = rope(k[bi, kvh, k0 + j, :]) (with a shared block, the
  /// head's channels then the block's), zero rows past the keys; over a
  /// paged cache it prefetches the rows of K and V ahead.
  void packKeys(Value k0, Value kCount);
  /// How many keys ahead `aheadBytes` of a head's rows reach (at least one).
  int64_t prefetchDistance(int64_t aheadBytes) const;
  /// Prefetches the cache lines of `operand` (K or V) at key k0 + j plus
  /// 4 KiB of rows into L1 and plus 6 KiB into L2, each clamped to the last
  /// key, in the order the task reads them (see the .cpp).
  void prefetchAhead(Value operand, Value k0, Value j);
  /// The online-softmax step over the scores of one tile: fixes, row max,
  /// weights, sums and the correction alpha of the running output.
  void softmax(Value k0, Value kCount, const TileMasking &masking);
  /// pairs[jp][2 e + j % 2] = v[bi, kvh, k0 + 2 jp + j % 2, e] for the pairs
  /// of keys [0, kCount) (the second row of a last odd pair zero): rows 2 jp
  /// and 2 jp + 1 zipped, as the bf16 pair products (AMX, vdpbf16ps) read V.
  /// Needs bf16 values and Dv a multiple of the lanes. Returns whether a value is
  /// NaN or inf.
  Value packValuePairs(Value pairs, Value k0, Value kCount);
  /// pairs[jp][2 r + j % 2] = bf16(P^T[2 jp + j % 2][r]) for jp < `count`:
  /// rows 2 jp and 2 jp + 1 of the weights zipped and rounded, as the bf16
  /// pair products read P.
  void packWeightPairs(Value pairs, Value count);
  /// The bf16 pair (mem[i][c], mem[i][c + 1]) in every 32-bit lane of a
  /// vector of 2 x lanes bf16.
  Value broadcastPair(Value mem, Value i, Value c);

private:
  /// The KV heads whose state the task holds, and that state's buffers
  /// ([heads, ...]) beside the member each one views.
  int64_t heads = 1;
  SmallVector<std::pair<Value *, Value>> headStates;

  /// How the scores of a tile are fixed before the row max.
  enum class ScoreFix {
    None,            // every key visible: scores as they are
    ExactDistances,  // masks and ALiBi on f32 distances (positions near `base`)
    Int64Positions,  // masks and ALiBi on 64-bit positions
  };
  /// Score s of key j for `lanes` rows with ALiBi, the mask operand and the
  /// position masks applied; `rowQ` holds the rows' positions (i64), or with
  /// `base` their offsets from it (f32, exact).
  Value scoreWithBiasAndMasks(Value s, Value rowQ, Value slope, Value maskOffsets,
                              Value j, Value k0, Value kCount, Value base);
  /// The mask operand's entries of key j for `lanes` rows (gathered).
  Value maskValue(Value maskOffsets, Value j, Value k0, Value valid);
  /// m' = max(m, max_j s_j) over score rows [0, scoreRows) of the tile for
  /// the `lanes` rows from `r`, the scores fixed first as `fix` says.
  Value tileRowMax(Value r, Value mOld, ScoreFix fix, Value k0, Value kCount,
                   Value scoreRows, Value base);
};

/// The task of each variant.
std::unique_ptr<AttentionTask> createTiledTask(KernelBuilder &g, const AttentionPlan &p,
                                               const AttentionBuffers &buf);
std::unique_ptr<AttentionTask> createDecodeTask(KernelBuilder &g, const AttentionPlan &p,
                                                const AttentionBuffers &buf);
std::unique_ptr<AttentionTask> createBf16DotTask(KernelBuilder &g, const AttentionPlan &p,
                                                 const AttentionBuffers &buf);
std::unique_ptr<AttentionTask> createAmxTask(KernelBuilder &g, const AttentionPlan &p,
                                             const AttentionBuffers &buf);

/// The runtime function that enables AMX tiles (lib/Runtime).
inline constexpr char kEnableAmxFn[] = "pe_runtime_enable_amx";

/// The body of a kernel function: every task of the call, split along the
/// keys when there are fewer tasks than 2 x threads, then the combine.
void buildAttentionKernel(KernelBuilder &g, const AttentionPlan &p,
                          const AttentionBuffers &buf);

/// The body of a decode kernel over a batch of paged sequences of their own
/// lengths (buf.kvLens, one query each): the (sequence, KV head, key block)
/// units in one list, cut into `threads` equal ranges, one per thread; a
/// range's piece of a (sequence, KV head) writes its output, or a partial
/// that a second loop combines where ranges share it.
void buildBatchedDecodeKernel(KernelBuilder &g, const AttentionPlan &p,
                              const AttentionBuffers &buf);

/// The kernel function of plan `p` on `buf` (batched: its body is
/// buildBatchedDecodeKernel's) in `symbolTable`: an existing kernel of the same
/// type and body, or a new private one; and the arguments to call it with.
func::FuncOp getOrBuildAttentionKernel(Operation *symbolTable, Location loc,
                                       const AttentionPlan &p, const AttentionBuffers &buf,
                                       bool batched = false);
SmallVector<Value> attentionKernelArguments(const AttentionBuffers &buf);

} // namespace mlir::pe

#endif // PE_LIB_CONVERSION_CPUKERNELS_ATTENTIONTASK_H
