//===- Kernels.h - hand-scheduled CPU kernels of pe ops ------*- C++ -*-===//
#ifndef PE_CODEGEN_CPU_KERNELS_H
#define PE_CODEGEN_CPU_KERNELS_H

#include "pe/Target/CpuTarget.h"

#include <cstdint>

namespace mlir {
class RewritePatternSet;
namespace pe {

struct TileAttentionOptions {
  /// The CPU the kernels are scheduled for.
  CpuTarget target;
  /// Threads the tasks run on (decides key splitting for decode).
  int64_t threads = 1;
  /// Query rows (queries x heads of a group) per task; 0: the target's.
  int64_t rows = 0;
  /// Keys per streamed K/V tile; 0: from the target's L2.
  int64_t blockKeys = 0;
  /// bf16 attention on AMX tiles.
  bool amx = false;
  /// bf16 attention on AVX512-BF16 dot products (vdpbf16ps).
  bool bf16Dot = false;
};

/// pe.attention -> a call of a flash-attention kernel function on buffers
/// (pe-tile-attention). Ops whose plan fails keep for the reference
/// lowering. Kernels are private functions of the enclosing symbol table,
/// one per distinct kernel body; apply with a driver that does not revisit
/// new ops (walkAndApplyPatterns).
void populateTileAttentionPatterns(RewritePatternSet &patterns,
                                   const TileAttentionOptions &options);

/// pe.rope -> one streaming loop nest on buffers (pe-tile-rope), where the
/// rotated half and the pass-through channels are whole vectors of the
/// target's f32 lanes.
void populateTileRopePatterns(RewritePatternSet &patterns, const CpuTarget &target,
                              int64_t threads);

/// pe.append_kv -> one loop over its tokens that rotates each key row in
/// registers as it writes it into its slot (pe-tile-append-kv), where the
/// rows are whole vectors of the target's f32 lanes.
void populateTileAppendKvPatterns(RewritePatternSet &patterns, const CpuTarget &target);

} // namespace pe
} // namespace mlir

#endif // PE_CODEGEN_CPU_KERNELS_H
