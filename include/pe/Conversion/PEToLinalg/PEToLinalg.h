//===- PEToLinalg.h - pe to linalg on tensors -----------------------------===//
#ifndef PE_CONVERSION_PETOLINALG_PETOLINALG_H
#define PE_CONVERSION_PETOLINALG_PETOLINALG_H

#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/IR/Builders.h"

#include <utility>

namespace mlir {
class RewritePatternSet;
namespace pe {

/// Patterns that lower every pe op to linalg/tensor/arith/math on tensors
/// (the reference, unfused lowering of pe-lower-to-linalg).
void populatePEToLinalgConversionPatterns(RewritePatternSet &patterns);

/// The run-time size checks of `op` on its (converted) operands, and its
/// query and key positions: the given ones, or the defaults (keys 0..Skv-1,
/// queries the last Sq of them). Shared by every lowering of pe.attention.
std::pair<Value, Value> prepareAttentionOperands(OpBuilder &b, Location loc,
                                                 AttentionOp op, Value q,
                                                 Value k, Value v, Value mask,
                                                 Value qPos, Value kPos);

/// f32 tables m cos(p f), m sin(p f) of shape P + [r/2] for positions of
/// shape P, angles reduced in f64 (the same code as pe.rope_tables).
std::pair<Value, Value> buildRopeTables(OpBuilder &b, Location loc,
                                        RopeAttr rope, Value positions);

/// The run-time size checks of pe.rope `op` (positions against the sequence,
/// given tables against the positions) and its f32 tables: `cos`/`sin` when
/// given (pe-share-rope-tables), else computed from the positions.
std::pair<Value, Value> prepareRopeOperands(OpBuilder &b, Location loc, RopeOp op,
                                            Value x, Value positions, Value cos,
                                            Value sin);

/// Checks at run time that `sizes` agree with the static dims of op's result.
void checkAttentionResult(OpBuilder &b, Location loc, AttentionOp op,
                          ArrayRef<OpFoldResult> sizes);

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
