//===- GpuTileAttention.cpp - pe-gpu-tile-attention -----------------------===//
//
// pe.attention for the GPU without tensor cores: one parallel loop over
// (batch b, query head h, query i, chunk c of the value channels), mapped
// one iteration per thread, chunk innermost (decode: then the key split).
// The thread holds its rotated
// query row and the online softmax of its output chunk in registers and
// streams the keys of its KV head:
//
//   q' = rope(q[b, h, i, :])                  once per thread (per visible
//                                             tile of 32 keys with causal
//                                             or window masks)
//   for each key j:  k' = rope(k[b, h / G, j, :])         as it is read
//     s = scale (q' . k') (+ ALiBi, + mask; -inf where masked)
//     m' = max(m, s), p = exp(s - m'), alpha = exp(m - m')
//     l = alpha l + p,  acc = alpha acc + p v[b, h / G, j, chunk]
//   out[b, h, i, chunk] = acc / l  (0 for a row without a visible key)
//
// with the formulas of the shared builders (RopeBuilders, AttentionBuilders)
// and G = Hq / Hkv. Rotated Q/K and the scores never reach memory. The
// threads of one query row (its chunks) and of one KV group repeat the key
// rotation and the dot product; a kernel whose threads cooperate (tensor
// cores, shared memory) would share them. The query row lives in
// registers, which bounds the head dim (kMaxHeadDim). Decode splits the
// keys across threads and merges the splits' states in a second loop.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PEGPU/IR/PEGPU.h"
#include "pe/Dialect/PE/Utils/AttentionBuilders.h"
#include "pe/Dialect/PE/Utils/KernelUtils.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"


#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <limits>

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUTILEATTENTION
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

/// Value channels of one thread at most (its output chunk in registers):
/// wider chunks push D = 64 kernels to the 255-register limit on sm_80.
constexpr int64_t kMaxChunk = 8;
/// Head dims up to this keep the rotated query row in registers: D = 128
/// would need more than the 255 registers of a thread (ptxas spills).
constexpr int64_t kMaxHeadDim = 64;
/// Decode (at most kMaxDecodeQueries queries, static) splits the keys into
/// up to kMaxSplits ranges of at least kMinSplitKeys keys, so that a single
/// sequence still spreads over the threads the chip holds at once at this
/// kernel's kRegisters registers (GpuChip::residentThreads).
constexpr int64_t kMaxDecodeQueries = 8;
constexpr int64_t kMinSplitKeys = 32;
constexpr int64_t kMaxSplits = 128;
constexpr int64_t kRegisters = 255;
/// The tensor-core decode: splits of at least kMinMmaSplitKeys keys, until
/// about kMmaBlocksPerMultiprocessor blocks per multiprocessor of
/// pe-gpu-mma-attention.
constexpr int64_t kMinMmaSplitKeys = 256;
constexpr int64_t kMmaBlocksPerMultiprocessor = 4;
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
  std::optional<double> softcap;
  TemperatureAttr temperature;

  int64_t group() const { return heads.queryHeads / heads.kvHeads; }
};

/// What the SIMT kernel is specialized on; with `anyHeadDim`, also for head
/// dims it does not take (the merge of the tensor-core decode's splits).
std::optional<GpuAttentionShape> shapeOf(AttentionOp op, bool anyHeadDim = false) {
  std::optional<AttentionHeads> heads = attentionHeads(op);
  if (!heads)
    return std::nullopt;
  GpuAttentionShape s;
  s.heads = *heads;
  if (!anyHeadDim && (s.heads.headDim > kMaxHeadDim || s.heads.valueDim > kMaxHeadDim))
    return std::nullopt;
  // The largest power of two up to kMaxChunk that divides Dv.
  s.chunk = 1;
  while (s.chunk < kMaxChunk && s.heads.valueDim % (2 * s.chunk) == 0)
    s.chunk *= 2;
  s.element = op.getQuery().getType().getElementType();
  const int64_t queries = op.getQuery().getType().getDimSize(2);
  s.decode = !ShapedType::isDynamic(queries) && queries <= kMaxDecodeQueries;
  s.scale = op.getEffectiveScale();
  s.positionMask = PositionMask::of(op);
  s.alibi = op.getAlibi().has_value();
  s.rope = op.getRopeAttr();
  if (std::optional<APFloat> softcap = op.getSoftcap())
    s.softcap = softcap->convertToDouble();
  s.temperature = op.getTemperatureAttr();
  return s;
}

