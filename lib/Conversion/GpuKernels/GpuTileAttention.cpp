//===- GpuTileAttention.cpp - pe-gpu-tile-attention -----------------------===//
//
// pe.attention for the GPU without tensor cores: one parallel loop over
// (batch b, query head h, query i, chunk c of the value channels), mapped
// one iteration per thread, chunk innermost. The thread holds its rotated
// query row and the online softmax of its output chunk in registers and
// streams the keys of its KV head:
//
//   q' = rope(q[b, h, i, :])                              once
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
// registers, which bounds the head dim (kMaxHeadDim).
//
//===----------------------------------------------------------------------===//
#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/AttentionBuilders.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "GpuBuffers.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <limits>

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUTILEATTENTION
#include "pe/Conversion/Passes.h.inc"
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
/// Channels of a key row rotated and multiplied at a time.
constexpr int64_t kPieceLanes = 8;

/// What the kernel is specialized on.
struct GpuAttentionShape {
  AttentionHeads heads;
  int64_t chunk = 0;
  Type element;
  double scale = 1.0;
  PositionMask positionMask;
  bool alibi = false;
  RopeAttr rope;

  int64_t group() const { return heads.queryHeads / heads.kvHeads; }
};

std::optional<GpuAttentionShape> shapeOf(AttentionOp op) {
  std::optional<AttentionHeads> heads = attentionHeads(op);
  if (!heads)
    return std::nullopt;
  GpuAttentionShape s;
  s.heads = *heads;
  if (s.heads.headDim > kMaxHeadDim || s.heads.valueDim > kMaxHeadDim)
    return std::nullopt;
  // The largest power of two up to kMaxChunk that divides Dv.
  s.chunk = 1;
  while (s.chunk < kMaxChunk && s.heads.valueDim % (2 * s.chunk) == 0)
    s.chunk *= 2;
  s.element = op.getQuery().getType().getElementType();
  s.scale = op.getEffectiveScale();
  s.positionMask = PositionMask::of(op);
  s.alibi = op.getAlibi().has_value();
  s.rope = op.getRopeAttr();
  return s;
}

/// The value of an index that arith built from constants (the channels
/// buildVectorPairRotation computes from a constant first pair).
std::optional<int64_t> foldIndex(Value v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  Operation *op = v.getDefiningOp();
  if (!op || !isa<arith::AddIOp, arith::MulIOp>(op))
    return std::nullopt;
  std::optional<int64_t> l = foldIndex(op->getOperand(0)), r = foldIndex(op->getOperand(1));
  if (!l || !r)
    return std::nullopt;
  return isa<arith::AddIOp>(op) ? *l + *r : *l * *r;
}

/// The buffers the kernel reads and writes (null where absent).
struct GpuAttentionBuffers {
  Value q, k, v, mask, qPos, kPos, qCos, qSin, kCos, kSin, slopes, out;
};

/// Builds the loop body of one thread.
class AttentionThread {
public:
  AttentionThread(ImplicitLocOpBuilder &b, const GpuAttentionShape &s,
                  const GpuAttentionBuffers &buf)
      : b(b), s(s), buf(buf) {}

