//===- AttentionTask.cpp - the steps every kernel variant shares ----------===//
#include "AttentionTask.h"

#include "pe/Dialect/PE/Utils/AttentionBuilders.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::pe;

void AttentionTask::allocate(int64_t headCount) {
  heads = headCount;
  queries = allocateQueries();
  scores = g.scratch({p.keysPerTile, p.rows}, g.f32());
  output = allocateOutput();
  Type keyElement = keyTileType();
  keys = keyElement ? g.scratch({p.keysPerTile, p.headDim}, keyElement) : Value();
  rowMax = stateScratch({p.rows}, g.f32());
  rowSum = stateScratch({p.rows}, g.f32());
  alpha = g.scratch({p.rows}, g.f32());
  rowPositions = stateScratch({p.rows}, g.i64());
  keyPositionTile = g.scratch({p.keysPerTile}, g.i64());
  if (p.alibiMaxBias)
    rowSlopes = stateScratch({p.rows}, g.f32());
  if (p.hasMask)
    rowMaskOffsets = stateScratch({p.rows}, g.i64());
  if (vectorQueries())
    queryRows = g.scratch({g.lanes, p.headDim}, g.f32());
  allocateVariant();
  // The query blocks' position ranges of a task that shares its tiles.
  queryRanges = heads > 1 && sharesTiles() ? g.scratch({heads, 2}, g.i64()) : Value();
  headStates.clear();
  if (heads > 1)
    for (Value *state : {&queries, &output, &rowMax, &rowSum, &rowPositions, &rowSlopes,
                         &rowMaskOffsets})
      if (*state)
        headStates.push_back({state, *state});
}

Value AttentionTask::stateScratch(ArrayRef<int64_t> shape, Type element) {
  if (heads == 1)
    return g.scratch(shape, element);
  SmallVector<int64_t> all = {heads};
  llvm::append_range(all, shape);
  return g.scratch(all, element);
}

void AttentionTask::selectHead(Value h) {
  kvh = h;
  selectSlot(h);
}

void AttentionTask::selectSlot(Value h) {
  for (auto [member, all] : headStates) {
    // all[h, ...] as a buffer of the state's own rank.
    auto type = cast<MemRefType>(all.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), g.b.getIndexAttr(0));
    offsets[0] = h;
    SmallVector<OpFoldResult> sizes = {g.b.getIndexAttr(1)};
    for (int64_t d : type.getShape().drop_front())
      sizes.push_back(g.b.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(type.getRank(), g.b.getIndexAttr(1));
    auto viewType = memref::SubViewOp::inferRankReducedResultType(
        type.getShape().drop_front(), type, offsets, sizes, strides);
    *member = memref::SubViewOp::create(g.b, viewType, all, offsets, sizes, strides);
  }
}

void AttentionTask::initialize(Value withSinks) {
  auto rowsOf = [&](Value buffer) {
    return g.index(cast<MemRefType>(buffer.getType()).getDimSize(0));
  };
  g.zeroRows(queries, g.index(0), rowsOf(queries));
  g.zeroRows(output, g.index(0), rowsOf(output));
  g.zeroRows(scores, g.index(0), rowsOf(scores));
  for (int64_t r = 0; r < p.rows; r += g.lanes) {
    g.vstore(g.splat(g.negInf()), rowMax, {g.index(r)});
    g.vstore(g.f32Splat(0.0), rowSum, {g.index(r)});
    g.vstore(g.splat(g.i64Constant(0)), rowPositions, {g.index(r)});
    if (p.alibiMaxBias)
      g.vstore(g.f32Splat(0.0), rowSlopes, {g.index(r)});
    if (p.hasMask)
      g.vstore(g.splat(g.i64Constant(0)), rowMaskOffsets, {g.index(r)});
  }
  if (!buf.sinks)
    return;
  // Row r is head kvh * group + r mod group (padding rows too: any head).
  g.ifThen(withSinks ? withSinks : arith::ConstantOp::create(g.b, g.b.getBoolAttr(true)), [&] {
    g.loop(0, g.index(p.rows), 1, [&](Value r) {
      Value hg = arith::RemUIOp::create(g.b, r, g.index(p.group));
      Value h = g.add(g.mul(kvh, g.index(p.group)), hg);
      Value sink = g.toF32(g.load(buf.sinks, {h}));
      g.store(sink, rowMax, {r});
      g.store(buildExpOfDifference(g.b, sink, buildExponentBase(g.b, sink), buildExpNonPositive),
              rowSum, {r});
    });
  });
}

/// Indices of table entry (bi, i, c) for tables [S, r/2] or [B, S, r/2].
static SmallVector<Value> tableIndex(Value table, Value bi, Value i, Value c) {
  if (cast<MemRefType>(table.getType()).getRank() == 3)
    return {bi, i, c};
  return {i, c};
}