/// The buffers the kernel reads and writes (null where absent).
struct GpuAttentionBuffers {
  Value q, k, v, mask, qPos, kPos, qCos, qSin, kCos, kSin, slopes, sinks, out;
  /// Decode: the state of each split of the keys, the unnormalized output
  /// [B, Hq, Sq, splits, Dv] and (max, sum) [B, Hq, Sq, splits, 2], f32.
  Value partialOut, partialStats;
};

/// Builds the loop bodies of the threads.
class AttentionThread {
public:
  AttentionThread(ImplicitLocOpBuilder &b, const GpuAttentionShape &s,
                  const GpuAttentionBuffers &buf, Value bi, Value h, Value i, Value c)
      : b(b), s(s), buf(buf), bi(bi), h(h), i(i) {
    kvh = arith::DivUIOp::create(b, h, index(s.group()));
    e0 = arith::MulIOp::create(b, c, index(s.chunk));
  }

  /// The online softmax of the thread's row and chunk over keys [k0, k1):
  /// (running max m, sum l, unnormalized output chunk acc). With causal or
  /// window masks the keys go in tiles of kSkipTileKeys, and a tile whose
  /// every key they hide is skipped: such keys would change nothing (weight
  /// 0, correction 1 once a key was visible, or 0 before). With sinks, the
  /// head's sink starts the state where `withSinks` (i1; null: always)
  /// holds: once per row, by the first split of its keys.
  SmallVector<Value> streamKeys(Value k0, Value k1, Value withSinks = nullptr) {
    Row query{buf.q, {bi, h, i}, buf.qCos, buf.qSin, i};
    Value qp = needsPositions() ? buildPositionAt(b, buf.qPos, bi, i) : nullptr;
    Value slope = s.alibi ? memref::LoadOp::create(b, buf.slopes, ValueRange{h}).getResult()
                          : nullptr;
    // The row's factor: the scale, times its temperature where tuned.
    Value rowScale = f32(s.scale);
    if (s.temperature)
      rowScale = arith::MulFOp::create(b, rowScale,
                                       buildQueryTemperature(b, s.temperature, qp));
    auto keyLoop = [&](Value first, Value last, ValueRange state) {
      Value step = index(1);
      auto loop = scf::ForOp::create(b, first, last, step, state);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value j = loop.getInductionVar();
      Value score = keyScore(query, j, qp, slope, rowScale);
      Value value = loadValueChunk(buf.v, {bi, kvh, j, e0}, s.element);
      scf::YieldOp::create(b, softmaxStep(loop.getRegionIterArgs(), score, /*weight=*/nullptr,
                                          value));
      return SmallVector<Value>(loop.getResults());
    };
    SmallVector<Value> init = initialState();
    if (buf.sinks) {
      // The sink as a key of value 0: m = sink, l = exp(sink - base(sink)).
      Value sink = extendToF32(b, memref::LoadOp::create(b, buf.sinks, ValueRange{h}));
      Value one = buildExpOfDifference(b, sink, buildExponentBase(b, sink), buildExpNonPositive);
      Value use = withSinks ? withSinks : arith::ConstantOp::create(b, b.getBoolAttr(true));
      init[0] = arith::SelectOp::create(b, use, sink, init[0]);
      init[1] = arith::SelectOp::create(b, use, one, init[1]);
    }
    if (!s.positionMask.any())
      return keyLoop(k0, k1, init);

    Value tileKeys = index(kSkipTileKeys);
    auto tiles = scf::ForOp::create(b, k0, k1, tileKeys, init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value t0 = tiles.getInductionVar();
    Value end = arith::AddIOp::create(b, t0, tileKeys);
    Value t1 = arith::MinUIOp::create(b, end, k1);
    auto [kMin, kMax] = keyPositionRange(t0, t1);
    Value hidden = buildTileVisibility(b, s.positionMask, qp, qp, kMin, kMax).hidden;
    ValueRange state = tiles.getRegionIterArgs();
    auto ifHidden = scf::IfOp::create(b, state.getTypes(), hidden, /*withElseRegion=*/true);
    b.setInsertionPointToStart(ifHidden.thenBlock());
    scf::YieldOp::create(b, state);
    b.setInsertionPointToStart(ifHidden.elseBlock());
    scf::YieldOp::create(b, keyLoop(t0, t1, state));
    b.setInsertionPointAfter(ifHidden);
    scf::YieldOp::create(b, ifHidden.getResults());
    return tiles.getResults();
  }

  /// (min, max) of the i64 positions of keys [t0, t1).
  std::pair<Value, Value> keyPositionRange(Value t0, Value t1) {
    Value step = index(1);
    Value lowest = arith::ConstantOp::create(b, b.getI64IntegerAttr(INT64_MIN));
    Value highest = arith::ConstantOp::create(b, b.getI64IntegerAttr(INT64_MAX));
    auto loop = scf::ForOp::create(b, t0, t1, step, ValueRange{highest, lowest});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value kp = buildPositionAt(b, buf.kPos, bi, loop.getInductionVar());
      Value kMin = arith::MinSIOp::create(b, loop.getRegionIterArgs()[0], kp);
      Value kMax = arith::MaxSIOp::create(b, loop.getRegionIterArgs()[1], kp);
      scf::YieldOp::create(b, ValueRange{kMin, kMax});
    }
    return {loop.getResult(0), loop.getResult(1)};
  }

