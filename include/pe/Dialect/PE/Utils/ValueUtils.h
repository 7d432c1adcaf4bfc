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

/// An i32/i64 (scalar or vector) sign-extended to i64; an index is cast.
Value extendToI64(ImplicitLocOpBuilder &b, Value x);

/// The indexing map from `rank` loops to the loops `dims` (for the
/// linalg.generic ops the builders emit).
AffineMap loopsMap(MLIRContext *ctx, int64_t rank, ArrayRef<int64_t> dims);

} // namespace mlir::pe

#endif // PE_DIALECT_PE_UTILS_VALUEUTILS_H
