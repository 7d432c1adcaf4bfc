//===- SimtAttention.cpp - the threads of the SIMT attention kernels ------===//
#include "SimtAttention.h"

#include "pe/Dialect/PE/Utils/KernelUtils.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::simt;

int64_t GpuAttentionShape::chunkOf(int64_t valueDim) {
  int64_t chunk = 1;
  while (chunk < kMaxChunk && valueDim % (2 * chunk) == 0)
    chunk *= 2;
  return chunk;
}

AttentionThread::AttentionThread(ImplicitLocOpBuilder &b, const GpuAttentionShape &s,
                                 const GpuAttentionBuffers &buf, Value bi, Value h, Value i,
                                 Value c)
    : b(b), s(s), buf(buf), rowAt{bi, h, i}, bi(bi), h(h), i(i) {
  kvh = arith::DivUIOp::create(b, h, index(s.group()));
  e0 = arith::MulIOp::create(b, c, index(s.chunk));
}

AttentionThread::AttentionThread(ImplicitLocOpBuilder &b, const GpuAttentionShape &s,
                                 const GpuAttentionBuffers &buf, const PagedRows &paged,
                                 Value t, Value h, Value c)
    : b(b), s(s), buf(buf), paged(paged), rowAt{t, h}, h(h), i(t) {
  kvh = arith::DivUIOp::create(b, h, index(s.group()));
  e0 = arith::MulIOp::create(b, c, index(s.chunk));
}

SmallVector<Value> AttentionThread::streamKeys(Value k0, Value k1, Value withSinks) {
  Row query{buf.q, rowAt, buf.qCos, buf.qSin, i};
  Value qp = needsPositions() ? queryPosition() : nullptr;
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
    SmallVector<Value> at = keyAt(j);
    Value score = keyScore(query, j, at, qp, slope, rowScale);
    at.push_back(e0);
    Value value = loadValueChunk(buf.v, at, s.element);
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
std::pair<Value, Value> AttentionThread::keyPositionRange(Value t0, Value t1) {
  if (paged) // key j at position j
    return {keyPosition(t0), keyPosition(arith::SubIOp::create(b, t1, index(1)))};
  Value step = index(1);
  Value lowest = arith::ConstantOp::create(b, b.getI64IntegerAttr(INT64_MIN));
  Value highest = arith::ConstantOp::create(b, b.getI64IntegerAttr(INT64_MAX));
  auto loop = scf::ForOp::create(b, t0, t1, step, ValueRange{highest, lowest});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kp = keyPosition(loop.getInductionVar());
    Value kMin = arith::MinSIOp::create(b, loop.getRegionIterArgs()[0], kp);
    Value kMax = arith::MaxSIOp::create(b, loop.getRegionIterArgs()[1], kp);
    scf::YieldOp::create(b, ValueRange{kMin, kMax});
  }
  return {loop.getResult(0), loop.getResult(1)};
}

void AttentionThread::storeOutput(ValueRange state) {
  Value out = buildNormalize(b, state[2], splat(state[1], s.chunk));
  vector::StoreOp::create(b, convertFloat(b, out, s.element), buf.out,
                          rowAnd({e0}));
}

void AttentionThread::storePartial(ValueRange state, Value split) {
  vector::StoreOp::create(b, state[2], buf.partialOut, rowAnd({split, e0}));
  Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, e0, index(0));
  auto ifFirst = scf::IfOp::create(b, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
  for (int64_t k = 0; k < 2; ++k)
    memref::StoreOp::create(b, state[k], buf.partialStats,
                            rowAnd({split, index(k)}));
}

void AttentionThread::combinePartials(Value splits) {
  Value first = index(0), step = index(1);
  SmallVector<Value> init = initialState();
  auto loop = scf::ForOp::create(b, first, splits, step, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value split = loop.getInductionVar();
    auto stat = [&](int64_t k) {
      return memref::LoadOp::create(b, buf.partialStats, rowAnd({split, index(k)}))
          .getResult();
    };
    Value rowMax = stat(0), rowSum = stat(1);
    Value acc = loadValueChunk(buf.partialOut, rowAnd({split, e0}), b.getF32Type());
    scf::YieldOp::create(b, softmaxStep(loop.getRegionIterArgs(), rowMax, rowSum, acc));
  }
  storeOutput(loop.getResults());
}

