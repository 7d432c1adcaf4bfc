//===- Passes.h - passes over the pe dialect ------------------------------===//
#ifndef PE_DIALECT_PE_TRANSFORMS_PASSES_H
#define PE_DIALECT_PE_TRANSFORMS_PASSES_H

#include "pe/Dialect/PE/IR/PE.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pe {

#define GEN_PASS_DECL
#include "pe/Dialect/PE/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pe/Dialect/PE/Transforms/Passes.h.inc"

} // namespace mlir::pe

#endif // PE_DIALECT_PE_TRANSFORMS_PASSES_H
