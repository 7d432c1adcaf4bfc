//===- GpuTileAppendKv.cpp - pe-gpu-tile-append-kv ------------------------===//
//
// pe.append_kv for the GPU: one parallel loop over (batch row, token, KV
// head), a thread per row of head_dim channels. The thread reads its key row
// in 16-byte chunks, rotates them in f32 with the cos/sin row of its
// token's position and writes them straight into the cache slot (K is
// rotated once, as it enters the cache; no temporary), then copies the
// value row.
//
// Tokens are written in order: where two tokens name one slot, the later
// one is kept. A first parallel loop gives every token its slot or -1 (no
// write) when the slot is -1 or a later token of its batch row names it
// too, so the rows the second loop writes are disjoint and need no order.
//
// The caches are written as the buffers bufferization gives them: in place
// where it may (the caller's cache for a `pe.in_place` argument), else a
// copy; so each cache must be used by this op alone (checkCaches). Rows,
// tables and caches are read and written in 16-byte accesses (checked
// aligned at run time). The first loop's scans cost O(T^2) loads for T
// tokens: nothing for a decode step, about 2k loads a thread for a
// 4096-token prefill chunk.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/KernelUtils.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUTILEAPPENDKV
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

struct GpuTileAppendKv : OpRewritePattern<AppendKvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AppendKvOp op, PatternRewriter &rewriter) const override {
    if (LogicalResult shape = checkShape(op, rewriter); failed(shape))
      return shape;
    if (LogicalResult caches = checkCaches(op, rewriter); failed(caches))
      return caches;
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value capacity = buildAppendKvChecks(b, op, op.getKey(), op.getValue(), op.getKeyCache(),
                                         op.getValueCache(), op.getSlots(), op.getPositions());
    Value cos, sin;
    if (RopeAttr rope = op.getRopeAttr()) {
      Value positions = op.getPositions();
      if (op.isPaged())
        positions = buildAppendTokenPositions(b, positions, /*multiStream=*/false);
      std::tie(cos, sin) = buildRopeTables(b, rope, positions, b.getF32Type());
    }
    Value written = buildWrittenSlots(b, op.getSlots(), capacity);
    rewriter.replaceOp(op, buildRowLoop(b, op, written, cos, sin));
    return success();
  }