std::pair<Value, Value> AttentionTask::packQueries() {
  SmallVector<Value> range = g.loop(
      g.index(0), qCount, g.index(1),
      {g.i64Constant(std::numeric_limits<int64_t>::max()),
       g.i64Constant(std::numeric_limits<int64_t>::min())},
      [&](Value i, ValueRange minMax) -> SmallVector<Value> {
        Value qi = g.add(q0, i);
        Value position = buildPositionAt(g.b, buf.qPos, bi, qi);
        g.loop(0, g.index(p.group), 1, [&](Value hg) {
          Value h = g.add(g.mul(kvh, g.index(p.group)), hg);
          Value r = g.add(g.mul(i, g.index(p.group)), hg);
          g.store(position, rowPositions, {r});
          if (p.alibiMaxBias)
            g.store(g.load(buf.slopes, {h}), rowSlopes, {r});
          if (p.hasMask) {
            // Offset of row (b, h, qi) of the mask [B|1, Hq|1, Sq, K].
            auto maskType = cast<MemRefType>(buf.mask.getType());
            Value bm = maskType.getDimSize(0) == 1 ? g.index(0) : bi;
            Value hm = maskType.getDimSize(1) == 1 ? g.index(0) : h;
            Value heads = g.index(maskType.getDimSize(1) == 1 ? 1 : p.queryHeads);
            // Rows of K columns: Skv, or a paged batch's mask columns.
            Value columns = memref::DimOp::create(g.b, buf.mask, 3);
            Value row = g.add(g.mul(g.add(g.mul(bm, heads), hm), sq), qi);
            g.store(g.toI64(g.mul(row, columns)), rowMaskOffsets, {r});
          }
          if (vectorQueries())
            return;
          Value scale = rowScale(position);
          auto channel = [&](Value d) { return g.toF32(g.load(buf.q, {bi, h, qi, d})); };
          if (p.rotaryDim) {
            g.loop(0, g.index(p.rotaryHalf()), 1, [&](Value pair) {
              auto [d0, d1] = buildPairChannels(g.b, p.rotation(), pair);
              Value cos = g.load(buf.qCos, tableIndex(buf.qCos, bi, qi, pair));
              Value sin = g.load(buf.qSin, tableIndex(buf.qSin, bi, qi, pair));
              auto [y0, y1] = buildPairRotation(g.b, channel(d0), channel(d1), cos, sin);
              g.storeAs(g.fmul(y0, scale), queries, queryIndex(d0, r));
              g.storeAs(g.fmul(y1, scale), queries, queryIndex(d1, r));
            });
          }
          for (auto [begin, end] : p.rotation().passThrough(p.headDim))
            g.loop(begin, g.index(end), 1, [&](Value d) {
              g.storeAs(g.fmul(channel(d), scale), queries, queryIndex(d, r));
            });
        });
        return {g.min(minMax[0], position), g.max(minMax[1], position)};
      });
  if (vectorQueries()) {
    Value rowCount = g.mul(qCount, g.index(p.group));
    g.loop(0, rowCount, g.lanes, [&](Value r0) {
      rotateQueryRows(r0, rowCount);
      storeQueryRows(r0);
    });
  }
  return {range[0], range[1]};
}

void AttentionTask::accumulateOutputTiles(Value steps, int64_t microChannels,
                                          MicroTileStep step) {
  const int64_t rowVectors = p.rowVectors;
  g.loop(0, g.index(p.rows), rowVectors * g.lanes, [&](Value r0) {
    SmallVector<Value> correction;
    for (int64_t v = 0; v < rowVectors; ++v)
      correction.push_back(g.vload(alpha, {g.add(r0, g.index(v * g.lanes))}));
    auto at = [&](Value e0, int64_t ec, int64_t v) {
      return SmallVector<Value>{g.add(e0, g.index(ec)), g.add(r0, g.index(v * g.lanes))};
    };
    auto microTile = [&](Value e0, int64_t channels) {
      // acc = alpha O, then the steps.
      SmallVector<Value> init;
      for (int64_t ec = 0; ec < channels; ++ec)
        for (int64_t v = 0; v < rowVectors; ++v)
          init.push_back(buildRescale(g.b, g.vload(output, at(e0, ec, v)), correction[v]));
      SmallVector<Value> acc =
          g.unrolledLoop(g.index(0), steps, 1, p.microTileUnroll, init,
                         [&](Value s, ValueRange a) -> SmallVector<Value> {
                           return step(s, r0, e0, channels, a);
                         });
      for (int64_t ec = 0; ec < channels; ++ec)
        for (int64_t v = 0; v < rowVectors; ++v)
          g.vstore(acc[ec * rowVectors + v], output, at(e0, ec, v));
    };
    const int64_t whole = p.valueDim - p.valueDim % microChannels;
    if (whole > 0)
      g.loop(0, g.index(whole), microChannels, [&](Value e0) { microTile(e0, microChannels); });
    if (p.valueDim % microChannels)
      microTile(g.index(whole), p.valueDim % microChannels);
  });
}

