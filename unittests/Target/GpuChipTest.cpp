//===- GpuChipTest.cpp - NVIDIA chip descriptions -------------------------===//
#include "pe/Target/GpuChip.h"

#include "gtest/gtest.h"

using namespace mlir::pe;

TEST(GpuChip, EveryChipThePipelineTakes) {
  for (const char *chip : {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100",
                           "sm_100a", "sm_120", "sm_120a"}) {
    std::optional<GpuChip> d = describeGpuChip(chip);
    ASSERT_TRUE(d) << chip;
    EXPECT_GT(d->multiprocessors, 0);
    EXPECT_GE(d->sharedBytesPerMultiprocessor, d->sharedBytesPerBlock);
    EXPECT_EQ(d->warpgroupMma, std::string(chip) == "sm_90a");
  }
  EXPECT_FALSE(describeGpuChip("sm_75"));
}

TEST(GpuChip, ResidentThreads) {
  GpuChip h200 = *describeGpuChip("sm_90a");
  // 255 registers a thread: 8 warps of 32 per multiprocessor.
  EXPECT_EQ(h200.residentThreads(255), 132 * 256);
  // 32 registers: the thread limit, 2048 per multiprocessor.
  EXPECT_EQ(h200.residentThreads(32), 132 * 2048);
  EXPECT_EQ(describeGpuChip("sm_80")->residentThreads(255), 108 * 256);
}
