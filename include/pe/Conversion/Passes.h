//===- Passes.h - conversions out of the pe dialect -----------------------===//
#ifndef PE_CONVERSION_PASSES_H
#define PE_CONVERSION_PASSES_H

#include "pe/Conversion/CpuKernels/CpuKernels.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Conversion/GpuKernels/GpuKernels.h"
#include "pe/Conversion/LinalgToPE/LinalgToPE.h"
#include "pe/Conversion/PEToLinalg/PEToLinalg.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pe {

#define GEN_PASS_DECL
#include "pe/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pe/Conversion/Passes.h.inc"

} // namespace mlir::pe

#endif // PE_CONVERSION_PASSES_H