  /// out[bi, h, i, chunk] = acc / l (0 for l = 0).
  void storeOutput(ValueRange state) {
    Value out = buildNormalize(b, state[2], splat(state[1], s.chunk));
    vector::StoreOp::create(b, convertFloat(b, out, s.element), buf.out,
                            ValueRange{bi, h, i, e0});
  }

  /// The state of key split `split` into the partial buffers (the row's
  /// (m, l) by its first chunk's thread).
  void storePartial(ValueRange state, Value split) {
    vector::StoreOp::create(b, state[2], buf.partialOut, ValueRange{bi, h, i, split, e0});
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, e0, index(0));
    auto ifFirst = scf::IfOp::create(b, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
    for (int64_t k = 0; k < 2; ++k)
      memref::StoreOp::create(b, state[k], buf.partialStats,
                              ValueRange{bi, h, i, split, index(k)});
  }

  /// The splits' states merged as the online softmax merges keys, a split of
  /// max m_s, sum l_s and output acc_s weighing like a key of score m_s:
  ///   M' = max(M, m_s), w = exp(m_s - M'), alpha = exp(M - M'),
  ///   L = alpha L + w l_s, O = alpha O + w acc_s;
  /// then out = O / L. A split without a visible key (m_s = -inf) adds 0.
  void combinePartials(Value splits) {
    Value first = index(0), step = index(1);
    SmallVector<Value> init = initialState();
    auto loop = scf::ForOp::create(b, first, splits, step, init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value split = loop.getInductionVar();
      auto stat = [&](int64_t k) {
        return memref::LoadOp::create(b, buf.partialStats,
                                      ValueRange{bi, h, i, split, index(k)})
            .getResult();
      };
      Value rowMax = stat(0), rowSum = stat(1);
      Value acc = loadValueChunk(buf.partialOut, {bi, h, i, split, e0}, b.getF32Type());
      scf::YieldOp::create(b, softmaxStep(loop.getRegionIterArgs(), rowMax, rowSum, acc));
    }
    storeOutput(loop.getResults());
  }

private:
  ImplicitLocOpBuilder &b;
  const GpuAttentionShape &s;
  const GpuAttentionBuffers &buf;
  Value bi, h, i, kvh, e0;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(static_cast<float>(v)));
  }
  Value splat(Value scalar, int64_t lanes) {
    return vector::BroadcastOp::create(b, VectorType::get({lanes}, scalar.getType()), scalar);
  }

  bool needsPositions() const {
    return s.alibi || s.positionMask.any() || s.temperature;
  }

  /// A row of q or k: the buffer, every index but the channel, its tables
  /// ([S, r/2] or [B, S, r/2]) and its row `i` in them.
  struct Row {
    Value x;
    SmallVector<Value> at;
    Value cos, sin, i;
  };

  /// Channels [c, c + n) of `row` as f32.
  Value loadChannels(const Row &row, Value c, int64_t n) {
    Type element = cast<MemRefType>(row.x.getType()).getElementType();
    SmallVector<Value> at(row.at);
    at.push_back(c);
    return extendToF32(b, vector::LoadOp::create(b, VectorType::get({n}, element), row.x, at));
  }

  /// The rotated channels of pairs [pair, pair + lanes) of `row`, as pieces
  /// of `lanes` channels in the order buildVectorPairRotation stores them
  /// (the same for every row).
  SmallVector<Value> rotatedPieces(const Row &row, int64_t pair, int64_t lanes) {
    auto tableSlice = [&](Value table) {
      bool batched = cast<MemRefType>(table.getType()).getRank() == 3;
      SmallVector<Value> at = batched ? SmallVector<Value>{bi, row.i} : SmallVector<Value>{row.i};
      at.push_back(index(pair));
      return vector::LoadOp::create(b, VectorType::get({lanes}, b.getF32Type()), table, at)
          .getResult();
    };
    Value cos = tableSlice(row.cos), sin = tableSlice(row.sin);
    SmallVector<Value> pieces;
    buildVectorPairRotation(
        b, cos, sin, index(pair), RotatedChannels::of(s.rope),
        [&](Value c, int64_t n) { return loadChannels(row, c, n); },
        [&](Value piece, Value) { pieces.push_back(piece); });
    return pieces;
  }

  /// rope(q) . rope(k) for rows `q` and `k`, a few channels at a time, the
  /// products summed into kGpuPieceLanes partial sums. The query's reads and
  /// rotation do not depend on the key: LLVM hoists them out of the key
  /// loop (with causal/window masks out of a tile's loop, not out of the
  /// condition that skips the tile), so the query is held in registers.
  Value dotRotated(const Row &q, const Row &k) {
    Value partial = splat(f32(0.0), kGpuPieceLanes);
    auto accumulate = [&](Value qPiece, Value kPiece) {
      Value product = arith::MulFOp::create(b, qPiece, kPiece);
      if (cast<VectorType>(product.getType()).getNumElements() < kGpuPieceLanes)
        product = vector::InsertStridedSliceOp::create(
            b, product, splat(f32(0.0), kGpuPieceLanes), ArrayRef<int64_t>{0},
            ArrayRef<int64_t>{1});
      partial = arith::AddFOp::create(b, partial, product);
    };
    const int64_t rotary = s.rope ? s.rope.getRotaryDim() : 0, half = rotary / 2;
    const int64_t pairLanes = pieceLanes(std::max<int64_t>(half, 1), kGpuPieceLanes);
    for (int64_t pair = 0; pair < half; pair += pairLanes) {
      auto qPieces = rotatedPieces(q, pair, pairLanes);
      auto kPieces = rotatedPieces(k, pair, pairLanes);
      for (auto [qPiece, kPiece] : llvm::zip_equal(qPieces, kPieces))
        accumulate(qPiece, kPiece);
    }
    const RotatedChannels rotation =
        s.rope ? RotatedChannels::of(s.rope) : RotatedChannels{};
    for (auto [begin, end] : rotation.passThrough(s.heads.headDim)) {
      const int64_t restLanes = pieceLanes(end - begin, kGpuPieceLanes);
      for (int64_t c = begin; c < end; c += restLanes) {
        Value qPiece = loadChannels(q, index(c), restLanes);
        Value kPiece = loadChannels(k, index(c), restLanes);
        accumulate(qPiece, kPiece);
      }
    }
    return vector::ReductionOp::create(b, vector::CombiningKind::ADD, partial);
  }

  /// The score of key j for the thread's query: rowScale (q' . rope(k)),
  /// soft-capped, then ALiBi, the mask operand, and -inf where the position
  /// masks hide the key.
  Value keyScore(const Row &query, Value j, Value qp, Value slope, Value rowScale) {
    Row key{buf.k, {bi, kvh, j}, buf.kCos, buf.kSin, j};
    Value dot = dotRotated(query, key);
    Value score = arith::MulFOp::create(b, dot, rowScale);
    if (s.softcap)
      score = buildSoftcapScore(b, score, *s.softcap);
    Value kp = needsPositions() ? buildPositionAt(b, buf.kPos, bi, j) : nullptr;
    if (s.alibi)
      score = buildAlibiScore(b, score, slope, buildPositionDistance(b, kp, qp));
    if (buf.mask) {
      // [B|1, Hq|1, Sq, Skv]: a dimension of static size 1 broadcasts.
      auto type = cast<MemRefType>(buf.mask.getType());
      Value mb = type.getDimSize(0) == 1 ? index(0) : bi;
      Value mh = type.getDimSize(1) == 1 ? index(0) : h;
      Value entry = memref::LoadOp::create(b, buf.mask, ValueRange{mb, mh, i, j});
      score = buildAddMask(b, score, extendToF32(b, entry));
    }
    if (s.positionMask.any()) {
      Value hidden = buildIsMasked(b, s.positionMask, qp, kp);
      score = arith::SelectOp::create(b, hidden,
                                      f32(-std::numeric_limits<double>::infinity()), score);
    }
    return score;
  }

  /// (-inf, 0, 0): the state before the first key.
  SmallVector<Value> initialState() {
    return {f32(-std::numeric_limits<double>::infinity()), f32(0.0), splat(f32(0.0), s.chunk)};
  }

  /// `chunk` channels of `buffer` at `at` as f32.
  Value loadValueChunk(Value buffer, ValueRange at, Type element) {
    return extendToF32(b, vector::LoadOp::create(b, VectorType::get({s.chunk}, element),
                                                 buffer, at));
  }

  /// The online-softmax update of state (m, l, acc) with a term of score
  /// `score` and value `value`: a key (weight 1) or, with `weight` l_s, the
  /// state of a split whose max is `score`.
  SmallVector<Value> softmaxStep(ValueRange state, Value score, Value weight, Value value) {
    Value m = state[0], l = state[1], acc = state[2];
    Value rowMax = buildRunningRowMax(b, m, score);
    Value base = buildExponentBase(b, rowMax);
    Value p = buildExpOfDifference(b, score, base, buildExpNonPositive);
    Value alpha = buildExpOfDifference(b, m, base, buildExpNonPositive);
    Value sum = buildRescaledSum(b, l, alpha, weight ? arith::MulFOp::create(b, p, weight) : p);
    Value rescaled = buildRescale(b, acc, splat(alpha, s.chunk));
    Value weights = splat(p, s.chunk);
    Value out = buildWeightedSum(b, rescaled, weights, value);
    return {rowMax, sum, out};
  }
};