Value AttentionThread::index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }

SmallVector<Value> AttentionThread::rowAnd(ArrayRef<Value> more) const {
  SmallVector<Value> at(rowAt);
  at.append(more.begin(), more.end());
  return at;
}

/// Dense: (b, kvh, j). Paged: page p = table[seq, j / P], slot j mod P of
/// it, at (p, slot, kvh) in an nhd cache and (p, kvh, slot) in an hnd one.
SmallVector<Value> AttentionThread::keyAt(Value j) {
  if (!paged)
    return {bi, kvh, j};
  Value column = arith::DivUIOp::create(b, j, paged->pageSize);
  Value entry = memref::LoadOp::create(b, paged->table, ValueRange{paged->seq, column});
  Value page = arith::IndexCastOp::create(b, b.getIndexType(), entry);
  Value slot = arith::RemUIOp::create(b, j, paged->pageSize);
  if (paged->layout == CacheLayout::nhd)
    return {page, slot, kvh};
  return {page, kvh, slot};
}

Value AttentionThread::queryPosition() {
  if (paged)
    return paged->queryPosition;
  return buildPositionAt(b, buf.qPos, bi, i);
}

Value AttentionThread::keyPosition(Value j) {
  if (paged)
    return arith::IndexCastOp::create(b, b.getI64Type(), j);
  return buildPositionAt(b, buf.kPos, bi, j);
}

/// The mask's entry for key j as f32: dense [B|1, Hq|1, Sq, Skv], paged
/// [T, Hq|1, K]; a dimension of static size 1 broadcasts.
Value AttentionThread::maskEntry(Value j) {
  auto type = cast<MemRefType>(buf.mask.getType());
  SmallVector<Value> at;
  if (!paged)
    at.push_back(type.getDimSize(0) == 1 ? index(0) : bi);
  else
    at.push_back(i);
  at.push_back(type.getDimSize(at.size()) == 1 ? index(0) : h);
  if (!paged)
    at.push_back(i);
  at.push_back(j);
  return extendToF32(b, memref::LoadOp::create(b, buf.mask, at));
}

Value AttentionThread::f32(double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(static_cast<float>(v)));
}
Value AttentionThread::splat(Value scalar, int64_t lanes) {
  return vector::BroadcastOp::create(b, VectorType::get({lanes}, scalar.getType()), scalar);
}

bool AttentionThread::needsPositions() const {
  return s.alibi || s.positionMask.any() || s.temperature;
}

/// Channels [c, c + n) of `row` as f32.
Value AttentionThread::loadChannels(const Row &row, Value c, int64_t n) {
  Type element = cast<MemRefType>(row.x.getType()).getElementType();
  SmallVector<Value> at(row.at);
  at.push_back(row.firstChannel ? arith::SubIOp::create(b, c, index(row.firstChannel)) : c);
  return extendToF32(b, vector::LoadOp::create(b, VectorType::get({n}, element), row.x, at));
}

/// The rotated channels of pairs [pair, pair + lanes) of `row`, as pieces
/// of `lanes` channels in the order buildVectorPairRotation stores them
/// (the same for every row).
SmallVector<AttentionThread::Piece> AttentionThread::rotatedPieces(const Row &row, Value pair,
                                                                   int64_t lanes) {
  auto tableSlice = [&](Value table) {
    bool batched = cast<MemRefType>(table.getType()).getRank() == 3;
    SmallVector<Value> at = batched ? SmallVector<Value>{bi, row.i} : SmallVector<Value>{row.i};
    at.push_back(pair);
    return vector::LoadOp::create(b, VectorType::get({lanes}, b.getF32Type()), table, at)
        .getResult();
  };
  Value cos = tableSlice(row.cos), sin = tableSlice(row.sin);
  SmallVector<Piece> pieces;
  buildVectorPairRotation(
      b, cos, sin, pair, RotatedChannels::of(s.rope),
      [&](Value c, int64_t n) { return loadChannels(row, c, n); },
      [&](Value piece, Value channel) { pieces.push_back({piece, channel}); });
  return pieces;
}

