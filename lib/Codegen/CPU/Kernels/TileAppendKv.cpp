//===- TileAppendKv.cpp - pe-tile-append-kv -------------------------------===//
//
// pe.append_kv as one loop over the new tokens that writes each token's rows
// straight into its cache slot: a key row is read once, rotated in vector
// registers with its position's cos/sin row and stored into the cache, a
// value row is copied. The reference lowering rotates the new keys into a
// temporary first and copies them into the cache after; here no row is
// written twice and nothing is allocated per token. The cos/sin rows of
// the tokens' positions are computed once, before the loop (T x r/2
// transcendentals, shared by the heads).
//
// The caches stay tensors: rows go in with vector.transfer_write, so
// bufferization writes them in place (into the caller's cache for a
// `pe.in_place` argument) and copies a cache only where the old one is still
// read, as for the reference lowering's tensor.insert_slice.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/CPU/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PETILEAPPENDKV
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

/// The two caches as the loops carry them.
struct Caches {
  Value keys, values;
};

struct TileAppendKv : OpRewritePattern<AppendKvOp> {
  TileAppendKv(MLIRContext *ctx, int64_t lanes) : OpRewritePattern(ctx), lanes(lanes) {}

  LogicalResult matchAndRewrite(AppendKvOp op, PatternRewriter &rewriter) const override {
    if (LogicalResult shape = checkShape(op, rewriter); failed(shape))
      return shape;
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    KernelBuilder g{b, lanes};
    Value capacity = buildAppendKvChecks(b, op, op.getKey(), op.getValue(), op.getKeyCache(),
                                         op.getValueCache(), op.getSlots(), op.getPositions());
    Value cos, sin;
    if (RopeAttr rope = op.getRopeAttr()) {
      Value positions = op.getPositions();
      if (op.isPaged())
        positions = buildAppendTokenPositions(b, positions, /*multiStream=*/false);
      auto [c, s] = buildRopeTables(b, rope, positions, b.getF32Type());
      cos = g.toBuffer(c);
      sin = g.toBuffer(s);
    }
    Caches caches = buildTokenLoops(g, op, capacity, cos, sin);
    rewriter.replaceOp(op, {caches.keys, caches.values});
    return success();
  }

private:
  int64_t lanes;

  /// Rows of whole vectors (the rotated half and the pass-through channels
  /// too), one position stream; anything else is left to pe-lower-to-linalg.
  LogicalResult checkShape(AppendKvOp op, PatternRewriter &rewriter) const {
    if (const char *refusal = appendKernelRefusal(op, lanes, lanes))
      return rewriter.notifyMatchFailure(op, refusal);
    // The rows are read as buffers while the caches are written in place:
    // rows taken from a cache could be read after they are overwritten.
    for (Value rows : {op.getKey(), op.getValue()})
      for (Value cache : {op.getKeyCache(), op.getValueCache()})
        if (derivesFrom(rows, cache))
          return rewriter.notifyMatchFailure(op, "new rows read from a cache");
    return success();
  }

