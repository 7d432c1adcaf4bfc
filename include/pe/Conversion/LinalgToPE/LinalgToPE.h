//===- LinalgToPE.h - raising generic IR into pe ops ------------*- C++ -*-===//
#ifndef PE_CONVERSION_LINALGTOPE_LINALGTOPE_H
#define PE_CONVERSION_LINALGTOPE_LINALGTOPE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/MapVector.h"

#include <functional>
#include <string>

namespace mlir {
class Operation;
class RewritePatternSet;
namespace func {
class FuncOp;
} // namespace func
namespace pe {

/// How pe-raise-positional-encodings{verify} checks a rewrite: runs the
/// function as it was (`before`) and with the rewrite (`after`) on the same
/// inputs and returns the largest difference of their results relative to
/// max(1, max |before|); failure, with `why`, when they cannot be run.
using RaisingCheck =
    std::function<FailureOr<double>(func::FuncOp before, func::FuncOp after, std::string &why)>;

/// Installs the check (pe/Execution/DifferentialRun.h has the JIT's);
/// without one, `verify` is an error.
void setRaisingCheck(RaisingCheck check);

/// The attribute by which `verify` marks an op whose rewrite it refused; the
/// patterns leave such ops alone (it is removed when the pass ends).
inline constexpr char kRaiseRefusedAttr[] = "pe.raise_refused";

/// Why the patterns left alone an op that has the shape of what they raise
/// (a contraction with a softmax operand, a value whose channels are
/// products of one tensor with cos/sin-like factors): the first step of the
/// proof that failed, by op. The patterns record and forget (when the op is
/// raised after all); the pass reports what is left as remarks.
struct RaisingNotes {
  llvm::MapVector<Operation *, std::string> notRaised;
};

/// Rotary embeddings spelled in linalg/tensor/arith/math on tensors become
/// pe.rope, once the pairing, signs and frequencies are proven.
void populateRaiseRopePatterns(RewritePatternSet &patterns, RaisingNotes *notes = nullptr);

/// softmax(scale * Q K^T + bias) V spelled in linalg becomes pe.attention
/// (GQA, masks and ALiBi included) once the contraction dims and the softmax
/// axis are proven.
void populateRaiseAttentionPatterns(RewritePatternSet &patterns,
                                    RaisingNotes *notes = nullptr);

/// Both of the above: the patterns of pe-raise-positional-encodings.
void populateRaisePositionalEncodingsPatterns(RewritePatternSet &patterns,
                                              RaisingNotes *notes = nullptr);

} // namespace pe
} // namespace mlir

#endif // PE_CONVERSION_LINALGTOPE_LINALGTOPE_H