  /// The body for thread (bi, h, i, c).
  void build(Value bi, Value h, Value i, Value c) {
    this->bi = bi;
    Value kvh = arith::DivUIOp::create(b, h, index(s.group()));
    Value e0 = arith::MulIOp::create(b, c, index(s.chunk));
    Row query{buf.q, {bi, h, i}, buf.qCos, buf.qSin, i};
    Value qp = needsPositions() ? positionAt(buf.qPos, i) : nullptr;
    Value slope = s.alibi ? memref::LoadOp::create(b, buf.slopes, ValueRange{h}).getResult()
                          : nullptr;

    Value keys = memref::DimOp::create(b, buf.k, 2);
    SmallVector<Value> init = {f32(-std::numeric_limits<double>::infinity()), f32(0.0),
                               splat(f32(0.0), s.chunk)};
    auto loop = scf::ForOp::create(b, index(0), keys, index(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value j = loop.getInductionVar();
      Value score = keyScore(query, kvh, i, j, h, qp, slope);
      SmallVector<Value> next = softmaxStep(loop.getRegionIterArgs(), score, kvh, j, e0);
      scf::YieldOp::create(b, next);
    }
    Value l = loop.getResult(1), acc = loop.getResult(2);
    Value out = buildNormalize(b, acc, splat(l, s.chunk));
    vector::StoreOp::create(b, convertFloat(b, out, s.element), buf.out,
                            ValueRange{bi, h, i, e0});
  }

private:
  ImplicitLocOpBuilder &b;
  const GpuAttentionShape &s;
  const GpuAttentionBuffers &buf;
  Value bi;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(static_cast<float>(v)));
  }
  Value splat(Value scalar, int64_t lanes) {
    return vector::BroadcastOp::create(b, VectorType::get({lanes}, scalar.getType()), scalar);
  }

  bool needsPositions() const {
    return s.alibi || s.positionMask.causal || s.positionMask.window;
  }

  /// Position `i` of batch row `bi` (positions [S] or [B, S]) as i64.
  Value positionAt(Value positions, Value i) {
    bool batched = cast<MemRefType>(positions.getType()).getRank() == 2;
    SmallVector<Value> at = batched ? SmallVector<Value>{bi, i} : SmallVector<Value>{i};
    return extendToI64(b, memref::LoadOp::create(b, positions, at));
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
  /// of `lanes` channels keyed by their first channel.
  SmallVector<std::pair<int64_t, Value>> rotatedPieces(const Row &row, int64_t pair,
                                                       int64_t lanes) {
    auto tableSlice = [&](Value table) {
      bool batched = cast<MemRefType>(table.getType()).getRank() == 3;
      SmallVector<Value> at = batched ? SmallVector<Value>{bi, row.i} : SmallVector<Value>{row.i};
      at.push_back(index(pair));
      return vector::LoadOp::create(b, VectorType::get({lanes}, b.getF32Type()), table, at)
          .getResult();
    };
    Value cos = tableSlice(row.cos), sin = tableSlice(row.sin);
    SmallVector<std::pair<int64_t, Value>> pieces;
    buildVectorPairRotation(
        b, cos, sin, index(pair), s.rope.getStyle(), s.rope.getRotaryDim(),
        [&](Value c, int64_t n) { return loadChannels(row, c, n); },
        [&](Value piece, Value c) { pieces.push_back({*foldIndex(c), piece}); });
    return pieces;
  }

  /// The largest power of two up to kPieceLanes that divides n (n > 0).
  static int64_t pieceLanes(int64_t n) {
    int64_t lanes = 1;
    while (lanes < kPieceLanes && n % (2 * lanes) == 0)
      lanes *= 2;
    return lanes;
  }

  /// rope(q) . rope(k) for rows `q` and `k`, a few channels at a time, the
  /// products summed into kPieceLanes partial sums. The query's reads and
  /// rotation do not depend on the key: LLVM hoists them out of the key
  /// loop, so the query is rotated once and held in registers.
  Value dotRotated(const Row &q, const Row &k) {
    Value partial = splat(f32(0.0), kPieceLanes);
    auto accumulate = [&](Value qPiece, Value kPiece) {
      Value product = arith::MulFOp::create(b, qPiece, kPiece);
      if (cast<VectorType>(product.getType()).getNumElements() < kPieceLanes)
        product = vector::InsertStridedSliceOp::create(
            b, product, splat(f32(0.0), kPieceLanes), ArrayRef<int64_t>{0},
            ArrayRef<int64_t>{1});
      partial = arith::AddFOp::create(b, partial, product);
    };
    const int64_t rotary = s.rope ? s.rope.getRotaryDim() : 0, half = rotary / 2;
    const int64_t pairLanes = pieceLanes(std::max<int64_t>(half, 1));
    for (int64_t pair = 0; pair < half; pair += pairLanes) {
      auto qPieces = rotatedPieces(q, pair, pairLanes);
      auto kPieces = rotatedPieces(k, pair, pairLanes);
      for (auto [qPiece, kPiece] : llvm::zip_equal(qPieces, kPieces))
        accumulate(qPiece.second, kPiece.second);
    }
    const int64_t restLanes = pieceLanes(std::max<int64_t>(s.heads.headDim - rotary, 1));
    for (int64_t c = rotary; c < s.heads.headDim; c += restLanes)
      accumulate(loadChannels(q, index(c), restLanes), loadChannels(k, index(c), restLanes));
    return vector::ReductionOp::create(b, vector::CombiningKind::ADD, partial);
  }

  /// The score of key j for the thread's query: q' . rope(k), then ALiBi,
  /// the mask operand, and -inf where the position masks hide the key.
  Value keyScore(const Row &query, Value kvh, Value i, Value j, Value h, Value qp,
                 Value slope) {
    Row key{buf.k, {bi, kvh, j}, buf.kCos, buf.kSin, j};
    Value score = arith::MulFOp::create(b, dotRotated(query, key), f32(s.scale));
    Value kp = needsPositions() ? positionAt(buf.kPos, j) : nullptr;
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
    if (s.positionMask.causal || s.positionMask.window) {
      Value hidden = buildIsMasked(b, s.positionMask, qp, kp);
      score = arith::SelectOp::create(b, hidden,
                                      f32(-std::numeric_limits<double>::infinity()), score);
    }
    return score;
  }

  /// The online-softmax update of (m, l, acc) with one key of score `score`.
  SmallVector<Value> softmaxStep(ValueRange state, Value score, Value kvh, Value j, Value e0) {
    Value m = state[0], l = state[1], acc = state[2];
    Value rowMax = buildRunningRowMax(b, m, score);
    Value base = buildExponentBase(b, rowMax);
    Value p = buildExpOfDifference(b, score, base, buildExpNonPositive);
    Value alpha = buildExpOfDifference(b, m, base, buildExpNonPositive);
    Value sum = buildRescaledSum(b, l, alpha, p);
    Type element = cast<MemRefType>(buf.v.getType()).getElementType();
    Value value = extendToF32(
        b, vector::LoadOp::create(b, VectorType::get({s.chunk}, element), buf.v,
                                  ValueRange{bi, kvh, j, e0}));
    Value out = buildWeightedSum(b, buildRescale(b, acc, splat(alpha, s.chunk)),
                                 splat(p, s.chunk), value);
    return {rowMax, sum, out};
  }
};

