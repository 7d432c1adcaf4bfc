//===- PEGPU.h - kernel-level ops of the GPU code generation ----*- C++ -*-===//
#ifndef PE_DIALECT_PEGPU_IR_PEGPU_H
#define PE_DIALECT_PEGPU_IR_PEGPU_H

#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "pe/Dialect/PEGPU/IR/PEGPUOpsDialect.h.inc"

namespace mlir::pe_gpu {
/// Head dims pe_gpu.mma_attention takes, multiples of 16: up to
/// kMaxMmaGroupValueDim both; or value heads over that (absorbed latent
/// attention: 576 and 512), up to kMaxMmaValueDim, with query/key heads up
/// to kMaxMmaHeadDim that are multiples of 32: the kernel's two channel
/// groups each take half of both.
inline constexpr int64_t kMaxMmaGroupValueDim = 256;
inline constexpr int64_t kMaxMmaHeadDim = 576;
inline constexpr int64_t kMaxMmaValueDim = 512;

/// Whether pe_gpu.mma_attention takes query/key heads of d channels and
/// value heads of dv (the bounds above).
inline bool mmaAttentionTakesHeadDims(int64_t d, int64_t dv) {
  if (d % 16 != 0 || dv % 16 != 0 || d < 16 || dv < 16)
    return false;
  if (dv <= kMaxMmaGroupValueDim)
    return d <= kMaxMmaGroupValueDim;
  return dv <= kMaxMmaValueDim && d <= kMaxMmaHeadDim && d % 32 == 0;
}
} // namespace mlir::pe_gpu

#define GET_OP_CLASSES
#include "pe/Dialect/PEGPU/IR/PEGPUOps.h.inc"

#endif // PE_DIALECT_PEGPU_IR_PEGPU_H
