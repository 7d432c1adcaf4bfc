//===- Kernels.h - GPU kernels of pe ops ---------------------*- C++ -*-===//
#ifndef PE_CODEGEN_GPU_KERNELS_H
#define PE_CODEGEN_GPU_KERNELS_H

#include "pe/Target/GpuChip.h"

#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir {
class Operation;
class RewritePatternSet;
namespace pe {

/// Rows (query, group head pairs) per block of the tensor-core attention
/// kernel (pe-gpu-mma-attention): 4 warps of 16. (The warp-specialized
/// prefill kernel of sm_90a and the wide mma.sync blocks of prefill take
/// two such row tiles a block; decode takes one.)
inline constexpr int64_t kMmaAttentionBlockRows = 64;

/// Whether mma.sync prefill with head dims d and dv takes wide blocks of
/// two row tiles (FlashAttention-2's 128 rows; pe-gpu-mma-attention), where
/// more than kMmaAttentionBlockRows rows (or a dynamic count) need them.
bool mmaAttentionTakesWideBlocks(int64_t d, int64_t dv);

/// Bytes of shared memory one block of the tensor-core attention kernel
/// takes for head dims d and dv of `elementBytes`-byte elements, on warpgroup
/// MMA where `warpgroup` asks for it and the value heads allow it, else on
/// mma.sync (a chip runs it where its per-block limit holds), with one
/// warpgroup of rows: the warp-specialized prefill kernel of sm_90a takes
/// up to 180 KiB, within sm_90a's 227.
int64_t mmaAttentionSharedBytes(int64_t d, int64_t dv, int64_t elementBytes, bool warpgroup);

/// Bytes to which the tensor-core attention kernel's K and V must be
/// aligned (its 16-byte cp.async copies; checked on the host).
inline constexpr int64_t kMmaOperandAlignment = 16;

/// pe.rope -> one parallel loop over 16-byte chunks of its rows
/// (pe-gpu-tile-rope), where the rotated half and the pass-through
/// channels are whole chunks.
void populateGpuTileRopePatterns(RewritePatternSet &patterns);

/// pe.append_kv -> one parallel loop over (batch row, token, KV head) that
/// rotates each key row while it writes it into its slot
/// (pe-gpu-tile-append-kv), where rows are whole 16-byte chunks.
void populateGpuTileAppendKvPatterns(RewritePatternSet &patterns);

/// pe.attention -> one parallel loop over (batch, query head, query, value
/// chunk) holding the online softmax in registers (pe-gpu-tile-attention);
/// with `tensorCores`, bf16/f16 prefill to pe_gpu.mma_attention instead.
/// Decode splits its keys for the multiprocessors of `chip`.
void populateGpuTileAttentionPatterns(RewritePatternSet &patterns, bool tensorCores,
                                      const GpuChip &chip);

/// pe.paged_attention -> one parallel loop over (packed query row, query
/// head, value chunk, key split) reading the pages in place, then a loop
/// merging the splits (pe-gpu-tile-attention); static heads and head dims
/// up to 1024, frequencies that do not depend on the sequence's length. The splits fill the multiprocessors of `chip`.
void populateGpuTilePagedAttentionPatterns(RewritePatternSet &patterns, const GpuChip &chip);

/// An error on each pe.paged_attention under `root` (those the paged
/// kernel did not take), naming why; failure if there was one.
LogicalResult refuseUntiledPagedAttention(Operation *root);

} // namespace pe
} // namespace mlir

#endif // PE_CODEGEN_GPU_KERNELS_H