Value zeroIndex(ImplicitLocOpBuilder &b) { return arith::ConstantIndexOp::create(b, 0); }

/// A new buffer of `sizes` and element type `element`.
Value alloc(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes, Type element) {
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamic;
  dispatchIndexOpFoldResults(sizes, dynamic, shape);
  return memref::AllocOp::create(b, MemRefType::get(shape, element), dynamic);
}

/// One scf.parallel over [0, sizes), its body built by `body(ivs)`.
void parallelLoop(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes,
                  function_ref<void(ValueRange)> body) {
  SmallVector<Value> upper = getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes);
  Value zero = zeroIndex(b), one = arith::ConstantIndexOp::create(b, 1);
  auto loop = scf::ParallelOp::create(b, SmallVector<Value>(upper.size(), zero), upper,
                                      SmallVector<Value>(upper.size(), one));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(SmallVector<Value>(loop.getInductionVars()));
}

/// How decode splits `keys` keys among the `threads` threads of the rows
/// and chunks: splits = clamp(ceil(keys / kMinSplitKeys), 1, cap) ranges of
/// len = ceil(keys / splits) keys, cap = clamp(ceil(targetThreads /
/// threads), 1, kMaxSplits) (a call with many rows needs few splits), with
/// `targetThreads` the threads the chip holds at once. The last ranges may
/// be short or empty.
std::pair<Value, Value> keySplits(ImplicitLocOpBuilder &b, Value keys, Value threads,
                                  int64_t targetThreads) {
  auto ceilDiv = [&](Value x, Value y) { return arith::CeilDivUIOp::create(b, x, y); };
  auto clamp = [&](Value x, Value high) {
    Value one = arith::ConstantIndexOp::create(b, 1);
    return arith::MinUIOp::create(b, arith::MaxUIOp::create(b, x, one), high);
  };
  Value target = arith::ConstantIndexOp::create(b, targetThreads);
  Value maxSplits = arith::ConstantIndexOp::create(b, kMaxSplits);
  Value minKeys = arith::ConstantIndexOp::create(b, kMinSplitKeys);
  Value cap = clamp(ceilDiv(target, threads), maxSplits);
  Value splits = clamp(ceilDiv(keys, minKeys), cap);
  return {splits, ceilDiv(keys, splits)};
}

