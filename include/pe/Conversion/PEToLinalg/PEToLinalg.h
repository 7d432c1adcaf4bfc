//===- PEToLinalg.h - pe to linalg on tensors -----------------------------===//
#ifndef PE_CONVERSION_PETOLINALG_PETOLINALG_H
#define PE_CONVERSION_PETOLINALG_PETOLINALG_H

namespace mlir {
class RewritePatternSet;
namespace pe {

/// Patterns that lower every pe op to linalg/tensor/arith/math on tensors
/// (the reference, unfused lowering of pe-lower-to-linalg). Ops that call
/// runtime functions must lie inside a symbol table (a module).
void populatePEToLinalgConversionPatterns(RewritePatternSet &patterns);

} // namespace pe
} // namespace mlir

#endif // PE_CONVERSION_PETOLINALG_PETOLINALG_H
