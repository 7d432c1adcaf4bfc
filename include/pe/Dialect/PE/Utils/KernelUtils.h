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
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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

/// The kernel's output buffer (written once, owned by no one else) as the
/// tensor result of type `resultType` it replaces (cast where that type has
/// dynamic dims the buffer has static).
inline Value toResultTensor(ImplicitLocOpBuilder &b, Value buffer, Type resultType) {
  auto memref = cast<MemRefType>(buffer.getType());
  Value result = bufferization::ToTensorOp::create(
      b, RankedTensorType::get(memref.getShape(), memref.getElementType()), buffer,
      /*restrict=*/true, /*writable=*/true);
  if (result.getType() != resultType)
    result = tensor::CastOp::create(b, resultType, result);
  return result;
}

/// Bytes of one GPU vector access (ld.global.v4.b32): the chunks the
/// streaming GPU kernels (RoPE, the KV-cache append) read and write.
constexpr int64_t kGpuChunkBytes = 16;

/// Elements of `element` in one GPU chunk.
inline int64_t gpuChunkLanes(Type element) {
  return kGpuChunkBytes / (element.getIntOrFloatBitWidth() / 8);
}

/// `n` elements of `buffer` from `indices` in 16-byte aligned vector loads
/// (the caller checks the buffer's alignment and keeps the indices on
/// whole chunks).
inline Value loadGpuChunk(ImplicitLocOpBuilder &b, Value buffer, ValueRange indices,
                          int64_t n) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  return vector::LoadOp::create(b, VectorType::get({n}, element), buffer, indices,
                                /*nontemporal=*/false, llvm::Align(kGpuChunkBytes));
}

/// `v` stored into `buffer` at `indices`, 16-byte aligned (as loadGpuChunk).
inline void storeGpuChunk(ImplicitLocOpBuilder &b, Value v, Value buffer, ValueRange indices) {
  vector::StoreOp::create(b, v, buffer, indices, /*nontemporal=*/false,
                          llvm::Align(kGpuChunkBytes));
}

/// The most channels a GPU thread reads, rotates and multiplies at a time
/// (the SIMT and the tensor-core attention kernels alike): 8 lanes, 32 bytes
/// of f32 in registers.
constexpr int64_t kGpuPieceLanes = 8;

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