/// Whether the tensor-core kernel computes `op`: bf16/f16, head dims that
/// are multiples of 16 up to 128 (pe_gpu.mma_attention), a rotated block
/// that starts at a multiple of 16 channels (its vector accesses are
/// aligned to their width).
bool suitsTensorCores(AttentionOp op) {
  std::optional<AttentionHeads> heads = attentionHeads(op);
  Type element = op.getQuery().getType().getElementType();
  auto fits = [](int64_t dim) { return dim % 16 == 0 && dim <= 128; };
  RopeAttr rope = op.getRopeAttr();
  return heads && element.isF16() != element.isBF16() && fits(heads->headDim) &&
         fits(heads->valueDim) && (!rope || rope.getRotaryOffset() % 16 == 0);
}

/// How the tensor-core decode splits `keys` keys among blocks: splits =
/// clamp(ceil(keys / kMinMmaSplitKeys), 1, cap) with cap = clamp(
/// ceil(targetBlocks / max(blocks, 1)), 1, kMaxSplits), `blocks` the blocks
/// of one split (row tiles x KV heads x batch; 0 for an empty batch).
Value mmaKeySplits(ImplicitLocOpBuilder &b, Value keys, Value blocks, int64_t targetBlocks) {
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, v); };
  auto clamp = [&](Value x, Value high) {
    return arith::MinUIOp::create(b, arith::MaxUIOp::create(b, x, index(1)), high);
  };
  Value divisor = arith::MaxUIOp::create(b, blocks, index(1));
  Value cap = clamp(arith::CeilDivUIOp::create(b, index(targetBlocks), divisor),
                    index(kMaxSplits));
  return clamp(arith::CeilDivUIOp::create(b, keys, index(kMinMmaSplitKeys)), cap);
}

