//===- GpuBuffers.h - tensors as the buffers of a GPU kernel ----*- C++ -*-===//
#ifndef PE_LIB_CONVERSION_GPUKERNELS_GPUBUFFERS_H
#define PE_LIB_CONVERSION_GPUKERNELS_GPUBUFFERS_H

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

} // namespace mlir::pe

#endif // PE_LIB_CONVERSION_GPUKERNELS_GPUBUFFERS_H