void AttentionTask::accumulateWeightedValues(Value kCount,
                                             function_ref<Value(Value, Value)> value,
                                             bool skipZeroWeights) {
  int64_t microChannels =
      skipZeroWeights ? p.maskedChannelsPerMicroTile : p.channelsPerMicroTile;
  accumulateOutputTiles(kCount, microChannels, [&](Value j, Value r0, Value e0, int64_t channels,
                                    ValueRange a) -> SmallVector<Value> {
    SmallVector<Value> weights, next;
    for (int64_t v = 0; v < p.rowVectors; ++v)
      weights.push_back(g.vload(scores, {j, g.add(r0, g.index(v * g.lanes))}));
    for (int64_t ec = 0; ec < channels; ++ec) {
      Value ve = g.splat(value(j, g.add(e0, g.index(ec))));
      for (int64_t v = 0; v < p.rowVectors; ++v) {
        Value acc = a[ec * p.rowVectors + v];
        next.push_back(skipZeroWeights ? buildWeightedSum(g.b, acc, weights[v], ve)
                                       : g.fma(weights[v], ve, acc));
      }
    }
    return next;
  });
}

SmallVector<Value> AttentionTask::queryIndex(Value d, Value r) {
  switch (queryLayout()) {
  case QueryLayout::RowMajor:
    return {r, d};
  case QueryLayout::Transposed:
    return {d, r};
  case QueryLayout::Pairs:
    return {arith::DivUIOp::create(g.b, d, g.index(2)),
            g.add(g.mul(r, g.index(2)), arith::RemUIOp::create(g.b, d, g.index(2)))};
  }
  llvm_unreachable("unknown query layout");
}

Value AttentionTask::rowScale(Value position) {
  Value scale = g.f32Constant(p.scale);
  if (!p.temperature)
    return scale;
  return g.fmul(scale, buildQueryTemperature(g.b, p.temperature, position));
}

bool AttentionTask::vectorQueries() const {
  return p.headDim % g.lanes == 0 && p.rotaryHalf() % g.lanes == 0 &&
         p.rotation().passThroughAligned(p.headDim, g.lanes);
}

void AttentionTask::rotateQueryRows(Value r0, Value rowCount) {
  Value count = g.min(g.index(g.lanes), g.sub(rowCount, r0));
  g.loop(0, count, 1, [&](Value t) {
    Value r = g.add(r0, t);
    Value qi = g.add(q0, arith::DivUIOp::create(g.b, r, g.index(p.group)));
    Value scale = g.splat(rowScale(buildPositionAt(g.b, buf.qPos, bi, qi)));
    Value h = g.add(g.mul(kvh, g.index(p.group)),
                    arith::RemUIOp::create(g.b, r, g.index(p.group)));
    auto rowAt = [&](Value d) { return SmallVector<Value>{bi, h, qi, d}; };
    // The same operations as the scalar path: rotate in f32, then scale.
    auto store = [&](Value v, Value d) { g.vstore(g.fmul(v, scale), queryRows, {t, d}); };
    g.forEachVector(0, p.rotaryHalf(), [&](Value pair) {
      Value cos = g.vload(buf.qCos, tableIndex(buf.qCos, bi, qi, pair));
      Value sin = g.vload(buf.qSin, tableIndex(buf.qSin, bi, qi, pair));
      buildVectorPairRotation(
          g.b, cos, sin, pair, p.rotation(),
          [&](Value d, int64_t lanes) { return g.vload(buf.q, rowAt(d), lanes); }, store);
    });
    for (auto [begin, end] : p.rotation().passThrough(p.headDim))
      g.forEachVector(begin, end, [&](Value d) { store(g.vload(buf.q, rowAt(d)), d); });
  });
  g.zeroRows(queryRows, count, g.index(g.lanes));
}