/// rope(q) . rope(k) for rows `q` and `k` (rope(q) . k for keys stored
/// rotated; with `kShared`, the key's channels from D - Ds on are that
/// row's), a few channels at a time, the products summed into
/// kGpuPieceLanes partial sums. Up to kMaxHeadDim channels the steps are
/// unrolled: the query's reads and rotation do not depend on the key, LLVM
/// hoists them out of the key loop (with causal/window masks out of a
/// tile's loop, not out of the condition that skips the tile), so the
/// query is held in registers. Wider heads step in an scf.for that reads
/// (from L1) and rotates the query's channels again for every key, so that
/// no thread holds more than a few of them.
Value AttentionThread::dotRotated(const Row &q, const Row &k, const Row *kShared) {
  // The key row holding channel c; ranges never straddle the two (the
  // rotated block lies on one side, the others are split where the shared
  // block starts).
  const int64_t own = s.heads.headDim - s.sharedKeyDim;
  auto keyRowOf = [&](int64_t c) -> const Row & { return kShared && c >= own ? *kShared : k; };
  const RotatedChannels rotation =
      s.rope ? RotatedChannels::of(s.rope) : RotatedChannels{};
  const Row &kRotated = keyRowOf(rotation.offset);
  Value partial = splat(f32(0.0), kGpuPieceLanes);
  auto accumulate = [&](Value qPiece, Value kPiece) {
    Value product = arith::MulFOp::create(b, qPiece, kPiece);
    if (cast<VectorType>(product.getType()).getNumElements() < kGpuPieceLanes)
      product = vector::InsertStridedSliceOp::create(
          b, product, splat(f32(0.0), kGpuPieceLanes), ArrayRef<int64_t>{0},
          ArrayRef<int64_t>{1});
    partial = arith::AddFOp::create(b, partial, product);
  };
  // body(c) for c = begin, begin + step, ... < end.
  auto steps = [&](int64_t begin, int64_t end, int64_t step, function_ref<void(Value)> body) {
    if (begin >= end)
      return;
    if (s.heads.headDim <= kMaxHeadDim) {
      for (int64_t c = begin; c < end; c += step)
        body(index(c));
      return;
    }
    auto loop = scf::ForOp::create(b, index(begin), index(end), index(step), ValueRange{partial});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      partial = loop.getRegionIterArgs()[0];
      body(loop.getInductionVar());
      scf::YieldOp::create(b, partial);
    }
    partial = loop.getResult(0);
  };
  const int64_t rotary = s.rope ? s.rope.getRotaryDim() : 0, half = rotary / 2;
  const int64_t pairLanes = pieceLanes(std::max<int64_t>(half, 1), kGpuPieceLanes);
  steps(0, half, pairLanes, [&](Value pair) {
    SmallVector<Piece> qPieces = rotatedPieces(q, pair, pairLanes);
    if (!s.rotateKeys) {
      for (Piece qPiece : qPieces) {
        int64_t lanes = cast<VectorType>(qPiece.value.getType()).getNumElements();
        accumulate(qPiece.value, loadChannels(kRotated, qPiece.channel, lanes));
      }
      return;
    }
    SmallVector<Piece> kPieces = rotatedPieces(kRotated, pair, pairLanes);
    for (auto [qPiece, kPiece] : llvm::zip_equal(qPieces, kPieces))
      accumulate(qPiece.value, kPiece.value);
  });
  for (auto [begin, end] : rotation.passThroughSplitAt(s.heads.headDim, own)) {
    const int64_t restLanes = pieceLanes(end - begin, kGpuPieceLanes);
    const Row &kRest = keyRowOf(begin);
    steps(begin, end, restLanes, [&](Value c) {
      accumulate(loadChannels(q, c, restLanes), loadChannels(kRest, c, restLanes));
    });
  }
  return vector::ReductionOp::create(b, vector::CombiningKind::ADD, partial);
}