/// Whether the tensor-core kernel of `op` should read K rotated once, by a
/// pe.rope before it (the 16-byte chunk kernel: K read and written once,
/// with the tables the kernel would read), rather than rotate each key tile
/// in every block that reads it: every one of the ceil(Sq G / 64) row tiles
/// of a KV head would rotate all its keys again. Decode (one row tile)
/// keeps the rotation in the kernel, where K is read once either way. The
/// rotated K is rounded to the element type exactly as the kernel rounds it
/// into shared memory, so the result is the same. A multi-stream rope keeps
/// it too (its tables are per token, not per position).
static bool rotatesKeysFirst(AttentionOp op, const GpuAttentionShape &shape) {
  RopeAttr rope = op.getRopeAttr();
  if (!rope || rope.isMultiStream() || shape.decode)
    return false;
  const int64_t queries = op.getQuery().getType().getDimSize(2);
  return ShapedType::isDynamic(queries) ||
         llvm::divideCeil(queries * shape.group(), kMmaAttentionBlockRows) > 1;
}

/// pe.attention -> pe_gpu.mma_attention on its buffers (the tables and
/// slopes computed here, on tensors), the result read from `out`. Decode
/// (few static queries): the keys split across blocks, then a loop per
/// (row, value chunk) merging the splits' states (as the SIMT decode does).
void replaceWithMmaAttention(AttentionOp op, PatternRewriter &rewriter, const GpuChip &chip) {
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  AttentionTensors t = prepareAttentionTensors(b, op);
  std::optional<GpuAttentionShape> shape = shapeOf(op, /*anyHeadDim=*/true);
  const bool rotateKeysFirst = rotatesKeysFirst(op, *shape);
  // No positions given: the kernel computes the defaults instead of reading
  // the tensors made of them (the tables still read those).
  const bool defaults = !op.getQPositions() && !op.getKPositions();
  if (rotateKeysFirst)
    t.k = RopeOp::create(b, t.k.getType(), t.k, t.kPos, t.kCos, t.kSin, op.getRopeAttr(),
                         Layout::bhsd);
  Value qCos = toReadOnlyBuffer(b, t.qCos), qSin = toReadOnlyBuffer(b, t.qSin);
  Value kCos = t.kCos == t.qCos ? qCos : toReadOnlyBuffer(b, t.kCos);
  Value kSin = t.kSin == t.qSin ? qSin : toReadOnlyBuffer(b, t.kSin);
  Value slopes = toReadOnlyBuffer(b, t.slopes);
  Value q = toReadOnlyBuffer(b, t.q), k = toReadOnlyBuffer(b, t.k), v = toReadOnlyBuffer(b, t.v);
  Value qPos = toReadOnlyBuffer(b, t.qPos), kPos = toReadOnlyBuffer(b, t.kPos);
  Value mask = toReadOnlyBuffer(b, t.mask);
  Value sinks = toReadOnlyBuffer(b, op.getSinks());
  // The kernel copies K and V rows by 16-byte cp.async: a caller's view
  // whose first element is not 16-byte aligned is reported, never faulted on.
  for (Value buffer : {k, v})
    buildAlignmentCheck(b, op, buffer, kMmaOperandAlignment);
  std::optional<AttentionHeads> heads = attentionHeads(op);
  SmallVector<OpFoldResult> sizes = {
      memref::getMixedSize(b, b.getLoc(), q, 0), b.getIndexAttr(heads->queryHeads),
      memref::getMixedSize(b, b.getLoc(), q, 2), b.getIndexAttr(heads->valueDim)};
  Value out = alloc(b, sizes, op.getQuery().getType().getElementType());
  auto create = [&](Value splits, Value partialOut, Value partialStats) {
    pe_gpu::MmaAttentionOp::create(b, q, k, v, mask, qPos, kPos, qCos, qSin, kCos, kSin, slopes,
                                   sinks, out,
                              splits, partialOut, partialStats,
                              b.getF64FloatAttr(op.getEffectiveScale()), op.getCausalAttr(),
                              op.getWindowAttr(), op.getChunkAttr(), op.getRopeAttr(),
                              op.getSoftcapAttr(), op.getTemperatureAttr(),
                              rotateKeysFirst ? b.getUnitAttr() : nullptr,
                              defaults ? b.getUnitAttr() : nullptr);
  };
  if (!shape->decode) {
    create(nullptr, nullptr, nullptr);
    rewriter.replaceOp(op, attentionResultFromBuffer(b, op, out));
    return;
  }
  // The kernel's blocks without splits: ceil(Sq G / 64) x Hkv x B.
  const int64_t queries = op.getQuery().getType().getDimSize(2);
  const int64_t rowTiles = llvm::divideCeil(queries * shape->group(), kMmaAttentionBlockRows);
  Value blocks = arith::MulIOp::create(
      b, getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes[0]),
      arith::ConstantIndexOp::create(b, rowTiles * shape->heads.kvHeads));
  Value keys = memref::DimOp::create(b, k, 2);
  Value splits =
      mmaKeySplits(b, keys, blocks, chip.multiprocessors * kMmaBlocksPerMultiprocessor);
  SmallVector<OpFoldResult> partialSizes(sizes.begin(), sizes.begin() + 3);
  partialSizes.push_back(splits);
  partialSizes.push_back(b.getIndexAttr(shape->heads.valueDim));
  Value partialOut = alloc(b, partialSizes, b.getF32Type());
  partialSizes.back() = b.getIndexAttr(2);
  Value partialStats = alloc(b, partialSizes, b.getF32Type());
  create(splits, partialOut, partialStats);
  GpuAttentionBuffers buf;
  buf.out = out;
  buf.partialOut = partialOut;
  buf.partialStats = partialStats;
  sizes[3] = b.getIndexAttr(shape->heads.valueDim / shape->chunk);
  parallelLoop(b, sizes, [&](ValueRange t) {
    AttentionThread(b, *shape, buf, t[0], t[1], t[2], t[3]).combinePartials(splits);
  });
  rewriter.replaceOp(op, attentionResultFromBuffer(b, op, out));
}