void AttentionTask::storeQueryRows(Value r0) {
  QueryLayout layout = queryLayout();
  for (int64_t c = 0; c < p.headDim; c += g.lanes) {
    SmallVector<Value> rows;
    for (int64_t t = 0; t < g.lanes; ++t)
      rows.push_back(g.vload(queryRows, {g.index(t), g.index(c)}));
    if (layout == QueryLayout::RowMajor) {
      for (int64_t t = 0; t < g.lanes; ++t)
        g.storeAs(rows[t], queries, {g.add(r0, g.index(t)), g.index(c)});
      continue;
    }
    // columns[t]: channel c + t of the rows.
    SmallVector<Value> columns = g.transpose(rows);
    for (int64_t t = 0; t < g.lanes; ++t) {
      if (layout == QueryLayout::Transposed) {
        g.storeAs(columns[t], queries, {g.index(c + t), r0});
      } else if (t % 2 == 0) {
        // Channels c + t and c + t + 1 of each row side by side.
        g.storeAs(buildZip(g.b, columns[t], columns[t + 1]), queries,
                  {g.index((c + t) / 2), g.mul(r0, g.index(2))});
      }
    }
  }
}

Value mlir::pe::keyCountOf(KernelBuilder &g, const AttentionBuffers &buf, Value bi) {
  if (buf.keyCount)
    return buf.keyCount;
  if (buf.kvLens) {
    assert(bi && "a paged batch has a key count per batch row");
    return arith::IndexCastOp::create(g.b, g.b.getIndexType(), g.load(buf.kvLens, {bi}));
  }
  return memref::DimOp::create(g.b, buf.k, 2);
}

SmallVector<Value> mlir::pe::kvIndex(KernelBuilder &g, const AttentionBuffers &buf, Value bi,
                                     Value kvh, Value key, Value c) {
  if (buf.layout == CacheLayout::dense)
    return {bi, kvh, key, c};
  // A static page size makes the division and remainder shifts.
  const bool nhd = buf.layout == CacheLayout::nhd;
  const int64_t pageDim = nhd ? 1 : 2;
  auto cache = cast<MemRefType>(buf.k.getType());
  Value pageSize = cache.isDynamicDim(pageDim) ? Value(memref::DimOp::create(g.b, buf.k, pageDim))
                                               : g.index(cache.getDimSize(pageDim));
  Value column = arith::DivUIOp::create(g.b, key, pageSize);
  Value row = arith::RemUIOp::create(g.b, key, pageSize);
  Value sequence = buf.sequence ? buf.sequence : bi;
  Value page = arith::IndexCastOp::create(g.b, g.b.getIndexType(),
                                          g.load(buf.pageTable, {sequence, column}));
  if (nhd)
    return {page, row, kvh, c};
  return {page, kvh, row, c};
}

Value AttentionTask::keyPositionAt(Value key) {
  return buf.kPos ? buildPositionAt(g.b, buf.kPos, bi, key) : g.toI64(key);
}

std::pair<Value, Value> AttentionTask::keyPositions(Value k0, Value kCount) {
  SmallVector<Value> range = g.loop(
      g.index(0), kCount, g.index(1),
      {g.i64Constant(std::numeric_limits<int64_t>::max()),
       g.i64Constant(std::numeric_limits<int64_t>::min())},
      [&](Value j, ValueRange minMax) -> SmallVector<Value> {
        Value position = keyPositionAt(g.add(k0, j));
        g.store(position, keyPositionTile, {j});
        return {g.min(minMax[0], position), g.max(minMax[1], position)};
      });
  return {range[0], range[1]};
}

std::pair<Value, Value> AttentionTask::visibleKeyRange(Value k0, Value kCount, Value qMin,
                                                      Value qMax) {
  SmallVector<Value> range = g.loop(
      g.index(0), kCount, g.index(1), {kCount, g.index(-1)},
      [&](Value j, ValueRange firstLast) -> SmallVector<Value> {
        Value position = keyPositionAt(g.add(k0, j));
        Value hidden =
            buildTileVisibility(g.b, p.positionMask, qMin, qMax, position, position).hidden;
        return {g.select(hidden, firstLast[0], g.min(firstLast[0], j)),
                g.select(hidden, firstLast[1], g.max(firstLast[1], j))};
      });
  Value count = g.max(g.add(g.sub(range[1], range[0]), g.index(1)), g.index(0));
  Value first = g.select(g.cmp(arith::CmpIPredicate::sgt, count, g.index(0)), range[0],
                         g.index(0));
  return {first, count};
}

