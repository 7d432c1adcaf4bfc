//===- LinalgToPE.h - raising generic IR into pe ops ------------*- C++ -*-===//
#ifndef PE_CONVERSION_LINALGTOPE_LINALGTOPE_H
#define PE_CONVERSION_LINALGTOPE_LINALGTOPE_H

namespace mlir {
class RewritePatternSet;
namespace pe {

/// Rotary embeddings spelled in linalg/tensor/arith/math on tensors become
/// pe.rope, once the pairing, signs and frequencies are proven.
void populateRaiseRopePatterns(RewritePatternSet &patterns);

/// softmax(scale * Q K^T + bias) V spelled in linalg becomes pe.attention
/// (GQA, masks and ALiBi included) once the contraction dims and the softmax
/// axis are proven.
void populateRaiseAttentionPatterns(RewritePatternSet &patterns);

/// Both of the above: the patterns of pe-raise-positional-encodings.
void populateRaisePositionalEncodingsPatterns(RewritePatternSet &patterns);

} // namespace pe
} // namespace mlir

#endif // PE_CONVERSION_LINALGTOPE_LINALGTOPE_H
