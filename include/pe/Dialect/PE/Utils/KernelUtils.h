//===- KernelUtils.h - buffers and vector pieces of the kernels -*- C++ -*-===//
//
// What the hand-scheduled CPU and GPU kernels share when they take their
// operands: tensors as read-only buffers, rows split into vector pieces.
//
//===----------------------------------------------------------------------===//
#ifndef PE_DIALECT_PE_UTILS_KERNELUTILS_H
#define PE_DIALECT_PE_UTILS_KERNELUTILS_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::pe {

/// `tensor` as a read-only buffer of identity layout (null for null).
inline Value toReadOnlyBuffer(ImplicitLocOpBuilder &b, Value tensor) {
  if (!tensor)
    return nullptr;
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

/// The largest power of two up to `most` that divides n (n > 0): the width
/// of the vector pieces a thread reads a row in (rotated pairs, pass-through
/// channels), so that pieces tile the row exactly and stay aligned.
inline int64_t pieceLanes(int64_t n, int64_t most) {
  int64_t lanes = 1;
  while (lanes < most && n % (2 * lanes) == 0)
    lanes *= 2;
  return lanes;
}

} // namespace mlir::pe

#endif // PE_DIALECT_PE_UTILS_KERNELUTILS_H
