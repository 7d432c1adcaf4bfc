//===- ValueUtils.cpp - scalars and vectors alike -------------------------===//
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

Type pe::withElementType(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

Value pe::floatConstantLike(ImplicitLocOpBuilder &b, Value like, double value) {
  Type type = like.getType();
  auto attr = b.getFloatAttr(getElementTypeOrSelf(type), value);
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, DenseElementsAttr::get(vector, attr));
  return arith::ConstantOp::create(b, attr);
}

Value pe::intConstantLike(ImplicitLocOpBuilder &b, Value like, int64_t value) {
  Type type = like.getType();
  auto attr = b.getIntegerAttr(getElementTypeOrSelf(type), value);
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, DenseElementsAttr::get(vector, attr));
  return arith::ConstantOp::create(b, attr);
}

Value pe::extendToF32(ImplicitLocOpBuilder &b, Value x) {
  if (getElementTypeOrSelf(x.getType()).getIntOrFloatBitWidth() >= 32)
    return x;
  return arith::ExtFOp::create(b, withElementType(x.getType(), b.getF32Type()), x);
}

Value pe::convertFloat(ImplicitLocOpBuilder &b, Value x, Type element) {
  Type from = getElementTypeOrSelf(x.getType());
  if (from == element)
    return x;
  Type type = withElementType(x.getType(), element);
  if (element.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, type, x);
  return arith::TruncFOp::create(b, type, x);
}

Value pe::extendToI64(ImplicitLocOpBuilder &b, Value x) {
  Type element = getElementTypeOrSelf(x.getType());
  Type type = withElementType(x.getType(), b.getI64Type());
  if (element.isInteger(64))
    return x;
  if (element.isIndex())
    return arith::IndexCastOp::create(b, type, x);
  return arith::ExtSIOp::create(b, type, x);
}

AffineMap pe::loopsMap(MLIRContext *ctx, int64_t rank, ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}
