//===- PEToLinalg.h - pe to linalg on tensors -----------------------------===//
#ifndef PE_CONVERSION_PETOLINALG_PETOLINALG_H
#define PE_CONVERSION_PETOLINALG_PETOLINALG_H

namespace mlir {
class RewritePatternSet;
namespace pe {

/// Patterns that lower every pe op to linalg/tensor/arith/math on tensors
/// (the reference, unfused lowering of pe-lower-to-linalg).
void populatePEToLinalgConversionPatterns(RewritePatternSet &patterns);

/// The runtime function that pe.learned calls for an out-of-range position:
/// void pe_runtime_learned_out_of_range(int64_t position, int64_t index,
///                                      int64_t rows).
inline constexpr char kLearnedOutOfRangeFn[] = "pe_runtime_learned_out_of_range";

/// The runtime function for dynamic sizes that differ:
/// void pe_runtime_size_mismatch(int64_t check, int64_t got, int64_t expected),
/// `check` one of `enum pe_size_check` (include/pe-c/Runtime.h).
inline constexpr char kSizeMismatchFn[] = "pe_runtime_size_mismatch";

} // namespace pe
} // namespace mlir

#endif // PE_CONVERSION_PETOLINALG_PETOLINALG_H
