//===- Passes.h - passes over the pe dialect ------------------------------===//
#ifndef PE_DIALECT_PE_TRANSFORMS_PASSES_H
#define PE_DIALECT_PE_TRANSFORMS_PASSES_H

#include "pe/Dialect/PE/IR/PE.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace pe {

/// attention(rope(q, pq), rope(k, pk), v) -> attention(q, k, v) rope(...)
/// q_positions(pq) k_positions(pk), where the meaning is kept (the pattern
/// of pe-fuse-rope-into-attention).
void populateFuseRopeIntoAttentionPatterns(RewritePatternSet &patterns);

/// append_kv(rope(k)) -> append_kv(k) rope(...) (pe-fuse-rope-into-append).
void populateFuseRopeIntoAppendPatterns(RewritePatternSet &patterns);

/// attention(...) mask(alibi_bias(alibi_slopes, qp, kp)) -> attention(...)
/// alibi(max_bias) causal, where the meaning is kept (the pattern of
/// pe-fuse-alibi-into-attention).
void populateFuseAlibiIntoAttentionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_DECL
#include "pe/Dialect/PE/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pe/Dialect/PE/Transforms/Passes.h.inc"

} // namespace pe
} // namespace mlir

#endif // PE_DIALECT_PE_TRANSFORMS_PASSES_H
