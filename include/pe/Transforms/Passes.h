//===- Passes.h - code generation passes of pe-mlir -----------------------===//
#ifndef PE_TRANSFORMS_PASSES_H
#define PE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::pe {

/// The gpu.module that every kernel is outlined into
/// (`@pe_kernels::@<function>_kernel_<n>`, `@<function>_attention_<n>`).
inline constexpr char kGpuKernelModule[] = "pe_kernels";

/// The buffer signature of a public function (a TypeAttr of its
/// FunctionType), set by pe-request-c-wrappers and read after the conversion
/// to LLVM by pe-export-c-interface and pe-compile's header writer.
inline constexpr char kCInterfaceAttr[] = "pe.c_interface";

/// On a destination-passing entry @f_into: how many trailing arguments are
/// outputs (pe-destination-entries).
inline constexpr char kOutputsAttr[] = "pe.outputs";

#define GEN_PASS_DECL
#include "pe/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pe/Transforms/Passes.h.inc"

} // namespace mlir::pe

#endif // PE_TRANSFORMS_PASSES_H
