//===- TileRope.cpp - pe-tile-rope ----------------------------------------===//
//
// pe.rope as one streaming pass: y = rope(x) row by row, each row read and
// written once. RoPE moves 2 bytes for every 1 read, so it is bound by memory
// bandwidth; the kernel keeps every table row of a block of positions in L1
// across the heads and writes the result with non-temporal stores (no read
// for ownership of the output lines).
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/CPU/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/KernelUtils.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"

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
#define GEN_PASS_DEF_PETILEROPE
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

/// Positions per task: their table rows (8 x r/2 x 2 f32) stay in L1.
constexpr int64_t kBlock = 8;

struct TileRope : OpRewritePattern<RopeOp> {
  TileRope(MLIRContext *ctx, int64_t lanes, int64_t threads)
      : OpRewritePattern(ctx), lanes(lanes), threads(threads) {}

  LogicalResult matchAndRewrite(RopeOp op, PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    RopeAttr rope = op.getRope();
    const RotatedChannels rotation = RotatedChannels::of(rope);
    const int64_t d = type.getDimSize(3), half = rope.getRotaryDim() / 2;
    if (type.isDynamicDim(3) || half % lanes || !rotation.passThroughAligned(d, lanes))
      return rewriter.notifyMatchFailure(op, "rows are not whole vectors");
    if (!SymbolTable::getNearestSymbolTable(op) ||
        largestConstantTable(op) > kMaxConstantTableEntries)
      return rewriter.notifyMatchFailure(op, "left to the reference lowering");

    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    KernelBuilder g{b, lanes};
    auto [cosTable, sinTable] = prepareRopeOperands(
        b, op, op.getInput(), op.getPositions(), op.getCos(), op.getSin());
    Value x = g.toBuffer(op.getInput());
    Value cos = g.toBuffer(cosTable), sin = g.toBuffer(sinTable);
    Value out = allocateOutput(g, x, type);
    const bool bhsd = op.getLayout() == Layout::bhsd;
    const bool batchTables = cast<MemRefType>(cos.getType()).getRank() == 3;
    Type element = type.getElementType();
    // Rows of whole cache lines: 64-byte aligned vector stores.
    const int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    llvm::MaybeAlign align;
    if ((d * bytes) % 64 == 0)
      align = llvm::Align(g.lanes * bytes);
    auto store = [&](Value v, ValueRange at) {
      if (!element.isF32())
        v = arith::TruncFOp::create(b, VectorType::get({g.lanes}, element), v);
      vector::StoreOp::create(b, v, out, at, /*nontemporal=*/true, align);
    };

    const int64_t seqDim = bhsd ? 2 : 1, headDim = bhsd ? 1 : 2;
    Value batch = memref::DimOp::create(b, x, 0);
    Value seq = memref::DimOp::create(b, x, seqDim);
    Value heads = memref::DimOp::create(b, x, headDim);
    Value blocks = g.ceilDiv(seq, g.index(kBlock));
    g.parallel(threads, {batch, blocks}, [&](ValueRange ivs) {
      Value bi = ivs[0], s0 = g.mul(ivs[1], g.index(kBlock));
      Value sEnd = g.min(seq, g.add(s0, g.index(kBlock)));
      auto row = [&](Value s, Value h) {
        auto at = [&](Value channel) {
          return bhsd ? SmallVector<Value>{bi, h, s, channel}
                      : SmallVector<Value>{bi, s, h, channel};
        };
        g.forEachVector(0, half, [&](Value pair) {
          SmallVector<Value> t = batchTables ? SmallVector<Value>{bi, s, pair}
                                             : SmallVector<Value>{s, pair};
          buildVectorPairRotation(
              b, g.vload(cos, t), g.vload(sin, t), pair, rotation,
              [&](Value channel, int64_t lanes) { return g.vload(x, at(channel), lanes); },
              [&](Value v, Value channel) { store(v, at(channel)); });
        });
        for (auto [begin, end] : rotation.passThrough(d))
          g.forEachVector(begin, end, [&](Value c) { store(g.vload(x, at(c)), at(c)); });
      };
      // bhsd: heads outside positions (rows of one head are contiguous);
      // bshd: positions outside heads (a position's heads are contiguous).
      if (bhsd) {
        g.loop(0, heads, 1, [&](Value h) {
          g.loop(s0, sEnd, g.index(1), [&](Value s) { row(s, h); });
        });
      } else {
        g.loop(s0, sEnd, g.index(1), [&](Value s) {
          g.loop(0, heads, 1, [&](Value h) { row(s, h); });
        });
      }
    });
    rewriter.replaceOp(op, toResultTensor(b, out, op.getType()));
    return success();
  }

private:
  int64_t lanes, threads;

  /// A 64-byte aligned buffer of x's shape.
  static Value allocateOutput(KernelBuilder &g, Value x, RankedTensorType type) {
    SmallVector<Value> dynamic;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        dynamic.push_back(memref::DimOp::create(g.b, x, i));
    return memref::AllocOp::create(
        g.b, MemRefType::get(type.getShape(), type.getElementType()), dynamic,
        ValueRange{}, g.b.getI64IntegerAttr(64));
  }
};

struct TileRopePass : pe::impl::PETileRopeBase<TileRopePass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-tile-rope")))
      return signalPassFailure();
    if (threads < 1) {
      getOperation()->emitError("pe-tile-rope: threads must be positive");
      return signalPassFailure();
    }
    FailureOr<CpuTarget> target = getCpuTarget(getOperation());
    if (failed(target))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateTileRopePatterns(patterns, *target, threads);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::pe::populateTileRopePatterns(RewritePatternSet &patterns,
                                        const CpuTarget &target, int64_t threads) {
  patterns.add<TileRope>(patterns.getContext(), target.f32Lanes(), threads);
}
