//===- MathBuilders.cpp - exp and rounding as IR, without libraries -------===//
#include "pe/Dialect/PE/Utils/MathBuilders.h"

#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pe;
using FloatPredicate = arith::CmpFPredicate;

/// An integer constant of `type` (scalar or vector) with the bits `value`.
static Value intBitsLike(ImplicitLocOpBuilder &b, Type type, const APInt &value) {
  auto attr = b.getIntegerAttr(getElementTypeOrSelf(type), value);
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, DenseElementsAttr::get(vector, attr));
  return arith::ConstantOp::create(b, attr);
}

Value pe::buildExpNonPositive(ImplicitLocOpBuilder &b, Value x) {
  auto c = [&](double v) { return floatConstantLike(b, x, v); };
  auto fma = [&](Value p, Value q, Value r) { return math::FmaOp::create(b, p, q, r); };
  // Below kExpNonPositiveLowest (and for -inf) the result is 0 whatever
  // the steps below compute there, so x needs no clamp.
  Value tiny = arith::CmpFOp::create(b, FloatPredicate::OLT, x, c(kExpNonPositiveLowest));
  // x = n ln2 + r. For x in [kExpNonPositiveLowest, 0], t = x log2(e) +
  // 1.5 2^23 + 127 lies in [2^23, 2^24), where the f32 spacing is 1: the
  // FMA rounds x log2(e) to the nearest integer n, t - (1.5 2^23 + 127) = n
  // exactly, and t's low mantissa bits hold n + 127 (1.5 2^23's are 0).
  // Both need the FMA rounded once and t - kShift kept as written (no
  // fast-math).
  constexpr double kShift = 12582912.0 + 127.0;
  Value t = fma(x, c(1.44269504088896341), c(kShift));
  Value n = arith::SubFOp::create(b, t, c(kShift));
  // r = x - n ln2 from a two-part ln2, |r| <= ln2/2.
  Value r = fma(n, c(-0.693359375), x);
  r = fma(n, c(2.12194440e-4), r);
  // exp(r) = 1 + r (1 + r P(r)), P the Cephes polynomial.
  Value poly = c(1.9875691500e-4);
  for (double coefficient : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                             1.6666665459e-1, 5.0000001201e-1})
    poly = fma(poly, r, c(coefficient));
  Value y = fma(fma(poly, r, c(1.0)), r, c(1.0));
  // 2^n: the bits (n + 127) << 23, t's bits shifted (the shift drops the
  // rest of t). A NaN x gives a NaN y, and NaN times any scale is NaN.
  Type intType = withElementType(x.getType(), b.getI32Type());
  Value bits = arith::BitcastOp::create(b, intType, t);
  Value scale = arith::BitcastOp::create(
      b, x.getType(), arith::ShLIOp::create(b, bits, intConstantLike(b, bits, 23)));
  return arith::SelectOp::create(b, tiny, c(0.0), arith::MulFOp::create(b, y, scale));
}

Value pe::buildExpF64(ImplicitLocOpBuilder &b, Value x) {
  auto constant = [&](double v) { return floatConstantLike(b, x, v); };
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
  Type i64 = withElementType(x.getType(), b.getI64Type());
  auto i64Constant = [&](int64_t v) {
    return intBitsLike(b, i64, APInt(64, v, /*isSigned=*/true));
  };
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
  return arith::SelectOp::create(b, isNan, x, y);
}

Value pe::buildRoundEven(ImplicitLocOpBuilder &b, Value x) {
  auto type = cast<FloatType>(getElementTypeOrSelf(x));
  double big = std::ldexp(1.0, type.getFPMantissaWidth() - 1);
  Value magnitude = math::AbsFOp::create(b, x);
  Value t = math::CopySignOp::create(b, floatConstantLike(b, x, big), x);
  Value rounded = arith::SubFOp::create(b, arith::AddFOp::create(b, x, t), t);
  // Keep the sign of zero: roundeven(-0.3) = -0.
  rounded = math::CopySignOp::create(b, rounded, x);
  Value small = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, magnitude,
                                      floatConstantLike(b, x, big));
  return arith::SelectOp::create(b, small, rounded, x);
}

Value pe::buildSignBits(ImplicitLocOpBuilder &b, Value x, Value signSource) {
  unsigned width = cast<FloatType>(getElementTypeOrSelf(x)).getWidth();
  Type intType = withElementType(x.getType(), b.getIntegerType(width));
  APInt signBit = APInt::getSignMask(width);
  Value sign = intBitsLike(b, intType, signBit);
  Value rest = intBitsLike(b, intType, ~signBit);
  Value bits = arith::AndIOp::create(b, arith::BitcastOp::create(b, intType, x), rest);
  if (signSource) {
    Value s = arith::AndIOp::create(b, arith::BitcastOp::create(b, intType, signSource), sign);
    bits = arith::OrIOp::create(b, bits, s);
  }
  return arith::BitcastOp::create(b, x.getType(), bits);
}
