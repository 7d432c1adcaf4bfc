//===- Passes.h - NVIDIA GPU code generation passes -------------*- C++ -*-===//
#ifndef PE_CODEGEN_GPU_PASSES_H
#define PE_CODEGEN_GPU_PASSES_H

#include "pe/Codegen/GPU/Kernels.h"

#include "mlir/Pass/Pass.h"

namespace mlir::pe {

/// The gpu.module that every kernel is outlined into
/// (`@pe_kernels::@<function>_kernel_<n>`, `@<function>_attention_<n>`).
inline constexpr char kGpuKernelModule[] = "pe_kernels";

/// A unit attribute of the gpu.launch of a tensor-core kernel
/// (pe-gpu-mma-attention), which pe-gpu-sink-constants reads: every
/// constant the kernel uses is sunk into it.
inline constexpr char kGpuTensorCoreLaunchAttr[] = "pe.tensor_core_kernel";

#define GEN_PASS_DECL
#include "pe/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pe/Codegen/GPU/Passes.h.inc"

} // namespace mlir::pe

#endif // PE_CODEGEN_GPU_PASSES_H
