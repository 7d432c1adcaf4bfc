//===- ValueUtils.cpp - scalars and vectors alike -------------------------===//
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

Value pe::buildBf16Bits(ImplicitLocOpBuilder &b, Value x) {
  Type i32 = withElementType(x.getType(), b.getI32Type());
  Type i16 = withElementType(x.getType(), b.getI16Type());
  Value bits = arith::BitcastOp::create(b, i32, x);
  auto constant = [&](int64_t v) { return intConstantLike(b, bits, v); };
  // lsb = (bits >> 16) & 1; rounded = bits + 0x7FFF + lsb
  Value lsb = arith::AndIOp::create(b, arith::ShRUIOp::create(b, bits, constant(16)),
                                    constant(1));
  Value rounded = arith::AddIOp::create(
      b, bits, arith::AddIOp::create(b, lsb, constant(0x7FFF)));
  // quiet = bits | 0x00400000 (a NaN keeps its sign and leading payload)
  Value quiet = arith::OrIOp::create(b, bits, constant(0x00400000));
  Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
  Value word = arith::SelectOp::create(b, isNan, quiet, rounded);
  return arith::TruncIOp::create(b, i16, arith::ShRUIOp::create(b, word, constant(16)));
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

Value pe::dimValue(ImplicitLocOpBuilder &b, Value tensor, int64_t d) {
  return getValueOrCreateConstantIndexOp(
      b, b.getLoc(), tensor::getMixedSize(b, b.getLoc(), tensor, d));
}

Value pe::extractIndex(ImplicitLocOpBuilder &b, Value tensor, ValueRange indices) {
  return arith::IndexCastOp::create(b, b.getIndexType(),
                                    tensor::ExtractOp::create(b, tensor, indices));
}

Value mlir::pe::viewSource(Value value) {
  Operation *def = value.getDefiningOp();
  if (!isa_and_nonnull<tensor::ExtractSliceOp, tensor::CastOp, tensor::ExpandShapeOp,
                       tensor::CollapseShapeOp>(def))
    return nullptr;
  return def->getOperand(0);
}

bool mlir::pe::derivesFrom(Value value, Value source) {
  while (value && value != source)
    value = viewSource(value);
  return bool(value);
}
