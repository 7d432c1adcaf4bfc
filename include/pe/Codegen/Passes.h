//===- Passes.h - every code generation pass of pe-mlir ---------*- C++ -*-===//
//
// Code generation is layered by target, as IREE's Codegen/{Common,LLVMCPU,
// LLVMGPU}: passes every target uses, the CPU's (with its kernels), the
// GPU's (with its kernels); the C interface of compiled functions is its own
// library (pe/CInterface).
//
//===----------------------------------------------------------------------===//
#ifndef PE_CODEGEN_PASSES_H
#define PE_CODEGEN_PASSES_H

#include "pe/Codegen/CPU/Passes.h"
#include "pe/Codegen/Common/Passes.h"
#include "pe/Codegen/GPU/Passes.h"

namespace mlir::pe {

/// Registers the passes of every target.
inline void registerCodegenPasses() {
  registerPECodegenCommonPasses();
  registerPECodegenCPUPasses();
  registerPECodegenGPUPasses();
}

} // namespace mlir::pe

#endif // PE_CODEGEN_PASSES_H
