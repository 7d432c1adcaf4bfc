//===- Bf16PairDot.cpp - the dot product of bf16 pairs as vector.contract -===//
#include "pe/Dialect/PE/Utils/Bf16PairDot.h"

#include "mlir/IR/AffineMap.h"

using namespace mlir;

namespace {

/// (i, k) -> (i, k), (i, k) -> (i, k), (i, k) -> (i).
SmallVector<AffineMap, 3> pairDotMaps(MLIRContext *context) {
  AffineExpr i, k;
  bindDims(context, i, k);
  return {AffineMap::get(2, 0, {i, k}, context), AffineMap::get(2, 0, {i, k}, context),
          AffineMap::get(2, 0, {i}, context)};
}

} // namespace

Value pe::buildBf16PairDot(ImplicitLocOpBuilder &b, Value acc, Value lhs, Value rhs) {
  int64_t lanes = cast<VectorType>(acc.getType()).getDimSize(0);
  auto pairs = VectorType::get({lanes, 2}, b.getBF16Type());
  Value l = vector::ShapeCastOp::create(b, pairs, lhs);
  Value r = vector::ShapeCastOp::create(b, pairs, rhs);
  return vector::ContractionOp::create(
      b, l, r, acc, b.getAffineMapArrayAttr(pairDotMaps(b.getContext())),
      b.getArrayAttr({vector::IteratorTypeAttr::get(b.getContext(), vector::IteratorType::parallel),
                      vector::IteratorTypeAttr::get(b.getContext(),
                                                    vector::IteratorType::reduction)}));
}

std::optional<pe::Bf16PairDotOperands> pe::matchBf16PairDot(vector::ContractionOp op) {
  auto lhs = dyn_cast<VectorType>(op.getLhsType());
  auto rhs = dyn_cast<VectorType>(op.getRhsType());
  auto acc = dyn_cast<VectorType>(op.getAccType());
  auto maskable = cast<vector::MaskableOpInterface>(op.getOperation());
  if (maskable.isMasked() || !lhs || !rhs || !acc || lhs != rhs || lhs.isScalable() || acc.isScalable() ||
      lhs.getRank() != 2 || lhs.getDimSize(1) != 2 || !lhs.getElementType().isBF16() ||
      acc.getRank() != 1 || acc.getDimSize(0) != lhs.getDimSize(0) ||
      !acc.getElementType().isF32() || op.getKind() != vector::CombiningKind::ADD ||
      !llvm::equal(op.getIndexingMapsArray(), pairDotMaps(op.getContext())) ||
      !vector::isParallelIterator(op.getIteratorTypes()[0]) ||
      !vector::isReductionIterator(op.getIteratorTypes()[1]))
    return std::nullopt;
  return Bf16PairDotOperands{op.getAcc(), op.getLhs(), op.getRhs()};
}
