//===- Passes.h - target-independent code generation passes -----*- C++ -*-===//
#ifndef PE_CODEGEN_COMMON_PASSES_H
#define PE_CODEGEN_COMMON_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::pe {

#define GEN_PASS_DECL
#include "pe/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pe/Codegen/Common/Passes.h.inc"

} // namespace mlir::pe

#endif // PE_CODEGEN_COMMON_PASSES_H