  /// For each batch row (dense caches), for each token in
  /// order: its rows at its slot when the slot is in [0, capacity) (the
  /// checks reported any other slot but -1).
  Caches buildTokenLoops(KernelBuilder &g, AppendKvOp op, Value capacity, Value cos,
                         Value sin) const {
    ImplicitLocOpBuilder &b = g.b;
    const bool paged = op.isPaged();
    Value keys = g.toBuffer(op.getKey()), values = g.toBuffer(op.getValue());
    Value slots = g.toBuffer(op.getSlots());
    const bool sharedSlots = cast<MemRefType>(slots.getType()).getRank() == 1;
    Value tokens = memref::DimOp::create(b, keys, paged ? 0 : 2);
    Value pageSize;
    if (paged)
      pageSize = dimValue(b, op.getKeyCache(), op.getLayout() == CacheLayout::nhd ? 1 : 2);

    auto forEachToken = [&](Value bi, ValueRange init) {
      return g.loop(g.index(0), tokens, g.index(1), init,
                    [&](Value t, ValueRange in) -> SmallVector<Value> {
        Value slot = g.load(slots, paged || sharedSlots ? ValueRange{t} : ValueRange{bi, t});
        slot = extendToI64(b, slot);
        Value valid = arith::AndIOp::create(
            b, g.cmp(arith::CmpIPredicate::sge, slot, g.i64Constant(0)),
            g.cmp(arith::CmpIPredicate::slt, slot, capacity));
        auto write = scf::IfOp::create(b, in.getTypes(), valid, /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(write.thenBlock());
          Value at = arith::IndexCastOp::create(b, b.getIndexType(), slot);
          Caches out = writeToken(g, op, {keys, values, cos, sin}, bi, t, at, pageSize,
                                  {in[0], in[1]});
          scf::YieldOp::create(b, ValueRange{out.keys, out.values});
          b.setInsertionPointToStart(write.elseBlock());
          scf::YieldOp::create(b, in);
        }
        return SmallVector<Value>(write.getResults());
      });
    };
    SmallVector<Value> caches = {op.getKeyCache(), op.getValueCache()};
    SmallVector<Value> out =
        paged ? forEachToken(g.index(0), caches)
              : g.loop(g.index(0), memref::DimOp::create(b, keys, 0), g.index(1), caches,
                       [&](Value bi, ValueRange in) -> SmallVector<Value> {
                         return forEachToken(bi, in);
                       });
    return {out[0], out[1]};
  }

  /// The buffers a token's rows come from.
  struct Rows {
    Value keys, values, cos, sin;
  };

  /// The caches with token t's rows (every head) at slot `at`.
  Caches writeToken(KernelBuilder &g, AppendKvOp op, Rows rows, Value bi, Value t, Value at,
                    Value pageSize, Caches caches) const {
    ImplicitLocOpBuilder &b = g.b;
    const bool paged = op.isPaged();
    // Where a row of head h lives: in the new rows and in the cache.
    auto rowAt = [&](Value h) {
      return paged ? SmallVector<Value>{t, h} : SmallVector<Value>{bi, h, t};
    };
    Value page, slotRow;
    if (paged) {
      page = arith::DivUIOp::create(b, at, pageSize);
      slotRow = arith::RemUIOp::create(b, at, pageSize);
    }
    auto cacheAt = [&](Value h) -> SmallVector<Value> {
      switch (op.getLayout()) {
      case CacheLayout::dense:
        return {bi, h, at};
      case CacheLayout::nhd:
        return {page, slotRow, h};
      case CacheLayout::hnd:
        return {page, h, slotRow};
      }
      llvm_unreachable("cache layout");
    };
    // The token's cos/sin row: [T, 1, r/2] (pages), [S, r/2] or [B, S, r/2].
    SmallVector<Value> tableAt;
    if (rows.cos) {
      const int64_t rank = cast<MemRefType>(rows.cos.getType()).getRank();
      tableAt = paged       ? SmallVector<Value>{t, g.index(0)}
                : rank == 2 ? SmallVector<Value>{t}
                            : SmallVector<Value>{bi, t};
    }
    SmallVector<Value> out = g.loop(
        g.index(0), memref::DimOp::create(b, rows.keys, 1), g.index(1),
        {caches.keys, caches.values},
        [&](Value h, ValueRange in) -> SmallVector<Value> {
          Value keys = writeKeyRow(g, op, rows, rowAt(h), tableAt, cacheAt(h), in[0]);
          Value values = copyRow(g, rows.values, rowAt(h), cacheAt(h), in[1]);
          return {keys, values};
        });
    return {out[0], out[1]};
  }

  /// `cache` with vector v written at `at` + [channel], rounded once to the
  /// cache's element type.
  static Value writeVector(KernelBuilder &g, Value v, Value cache, ArrayRef<Value> at,
                           Value channel) {
    Type element = cast<RankedTensorType>(cache.getType()).getElementType();
    auto type = cast<VectorType>(v.getType());
    if (type.getElementType() != element)
      v = convertFloat(g.b, v, element);
    SmallVector<Value> index(at);
    index.push_back(channel);
    return vector::TransferWriteOp::create(g.b, v, cache, index,
                                           ArrayRef<bool>{true})
        .getResult();
  }

