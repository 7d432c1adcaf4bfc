//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
#ifndef PE_CODEGEN_CPU_PASSES_H
#define PE_CODEGEN_CPU_PASSES_H

#include "pe/Codegen/CPU/Kernels.h"

#include "mlir/Pass/Pass.h"

namespace mlir::pe {

#define GEN_PASS_DECL
#include "pe/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pe/Codegen/CPU/Passes.h.inc"

} // namespace mlir::pe

#endif // PE_CODEGEN_CPU_PASSES_H
