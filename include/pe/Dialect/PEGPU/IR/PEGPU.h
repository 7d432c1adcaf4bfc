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
/// Head dims pe_gpu.mma_attention takes: multiples of 16 up to
/// kMaxMmaHeadDim (query/key) and kMaxMmaValueDim (value); value heads over
/// kMaxMmaValueDim / 2 channels (absorbed latent attention: 576 and 512)
/// with query/key heads that are multiples of 32, which the kernel's two
/// channel groups halve.
inline constexpr int64_t kMaxMmaHeadDim = 576;
inline constexpr int64_t kMaxMmaValueDim = 512;
} // namespace mlir::pe_gpu

#define GET_OP_CLASSES
#include "pe/Dialect/PEGPU/IR/PEGPUOps.h.inc"

#endif // PE_DIALECT_PEGPU_IR_PEGPU_H