  /// `cache` after body(c, cache) for the vectors c of [from, to): unrolled
  /// up to 8 vectors, else an scf.for that carries the cache.
  static Value forEachVector(KernelBuilder &g, int64_t from, int64_t to, Value cache,
                             function_ref<Value(Value, Value)> body) {
    if ((to - from) / g.lanes <= 8) {
      for (int64_t c = from; c < to; c += g.lanes)
        cache = body(g.index(c), cache);
      return cache;
    }
    return g.loop(g.index(from), g.index(to), g.index(g.lanes), {cache},
                  [&](Value c, ValueRange in) -> SmallVector<Value> {
                    return {body(c, in[0])};
                  })[0];
  }

  /// `cache` with the row of `rows` at `rowAt` copied to `cacheAt`.
  static Value copyRow(KernelBuilder &g, Value rows, ArrayRef<Value> rowAt,
                       ArrayRef<Value> cacheAt, Value cache) {
    auto type = cast<MemRefType>(rows.getType());
    auto vector = VectorType::get({g.lanes}, type.getElementType());
    return forEachVector(g, 0, type.getShape().back(), cache, [&](Value c, Value in) {
      SmallVector<Value> index(rowAt);
      index.push_back(c);
      return writeVector(g, vector::LoadOp::create(g.b, vector, rows, index), in, cacheAt, c);
    });
  }

  /// `cache` with the key row at `rowAt` rotated by its table row (f32
  /// arithmetic, pe.rope's) and written to `cacheAt`; copied without a rope.
  static Value writeKeyRow(KernelBuilder &g, AppendKvOp op, Rows rows, ArrayRef<Value> rowAt,
                           ArrayRef<Value> tableAt, ArrayRef<Value> cacheAt, Value cache) {
    RopeAttr rope = op.getRopeAttr();
    if (!rope)
      return copyRow(g, rows.keys, rowAt, cacheAt, cache);
    const RotatedChannels rotation = RotatedChannels::of(rope);
    const int64_t d = cast<MemRefType>(rows.keys.getType()).getShape().back();
    auto at = [&](ArrayRef<Value> prefix, Value last) {
      SmallVector<Value> index(prefix);
      index.push_back(last);
      return index;
    };
    cache = forEachVector(g, 0, rope.getRotaryDim() / 2, cache, [&](Value pair, Value in) {
      Value current = in;
      // One load a statement: the IR does not depend on the order a
      // compiler evaluates call arguments in.
      Value cos = g.vload(rows.cos, at(tableAt, pair));
      Value sin = g.vload(rows.sin, at(tableAt, pair));
      buildVectorPairRotation(
          g.b, cos, sin, pair, rotation,
          [&](Value c, int64_t n) { return g.vload(rows.keys, at(rowAt, c), n); },
          [&](Value v, Value c) { current = writeVector(g, v, current, cacheAt, c); });
      return current;
    });
    auto raw = VectorType::get({g.lanes}, cast<MemRefType>(rows.keys.getType()).getElementType());
    for (auto [begin, end] : rotation.passThrough(d))
      cache = forEachVector(g, begin, end, cache, [&](Value c, Value in) {
        return writeVector(g, vector::LoadOp::create(g.b, raw, rows.keys, at(rowAt, c)), in,
                           cacheAt, c);
      });
    return cache;
  }
};

struct TileAppendKvPass : pe::impl::PETileAppendKvBase<TileAppendKvPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-tile-append-kv")))
      return signalPassFailure();
    FailureOr<CpuTarget> target = getCpuTarget(getOperation());
    if (failed(target))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateTileAppendKvPatterns(patterns, *target);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::pe::populateTileAppendKvPatterns(RewritePatternSet &patterns,
                                            const CpuTarget &target) {
  patterns.add<TileAppendKv>(patterns.getContext(), target.f32Lanes());
}
