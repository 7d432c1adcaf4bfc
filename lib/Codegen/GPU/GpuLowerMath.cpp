//===- GpuLowerMath.cpp - pe-gpu-lower-math -------------------------------===//
//
// Math in GPU kernels without libdevice where the hardware, exact arith or a
// polynomial does it: fma as the PTX instruction, rounding and sign
// operations in arith, f32 (and narrower) transcendentals as upstream's
// polynomial approximations, f64 exp as a polynomial of its own.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"

#include "pe/Dialect/PE/Utils/MathBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPULOWERMATH
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
/// math.fma -> llvm.intr.fma, which the NVPTX back end selects as fma.rn
/// (the NVVM conversion would call libdevice's __nv_fma).
struct FmaToIntrinsic : OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FmaOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::FMAOp>(op, op.getType(), op.getA(), op.getB(), op.getC());
    return success();
  }
};

/// math.roundeven, floor, ceil, trunc, absf and copysign on floats (scalars
/// or vectors) in arith (the NVVM conversion would call libdevice for each).
struct RoundingInArith : RewritePattern {
  RoundingInArith(MLIRContext *ctx, PatternBenefit benefit)
      : RewritePattern(MatchAnyOpTypeTag(), benefit, ctx) {}
  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isa<math::RoundEvenOp, math::FloorOp, math::CeilOp, math::TruncOp, math::AbsFOp,
             math::CopySignOp>(op) ||
        !isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())))
      return failure();
    ImplicitLocOpBuilder b(op->getLoc(), rewriter);
    Value x = op->getOperand(0);
    Value result;
    if (isa<math::AbsFOp>(op)) {
      result = pe::buildSignBits(b, x, nullptr);
    } else if (isa<math::CopySignOp>(op)) {
      result = pe::buildSignBits(b, x, op->getOperand(1));
    } else {
      Value r = pe::buildRoundEven(b, x);
      Value one = pe::floatConstantLike(b, x, 1.0);
      // floor = r - (r > x), ceil = r + (r < x), trunc = floor or ceil
      // toward zero; NaN compares false and stays NaN.
      Value floor = arith::SelectOp::create(
          b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, r, x),
          arith::SubFOp::create(b, r, one), r);
      Value ceil = arith::SelectOp::create(
          b, arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, r, x),
          arith::AddFOp::create(b, r, one), r);
      if (isa<math::RoundEvenOp>(op))
        result = r;
      else if (isa<math::FloorOp>(op))
        result = floor;
      else if (isa<math::CeilOp>(op))
        result = ceil;
      else
        result = arith::SelectOp::create(
            b, arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, pe::floatConstantLike(b, x, 0.0)),
            ceil, floor);
      // An integral result keeps the sign of x (floor(-0.0) = -0.0, ...).
      result = pe::buildSignBits(b, result, x);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// exp(x) for f64 scalars (run-time RoPE frequencies), without libdevice
/// (buildExpF64).
struct ExpF64 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isF64())
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    rewriter.replaceOp(op, pe::buildExpF64(b, op.getOperand()));
    return success();
  }
};

struct GpuLowerMathPass : pe::impl::PEGpuLowerMathBase<GpuLowerMathPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<FmaToIntrinsic, RoundingInArith, ExpF64>(ctx, /*benefit=*/2);
    auto all = [](StringRef) { return true; };
    // f16/bf16 math in f32, then f32 transcendentals as polynomials.
    populateMathF32ExpansionPatterns(patterns, all);
    populateMathPolynomialApproximationPatterns(patterns, all);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
