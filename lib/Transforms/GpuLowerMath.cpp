//===- GpuLowerMath.cpp - pe-gpu-lower-math -------------------------------===//
//
// Math in GPU kernels without libdevice where the hardware, exact arith or a
// polynomial does it: fma as the PTX instruction, rounding and sign
// operations in arith, f32 (and narrower) transcendentals as upstream's
// polynomial approximations, f64 exp as a polynomial of its own.
//
//===----------------------------------------------------------------------===//
#include "pe/Transforms/Passes.h"

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
#include "pe/Transforms/Passes.h.inc"
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

/// A constant of `type` (a scalar, or a vector splat of it).
static Value constantOf(ImplicitLocOpBuilder &b, Type type, TypedAttr scalar) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, DenseElementsAttr::get(vector, scalar));
  return arith::ConstantOp::create(b, scalar);
}

/// A float constant of `x`'s type (scalar or vector).
static Value floatLike(ImplicitLocOpBuilder &b, Value x, double value) {
  return constantOf(b, x.getType(), FloatAttr::get(getElementTypeOrSelf(x), value));
}

/// `type` with its (float) elements replaced by integers of `width` bits.
static Type integerLike(ImplicitLocOpBuilder &b, Type type, unsigned width) {
  Type integer = b.getIntegerType(width);
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(integer);
  return integer;
}

/// An integer constant of `type` (scalar or vector).
static Value intOf(ImplicitLocOpBuilder &b, Type type, const APInt &value) {
  return constantOf(b, type, b.getIntegerAttr(getElementTypeOrSelf(type), value));
}

/// roundeven(x) exactly in arith: with t = copysign(2^p, x) (p = mantissa
/// bits), x + t rounds to an integer in the current (nearest-even) mode and
/// (x + t) - t is exact; |x| >= 2^p (or NaN/inf) is already integral.
static Value buildRoundEven(ImplicitLocOpBuilder &b, Value x) {
  auto type = cast<FloatType>(getElementTypeOrSelf(x));
  double big = std::ldexp(1.0, type.getFPMantissaWidth() - 1);
  Value magnitude = math::AbsFOp::create(b, x);
  Value t = math::CopySignOp::create(b, floatLike(b, x, big), x);
  Value rounded = arith::SubFOp::create(b, arith::AddFOp::create(b, x, t), t);
  // Keep the sign of zero: roundeven(-0.3) = -0.
  rounded = math::CopySignOp::create(b, rounded, x);
  Value small = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, magnitude,
                                      floatLike(b, x, big));
  return arith::SelectOp::create(b, small, rounded, x);
}

/// |x| and copysign(x, y) on the bits (sign bit cleared / copied): exact,
/// NaN payloads kept.
static Value buildSignBits(ImplicitLocOpBuilder &b, Value x, Value signSource) {
  unsigned width = cast<FloatType>(getElementTypeOrSelf(x)).getWidth();
  Type intType = integerLike(b, x.getType(), width);
  APInt signBit = APInt::getSignMask(width);
  Value sign = intOf(b, intType, signBit);
  Value rest = intOf(b, intType, ~signBit);
  Value bits = arith::AndIOp::create(b, arith::BitcastOp::create(b, intType, x), rest);
  if (signSource) {
    Value s = arith::AndIOp::create(b, arith::BitcastOp::create(b, intType, signSource), sign);
    bits = arith::OrIOp::create(b, bits, s);
  }
  return arith::BitcastOp::create(b, x.getType(), bits);
}

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
      result = buildSignBits(b, x, nullptr);
    } else if (isa<math::CopySignOp>(op)) {
      result = buildSignBits(b, x, op->getOperand(1));
    } else {
      Value r = buildRoundEven(b, x);
      Value one = floatLike(b, x, 1.0);
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
            b, arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, floatLike(b, x, 0.0)),
            ceil, floor);
      // An integral result keeps the sign of x (floor(-0.0) = -0.0, ...).
      result = buildSignBits(b, result, x);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// exp(x) for f64 scalars (run-time RoPE frequencies), without libdevice:
/// x = k ln2 + r with k = roundeven(x log2(e)) and r = x - k ln2 by two
/// FMAs with a two-part ln2 (|r| <= ln2/2), e^r = sum r^i / i! for i <= 13
/// (truncation below 5e-18 relative), scaled by 2^k as two exact powers of
/// two so that a subnormal result is rounded once. x is clamped to
/// [-746, 710] first (the result is 0 or inf beyond), NaN is returned as is.
struct ExpF64 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isF64())
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value x = op.getOperand();
    auto constant = [&](double v) { return floatLike(b, x, v); };
    Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
    Value clamped = arith::SelectOp::create(b, isNan, constant(0.0), x);
    clamped = arith::MaximumFOp::create(b, clamped, constant(-746.0));
    clamped = arith::MinimumFOp::create(b, clamped, constant(710.0));
    Value k = buildRoundEven(b, arith::MulFOp::create(b, clamped, constant(M_LOG2E)));
    Value minusK = arith::NegFOp::create(b, k);
    // ln2 = kLn2Hi + kLn2Lo (kLn2Hi the double nearest ln2).
    constexpr double kLn2Hi = 0x1.62e42fefa39efp-1, kLn2Lo = 0x1.abc9e3b39803fp-56;
    Value r = math::FmaOp::create(b, minusK, constant(kLn2Hi), clamped);
    r = math::FmaOp::create(b, minusK, constant(kLn2Lo), r);
    // Horner: p = 1 + r (1 + r/2 (1 + r/3 (... (1 + r/13)))) as sum r^i/i!.
    double factorial = 1.0;
    SmallVector<double> coefficients;
    for (int i = 0; i <= 13; ++i) {
      factorial *= i > 0 ? double(i) : 1.0;
      coefficients.push_back(1.0 / factorial);
    }
    Value p = constant(coefficients.back());
    for (int i = 12; i >= 0; --i)
      p = math::FmaOp::create(b, p, r, constant(coefficients[i]));
    // 2^k = 2^k1 * 2^k2, k1 = k >> 1: each factor a normal double.
    Type i64 = integerLike(b, x.getType(), 64);
    auto i64Constant = [&](int64_t v) { return intOf(b, i64, APInt(64, v, /*isSigned=*/true)); };
    Value ki = arith::FPToSIOp::create(b, i64, k);
    Value k1 = arith::ShRSIOp::create(b, ki, i64Constant(1));
    Value k2 = arith::SubIOp::create(b, ki, k1);
    auto powerOfTwo = [&](Value e) {
      Value biased = arith::AddIOp::create(b, e, i64Constant(1023));
      Value bits = arith::ShLIOp::create(b, biased, i64Constant(52));
      return arith::BitcastOp::create(b, x.getType(), bits).getResult();
    };
    Value scale1 = powerOfTwo(k1);
    Value scale2 = powerOfTwo(k2);
    Value y = arith::MulFOp::create(b, arith::MulFOp::create(b, p, scale1), scale2);
    rewriter.replaceOp(op, arith::SelectOp::create(b, isNan, x, y));
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
