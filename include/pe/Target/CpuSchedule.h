//===- CpuSchedule.h - the CPU kernels' schedules from the target -*- C++ -*-===//
//
// The cost model that turns a target description (CpuTarget.h) into the
// register-level shape of the CPU kernels. docs/compiling.md ("Schedules
// from the target") states the rules and the schedules they give on the
// CPUs in use; explicit options (pe-tile-attention rows/block-keys,
// pe-cpu-pipeline vector-width) override them.
//
//===----------------------------------------------------------------------===//
#ifndef PE_TARGET_CPUSCHEDULE_H
#define PE_TARGET_CPUSCHEDULE_H

#include "pe/Target/CpuTarget.h"

#include <cstdint>

namespace mlir::pe {

/// A broadcast-FMA micro-tile: `vectors` vector registers of rows times
/// `columns` broadcast operands, `vectors * columns` accumulators. Each step
/// loads `vectors` vectors and `columns` scalars for `vectors * columns`
/// FMAs; its loop takes kMicroTileUnroll steps a trip.
struct MicroTile {
  int64_t vectors = 1, columns = 1;
  int64_t accumulators() const { return vectors * columns; }
  /// FMAs per loaded operand.
  double intensity() const {
    return double(accumulators()) / double(vectors + columns);
  }
};

/// Steps of a micro-tile's loop a trip (docs/targets.md, "Loop unroll").
/// One step of the 4 x 6 AVX-512 tile is 24 FMAs (12 cycles on two FMA
/// pipes) and 10 loads; the loop's counter, address and branch instructions
/// compete with the FMAs for issue, about one cycle a step, and two steps a
/// trip halve that. Four steps were slower than two.
constexpr int64_t kMicroTileUnroll = 2;

/// The micro-tile of most FMAs per loaded operand (ties: fewer vectors)
/// among those whose `vectors` divides `rowVectors`, that fit the registers
/// with one to spare (accumulators + `vectors` operands + one broadcast <=
/// registers - 1, so that nothing spills; accumulators <= 3/4 of the
/// registers) and have at least `minAccumulators` independent FMA chains
/// (to hide the FMA latency; when none has, the most chains win).
MicroTile chooseMicroTile(int64_t registers, int64_t rowVectors,
                          int64_t minAccumulators = 8);

/// The columns of `tile` for FMAs masked by a per-lane condition (P V with
/// keys of weight 0 skipped): each operand vector's mask, the FMA's result
/// before the blend and the zero it is compared with need registers too.
/// On AArch64, whose blends keep the FMA's result and both inputs alive,
/// four registers fewer.
int64_t maskedMicroTileColumns(const MicroTile &tile, const CpuTarget &target);

/// Independent FMA chains that hide the FMA latency: latency 4-5 cycles x 2
/// pipes on the x86 cores in use, 4 cycles x 2-4 pipes on AArch64 cores.
int64_t minFmaChains(const CpuTarget &target);

/// Query rows (queries x heads of a group) per attention task when no
/// option says: 64, four 512-bit vectors of f32. A task packs and rotates
/// each K/V tile once for its rows, so more rows amortize that work over
/// more FMAs; 64 keeps the task's tiles within L2 at D = 128.
int64_t defaultAttentionRows(const CpuTarget &target);

/// Keys per streamed K/V tile: `requested` (0: `preferred`) rounded up to a
/// multiple of `multiple`, then (when not requested) halved while the
/// task's scratch (`bytesPerKey * keys + fixedBytes`) exceeds half the L2
/// cache, down to one multiple at least. The FMA prefill kernel prefers
/// prefillKeysPerTile, the bf16 pair kernels 96 keys; decode, with at most 8
/// rows, 16 or 32 (its per-tile work is small, and over a paged cache the
/// other KV heads' pieces of a tile's rows are still in cache when read;
/// measured in AttentionPlan.cpp).
int64_t attentionKeysPerTile(const CpuTarget &target, int64_t requested, int64_t multiple,
                             int64_t bytesPerKey, int64_t fixedBytes,
                             int64_t preferred = 96);

/// The keys of a prefill tile of the FMA kernel (AttentionKernelKind::Tiled:
/// f32, f16 and bf16 on f32 FMAs) whose streamed rows stay in L1d: the
/// scores S^T = Kr Q^T read a key row and write a score row per key, and
/// P V reads a value row and a weight row, beside the Q^T and O^T rows the
/// micro-tiles sweep again for each key block. `keys * 4 * (channels +
/// rows)` bytes within 3/4 of L1d, in whole `multiple`s (at least one). 96
/// where the L1d size is unknown, and where the Q^T rows alone (`rows *
/// channels` f32) exceed L1d: then the sweeps come from L2 whatever the
/// tile, and a short tile only adds per-tile work (the rescale of all of
/// O^T; absorbed latent attention's 576 channels, D = 256). At D = 128 and
/// 64 rows: 48 keys with 48 KiB of L1d, 30 with 32 KiB.
int64_t prefillKeysPerTile(const CpuTarget &target, int64_t channels, int64_t rows,
                           int64_t multiple);

/// Whether bf16 attention computes on bf16 pair dot products (vdpbf16ps,
/// BFDOT) rather than on f32 FMAs of the widened operands, for a target
/// that has them. On an x86 host the measured rates decide
/// (HostThroughput.h): dot products when they reach 1.2x the FMA rate in
/// flops (2x on AMD Zen 4, 0.5x on Intel Sapphire Rapids); for a named CPU
/// or AArch64, whenever the target has them.
bool preferBf16Dot(const CpuTarget &target);

/// Accumulator registers the decode kernel's P V chunks may hold: half the
/// vector registers (the rest hold V rows, weights and their masks), four
/// fewer on AArch64 when the FMAs are masked (blends and predicates keep
/// more values alive).
int64_t decodeAccumulators(const CpuTarget &target, bool masked);

} // namespace mlir::pe

#endif // PE_TARGET_CPUSCHEDULE_H