private:
  /// The buffers the row loop reads and writes (tables null without a rope).
  struct Buffers {
    Value keys, values, cos, sin, keyCache, valueCache;
  };

  /// Where a thread's rows are: [t, h] (pages) or [b, h, t] (dense) in the
  /// new rows, the start of its cos/sin row, and its cache row.
  struct RowAt {
    SmallVector<Value> row, table, cache;
  };

  static int64_t lanesOf(Value shaped) {
    return gpuChunkLanes(cast<ShapedType>(shaped.getType()).getElementType());
  }

  /// Rows of whole chunks of their caches (the rotated half and the
  /// pass-through channels too) and one position stream; anything else is
  /// left to pe-lower-to-linalg.
  static LogicalResult checkShape(AppendKvOp op, PatternRewriter &rewriter) {
    if (const char *refusal = appendKernelRefusal(op, lanesOf(op.getKeyCache()),
                                                  lanesOf(op.getValueCache())))
      return rewriter.notifyMatchFailure(op, refusal);
    return success();
  }

  /// The kernel writes the caches as buffers (bufferization.to_buffer, not
  /// read-only), which the IR's value semantics do not see: a cache that
  /// is read anywhere else (the other cache, the new rows, a second append,
  /// a later read of the old cache), directly or through a cast of it, could
  /// be folded or merged into a buffer this op writes. So each cache and
  /// every view it is made of must have this op as its only reader, and the
  /// two caches must come from different values; others are left to
  /// pe-lower-to-linalg.
  static LogicalResult checkCaches(AppendKvOp op, PatternRewriter &rewriter) {
    Value keyRoot = soleSource(op.getKeyCache()), valueRoot = soleSource(op.getValueCache());
    if (!keyRoot || !valueRoot || keyRoot == valueRoot)
      return rewriter.notifyMatchFailure(op, "a cache with other uses");
    return success();
  }

  /// The value `cache` is a cast, reshape or slice of (through a chain of
  /// them; `cache` itself if none), or null where any value of the chain
  /// has another use: bufferization folds such views into one buffer, so a
  /// reader of any of them would share the buffer this op writes.
  static Value soleSource(Value cache) {
    while (cache.hasOneUse()) {
      Value source = viewSource(cache);
      if (!source)
        return cache;
      cache = source;
    }
    return nullptr;
  }

  /// The slot each token is written to, -1 for none: slots[.., t] where it
  /// is in [0, capacity) and no later token t' > t of its row names it,
  /// else -1 (i64, the shape of `slots`). A parallel loop over the tokens,
  /// each scanning the tokens after it.
  static Value buildWrittenSlots(ImplicitLocOpBuilder &b, Value slots, Value capacity) {
    auto type = cast<RankedTensorType>(slots.getType());
    const int64_t rank = type.getRank();
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(tensor::getMixedSize(b, b.getLoc(), slots, d));
    Value init = tensor::EmptyOp::create(b, sizes, b.getI64Type());
    Value tokens = dimValue(b, slots, rank - 1);
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, init.getType(), ValueRange{}, ValueRange{init}, ArrayRef<AffineMap>{identity},
        iterators, [&](OpBuilder &nb, Location loc, ValueRange) {
          ImplicitLocOpBuilder n(loc, nb);
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(n, d));
          Value slot = extendToI64(n, tensor::ExtractOp::create(n, slots, at));
          Value zero = arith::ConstantIntOp::create(n, n.getI64Type(), 0);
          Value inRange = arith::AndIOp::create(
              n, arith::CmpIOp::create(n, arith::CmpIPredicate::sge, slot, zero),
              arith::CmpIOp::create(n, arith::CmpIPredicate::slt, slot, capacity));
          Value next = arith::AddIOp::create(n, at.back(), arith::ConstantIndexOp::create(n, 1));
          Value noLater = arith::ConstantIntOp::create(n, n.getI1Type(), 1);
          auto scan = scf::ForOp::create(
              n, next, tokens, arith::ConstantIndexOp::create(n, 1), ValueRange{noLater},
              [&](OpBuilder &sb, Location sloc, Value later, ValueRange carried) {
                ImplicitLocOpBuilder s(sloc, sb);
                SmallVector<Value> laterAt(at);
                laterAt.back() = later;
                Value other = extendToI64(s, tensor::ExtractOp::create(s, slots, laterAt));
                Value differs = arith::CmpIOp::create(s, arith::CmpIPredicate::ne, other, slot);
                scf::YieldOp::create(s, ValueRange{arith::AndIOp::create(s, carried[0],
                                                                         differs)});
              });
          Value kept = arith::AndIOp::create(n, inRange, scan.getResult(0));
          Value none = arith::ConstantIntOp::create(n, n.getI64Type(), -1);
          linalg::YieldOp::create(n, ValueRange{arith::SelectOp::create(n, kept, slot, none)});
        });
    return generic.getResult(0);
  }

  /// The caches after a parallel loop over (batch row, token, KV head) that
  /// writes each written token's key row (rotated) and value row into the
  /// row of its slot. Buffers: the rows, slots and tables read-only, the
  /// caches as the buffers they are written in (in place where bufferization
  /// finds them writable and not read after, else copies of them).
  static SmallVector<Value> buildRowLoop(ImplicitLocOpBuilder &b, AppendKvOp op, Value written,
                                         Value cos, Value sin) {
    const bool paged = op.isPaged();
    // The caches' buffers first: a read of an aliasing tensor placed after
    // them conflicts with their write, and bufferization copies it.
    Buffers buf;
    buf.keyCache = toWrittenBuffer(b, op.getKeyCache());
    buf.valueCache = toWrittenBuffer(b, op.getValueCache());
    buf.keys = toReadOnlyBuffer(b, op.getKey());
    buf.values = toReadOnlyBuffer(b, op.getValue());
    buf.cos = toReadOnlyBuffer(b, cos);
    buf.sin = toReadOnlyBuffer(b, sin);
    for (Value buffer : {buf.keys, buf.values, buf.cos, buf.sin, buf.keyCache, buf.valueCache})
      if (buffer)
        buildAlignmentCheck(b, op, buffer, kGpuChunkBytes);
    Value slots = toReadOnlyBuffer(b, written);
    Value zeroIndex = arith::ConstantIndexOp::create(b, 0);
    Value oneIndex = arith::ConstantIndexOp::create(b, 1);
    SmallVector<Value> bounds = {paged ? oneIndex : memref::DimOp::create(b, buf.keys, 0),
                                 memref::DimOp::create(b, buf.keys, paged ? 0 : 2),
                                 memref::DimOp::create(b, buf.keys, 1)};
    Value pageSize;
    if (paged)
      pageSize = memref::DimOp::create(b, buf.keyCache,
                                       op.getLayout() == CacheLayout::nhd ? 1 : 2);
    auto loop = scf::ParallelOp::create(b, SmallVector<Value>(3, zeroIndex), bounds,
                                        SmallVector<Value>(3, oneIndex));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      // (A copy: the loop returns its induction variables by value.)
      SmallVector<Value> ivs(loop.getInductionVars());
      Value batch = ivs[0], token = ivs[1], head = ivs[2];
      const bool rowSlots = cast<MemRefType>(slots.getType()).getRank() == 2;
      Value slot = memref::LoadOp::create(
          b, slots, rowSlots ? ValueRange{batch, token} : ValueRange{token});
      Value write = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, slot,
                                          arith::ConstantIntOp::create(b, b.getI64Type(), 0));
      auto ifWrite = scf::IfOp::create(b, write, /*withElseRegion=*/false);
      b.setInsertionPoint(ifWrite.thenBlock()->getTerminator());
      Value at = arith::IndexCastOp::create(b, b.getIndexType(), slot);
      RowAt rows{paged ? SmallVector<Value>{token, head} : SmallVector<Value>{batch, head, token},
                 {}, cacheOffsets(b, op, batch, head, at, pageSize)};
      if (cos)
        rows.table = paged ? SmallVector<Value>{token, zeroIndex}
                     : cast<MemRefType>(buf.cos.getType()).getRank() == 2
                         ? SmallVector<Value>{token}
                         : SmallVector<Value>{batch, token};
      writeKeyRow(b, op, buf, rows);
      copyRow(b, buf.values, buf.valueCache, rows);
    }
    return {toResultTensor(b, buf.keyCache, op.getNewKeyCache().getType()),
            toResultTensor(b, buf.valueCache, op.getNewValueCache().getType())};
  }

  /// `cache` as the buffer the kernel writes: its own where bufferization
  /// may write it in place, else a copy (identity layout).
  static Value toWrittenBuffer(ImplicitLocOpBuilder &b, Value cache) {
    auto type = cast<RankedTensorType>(cache.getType());
    return bufferization::ToBufferOp::create(
        b, MemRefType::get(type.getShape(), type.getElementType()), cache,
        /*read_only=*/false);
  }

  /// The indices of the cache row of slot `at`: [b, h, at] (dense),
  /// [page, row, h] (nhd) or [page, h, row] (hnd).
  static SmallVector<Value> cacheOffsets(ImplicitLocOpBuilder &b, AppendKvOp op, Value batch,
                                         Value head, Value at, Value pageSize) {
    if (!op.isPaged())
      return {batch, head, at};
    Value page = arith::DivUIOp::create(b, at, pageSize);
    Value row = arith::RemUIOp::create(b, at, pageSize);
    if (op.getLayout() == CacheLayout::nhd)
      return {page, row, head};
    return {page, head, row};
  }

  static SmallVector<Value> indices(ArrayRef<Value> prefix, Value last) {
    SmallVector<Value> index(prefix);
    index.push_back(last);
    return index;
  }

  /// `n` elements of `buffer` from `at` + [channel].
  static Value load(ImplicitLocOpBuilder &b, Value buffer, ArrayRef<Value> at, Value channel,
                    int64_t n) {
    return loadGpuChunk(b, buffer, indices(at, channel), n);
  }

  /// `v` stored into `cache` at `at` + [channel], rounded once to the
  /// cache's element type.
  static void store(ImplicitLocOpBuilder &b, Value v, Value cache, ArrayRef<Value> at,
                    Value channel) {
    v = convertFloat(b, v, cast<MemRefType>(cache.getType()).getElementType());
    storeGpuChunk(b, v, cache, indices(at, channel));
  }

  /// body(channel) for the chunks [from, to) of `lanes`, unrolled.
  static void forEachChunk(ImplicitLocOpBuilder &b, int64_t from, int64_t to, int64_t lanes,
                           function_ref<void(Value)> body) {
    for (int64_t c = from; c < to; c += lanes)
      body(arith::ConstantIndexOp::create(b, c));
  }

  /// The new row of `rows` copied into the cache row.
  static void copyRow(ImplicitLocOpBuilder &b, Value rows, Value cache, const RowAt &at) {
    const int64_t lanes = lanesOf(cache);
    forEachChunk(b, 0, cast<MemRefType>(rows.getType()).getShape().back(), lanes, [&](Value c) {
      store(b, load(b, rows, at.row, c, lanes), cache, at.cache, c);
    });
  }

  /// The new key row rotated by its table row (f32 arithmetic, pe.rope's)
  /// and written into the cache row; copied without a rope.
  static void writeKeyRow(ImplicitLocOpBuilder &b, AppendKvOp op, const Buffers &buf,
                          const RowAt &at) {
    RopeAttr rope = op.getRopeAttr();
    if (!rope)
      return copyRow(b, buf.keys, buf.keyCache, at);
    const int64_t lanes = lanesOf(buf.keyCache);
    const RotatedChannels rotation = RotatedChannels::of(rope);
    forEachChunk(b, 0, rope.getRotaryDim() / 2, lanes, [&](Value pair) {
      Value cos = load(b, buf.cos, at.table, pair, lanes);
      Value sin = load(b, buf.sin, at.table, pair, lanes);
      buildVectorPairRotation(
          b, cos, sin, pair, rotation,
          [&](Value c, int64_t n) { return extendToF32(b, load(b, buf.keys, at.row, c, n)); },
          [&](Value v, Value c) { store(b, v, buf.keyCache, at.cache, c); });
    });
    const int64_t d = cast<MemRefType>(buf.keys.getType()).getShape().back();
    for (auto [begin, end] : rotation.passThrough(d))
      forEachChunk(b, begin, end, lanes, [&](Value c) {
        store(b, load(b, buf.keys, at.row, c, lanes), buf.keyCache, at.cache, c);
      });
  }
};

struct GpuTileAppendKvPass : pe::impl::PEGpuTileAppendKvBase<GpuTileAppendKvPass> {
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-gpu-tile-append-kv")))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateGpuTileAppendKvPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::pe::populateGpuTileAppendKvPatterns(RewritePatternSet &patterns) {
  patterns.add<GpuTileAppendKv>(patterns.getContext());
}
