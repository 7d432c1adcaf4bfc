//===- CpuSchedule.cpp - the CPU kernels' schedules from the target -------===//
#include "pe/Target/CpuSchedule.h"
#include "pe/Target/HostThroughput.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::pe;

MicroTile pe::chooseMicroTile(int64_t registers, int64_t rowVectors,
                              int64_t minAccumulators) {
  // Candidates ranked by (enough chains, FMAs per load), or by accumulators
  // while none has enough chains; the first of equals (fewest vectors) wins.
  auto rank = [&](const MicroTile &tile) {
    bool enough = tile.accumulators() >= minAccumulators;
    return std::make_pair(enough, enough ? tile.intensity() : double(tile.accumulators()));
  };
  MicroTile best;
  bool found = false;
  // A micro-tile holds fewer vectors than there are registers.
  for (int64_t vectors = 1; vectors <= std::min(rowVectors, registers); ++vectors) {
    if (rowVectors % vectors)
      continue;
    // accumulators <= 3/4 of the registers, and accumulators + operand
    // vectors + one broadcast <= registers - 1
    int64_t columns = std::min(registers * 3 / 4 / vectors, (registers - 2 - vectors) / vectors);
    if (columns < 1)
      continue;
    MicroTile tile{vectors, columns};
    if (!found || rank(tile) > rank(best)) {
      best = tile;
      found = true;
    }
  }
  return best;
}

int64_t pe::maskedMicroTileColumns(const MicroTile &tile, const CpuTarget &target) {
  int64_t registers = target.vectorRegisters - (target.isa == CpuIsa::AArch64 ? 4 : 0);
  // accumulators + operand vectors + their masks + broadcast, temporary
  // and zero <= registers - 2 (one more than the plain tile keeps spare:
  // NEON's blend keeps the FMA's result and both inputs alive)
  int64_t columns = (registers - 5 - 2 * tile.vectors) / tile.vectors;
  return std::max<int64_t>(1, std::min(tile.columns, columns));
}

int64_t pe::minFmaChains(const CpuTarget &target) {
  // Latency x pipes: 4-5 x 2 (x86), 4 x 2 (Neoverse N1/V1 NEON); the register
  // file bounds this on 16-register ISAs anyway.
  return target.isa == CpuIsa::X86 ? 10 : 8;
}

int64_t pe::defaultAttentionRows(const CpuTarget &) { return 64; }

int64_t pe::attentionKeysPerTile(const CpuTarget &target, int64_t requested,
                                 int64_t multiple, int64_t bytesPerKey, int64_t fixedBytes,
                                 int64_t preferred) {
  multiple = std::max<int64_t>(multiple, 1);
  int64_t keys = requested > 0 ? requested : preferred;
  keys = (keys + multiple - 1) / multiple * multiple;
  if (requested > 0 || target.l2Bytes <= 0)
    return keys;
  // Half of L2 for the streamed tile; a size that overflows does not fit.
  auto fits = [&](int64_t k) {
    std::optional<int64_t> bytes = llvm::checkedMul(bytesPerKey, k);
    bytes = bytes ? llvm::checkedAdd(*bytes, fixedBytes) : std::nullopt;
    return bytes && *bytes <= target.l2Bytes / 2;
  };
  while (keys > multiple && !fits(keys))
    keys = std::max(multiple, (keys / 2 + multiple - 1) / multiple * multiple);
  return keys;
}

int64_t pe::prefillKeysPerTile(const CpuTarget &target, int64_t channels, int64_t rows,
                               int64_t multiple) {
  multiple = std::max<int64_t>(multiple, 1);
  // The Q^T rows alone: compared without overflow (rows and channels are
  // each at most 2^20 here).
  if (target.l1dBytes <= 0 || rows * channels > target.l1dBytes / 4)
    return (96 + multiple - 1) / multiple * multiple;
  const int64_t bytesPerKey = 4 * (channels + rows);
  return std::max(multiple, target.l1dBytes * 3 / 4 / bytesPerKey / multiple * multiple);
}

bool pe::preferBf16Dot(const CpuTarget &target) {
  if (!target.bf16Dot)
    return false;
  if (!target.host || target.isa != CpuIsa::X86)
    return true;
  std::optional<HostThroughput> rates = hostThroughput();
  // A dot product does two multiply-adds per lane; below 1.2x the FMA rate
  // its conversions and pair shuffles eat the difference.
  return !rates || rates->bf16DotGflops >= 1.2 * rates->fmaGflops;
}

int64_t pe::decodeAccumulators(const CpuTarget &target, bool masked) {
  // Masked FMAs keep their masks (and, for NEON blends and SVE predicates,
  // the FMA's result and both inputs) alive; NEON's blends also cost
  // registers in the unmasked tiles' neighbours.
  int64_t reserved = target.isa == CpuIsa::AArch64 ? (masked ? 8 : 4)
                                                   : (masked ? target.vectorRegisters / 8 : 0);
  return std::max<int64_t>(4, target.vectorRegisters / 2 - reserved);
}

llvm::json::Value pe::toJson(const CpuTarget &target) {
  const int64_t rows = defaultAttentionRows(target), lanes = target.f32Lanes();
  MicroTile tile = chooseMicroTile(target.vectorRegisters, (rows + lanes - 1) / lanes,
                                   minFmaChains(target));
  const int64_t headDim = 128;
  const int64_t multiple = std::lcm<int64_t>(tile.columns, 2);
  int64_t keys = attentionKeysPerTile(target, 0, multiple, 4 * (2 * headDim + rows + 2),
                                      4 * rows * (2 * headDim + 8),
                                      prefillKeysPerTile(target, headDim, rows, multiple));
  const char *isa = target.isa == CpuIsa::X86       ? "x86"
                    : target.isa == CpuIsa::AArch64 ? "aarch64"
                                                    : "other";
  llvm::json::Object json{
      {"triple", target.triple},
      {"cpu", target.cpu},
      {"features", target.features},
      {"isa", isa},
      {"summary", target.summary()},
      {"vector_bits", target.vectorBits},
      {"vector_registers", target.vectorRegisters},
      {"f32_lanes", lanes},
      {"fma", target.fma},
      {"f16_convert", target.f16Convert},
      {"bf16_dot", target.bf16Dot},
      {"bf16_convert", target.bf16Convert},
      {"amx", target.amx},
      {"sve", target.sve},
      {"sve2", target.sve2},
      {"sve_vector_bits", target.sveVectorBits},
      {"bf16_matmul", target.bf16MatMul},
      {"i8mm", target.i8mm},
      {"l1d_bytes", target.l1dBytes},
      {"l2_bytes", target.l2Bytes},
      {"l3_bytes", target.l3Bytes},
      {"schedule",
       llvm::json::Object{
           {"attention_rows", rows},
           {"micro_tile", llvm::json::Object{{"vectors", tile.vectors},
                                             {"columns", tile.columns},
                                             {"accumulators", tile.accumulators()}}},
           {"keys_per_tile_d128", keys},
           {"decode_accumulators", decodeAccumulators(target, /*masked=*/false)},
           {"fma_chains", minFmaChains(target)},
           {"bf16_dot_products", preferBf16Dot(target)},
       }},
  };
  if (target.host && target.isa == CpuIsa::X86 && target.bf16Dot)
    if (std::optional<HostThroughput> rates = hostThroughput())
      json["measured_one_core_gflops"] = llvm::json::Object{
          {"f32_fma", rates->fmaGflops}, {"bf16_dot", rates->bf16DotGflops}};
  return json;
}