// Each stream (a head's keys, its values) is prefetched twice. Into L1 one
// L1 way span ahead (64 sets x 64-byte lines = 4 KiB): far enough to cover
// the memory latency at the read rate of a core (about 13 GB/s x 150 ns,
// 2 KiB in flight), and near enough that in an nhd cache, whose rows of one
// head lie Hkv x D elements apart (4 KiB for 8 heads of 128 f32) and so all
// fall in the same few L1 sets, the lines prefetched are not evicted before
// their use. Into L2 half as far again (6 KiB): the L1 misses a core may
// have in flight (its fill buffers) cap its read rate below the memory's,
// while L2 takes more requests, and a paged stream jumps to another page
// every page_size rows, where the hardware prefetchers start over.
// Measured (decode of 8 sequences of 1k..32k keys, Hq = 32, Hkv = 8,
// D = 128, page size 16, Xeon, 2 threads; f32 / bf16, ms): with 32-key
// tiles, nhd pages 30.4 / 20.6 with the L1 prefetch alone, 29.5 / 17.6 with
// an L2 prefetch 8 KiB ahead; dense 27.4 / 19.5 against 25.9 / 16.1; with
// 16-key tiles (another day, same rounds) nhd f32 30.1 at 4, 5 and 6 KiB,
// 32.3 at 8, 32.5 at 12; dense f32 33.2 at 4 KiB, 29.1 at 6, 31.1 at 8 (and
// 32 keys); hnd f32 (32 keys) 31.5 at 6 KiB, 31.9 at 8.
int64_t AttentionTask::prefetchDistance(int64_t aheadBytes) const {
  auto cache = cast<MemRefType>(buf.k.getType());
  const int64_t rowBytes = p.headDim * cache.getElementTypeBitWidth() / 8;
  return std::max<int64_t>(aheadBytes / std::max<int64_t>(rowBytes, 1), 1);
}

void AttentionTask::prefetchAhead(Value operand, Value k0, Value j) {
  constexpr int64_t kL1AheadBytes = 4096, kL2AheadBytes = 6144;
  auto type = cast<MemRefType>(operand.getType());
  const int64_t lineElements = 64 / (type.getElementTypeBitWidth() / 8);
  Value last = g.sub(skv, g.index(1));
  for (auto [bytes, locality] : {std::pair{kL1AheadBytes, 3}, std::pair{kL2AheadBytes, 2}}) {
    Value distance = g.index(prefetchDistance(bytes));
    Value head = kvh, key = g.add(g.add(k0, j), distance);
    // A task that walks its KV heads inside each tile reads the next head's
    // rows of the same tile after this head's last: over hnd pages, whose
    // head blocks lie 4 KiB and more apart (beyond the hardware's reach),
    // steps past the tile land there, the last head's on the next tile of
    // the first head. (In nhd rows the next head's piece follows this
    // one's, where the hardware fetches it.) docs/targets.md, "Prefetch".
    if (walkTileKeys && buf.layout == CacheLayout::hnd) {
      Value past = g.cmp(arith::CmpIPredicate::uge, g.add(j, distance), walkTileKeys);
      Value next = g.add(kvh, g.index(1));
      Value wraps = g.cmp(arith::CmpIPredicate::uge, next, g.index(p.kvHeads));
      head = g.select(past, g.select(wraps, g.index(0), next), kvh);
      key = g.select(past, g.select(wraps, key, g.sub(key, walkTileKeys)), key);
    }
    Value ahead = g.min(key, last);
    for (int64_t c = 0; c < type.getDimSize(3); c += lineElements)
      memref::PrefetchOp::create(g.b, operand, kvIndex(g, buf, bi, head, ahead, g.index(c)),
                                 /*isWrite=*/false, /*localityHint=*/locality,
                                 /*isDataCache=*/true);
  }
}

Value AttentionTask::keyBuffer(int64_t begin) const {
  return begin >= p.ownKeyDim() ? buf.sharedKey : buf.k;
}

SmallVector<Value> AttentionTask::keyAt(int64_t begin, Value key, Value c) {
  if (begin < p.ownKeyDim())
    return kvAt(key, c);
  return {bi, g.index(0), key, g.sub(c, g.index(p.ownKeyDim()))};
}

