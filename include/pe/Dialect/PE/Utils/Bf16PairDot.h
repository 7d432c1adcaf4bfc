//===- Bf16PairDot.h - the dot product of bf16 pairs as vector.contract ---===//
//
// result[i] = acc[i] + lhs[2i] rhs[2i] + lhs[2i+1] rhs[2i+1]: the step of
// the bf16 attention kernels' products, which vdpbf16ps (AVX512-BF16) and
// BFDOT (AArch64 BF16) compute in one instruction. The kernels state it as
// an upstream `vector.contract` over [N x 2] bf16 operands (i parallel, k
// reduction) into N f32 lanes, independent of the instruction;
// pe-lower-bf16-dot recognizes exactly that form and emits the target's
// instruction (or two f32 FMAs per lane).
//
//===----------------------------------------------------------------------===//
#ifndef PE_DIALECT_PE_UTILS_BF16PAIRDOT_H
#define PE_DIALECT_PE_UTILS_BF16PAIRDOT_H

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir::pe {

/// The pair dot product of `acc` (vector<N x f32>) with `lhs` and `rhs`
/// (vector<2N x bf16>, pairs adjacent).
Value buildBf16PairDot(ImplicitLocOpBuilder &b, Value acc, Value lhs, Value rhs);

/// The operands of a contraction that buildBf16PairDot built: the f32
/// accumulator and the two [N x 2] bf16 operands; nothing for any other
/// contraction.
struct Bf16PairDotOperands {
  Value acc, lhs, rhs;
};
std::optional<Bf16PairDotOperands> matchBf16PairDot(vector::ContractionOp op);

} // namespace mlir::pe

#endif // PE_DIALECT_PE_UTILS_BF16PAIRDOT_H
