//===- ExpandBf16Conversions.cpp - pe-expand-bf16-conversions -------------===//
#include "pe/Codegen/CPU/Passes.h"

#include "pe/Dialect/PE/Utils/ValueUtils.h"
#include "pe/Target/CpuTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEEXPANDBF16CONVERSIONS
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {

/// f32 -> bf16: the rounding of buildBf16Bits, reinterpreted as bf16.
struct TruncToBf16 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getIn().getType()).isF32() ||
        !getElementTypeOrSelf(op.getType()).isBF16() || op.getRoundingmodeAttr())
      return rewriter.notifyMatchFailure(op, "not a default-rounded f32 -> bf16 truncation");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(),
                                                  pe::buildBf16Bits(b, op.getIn()));
    return success();
  }
};

/// bf16 -> f32: the 16 bits shifted into the upper half of an f32 word.
struct ExtendFromBf16 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op, PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getIn().getType()).isBF16() ||
        !getElementTypeOrSelf(op.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not a bf16 -> f32 extension");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Type i16 = pe::withElementType(op.getType(), b.getI16Type());
    Type i32 = pe::withElementType(op.getType(), b.getI32Type());
    Value bits = arith::ExtUIOp::create(b, i32, arith::BitcastOp::create(b, i16, op.getIn()));
    Value word = arith::ShLIOp::create(b, bits, pe::intConstantLike(b, bits, 16));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), word);
    return success();
  }
};

struct ExpandBf16ConversionsPass
    : pe::impl::PEExpandBf16ConversionsBase<ExpandBf16ConversionsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<pe::CpuTarget> target = pe::getCpuTarget(getOperation());
    if (failed(target))
      return signalPassFailure();
    // A fixed SVE length: LLVM 22 cannot select element extracts of its
    // conversions of fixed-width bf16 vectors.
    if (target->bf16Convert && !target->sveVectorBits)
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncToBf16, ExtendFromBf16>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
