//===- GpuTilePagedAttention.cpp - pe.paged_attention for the GPU ---------===//
//
// pe.paged_attention as one grid of threads over (packed query row t,
// query head h, chunk c of the value channels, key split s), each thread a
// simt::AttentionThread that reads its sequence's keys in place from their
// pages (no gather copy, no loop over the sequences on the host):
//
//   b   = the sequence of row t (bisection of cu_seqlens)
//   L   = kv_lens[b],  position of row t:  L - cu_seqlens[b + 1] + t
//   key j of b:  page table[b, j / P], slot j mod P (nhd or hnd cache)
//   keys [s len, min((s + 1) len, L)) with len = ceil(M P / splits)
//
// where M P is the block table's capacity: the split-K of vLLM's paged
// attention v2, whose splits past a short sequence's keys end at once. The
// splits' (max, sum, output) states are merged by a second loop over
// (t, h, c); with one split the threads write the output directly. Q is
// rotated in the kernel by tables of the rows' positions (the caches hold
// K rotated); decode, ragged prefill and chunked prefill are the same grid.
//
//===----------------------------------------------------------------------===//
#include "SimtAttention.h"

#include "pe/Codegen/GPU/Kernels.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/KernelUtils.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"
#include "pe/Math/PositionalMath.h"
#include "pe-c/Runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::simt;

