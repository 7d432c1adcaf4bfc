//===- GpuTileRope.cpp - pe-gpu-tile-rope ---------------------------------===//
//
// pe.rope for the GPU: one parallel loop whose iterations are 16-byte chunks
// of the rows, mapped one per thread. RoPE reads one byte for every byte it
// writes and computes little, so it is bound by memory bandwidth: the
// kernel moves x and the result once each, in 128-bit accesses, with
// neighbouring threads on neighbouring chunks (coalesced), and reads the
// f32 cos/sin chunks of its position from tables that stay in L2.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUTILEROPE
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

struct GpuTileRope : OpRewritePattern<RopeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RopeOp op, PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    RopeAttr rope = op.getRope();
    Type element = type.getElementType();
    const int64_t lanes = gpuChunkLanes(element);
    const RotatedChannels rotation = RotatedChannels::of(rope);
    const int64_t d = type.getDimSize(3), rotary = rope.getRotaryDim(), half = rotary / 2;
    if (type.isDynamicDim(3) || half % lanes || !rotation.passThroughAligned(d, lanes))
      return rewriter.notifyMatchFailure(op, "rows are not whole 16-byte chunks");
    if (!SymbolTable::getNearestSymbolTable(op) ||
        largestConstantTable(op) > kMaxConstantTableEntries)
      return rewriter.notifyMatchFailure(op, "left to the reference lowering");

    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    auto [cosTable, sinTable] = prepareRopeOperands(
        b, op, op.getInput(), op.getPositions(), op.getCos(), op.getSin());
    Value x = toReadOnlyBuffer(b, op.getInput());
    Value cos = toReadOnlyBuffer(b, cosTable), sin = toReadOnlyBuffer(b, sinTable);
    for (Value buffer : {x, cos, sin})
      buildAlignmentCheck(b, op, buffer, kGpuChunkBytes);
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < 4; ++i)
      sizes.push_back(memref::DimOp::create(b, x, i));
    SmallVector<Value> dynamic;
    for (int64_t i = 0; i < 4; ++i)
      if (type.isDynamicDim(i))
        dynamic.push_back(sizes[i]);
    Value out =
        memref::AllocOp::create(b, MemRefType::get(type.getShape(), element), dynamic);

    // Chunks of a row: r/2 / lanes pair chunks, then the pass-through ones.
    const int64_t pairChunks = half / lanes;
    sizes[3] = arith::ConstantIndexOp::create(b, pairChunks + (d - rotary) / lanes);
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value one = arith::ConstantIndexOp::create(b, 1);
    auto loop = scf::ParallelOp::create(b, SmallVector<Value>(4, zero), sizes,
                                        SmallVector<Value>(4, one));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    // (A copy: the loop returns its induction variables by value.)
    SmallVector<Value> ivs(loop.getInductionVars());
    const int64_t seqDim = op.getLayout() == Layout::bhsd ? 2 : 1;
    const bool batchTables = cast<MemRefType>(cos.getType()).getRank() == 3;
    Value chunk = ivs[3];
    auto at = [&](Value channel) {
      return SmallVector<Value>{ivs[0], ivs[1], ivs[2], channel};
    };
    Value rotated = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, chunk,
                                         arith::ConstantIndexOp::create(b, pairChunks));
    auto yield = [](OpBuilder &nested, Location loc) { scf::YieldOp::create(nested, loc); };
    auto ifRotated = scf::IfOp::create(b, rotated, yield, yield);

    b.setInsertionPoint(ifRotated.thenBlock()->getTerminator());
    Value pair = arith::MulIOp::create(b, chunk, arith::ConstantIndexOp::create(b, lanes));
    SmallVector<Value> row = batchTables ? SmallVector<Value>{ivs[0], ivs[seqDim], pair}
                                         : SmallVector<Value>{ivs[seqDim], pair};
    Value cosChunk = loadGpuChunk(b, cos, row, lanes);
    Value sinChunk = loadGpuChunk(b, sin, row, lanes);
    buildVectorPairRotation(
        b, cosChunk, sinChunk, pair, rotation,
        [&](Value channel, int64_t n) { return extendToF32(b, loadGpuChunk(b, x, at(channel), n)); },
        [&](Value v, Value channel) { storeGpuChunk(b, convertFloat(b, v, element), out, at(channel)); });

    // Pass-through channel e = (chunk - pairChunks) * lanes of the others:
    // e before the rotated block, e + r after it.
    b.setInsertionPoint(ifRotated.elseBlock()->getTerminator());
    Value channel = arith::AddIOp::create(
        b, arith::ConstantIndexOp::create(b, rotary - pairChunks * lanes),
        arith::MulIOp::create(b, chunk, arith::ConstantIndexOp::create(b, lanes)));
    if (rotation.offset > 0) {
      Value rest = arith::SubIOp::create(b, channel, arith::ConstantIndexOp::create(b, rotary));
      Value before = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, rest,
                                           arith::ConstantIndexOp::create(b, rotation.offset));
      channel = arith::SelectOp::create(b, before, rest, channel);
    }
    storeGpuChunk(b, loadGpuChunk(b, x, at(channel), lanes), out, at(channel));

    b.setInsertionPointAfter(loop);
    rewriter.replaceOp(op, toResultTensor(b, out, op.getType()));
    return success();
  }

};

struct GpuTileRopePass : pe::impl::PEGpuTileRopeBase<GpuTileRopePass> {
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-gpu-tile-rope")))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateGpuTileRopePatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::pe::populateGpuTileRopePatterns(RewritePatternSet &patterns) {
  patterns.add<GpuTileRope>(patterns.getContext());
}
