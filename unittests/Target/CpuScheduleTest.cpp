//===- CpuScheduleTest.cpp - the cost model of the CPU kernels ------------===//
#include "pe/Target/CpuSchedule.h"

#include "gtest/gtest.h"

#include <cstdint>

using namespace mlir::pe;

namespace {

CpuTarget target(CpuIsa isa, int64_t bits, int64_t registers, int64_t l2 = 1 << 20) {
  CpuTarget t;
  t.isa = isa;
  t.vectorBits = bits;
  t.vectorRegisters = registers;
  t.l2Bytes = l2;
  return t;
}

TEST(ChooseMicroTile, SchedulesOfTheIsasInUse) {
  // AVX-512 and NEON: 32 registers, 64 rows = 4 (or 16) row vectors.
  MicroTile avx512 = chooseMicroTile(32, 4, 10);
  EXPECT_EQ(avx512.vectors, 4);
  EXPECT_EQ(avx512.columns, 6);
  MicroTile neon = chooseMicroTile(32, 16, 8);
  EXPECT_EQ(neon.vectors, 4);
  EXPECT_EQ(neon.columns, 6);
  // AVX2: 16 registers, 64 rows = 8 row vectors.
  MicroTile avx2 = chooseMicroTile(16, 8, 10);
  EXPECT_EQ(avx2.vectors, 2);
  EXPECT_EQ(avx2.columns, 6);
}

TEST(ChooseMicroTile, FewRowVectors) {
  // One row vector: as many columns as 3/4 of the registers.
  MicroTile one = chooseMicroTile(16, 1, 10);
  EXPECT_EQ(one.vectors, 1);
  EXPECT_EQ(one.columns, 12);
  // Three row vectors on 16 registers: 3 x 3 would have too few chains.
  MicroTile three = chooseMicroTile(16, 3, 10);
  EXPECT_EQ(three.vectors, 1);
}

TEST(ChooseMicroTile, EveryChoiceFitsTheRegisters) {
  for (int64_t registers = 8; registers <= 64; registers += 8)
    for (int64_t rowVectors = 1; rowVectors <= 64; ++rowVectors) {
      MicroTile tile = chooseMicroTile(registers, rowVectors, 10);
      EXPECT_EQ(rowVectors % tile.vectors, 0) << registers << " " << rowVectors;
      EXPECT_LE(tile.accumulators() + tile.vectors + 1, registers - 1)
          << registers << " " << rowVectors;
      EXPECT_LE(tile.accumulators(), registers * 3 / 4);
      EXPECT_GE(tile.columns, 1);
    }
}

TEST(ChooseMicroTile, HugeRowCountsStayCheap) {
  // A GQA group of 2^55 heads: the search is bounded by the registers.
  MicroTile tile = chooseMicroTile(32, int64_t(1) << 51, 10);
  EXPECT_GE(tile.vectors, 1);
}

TEST(MaskedMicroTile, LeavesRoomForMasksAndBlends) {
  EXPECT_EQ(maskedMicroTileColumns({4, 6}, target(CpuIsa::X86, 512, 32)), 4);
  EXPECT_EQ(maskedMicroTileColumns({2, 6}, target(CpuIsa::X86, 256, 16)), 3);
  EXPECT_EQ(maskedMicroTileColumns({4, 6}, target(CpuIsa::AArch64, 128, 32)), 3);
  EXPECT_EQ(maskedMicroTileColumns({1, 1}, target(CpuIsa::X86, 128, 8)), 1);
}

TEST(KeysPerTile, PreferredRoundedAndFittedToL2) {
  CpuTarget big = target(CpuIsa::X86, 512, 32, 1 << 20);
  EXPECT_EQ(attentionKeysPerTile(big, 0, 6, 1288, 67584), 96);
  EXPECT_EQ(attentionKeysPerTile(big, 0, 6, 1288, 67584, 192), 192);
  // A requested count is rounded up to the multiple and kept.
  EXPECT_EQ(attentionKeysPerTile(big, 50, 6, 1288, 67584), 54);
  EXPECT_EQ(attentionKeysPerTile(target(CpuIsa::X86, 512, 32, 1 << 16), 500, 6, 1288, 0), 504);
  // A small L2 halves the preferred count until the scratch fits half of it.
  CpuTarget small = target(CpuIsa::X86, 256, 16, 128 * 1024);
  int64_t keys = attentionKeysPerTile(small, 0, 6, 1288, 0);
  EXPECT_LE(keys * 1288, 64 * 1024);
  EXPECT_EQ(keys % 6, 0);
  // An unknown L2 keeps the preferred count; nothing goes below one multiple.
  EXPECT_EQ(attentionKeysPerTile(target(CpuIsa::X86, 512, 32, 0), 0, 6, 1288, 0), 96);
  EXPECT_EQ(attentionKeysPerTile(target(CpuIsa::X86, 512, 32, 1024), 0, 6, 1288, 0), 6);
  // Scratch sizes that overflow int64 do not fit (and are no UB).
  EXPECT_EQ(attentionKeysPerTile(big, 0, 6, int64_t(1) << 60, 0), 6);
  EXPECT_EQ(attentionKeysPerTile(big, 0, 6, 1288, INT64_MAX), 6);
}

TEST(PrefillKeysPerTile, RowsWithin3QuartersOfL1d) {
  CpuTarget t = target(CpuIsa::X86, 512, 32);
  // D = 128, 64 rows: 4 (128 + 64) = 768 bytes a key.
  t.l1dBytes = 48 << 10;
  EXPECT_EQ(prefillKeysPerTile(t, 128, 64, 6), 48);  // 36864 / 768
  t.l1dBytes = 32 << 10;
  EXPECT_EQ(prefillKeysPerTile(t, 128, 64, 6), 30);  // 24576 / 768 = 32, down to 6s
  // At least one multiple: 3072 / (4 (8 + 16)) = 32 keys, less than 48.
  t.l1dBytes = 4 << 10;
  EXPECT_EQ(prefillKeysPerTile(t, 8, 16, 48), 48);
  // Unknown L1d, or Q^T alone larger than L1d (D = 256, 64 rows; absorbed
  // latent attention, 576 channels x 128 rows): 96.
  t.l1dBytes = 0;
  EXPECT_EQ(prefillKeysPerTile(t, 128, 64, 6), 96);
  t.l1dBytes = 48 << 10;
  EXPECT_EQ(prefillKeysPerTile(t, 256, 64, 6), 96);
  EXPECT_EQ(prefillKeysPerTile(t, 576, 128, 6), 96);
  EXPECT_EQ(prefillKeysPerTile(t, 576, 128, 96), 96);
  // D = 192 (latent attention's 128 + 64), 64 rows: Q^T is exactly 48 KiB.
  EXPECT_EQ(prefillKeysPerTile(t, 192, 64, 6), 36);  // 36864 / 1024
}

TEST(DecodeAccumulators, HalfTheRegistersLessTheMasks) {
  EXPECT_EQ(decodeAccumulators(target(CpuIsa::X86, 512, 32), false), 16);
  EXPECT_EQ(decodeAccumulators(target(CpuIsa::X86, 512, 32), true), 12);
  EXPECT_EQ(decodeAccumulators(target(CpuIsa::X86, 256, 16), false), 8);
  EXPECT_EQ(decodeAccumulators(target(CpuIsa::AArch64, 128, 32), false), 12);
  EXPECT_EQ(decodeAccumulators(target(CpuIsa::AArch64, 128, 32), true), 8);
  EXPECT_EQ(decodeAccumulators(target(CpuIsa::X86, 128, 8), false), 4);
}

} // namespace
