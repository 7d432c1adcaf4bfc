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
/// kernel (pe-gpu-mma-attention): 4 warps of 16.
inline constexpr int64_t kMmaAttentionBlockRows = 64;

/// The static shared memory of a block (CUDA's limit without the opt-in
/// launch attribute): the tensor-core attention kernel's tiles that fit in
/// it are static; larger ones are dynamic shared memory, for which the
/// runtime opts the kernel in.
inline constexpr int64_t kMmaStaticSharedBytes = 48 * 1024;

/// The most shared memory the tensor-core attention kernel's block takes:
/// 98 KiB, within the opt-in maximum per block of every sm_80+ chip (sm_86,
/// sm_89 and sm_120 allow 99 KiB; sm_80 and sm_87 163 KiB; sm_90 227 KiB)
/// with room for the static placeholder the dynamic memory's symbol takes.
inline constexpr int64_t kMmaMaxSharedBytes = 98 * 1024;

/// Bytes of the tensor-core attention kernel's shared tiles (Q, K, two V
/// stages and warpgroup MMA's P) for head dims `d`, `dv` and `keys` keys per
/// tile, in the larger of its two engines' layouts.
int64_t mmaAttentionSharedBytes(int64_t d, int64_t dv, int64_t keys);

/// Keys per K/V tile of the tensor-core attention kernel for head dims `d`
/// (query, key) and `dv` (value), multiples of 16: 64, or 32 when a head
/// dim exceeds 64, 16 when dv exceeds 128 (registers), halved again while
/// its tiles exceed kMmaMaxSharedBytes; 0 when even 16-key tiles do not
/// fit, or dv exceeds 256 (the accumulators of O). Tiles above
/// kMmaStaticSharedBytes (d = 192, dv = 128: 57 KiB; d = dv = 256: 61 KiB)
/// are dynamic shared memory.
int64_t mmaAttentionTileKeys(int64_t d, int64_t dv);

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