namespace {

/// The heads of `op` (dynamic sizes as such).
AttentionHeads pagedHeads(PagedAttentionOp op) {
  RankedTensorType q = op.getQuery().getType();
  AttentionHeads heads;
  heads.queryHeads = q.getDimSize(1);
  heads.kvHeads = op.getKeyCache().getType().getDimSize(op.getHeadsDim());
  heads.headDim = q.getDimSize(2);
  heads.valueDim = op.getValueCache().getType().getDimSize(3);
  return heads;
}

/// Why the paged kernel does not take `op`, or std::nullopt when it does.
std::optional<std::string> pagedKernelRefusal(PagedAttentionOp op) {
  AttentionHeads h = pagedHeads(op);
  for (int64_t dim : {h.queryHeads, h.kvHeads, h.headDim, h.valueDim})
    if (ShapedType::isDynamic(dim) || dim < 1)
      return std::string("its head counts and head dims must be static");
  if (h.headDim > kMaxStreamedHeadDim || h.valueDim > kMaxStreamedHeadDim)
    return "its head dims exceed " + std::to_string(kMaxStreamedHeadDim);
  // One table of the rows' positions serves every sequence: frequencies that
  // depend on the sequence's length would take the batch's longest.
  if (RopeAttr rope = op.getRopeAttr(); rope && formula::dependsOnSequenceLength(rope.getConfig()))
    return std::string("its rope's frequencies depend on each sequence's length (dynamic "
                       "NTK or dynamic LongRoPE)");
  if (!SymbolTable::getNearestSymbolTable(op))
    return std::string("it is not inside a symbol table");
  return std::nullopt;
}

/// What the paged kernel is specialized on: static heads and head dims up
/// to kMaxStreamedHeadDim, keys stored rotated.
std::optional<GpuAttentionShape> pagedShapeOf(PagedAttentionOp op) {
  if (pagedKernelRefusal(op))
    return std::nullopt;
  GpuAttentionShape s;
  s.heads = pagedHeads(op);
  s.chunk = GpuAttentionShape::chunkOf(s.heads.valueDim);
  s.element = op.getQuery().getType().getElementType();
  s.scale = op.getEffectiveScale();
  s.positionMask = PositionMask::of(op);
  s.alibi = op.getAlibi().has_value();
  s.rope = op.getRopeAttr();
  s.rotateKeys = false;
  if (std::optional<APFloat> softcap = op.getSoftcap())
    s.softcap = softcap->convertToDouble();
  s.temperature = op.getTemperatureAttr();
  return s;
}

/// The sequence of packed row `row`: the last b in [0, B) with cu[b] <= row
/// (`cuAt(b)` reads cu[b] as an index; cu_seqlens starts at 0 and does not
/// decrease, which the op's checks establish), by bisection:
///   lo = 0, hi = B;  while hi - lo > 1:  mid = (lo + hi) / 2,
///   cu[mid] <= row ? lo = mid : hi = mid.
/// Rows of empty sequences never match: their cu[b] equals the next one's.
Value buildSequenceOfRow(ImplicitLocOpBuilder &b, Value row, Value batch,
                         function_ref<Value(ImplicitLocOpBuilder &, Value)> cuAt) {
  // (lo, hi) as i64: index-typed loop values would become casts that the
  // GPU pipeline's type conversion puts where they are defined, the host.
  Type i64 = b.getI64Type();
  auto toI64 = [&](ImplicitLocOpBuilder &x, Value v) {
    return arith::IndexCastOp::create(x, i64, v).getResult();
  };
  Value one = arith::ConstantIntOp::create(b, i64, 1);
  Value target = toI64(b, row);
  auto loop = scf::WhileOp::create(
      b, TypeRange{i64, i64},
      ValueRange{arith::ConstantIntOp::create(b, i64, 0), toI64(b, batch)},
      [&](OpBuilder &nb, Location loc, ValueRange range) {
        ImplicitLocOpBuilder n(loc, nb);
        Value width = arith::SubIOp::create(n, range[1], range[0]);
        Value more = arith::CmpIOp::create(n, arith::CmpIPredicate::sgt, width, one);
        scf::ConditionOp::create(n, more, range);
      },
      [&](OpBuilder &nb, Location loc, ValueRange range) {
        ImplicitLocOpBuilder n(loc, nb);
        Value mid = arith::ShRUIOp::create(n, arith::AddIOp::create(n, range[0], range[1]), one);
        Value start = cuAt(n, arith::IndexCastOp::create(n, n.getIndexType(), mid));
        Value below = arith::CmpIOp::create(n, arith::CmpIPredicate::sle, toI64(n, start), target);
        scf::YieldOp::create(n, ValueRange{arith::SelectOp::create(n, below, mid, range[0]),
                                           arith::SelectOp::create(n, below, range[1], mid)});
      });
  return arith::IndexCastOp::create(b, b.getIndexType(), loop.getResult(0));
}

/// The i64 position of packed row `row` of sequence `seq`: its sequence's
/// queries are its last cu[seq + 1] - cu[seq] keys, so row t is at
/// L - cu[seq + 1] + t.
Value buildRowPosition(ImplicitLocOpBuilder &b, Value keys, Value nextStart, Value row) {
  Value position = arith::AddIOp::create(b, arith::SubIOp::create(b, keys, nextStart), row);
  return arith::IndexCastOp::create(b, b.getI64Type(), position);
}

/// The positions [T] (i64) of the op's packed query rows, for its tables.
Value buildQueryPositions(ImplicitLocOpBuilder &b, PagedAttentionOp op, Value tokens) {
  Value cu = op.getCuSeqlens(), lens = op.getKvLens();
  Value batch = dimValue(b, op.getBlockTable(), 0);
  auto type = RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type());
  return tensor::GenerateOp::create(
      b, type, ValueRange{tokens}, [&](OpBuilder &nb, Location loc, ValueRange at) {
        ImplicitLocOpBuilder n(loc, nb);
        auto cuAt = [&](ImplicitLocOpBuilder &x, Value i) { return extractIndex(x, cu, i); };
        Value seq = buildSequenceOfRow(n, at[0], batch, cuAt);
        Value next = arith::AddIOp::create(n, seq, arith::ConstantIndexOp::create(n, 1));
        tensor::YieldOp::create(
            n, buildRowPosition(n, extractIndex(n, lens, seq), cuAt(n, next), at[0]));
      });
}