struct GpuTileAttention : OpRewritePattern<AttentionOp> {
  GpuTileAttention(MLIRContext *context, bool tensorCores, const GpuChip &chip)
      : OpRewritePattern(context), tensorCores(tensorCores), chip(chip) {}
  bool tensorCores;
  GpuChip chip;

  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    if (tensorCores && suitsTensorCores(op) &&
        SymbolTable::getNearestSymbolTable(op) &&
        largestConstantTable(op) <= kMaxConstantTableEntries) {
      replaceWithMmaAttention(op, rewriter, chip);
      return success();
    }
    std::optional<GpuAttentionShape> shape = shapeOf(op);
    if (!shape)
      return rewriter.notifyMatchFailure(op, "dynamic or too wide heads: reference lowering");
    if (!SymbolTable::getNearestSymbolTable(op) ||
        largestConstantTable(op) > kMaxConstantTableEntries)
      return rewriter.notifyMatchFailure(op, "left to the reference lowering");

    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    // Every tensor first, then the buffers (no tensor may be computed after
    // another's to_buffer: it could reuse that tensor's buffer).
    AttentionTensors t = prepareAttentionTensors(b, op);
    GpuAttentionBuffers buf;
    buf.qCos = toReadOnlyBuffer(b, t.qCos);
    buf.qSin = toReadOnlyBuffer(b, t.qSin);
    buf.kCos = t.kCos == t.qCos ? buf.qCos : toReadOnlyBuffer(b, t.kCos);
    buf.kSin = t.kSin == t.qSin ? buf.qSin : toReadOnlyBuffer(b, t.kSin);
    buf.slopes = toReadOnlyBuffer(b, t.slopes);
    buf.q = toReadOnlyBuffer(b, t.q);
    buf.k = toReadOnlyBuffer(b, t.k);
    buf.v = toReadOnlyBuffer(b, t.v);
    buf.qPos = toReadOnlyBuffer(b, t.qPos);
    buf.kPos = toReadOnlyBuffer(b, t.kPos);
    buf.mask = toReadOnlyBuffer(b, t.mask);
    buf.sinks = toReadOnlyBuffer(b, op.getSinks());

