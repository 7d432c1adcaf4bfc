//===- ValueUtils.h - scalars and vectors alike -----------------*- C++ -*-===//
//
// The builders of positional math emit one formula on scalars (the bodies of
// linalg ops, GPU threads) and on vectors (CPU kernels): constants take the
// type of the value they combine with, conversions keep the vector shape.
//
//===----------------------------------------------------------------------===//
#ifndef PE_DIALECT_PE_UTILS_VALUEUTILS_H
#define PE_DIALECT_PE_UTILS_VALUEUTILS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::pe {

/// `type` with its element type replaced by `element` (a vector keeps its
/// shape, a scalar becomes `element`).
Type withElementType(Type type, Type element);

/// A float constant `value` of the type of `like` (a float or a vector of
/// floats).
Value floatConstantLike(ImplicitLocOpBuilder &b, Value like, double value);

/// An integer constant `value` of the type of `like` (an integer or index,
/// or a vector of them).
Value intConstantLike(ImplicitLocOpBuilder &b, Value like, int64_t value);

/// f16/bf16 (scalar or vector) extended to f32; f32 and f64 are returned as
/// they are.
Value extendToF32(ImplicitLocOpBuilder &b, Value x);

/// A float (scalar or vector) converted to element type `element`: rounded
/// once when narrower, extended when wider.
Value convertFloat(ImplicitLocOpBuilder &b, Value x, Type element);

/// The bf16 rounding of an f32 (scalar or vector) as its 16 bits (i16),
/// computed in integer arithmetic: round to nearest even,
///   bits16 = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16,
/// where the carry of the rounding runs into the exponent (overflow gives
/// infinity, subnormals round as IEEE says), and for a NaN the quiet NaN of
/// the same sign and leading payload, (bits | 0x00400000) >> 16. The choice
/// is made on the 32-bit words, so the last operations before the result
/// are a shift and a truncation (no select of bf16 values that LLVM could
/// fold into a conversion call).
Value buildBf16Bits(ImplicitLocOpBuilder &b, Value x);

/// An i32/i64 (scalar or vector) sign-extended to i64; an index is cast.
Value extendToI64(ImplicitLocOpBuilder &b, Value x);

/// Dimension `d` of the ranked tensor `tensor` as an index: a constant when
/// it is static, else a tensor.dim.
Value dimValue(ImplicitLocOpBuilder &b, Value tensor, int64_t d);

/// The integer element of `tensor` at `indices`, as an index.
Value extractIndex(ImplicitLocOpBuilder &b, Value tensor, ValueRange indices);

/// The tensor `value` is a slice, cast or reshape of, or null where it is
/// none of them.
Value viewSource(Value value);

/// Whether the tensor `value` is `source` or a slice, cast or reshape of
/// it (a chain of them).
bool derivesFrom(Value value, Value source);

/// The indexing map from `rank` loops to the loops `dims` (for the
/// linalg.generic ops the builders emit).
AffineMap loopsMap(MLIRContext *ctx, int64_t rank, ArrayRef<int64_t> dims);

} // namespace mlir::pe

#endif // PE_DIALECT_PE_UTILS_VALUEUTILS_H