/// Element `at` of an integer buffer as an index.
Value loadIndex(ImplicitLocOpBuilder &b, Value buffer, ValueRange at) {
  Value x = memref::LoadOp::create(b, buffer, at);
  return arith::IndexCastOp::create(b, b.getIndexType(), x);
}

struct GpuTilePagedAttention : OpRewritePattern<PagedAttentionOp> {
  GpuTilePagedAttention(MLIRContext *context, const GpuChip &chip)
      : OpRewritePattern(context), chip(chip) {}
  GpuChip chip;

  LogicalResult matchAndRewrite(PagedAttentionOp op, PatternRewriter &rewriter) const override {
    std::optional<GpuAttentionShape> shape = pagedShapeOf(op);
    if (!shape)
      return rewriter.notifyMatchFailure(op, "not a shape of the paged kernel");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    buildPagedAttentionChecks(b, op, /*pagesPerEntry=*/true);
    const int64_t hq = shape->heads.queryHeads, dv = shape->heads.valueDim;
    Value tokens = dimValue(b, op.getQuery(), 0);
    buildResultSizeChecks(b, op, PE_CHECK_PAGED_RESULT, op.getType(),
                          {tokens, b.getIndexAttr(hq), b.getIndexAttr(dv)});
    GpuAttentionBuffers buf;
    Value table, lens, cu;
    prepareBuffers(b, op, tokens, buf, table, lens, cu);
    SmallVector<OpFoldResult> sizes = {tokens, b.getIndexAttr(hq), b.getIndexAttr(dv)};
    buf.out = alloc(b, sizes, shape->element);
    // The keys the block table addresses (M columns of P keys) in splits
    // that give the chip enough threads, ranges of at least kMinSplitKeys.
    Value pageSize = memref::DimOp::create(b, buf.k, op.getPageSizeDim());
    Value capacity = arith::MulIOp::create(b, memref::DimOp::create(b, table, 1), pageSize);
    Value chunks = arith::ConstantIndexOp::create(b, hq * (dv / shape->chunk));
    Value splits, len;
    std::tie(splits, len) = keySplits(b, capacity, arith::MulIOp::create(b, tokens, chunks),
                                   chip.residentThreads(kRegisters));
    Value one = arith::ConstantIndexOp::create(b, 1);
    Value direct = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, splits, one);
    allocPartials(b, *shape, buf, tokens, splits, direct);
    Value batch = memref::DimOp::create(b, table, 0);
    sizes[2] = b.getIndexAttr(dv / shape->chunk);
    SmallVector<OpFoldResult> splitThreads(sizes);
    splitThreads.push_back(splits);
    parallelLoop(b, splitThreads, [&](ValueRange t) {
      auto cuAt = [&](ImplicitLocOpBuilder &x, Value i) { return loadIndex(x, cu, i); };
      Value seq = buildSequenceOfRow(b, t[0], batch, cuAt);
      Value keys = loadIndex(b, lens, seq);
      Value next = cuAt(b, arith::AddIOp::create(b, seq, one));
      PagedRows rows{table, seq, pageSize, buildRowPosition(b, keys, next, t[0]),
                     op.getLayout()};
      AttentionThread thread(b, *shape, buf, rows, t[0], t[1], t[2]);
      Value k0 = arith::MinUIOp::create(b, arith::MulIOp::create(b, t[3], len), keys);
      Value k1 = arith::MinUIOp::create(b, arith::AddIOp::create(b, k0, len), keys);
      Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t[3],
                                          arith::ConstantIndexOp::create(b, 0));
      SmallVector<Value> state = thread.streamKeys(k0, k1, first);
      scf::IfOp::create(
          b, direct, [&](OpBuilder &, Location) {
            thread.storeOutput(state);
            scf::YieldOp::create(b);
          },
          [&](OpBuilder &, Location) {
            thread.storePartial(state, t[3]);
            scf::YieldOp::create(b);
          });
    });
    auto merge = scf::IfOp::create(b, direct, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(merge.elseBlock()->getTerminator());
      parallelLoop(b, sizes, [&](ValueRange t) {
        AttentionThread(b, *shape, buf, PagedRows{}, t[0], t[1], t[2]).combinePartials(splits);
      });
    }
    rewriter.replaceOp(op, toResultTensor(b, buf.out, op.getType()));
    return success();
  }

  /// The operands as buffers in `buf` (and the block table, kv_lens and
  /// cu_seqlens), with the tables of the rows' positions for a rope and the
  /// ALiBi slopes.
  static void prepareBuffers(ImplicitLocOpBuilder &b, PagedAttentionOp op, Value tokens,
                             GpuAttentionBuffers &buf, Value &table, Value &lens, Value &cu) {
    // Every tensor first, then the buffers (no tensor may be computed after
    // another's to_buffer: it could reuse that tensor's buffer).
    Value qCos, qSin, slopes;
    // Tables [T, r/2]: of the rows' positions, or of their streams [A, T].
    if (RopeAttr rope = op.getRopeAttr())
      std::tie(qCos, qSin) = buildRopeTables(
          b, rope,
          rope.isMultiStream() ? op.getRopePositions() : buildQueryPositions(b, op, tokens),
          b.getF32Type());
    if (std::optional<APFloat> alibi = op.getAlibi())
      slopes = buildAlibiSlopes(b, op.getQuery().getType().getDimSize(1),
                                alibi->convertToDouble());
    buf.qCos = toReadOnlyBuffer(b, qCos);
    buf.qSin = toReadOnlyBuffer(b, qSin);
    buf.slopes = toReadOnlyBuffer(b, slopes);
    buf.q = toReadOnlyBuffer(b, op.getQuery());
    buf.k = toReadOnlyBuffer(b, op.getKeyCache());
    buf.v = toReadOnlyBuffer(b, op.getValueCache());
    buf.mask = toReadOnlyBuffer(b, op.getMask());
    buf.sinks = toReadOnlyBuffer(b, op.getSinks());
    table = toReadOnlyBuffer(b, op.getBlockTable());
    lens = toReadOnlyBuffer(b, op.getKvLens());
    cu = toReadOnlyBuffer(b, op.getCuSeqlens());
  }

  /// The partial buffers [T, Hq, splits, Dv] and [T, Hq, splits, 2] of
  /// `buf` (empty when the threads write the output `direct`ly).
  static void allocPartials(ImplicitLocOpBuilder &b, const GpuAttentionShape &shape,
                            GpuAttentionBuffers &buf, Value tokens, Value splits,
                            Value direct) {
    Value none = arith::ConstantIndexOp::create(b, 0);
    Value held = arith::SelectOp::create(b, direct, none, splits);
    SmallVector<OpFoldResult> sizes = {tokens, b.getIndexAttr(shape.heads.queryHeads), held,
                                       b.getIndexAttr(shape.heads.valueDim)};
    buf.partialOut = alloc(b, sizes, b.getF32Type());
    sizes.back() = b.getIndexAttr(2);
    buf.partialStats = alloc(b, sizes, b.getF32Type());
  }
};

} // namespace

void mlir::pe::populateGpuTilePagedAttentionPatterns(RewritePatternSet &patterns,
                                                     const GpuChip &chip) {
  patterns.add<GpuTilePagedAttention>(patterns.getContext(), chip);
}

LogicalResult mlir::pe::refuseUntiledPagedAttention(Operation *root) {
  WalkResult refused = root->walk([](PagedAttentionOp op) {
    std::optional<std::string> why = pagedKernelRefusal(op);
    op.emitOpError() << "is not supported by the GPU kernel: "
                     << why.value_or("it was not rewritten") << "; compile it for the CPU";
    return WalkResult::interrupt();
  });
  return failure(refused.wasInterrupted());
}
