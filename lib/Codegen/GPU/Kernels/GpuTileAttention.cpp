//===- GpuTileAttention.cpp - pe-gpu-tile-attention -----------------------===//
//
// pe.attention for the GPU (pe.paged_attention: GpuTilePagedAttention.cpp,
// the same pass). Without tensor cores: one parallel loop over
// (batch b, query head h, query i, chunk c of the value channels), mapped
// one iteration per thread, chunk innermost (decode: then the key split),
// each thread one simt::AttentionThread (SimtAttention.h) over the keys of
// KV head h / G, G = Hq / Hkv. Rotated Q/K and the scores never reach
// memory. The threads of one query row (its chunks) and of one KV group
// repeat the key rotation and the dot product; the tensor-core kernel
// (pe_gpu.mma_attention, for f16/bf16) shares them across a block. The
// query row lives in registers up to kMaxHeadDim channels; wider heads, up
// to kMaxStreamedHeadDim, step through the channels. Decode splits the keys across threads and merges the splits' states in
// a second loop.
//
//===----------------------------------------------------------------------===//
#include "SimtAttention.h"

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

#include <algorithm>
#include <limits>

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUTILEATTENTION
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::simt;

namespace {

/// Decode: at most kMaxDecodeQueries queries, static.
constexpr int64_t kMaxDecodeQueries = 8;
/// The tensor-core decode: splits of at least kMinMmaSplitKeys keys, until
/// about kMmaBlocksPerMultiprocessor blocks per multiprocessor of
/// pe-gpu-mma-attention (fewer where a multiprocessor's shared memory
/// holds fewer blocks: one of absorbed latent attention's).
constexpr int64_t kMinMmaSplitKeys = 256;
constexpr int64_t kMmaBlocksPerMultiprocessor = 4;

/// What the SIMT kernel is specialized on; with `anyHeadDim`, also for head
/// dims it does not take (the merge of the tensor-core decode's splits).
std::optional<GpuAttentionShape> shapeOf(AttentionOp op, bool anyHeadDim = false) {
  std::optional<AttentionHeads> heads = attentionHeads(op);
  if (!heads)
    return std::nullopt;
  GpuAttentionShape s;
  s.heads = *heads;
  if (!anyHeadDim && (s.heads.headDim > kMaxStreamedHeadDim ||
                      s.heads.valueDim > kMaxStreamedHeadDim))
    return std::nullopt;
  s.chunk = GpuAttentionShape::chunkOf(s.heads.valueDim);
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
  s.sharedKeyDim = op.getSharedKeyDim();
  return s;
}

/// The shared memory of a tensor-core block for `op`'s heads, on either
/// engine (sm_90a's warpgroup MMA may be turned off).
static int64_t mmaSharedBytes(AttentionOp op, const AttentionHeads &heads, const GpuChip &chip) {
  const int64_t bytes = op.getQuery().getType().getElementTypeBitWidth() / 8;
  return std::max(
      mmaAttentionSharedBytes(heads.headDim, heads.valueDim, bytes, /*warpgroup=*/false),
      mmaAttentionSharedBytes(heads.headDim, heads.valueDim, bytes, chip.warpgroupMma));
}

/// Whether the tensor-core kernel computes `op` on `chip`: bf16/f16, head
/// dims pe_gpu.mma_attention takes (pe_gpu::mmaAttentionTakesHeadDims)
/// whose tiles fit the shared memory the chip allows a block (absorbed
/// latent attention's 132 KiB: sm_80, sm_87, sm_90, sm_100), a rotated
/// block that starts at a multiple of 16 channels (its vector accesses are
/// aligned to their width).
bool suitsTensorCores(AttentionOp op, const GpuChip &chip) {
  std::optional<AttentionHeads> heads = attentionHeads(op);
  Type element = op.getQuery().getType().getElementType();
  if (!heads || element.isF16() == element.isBF16() ||
      !pe_gpu::mmaAttentionTakesHeadDims(heads->headDim, heads->valueDim))
    return false;
  RopeAttr rope = op.getRopeAttr();
  return mmaSharedBytes(op, *heads, chip) <= chip.sharedBytesPerBlock &&
         (!rope || rope.getRotaryOffset() % 16 == 0);
}

/// Whether `op` has a shared key block that the kernel it would take cannot
/// read in place: the tensor-core kernel's K tiles are copied from one
/// tensor, and the SIMT kernel pairs no rotated channels across the two.
bool needsExpandedKeys(AttentionOp op, bool tensorCores, const GpuChip &chip) {
  return op.getSharedKey() && ((tensorCores && suitsTensorCores(op, chip)) || !shapeOf(op) ||
                               rotationStraddlesSharedKey(op));
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
/// in every block that reads it: every one of the row tiles of a KV head
/// would rotate all its keys again. A row tile that rotates keys is 64 rows
/// on warpgroup MMA (the one-warpgroup kernel: the warp-specialized one
/// reads K as it is) and 128 in a wide mma.sync block
/// (mmaAttentionTakesWideBlocks). Decode (one row tile)
/// keeps the rotation in the kernel, where K is read once either way. The
/// rotated K is rounded to the element type exactly as the kernel rounds it
/// into shared memory, so the result is the same. A multi-stream rope keeps
/// it too (its tables are per token, not per position).
static bool rotatesKeysFirst(AttentionOp op, const GpuAttentionShape &shape,
                             const GpuChip &chip) {
  RopeAttr rope = op.getRopeAttr();
  if (!rope || rope.isMultiStream() || shape.decode)
    return false;
  const int64_t queries = op.getQuery().getType().getDimSize(2);
  const bool wide = !chip.warpgroupMma &&
                    mmaAttentionTakesWideBlocks(shape.heads.headDim, shape.heads.valueDim);
  const int64_t tileRows = wide ? 2 * kMmaAttentionBlockRows : kMmaAttentionBlockRows;
  return ShapedType::isDynamic(queries) ||
         llvm::divideCeil(queries * shape.group(), tileRows) > 1;
}

/// pe.attention -> pe_gpu.mma_attention on its buffers (the tables and
/// slopes computed here, on tensors), the result read from `out`. Decode
/// (few static queries): the keys split across blocks, then a loop per
/// (row, value chunk) merging the splits' states (as the SIMT decode does).
void replaceWithMmaAttention(AttentionOp op, PatternRewriter &rewriter, const GpuChip &chip) {
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  AttentionTensors t = prepareAttentionTensors(b, op);
  std::optional<GpuAttentionShape> shape = shapeOf(op, /*anyHeadDim=*/true);
  const bool rotateKeysFirst = rotatesKeysFirst(op, *shape, chip);
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
  const int64_t resident =
      std::clamp<int64_t>(chip.sharedBytesPerMultiprocessor / mmaSharedBytes(op, *heads, chip),
                          1, kMmaBlocksPerMultiprocessor);
  Value splits = mmaKeySplits(b, keys, blocks, chip.multiprocessors * resident);
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
    if (needsExpandedKeys(op, tensorCores, chip))
      return rewriter.notifyMatchFailure(op, "a shared key block to expand first");
    if (tensorCores && suitsTensorCores(op, chip) &&
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
    buf.sharedKey = toReadOnlyBuffer(b, t.sharedKey);

    // out: [B, Hq, Sq, Dv].
    SmallVector<OpFoldResult> sizes = {
        memref::getMixedSize(b, b.getLoc(), buf.q, 0), b.getIndexAttr(shape->heads.queryHeads),
        memref::getMixedSize(b, b.getLoc(), buf.q, 2), b.getIndexAttr(shape->heads.valueDim)};
    buf.out = alloc(b, sizes, shape->element);
    // Threads: (batch, query head, query, value chunk).
    sizes[3] = b.getIndexAttr(shape->heads.valueDim / shape->chunk);
    Value keys = memref::DimOp::create(b, buf.k, 2);
    Value zero = arith::ConstantIndexOp::create(b, 0);
    if (!shape->decode) {
      parallelLoop(b, sizes, [&](ValueRange t) {
        AttentionThread thread(b, *shape, buf, t[0], t[1], t[2], t[3]);
        thread.storeOutput(thread.streamKeys(zero, keys));
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
    Value splits, len;
    std::tie(splits, len) = keySplits(b, keys, threads, chip.residentThreads(kRegisters));
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
      Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t[4], zero);
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
    described->warpgroupMma = described->warpgroupMma && warpgroupMma;
    // The SIMT kernel reads a shared key block in place (keyScore); for the
    // tensor-core kernel, whose K tiles are copied from one tensor, and
    // where the block's channels and the head's would share a rotated pair,
    // it is written into every key head first.
    expandSharedKeys(getOperation(),
                     [&](AttentionOp op) {
                       return needsExpandedKeys(op, tensorCores, *described);
                     });
    RewritePatternSet patterns(&getContext());
    populateGpuTileAttentionPatterns(patterns, tensorCores, *described);
    populateGpuTilePagedAttentionPatterns(patterns, *described);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    // Paged attention has no reference lowering on the GPU.
    if (failed(refuseUntiledPagedAttention(getOperation())))
      signalPassFailure();
  }
};

} // namespace

void mlir::pe::populateGpuTileAttentionPatterns(RewritePatternSet &patterns,
                                                bool tensorCores, const GpuChip &chip) {
  patterns.add<GpuTileAttention>(patterns.getContext(), tensorCores, chip);
}