/// The score of key j for the thread's query: rowScale (q' . rope(k)),
/// soft-capped, then ALiBi, the mask operand, and -inf where the position
/// masks hide the key.
Value AttentionThread::keyScore(const Row &query, Value j, ArrayRef<Value> keyRow, Value qp,
                                Value slope, Value rowScale) {
  Row key{buf.k, SmallVector<Value>(keyRow), buf.kCos, buf.kSin, j};
  std::optional<Row> shared;
  if (buf.sharedKey)
    shared = Row{buf.sharedKey, {bi, index(0), j}, buf.kCos, buf.kSin, j,
                 s.heads.headDim - s.sharedKeyDim};
  Value dot = dotRotated(query, key, shared ? &*shared : nullptr);
  Value score = arith::MulFOp::create(b, dot, rowScale);
  if (s.softcap)
    score = buildSoftcapScore(b, score, *s.softcap);
  Value kp = needsPositions() ? keyPosition(j) : nullptr;
  if (s.alibi)
    score = buildAlibiScore(b, score, slope, buildPositionDistance(b, kp, qp));
  if (buf.mask)
    score = buildAddMask(b, score, maskEntry(j));
  if (s.positionMask.any()) {
    Value hidden = buildIsMasked(b, s.positionMask, qp, kp);
    score = arith::SelectOp::create(b, hidden,
                                    f32(-std::numeric_limits<double>::infinity()), score);
  }
  return score;
}

/// (-inf, 0, 0): the state before the first key.
SmallVector<Value> AttentionThread::initialState() {
  return {f32(-std::numeric_limits<double>::infinity()), f32(0.0), splat(f32(0.0), s.chunk)};
}

/// `chunk` channels of `buffer` at `at` as f32.
Value AttentionThread::loadValueChunk(Value buffer, ValueRange at, Type element) {
  return extendToF32(b, vector::LoadOp::create(b, VectorType::get({s.chunk}, element),
                                               buffer, at));
}

/// The online-softmax update of state (m, l, acc) with a term of score
/// `score` and value `value`: a key (weight 1) or, with `weight` l_s, the
/// state of a split whose max is `score`.
SmallVector<Value> AttentionThread::softmaxStep(ValueRange state, Value score, Value weight, Value value) {
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

Value simt::alloc(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes, Type element) {
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamic;
  dispatchIndexOpFoldResults(sizes, dynamic, shape);
  return memref::AllocOp::create(b, MemRefType::get(shape, element), dynamic);
}

void simt::parallelLoop(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes,
                        function_ref<void(ValueRange)> body) {
  SmallVector<Value> upper = getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes);
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto loop = scf::ParallelOp::create(b, SmallVector<Value>(upper.size(), zero), upper,
                                      SmallVector<Value>(upper.size(), one));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(SmallVector<Value>(loop.getInductionVars()));
}

std::pair<Value, Value> simt::keySplits(ImplicitLocOpBuilder &b, Value keys, Value threads,
                                        int64_t targetThreads) {
  auto ceilDiv = [&](Value x, Value y) { return arith::CeilDivUIOp::create(b, x, y); };
  auto clamp = [&](Value x, Value high) {
    Value one = arith::ConstantIndexOp::create(b, 1);
    return arith::MinUIOp::create(b, arith::MaxUIOp::create(b, x, one), high);
  };
  Value target = arith::ConstantIndexOp::create(b, targetThreads);
  Value maxSplits = arith::ConstantIndexOp::create(b, kMaxSplits);
  Value minKeys = arith::ConstantIndexOp::create(b, kMinSplitKeys);
  // No rows (threads = 0): divide by 1, not 0.
  Value divisor = arith::MaxUIOp::create(b, threads, arith::ConstantIndexOp::create(b, 1));
  Value cap = clamp(ceilDiv(target, divisor), maxSplits);
  Value splits = clamp(ceilDiv(keys, minKeys), cap);
  return {splits, ceilDiv(keys, splits)};
}