struct GpuTileAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
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

    // out: [B, Hq, Sq, Dv].
    SmallVector<OpFoldResult> sizes = {
        memref::getMixedSize(b, b.getLoc(), buf.q, 0), b.getIndexAttr(shape->heads.queryHeads),
        memref::getMixedSize(b, b.getLoc(), buf.q, 2), b.getIndexAttr(shape->heads.valueDim)};
    SmallVector<int64_t> staticShape;
    SmallVector<Value> dynamic;
    dispatchIndexOpFoldResults(sizes, dynamic, staticShape);
    buf.out = memref::AllocOp::create(b, MemRefType::get(staticShape, shape->element), dynamic);

    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value one = arith::ConstantIndexOp::create(b, 1);
    sizes[3] = b.getIndexAttr(shape->heads.valueDim / shape->chunk);
    SmallVector<Value> upper = getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes);
    auto loop = scf::ParallelOp::create(b, SmallVector<Value>(4, zero), upper,
                                        SmallVector<Value>(4, one));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      SmallVector<Value> ivs(loop.getInductionVars());
      AttentionThread(b, *shape, buf).build(ivs[0], ivs[1], ivs[2], ivs[3]);
    }

    rewriter.replaceOp(op, attentionResultFromBuffer(b, op, buf.out));
    return success();
  }
};

struct GpuTileAttentionPass : pe::impl::PEGpuTileAttentionBase<GpuTileAttentionPass> {
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-gpu-tile-attention")))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateGpuTileAttentionPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::pe::populateGpuTileAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<GpuTileAttention>(patterns.getContext());
}