void AttentionTask::packKeys(Value k0, Value kCount) {
  const int64_t half = p.rotaryHalf();
  const bool vectorRope = p.rotaryDim && half % g.lanes == 0;
  // The pass-through ranges split where the shared block starts (the plan
  // keeps the rotated channels on one side); whole vectors where each range
  // holds whole vectors.
  auto rest = p.rotation().passThroughSplitAt(p.headDim, p.ownKeyDim());
  const bool vectorRest = llvm::all_of(
      rest, [&](auto range) { return (range.second - range.first) % g.lanes == 0; });
  Value rotated = keyBuffer(p.rotaryOffset);
  g.loop(0, kCount, 1, [&](Value j) {
    Value kj = g.add(k0, j);
    // A paged cache's rows are scattered over its pages, beyond the reach of
    // the hardware prefetchers: rows ahead are fetched here (prefetchAhead).
    if (buf.layout != CacheLayout::dense && p.kind != AttentionKernelKind::Decode) {
      prefetchAhead(buf.k, k0, j);
      prefetchAhead(buf.v, k0, j);
    }
    auto rotatedAt = [&](Value d) { return keyAt(p.rotaryOffset, kj, d); };
    if (vectorRope) {
      g.forEachVector(0, half, [&](Value pair) {
        Value cos = g.vload(buf.kCos, tableIndex(buf.kCos, bi, kj, pair));
        Value sin = g.vload(buf.kSin, tableIndex(buf.kSin, bi, kj, pair));
        buildVectorPairRotation(
            g.b, cos, sin, pair, p.rotation(),
            [&](Value d, int64_t lanes) { return g.vload(rotated, rotatedAt(d), lanes); },
            [&](Value v, Value d) { g.storeAs(v, keys, {j, d}); });
      });
    } else if (p.rotaryDim) {
      g.loop(0, g.index(half), 1, [&](Value pair) {
        auto [d0, d1] = buildPairChannels(g.b, p.rotation(), pair);
        Value cos = g.load(buf.kCos, tableIndex(buf.kCos, bi, kj, pair));
        Value sin = g.load(buf.kSin, tableIndex(buf.kSin, bi, kj, pair));
        auto [y0, y1] = buildPairRotation(g.b, g.toF32(g.load(rotated, rotatedAt(d0))),
                                          g.toF32(g.load(rotated, rotatedAt(d1))), cos, sin);
        g.storeAs(y0, keys, {j, d0});
        g.storeAs(y1, keys, {j, d1});
      });
    }
    for (auto [begin, end] : rest) {
      Value source = keyBuffer(begin);
      auto at = [&, begin = begin](Value d) { return keyAt(begin, kj, d); };
      if (vectorRest) {
        g.forEachVector(begin, end,
                        [&](Value d) { g.storeAs(g.vload(source, at(d)), keys, {j, d}); });
      } else {
        g.loop(begin, g.index(end), 1,
               [&](Value d) { g.storeAs(g.toF32(g.load(source, at(d))), keys, {j, d}); });
      }
    }
  });
  g.zeroRows(keys, kCount, g.index(p.keysPerTile));
}

Value AttentionTask::packValuePairs(Value pairBuffer, Value k0, Value kCount) {
  auto raw = VectorType::get({g.lanes}, p.element);
  auto bitsType = VectorType::get({g.lanes}, g.b.getI16Type());
  auto lanesType = VectorType::get({g.lanes}, g.b.getI1Type());
  Value zero = arith::ConstantOp::create(g.b, g.b.getZeroAttr(raw));
  Value exponent = arith::ConstantOp::create(
      g.b, DenseElementsAttr::get(bitsType, g.b.getI16IntegerAttr(0x7F80)));
  // Lanes of a bf16 vector holding a NaN or inf: all exponent bits set.
  auto nonFiniteLanes = [&](Value x) {
    Value bits = arith::BitcastOp::create(g.b, bitsType, x);
    return g.cmp(arith::CmpIPredicate::eq, arith::AndIOp::create(g.b, bits, exponent),
                 exponent);
  };
  Value none = arith::ConstantOp::create(
      g.b, DenseElementsAttr::get(lanesType, g.b.getBoolAttr(false)));
  Value special = g.loop(
      g.index(0), g.ceilDiv(kCount, g.index(2)), g.index(1), {none},
      [&](Value jp, ValueRange found) -> SmallVector<Value> {
        Value j = g.mul(jp, g.index(2));
        Value second = g.cmp(arith::CmpIPredicate::slt, g.add(j, g.index(1)), kCount);
        // The second row's index stays in bounds; past the keys it reads zeros.
        Value j1 = g.min(g.add(j, g.index(1)), g.sub(kCount, g.index(1)));
        Value any = found[0];
        for (int64_t e = 0; e < p.valueDim; e += g.lanes) {
          Value x0 = vector::LoadOp::create(g.b, raw, buf.v,
                                            kvAt(g.add(k0, j), g.index(e)));
          Value x1 = vector::LoadOp::create(g.b, raw, buf.v,
                                            kvAt(g.add(k0, j1), g.index(e)));
          x1 = g.select(second, x1, zero);
          any = arith::OrIOp::create(
              g.b, any, arith::OrIOp::create(g.b, nonFiniteLanes(x0), nonFiniteLanes(x1)));
          g.vstore(buildZip(g.b, x0, x1), pairBuffer, {jp, g.index(2 * e)});
        }
        return {any};
      })[0];
  return vector::ReductionOp::create(g.b, vector::CombiningKind::OR, special);
}