    // out: [B, Hq, Sq, Dv].
    SmallVector<OpFoldResult> sizes = {
        memref::getMixedSize(b, b.getLoc(), buf.q, 0), b.getIndexAttr(shape->heads.queryHeads),
        memref::getMixedSize(b, b.getLoc(), buf.q, 2), b.getIndexAttr(shape->heads.valueDim)};
    buf.out = alloc(b, sizes, shape->element);
    // Threads: (batch, query head, query, value chunk).
    sizes[3] = b.getIndexAttr(shape->heads.valueDim / shape->chunk);
    Value keys = memref::DimOp::create(b, buf.k, 2);
    if (!shape->decode) {
      parallelLoop(b, sizes, [&](ValueRange t) {
        AttentionThread thread(b, *shape, buf, t[0], t[1], t[2], t[3]);
        thread.storeOutput(thread.streamKeys(zeroIndex(b), keys));
      });
      rewriter.replaceOp(op, attentionResultFromBuffer(b, op, buf.out));
      return success();
    }

    // Decode: the keys in `splits` ranges of `len`, one thread per (row,
    // chunk, split), then one per (row, chunk) merging the splits.
    Value threads = getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes[0]);
    for (int64_t d = 1; d < 4; ++d) {
      Value size = getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes[d]);
      threads = arith::MulIOp::create(b, threads, size);
    }
    auto [splits, len] = keySplits(b, keys, threads, chip.residentThreads(kRegisters));
    SmallVector<OpFoldResult> partialSizes(sizes.begin(), sizes.begin() + 3);
    partialSizes.push_back(splits);
    partialSizes.push_back(b.getIndexAttr(shape->heads.valueDim));
    buf.partialOut = alloc(b, partialSizes, b.getF32Type());
    partialSizes.back() = b.getIndexAttr(2);
    buf.partialStats = alloc(b, partialSizes, b.getF32Type());
    SmallVector<OpFoldResult> splitThreads(sizes);
    splitThreads.push_back(splits);
    parallelLoop(b, splitThreads, [&](ValueRange t) {
      AttentionThread thread(b, *shape, buf, t[0], t[1], t[2], t[3]);
      Value k0 = arith::MulIOp::create(b, t[4], len);
      Value k1 = arith::MinUIOp::create(b, arith::AddIOp::create(b, k0, len), keys);
      Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t[4], zeroIndex(b));
      thread.storePartial(thread.streamKeys(k0, k1, first), t[4]);
    });
    parallelLoop(b, sizes, [&](ValueRange t) {
      AttentionThread(b, *shape, buf, t[0], t[1], t[2], t[3]).combinePartials(splits);
    });
    rewriter.replaceOp(op, attentionResultFromBuffer(b, op, buf.out));
    return success();
  }
};

struct GpuTileAttentionPass : pe::impl::PEGpuTileAttentionBase<GpuTileAttentionPass> {
  using PEGpuTileAttentionBase::PEGpuTileAttentionBase;
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-gpu-tile-attention")))
      return signalPassFailure();
    std::optional<GpuChip> described = describeGpuChip(chip);
    if (!described) {
      getOperation()->emitError() << "pe-gpu-tile-attention: unknown chip '" << chip
                                  << "' (sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, "
                                     "sm_100a, sm_120, sm_120a)";
      return signalPassFailure();
    }
    if (multiprocessors < 0 || multiprocessors > (1 << 16)) {
      getOperation()->emitError()
          << "pe-gpu-tile-attention: multiprocessors must be in [0, 65536] (0: the chip's)";
      return signalPassFailure();
    }
    if (multiprocessors > 0)
      described->multiprocessors = multiprocessors;
    RewritePatternSet patterns(&getContext());
    populateGpuTileAttentionPatterns(patterns, tensorCores, *described);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::pe::populateGpuTileAttentionPatterns(RewritePatternSet &patterns,
                                                bool tensorCores, const GpuChip &chip) {
  patterns.add<GpuTileAttention>(patterns.getContext(), tensorCores, chip);
}
