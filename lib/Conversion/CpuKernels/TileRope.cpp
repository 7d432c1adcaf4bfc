//===- TileRope.cpp - pe-tile-rope ----------------------------------------===//
//
// pe.rope as one streaming pass: y = rope(x) row by row, each row read and
// written once. RoPE moves 2 bytes for every 1 read, so it is bound by memory
// bandwidth; the kernel keeps every table row of a block of positions in L1
// across the heads and writes the result with non-temporal stores (no read
// for ownership of the output lines).
//
//===----------------------------------------------------------------------===//
#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"

#include "KernelBuilder.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PETILEROPE
#include "pe/Conversion/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

/// Positions per task: their table rows (8 x r/2 x 2 f32) stay in L1.
constexpr int64_t kBlock = 8;

LogicalResult tileRope(RewriterBase &rewriter, RopeOp op, int64_t threads) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  RopeAttr rope = op.getRope();
  const int64_t d = type.getDimSize(3), rotary = rope.getRotaryDim(),
                half = rotary / 2;
  bool bhsd = op.getLayout() == Layout::bhsd;
  if (type.isDynamicDim(3) || half % kLanes || (d - rotary) % kLanes)
    return failure();
  bool interleaved = rope.getStyle() == RopeStyle::interleaved;
  Type element = type.getElementType();

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(loc, rewriter);
  KernelBuilder g{b};
  auto [cosT, sinT] = prepareRopeOperands(rewriter, loc, op, op.getInput(),
                                          op.getPositions(), op.getCos(), op.getSin());
  Value x = g.toBuffer(op.getInput());
  Value cos = g.toBuffer(cosT), sin = g.toBuffer(sinT);
  bool batchTables = cast<MemRefType>(cos.getType()).getRank() == 3;

  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < 4; ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(memref::DimOp::create(b, x, i));
  // Rows of whole cache lines: 64-byte aligned vector stores.
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  llvm::MaybeAlign align;
  if ((d * bytes) % 64 == 0)
    align = llvm::Align(kLanes * bytes);
  Value out = memref::AllocOp::create(
      b, MemRefType::get(type.getShape(), element), dynamic, ValueRange{},
      b.getI64IntegerAttr(64));

  const int64_t seqDim = bhsd ? 2 : 1, headDim = bhsd ? 1 : 2;
  Value batch = memref::DimOp::create(b, x, 0);
  Value seq = memref::DimOp::create(b, x, seqDim);
  Value heads = memref::DimOp::create(b, x, headDim);
  Value blocks = g.ceilDiv(seq, g.c(kBlock));

  auto store = [&](Value v, ValueRange at) {
    if (!element.isF32())
      v = arith::TruncFOp::create(b, VectorType::get({kLanes}, element), v);
    vector::StoreOp::create(b, v, out, at, /*nontemporal=*/true, align);
  };
  g.parallel(threads, {batch, blocks}, [&](ValueRange ivs) {
    Value bi = ivs[0], s0 = g.mul(ivs[1], g.c(kBlock));
    Value sEnd = g.min(seq, g.add(s0, g.c(kBlock)));
    auto row = [&](Value s, Value h) {
      SmallVector<Value> at = bhsd ? SmallVector<Value>{bi, h, s, Value()}
                                   : SmallVector<Value>{bi, s, h, Value()};
      auto index = [&](int64_t channel) {
        at[3] = g.c(channel);
        return at;
      };
      for (int64_t c = 0; c < half; c += kLanes) {
        SmallVector<Value> t = batchTables ? SmallVector<Value>{bi, s, g.c(c)}
                                           : SmallVector<Value>{s, g.c(c)};
        Value cs = g.vload(cos, t), sn = g.vload(sin, t);
        g.rotatePairs(
            cs, sn, c, half, interleaved,
            [&](int64_t channel, int64_t lanes) { return g.vload(x, index(channel), lanes); },
            [&](Value v, int64_t channel) { store(v, index(channel)); });
      }
      for (int64_t c = rotary; c < d; c += kLanes)
        store(g.vload(x, index(c)), index(c));
    };
    // bhsd: heads outside positions (rows of one head are contiguous);
    // bshd: positions outside heads (a position's heads are contiguous).
    if (bhsd) {
      g.loop(0, heads, 1, [&](Value h) {
        g.loop(s0, sEnd, g.c(1), [&](Value s) { row(s, h); });
      });
    } else {
      g.loop(s0, sEnd, g.c(1), [&](Value s) {
        g.loop(0, heads, 1, [&](Value h) { row(s, h); });
      });
    }
  });
  Value result = bufferization::ToTensorOp::create(
      b, RankedTensorType::get(type.getShape(), element), out, /*restrict=*/true,
      /*writable=*/true);
  if (result.getType() != op.getType())
    result = tensor::CastOp::create(b, op.getType(), result);
  rewriter.replaceOp(op, result);
  return success();
}

struct TileRopePass : pe::impl::PETileRopeBase<TileRopePass> {
  using Base::Base;
  void runOnOperation() override {
    if (threads < 1) {
      getOperation()->emitError("pe-tile-rope: threads must be positive");
      return signalPassFailure();
    }
    SmallVector<RopeOp> ops;
    getOperation()->walk([&](RopeOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (RopeOp op : ops)
      (void)tileRope(rewriter, op, threads);
  }
};

} // namespace