void AttentionTask::packWeightPairs(Value pairBuffer, Value count) {
  auto pairType = VectorType::get({2 * g.lanes}, g.b.getBF16Type());
  g.loop(0, count, 1, [&](Value jp) {
    Value j = g.mul(jp, g.index(2));
    for (int64_t r = 0; r < p.rows; r += g.lanes) {
      Value first = g.vload(scores, {j, g.index(r)});
      Value second = g.vload(scores, {g.add(j, g.index(1)), g.index(r)});
      Value zipped = arith::TruncFOp::create(g.b, pairType, buildZip(g.b, first, second));
      g.vstore(zipped, pairBuffer, {jp, g.index(2 * r)});
    }
  });
}

Value AttentionTask::broadcastPair(Value mem, Value i, Value c) {
  Type bf16 = g.b.getBF16Type();
  Value pair =
      vector::LoadOp::create(g.b, VectorType::get({2}, bf16), mem, ValueRange{i, c});
  Value word = vector::ExtractOp::create(
      g.b, vector::BitCastOp::create(g.b, VectorType::get({1}, g.b.getI32Type()), pair),
      ArrayRef<int64_t>{0});
  return vector::BitCastOp::create(g.b, VectorType::get({2 * g.lanes}, bf16), g.splat(word));
}

Value AttentionTask::maskValue(Value maskOffsets, Value j, Value k0, Value valid) {
  Value index = g.add(maskOffsets, g.splat(g.toI64(g.add(k0, j))));
  Type element = cast<MemRefType>(buf.maskFlat.getType()).getElementType();
  auto type = VectorType::get({g.lanes}, element);
  Value pass = arith::ConstantOp::create(
      g.b, DenseElementsAttr::get(type, g.b.getFloatAttr(element, 0.0)));
  Value m = vector::GatherOp::create(g.b, type, buf.maskFlat, ValueRange{g.index(0)},
                                     index, g.splat(valid), pass);
  return g.toF32(m);
}

Value AttentionTask::scoreWithBiasAndMasks(Value s, Value rowQ, Value slope,
                                           Value maskOffsets, Value j, Value k0,
                                           Value kCount, Value base) {
  Value valid = g.cmp(arith::CmpIPredicate::slt, j, kCount);
  Value hidden = g.splat(arith::XOrIOp::create(
      g.b, valid, arith::ConstantOp::create(g.b, g.b.getBoolAttr(true))));
  Value kMinusQ, keyHidden;
  if (base) {
    // Offsets from `base` are exact in f32: so is k - q.
    Value k = arith::SIToFPOp::create(g.b, g.f32(),
                                      g.sub(g.load(keyPositionTile, {j}), base));
    kMinusQ = g.fsub(g.splat(k), rowQ);
    keyHidden = buildIsMaskedByDistance(g.b, p.positionMask, kMinusQ);
  } else {
    Value k = g.splat(g.load(keyPositionTile, {j}));
    if (p.alibiMaxBias)
      kMinusQ = buildPositionDistance(g.b, k, rowQ);
    keyHidden = buildIsMasked(g.b, p.positionMask, rowQ, k);
  }
  if (p.alibiMaxBias)
    s = buildAlibiScore(g.b, s, slope, kMinusQ);
  if (p.hasMask)
    s = buildAddMask(g.b, s, maskValue(maskOffsets, j, k0, valid));
  hidden = arith::OrIOp::create(g.b, hidden, keyHidden);
  return g.select(hidden, g.splat(g.negInf()), s);
}

Value AttentionTask::tileRowMax(Value r, Value mOld, ScoreFix fix, Value k0,
                                Value kCount, Value scoreRows, Value base) {
  Value rowQ, slope, maskOffsets;
  const bool exact = fix == ScoreFix::ExactDistances;
  if (fix != ScoreFix::None) {
    rowQ = g.vloadI64(rowPositions, {r});
    if (exact)
      rowQ = arith::SIToFPOp::create(g.b, g.f32Vector(), g.sub(rowQ, g.splat(base)));
    if (p.alibiMaxBias)
      slope = g.vload(rowSlopes, {r});
    if (p.hasMask)
      maskOffsets = g.vloadI64(rowMaskOffsets, {r});
  }
  return g.loop(g.index(0), scoreRows, g.index(1), {mOld},
                [&](Value j, ValueRange m) -> SmallVector<Value> {
                  Value s = g.vload(scores, {j, r});
                  if (p.softcap)
                    s = buildSoftcapScore(g.b, s, *p.softcap);
                  if (fix != ScoreFix::None)
                    s = scoreWithBiasAndMasks(s, rowQ, slope, maskOffsets, j, k0, kCount,
                                              exact ? base : Value());
                  if (p.softcap || fix != ScoreFix::None)
                    g.vstore(s, scores, {j, r});
                  return {buildRunningRowMax(g.b, m[0], s)};
                })[0];
}

