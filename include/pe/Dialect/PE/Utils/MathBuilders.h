//===- MathBuilders.h - exp and rounding as IR, without libraries -*- C++ -*-===//
//
// The elementary functions the kernels and the GPU math lowering build
// themselves (no libm, no libdevice), on scalars and vectors alike: the
// softmax's exponential, f64 exp for run-time RoPE frequencies, rounding to
// an integer and sign operations on the bits. One home for each.
//
//===----------------------------------------------------------------------===//
#ifndef PE_DIALECT_PE_UTILS_MATHBUILDERS_H
#define PE_DIALECT_PE_UTILS_MATHBUILDERS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::pe {

/// ln of the smallest normal f32: buildExpNonPositive is 0 below it.
constexpr double kExpNonPositiveLowest = -87.33654;

/// exp(x) for x <= 0 (all the softmax needs) to about 1 ulp of f32: x = n
/// ln2 + r with |r| <= ln2/2, exp(r) by the Cephes polynomial, times 2^n
/// built in the exponent bits. exp(-inf) and every result below the normal
/// range (x < kExpNonPositiveLowest) are 0 (a masked key weighs exactly 0);
/// NaN stays NaN.
Value buildExpNonPositive(ImplicitLocOpBuilder &b, Value x);

/// exp(x) for f64 (scalars or vectors) to about 1 ulp: x = k ln2 + r with k =
/// roundeven(x log2(e)) and r = x - k ln2 by two FMAs with a two-part ln2
/// (|r| <= ln2/2), e^r = sum r^i / i! for i <= 13 (truncation below 5e-18
/// relative), scaled by 2^k as two exact powers of two so that a subnormal
/// result is rounded once. x is clamped to [-746, 710] first (the result is
/// 0 or inf beyond); NaN is returned as is.
Value buildExpF64(ImplicitLocOpBuilder &b, Value x);

/// roundeven(x) exactly in arith: with t = copysign(2^p, x) (p = mantissa
/// bits), x + t rounds to an integer in the current (nearest-even) mode and
/// (x + t) - t is exact; |x| >= 2^p (or NaN/inf) is already integral. The
/// sign of zero is kept.
Value buildRoundEven(ImplicitLocOpBuilder &b, Value x);

/// |x| (no `signSource`) or copysign(x, signSource) on the bits (the sign
/// bit cleared or copied): exact, NaN payloads kept.
Value buildSignBits(ImplicitLocOpBuilder &b, Value x, Value signSource);

} // namespace mlir::pe

#endif // PE_DIALECT_PE_UTILS_MATHBUILDERS_H