void AttentionTask::softmax(Value k0, Value kCount, const TileMasking &masking) {
  // The score rows the products read: the keys, rounded up to whole pairs
  // for the bf16 pair products, every row for AMX tiles. Rows past the keys
  // get weight 0 (the tile is then partial and they are masked).
  Value scoreRows = p.kind == AttentionKernelKind::Amx
                        ? g.index(p.keysPerTile)
                        : g.mul(g.ceilDiv(kCount, g.index(2)), g.index(2));
  g.loop(0, g.index(p.rows), g.lanes, [&](Value r) {
    Value mOld = g.vload(rowMax, {r});
    // m' = max(m, max_j s_j), the scores fixed first where the tile needs it.
    auto int64Positions = [&] {
      return tileRowMax(r, mOld, ScoreFix::Int64Positions, k0, kCount, scoreRows,
                        masking.base);
    };
    Value mNew = g.ifElse(
        masking.partial, g.f32Vector(),
        [&] {
          // Chunks are decided on the positions, never on distances.
          if (p.positionMask.chunk)
            return int64Positions();
          return g.ifElse(
              masking.nearby, g.f32Vector(),
              [&] {
                return tileRowMax(r, mOld, ScoreFix::ExactDistances, k0, kCount, scoreRows,
                                  masking.base);
              },
              int64Positions);
        },
        [&] {
          // Every key of the tile is visible (and its rows are all keys): the
          // scores' max, where the product computed it.
          if (scoreRowMax)
            return buildRunningRowMax(g.b, mOld, g.vload(scoreRowMax, {r}));
          return tileRowMax(r, mOld, ScoreFix::None, k0, kCount, scoreRows, masking.base);
        });
    // base = m', or 0 while the row has no visible key.
    Value base = buildExponentBase(g.b, mNew);
    // alpha = exp(m - base)
    Value correction = buildExpOfDifference(g.b, mOld, base, buildExpNonPositive);
    // p_j = exp(s_j - base), and their sum.
    Value sum = g.loop(g.index(0), scoreRows, g.index(1), {g.f32Splat(0.0)},
                       [&](Value j, ValueRange acc) -> SmallVector<Value> {
                         Value weight = buildExpOfDifference(
                             g.b, g.vload(scores, {j, r}), base, buildExpNonPositive);
                         g.vstore(weight, scores, {j, r});
                         return {g.fadd(acc[0], weight)};
                       })[0];
    // l = alpha l + sum_j p_j
    g.vstore(buildRescaledSum(g.b, g.vload(rowSum, {r}), correction, sum), rowSum, {r});
    g.vstore(mNew, rowMax, {r});
    g.vstore(correction, alpha, {r});
  });
}

void AttentionTask::writeOutput() {
  g.loop(0, qCount, 1, [&](Value i) {
    g.loop(0, g.index(p.group), 1, [&](Value hg) {
      Value r = g.add(g.mul(i, g.index(p.group)), hg);
      Value h = g.add(g.mul(kvh, g.index(p.group)), hg);
      Value l = g.load(rowSum, {r});
      g.loop(0, g.index(p.valueDim), 1, [&](Value e) {
        // out = O / l (0 for a row without a visible key), rounded once.
        Value o = buildNormalize(g.b, g.load(output, outputIndex(e, r)), l);
        g.storeAs(o, buf.out, {bi, h, g.add(q0, i), e});
      });
    });
  });
}

void AttentionTask::writePartials(Value partials, Value slot) {
  // Partials hold O as [Dv][rows], then m and l.
  if (p.outputRowMajor()) {
    g.loop(0, g.index(p.valueDim), 1, [&](Value e) {
      for (int64_t r = 0; r < p.outputRows(); ++r)
        g.store(g.load(output, {g.index(r), e}), partials,
                {slot, g.add(g.mul(e, g.index(p.rows)), g.index(r))});
    });
  } else {
    g.loop(0, g.index(p.valueDim), 1, [&](Value e) {
      Value start = g.mul(e, g.index(p.rows));
      for (int64_t r = 0; r < p.rows; r += g.lanes)
        g.vstore(g.vload(output, {e, g.index(r)}), partials, {slot, g.add(start, g.index(r))});
    });
  }
  for (int64_t r = 0; r < p.rows; r += g.lanes) {
    g.vstore(g.vload(rowMax, {g.index(r)}), partials, {slot, g.index(p.valueDim * p.rows + r)});
    g.vstore(g.vload(rowSum, {g.index(r)}), partials,
             {slot, g.index((p.valueDim + 1) * p.rows + r)});
  }
}
