//===- CpuTargetTest.cpp - target descriptions asked of LLVM --------------===//
#include "pe/Target/CpuTarget.h"

#include "llvm/Support/Error.h"

#include "gtest/gtest.h"

using namespace mlir::pe;

namespace {

CpuTarget describe(llvm::StringRef triple, llvm::StringRef cpu, llvm::StringRef features = "",
                   int64_t sveBits = 0) {
  llvm::Expected<CpuTarget> target = describeCpuTarget(triple, cpu, features, sveBits);
  if (!target) {
    ADD_FAILURE() << llvm::toString(target.takeError());
    return {};
  }
  return *target;
}

std::string error(llvm::StringRef triple, llvm::StringRef cpu, int64_t sveBits = 0) {
  llvm::Expected<CpuTarget> target = describeCpuTarget(triple, cpu, "", sveBits);
  if (target)
    return "";
  return llvm::toString(target.takeError());
}

TEST(DescribeCpuTarget, X86Generations) {
  CpuTarget zen2 = describe("x86_64-linux-gnu", "znver2");
  EXPECT_EQ(zen2.isa, CpuIsa::X86);
  EXPECT_EQ(zen2.vectorBits, 256);
  EXPECT_EQ(zen2.vectorRegisters, 16);
  EXPECT_TRUE(zen2.fma);
  EXPECT_TRUE(zen2.f16Convert);
  EXPECT_FALSE(zen2.bf16Dot);
  EXPECT_FALSE(zen2.bf16Convert);
  CpuTarget zen4 = describe("x86_64-linux-gnu", "znver4");
  EXPECT_EQ(zen4.f32Lanes(), 16);
  EXPECT_EQ(zen4.vectorRegisters, 32);
  EXPECT_TRUE(zen4.bf16Dot);
  EXPECT_TRUE(describe("x86_64-linux-gnu", "sapphirerapids").amx);
  // Features subtract: AVX-512 off leaves AVX2.
  EXPECT_EQ(describe("x86_64-linux-gnu", "znver4", "-avx512f").vectorBits, 256);
  CpuTarget baseline = describe("x86_64-linux-gnu", "x86-64");
  EXPECT_FALSE(baseline.fma);
  EXPECT_FALSE(baseline.f16Convert);
  EXPECT_EQ(baseline.vectorBits, 128);
}

TEST(DescribeCpuTarget, AArch64) {
  CpuTarget n1 = describe("aarch64-linux-gnu", "neoverse-n1");
  EXPECT_EQ(n1.isa, CpuIsa::AArch64);
  EXPECT_EQ(n1.vectorBits, 128);
  EXPECT_EQ(n1.vectorRegisters, 32);
  EXPECT_FALSE(n1.sve);
  EXPECT_FALSE(n1.bf16Dot);
  CpuTarget v2 = describe("aarch64-linux-gnu", "neoverse-v2");
  EXPECT_TRUE(v2.sve2);
  EXPECT_TRUE(v2.bf16Dot);
  EXPECT_TRUE(v2.i8mm);
  EXPECT_EQ(v2.vectorBits, 128); // SVE of unknown length: NEON-width vectors
  CpuTarget v1 = describe("aarch64-linux-gnu", "neoverse-v1", "", 256);
  EXPECT_EQ(v1.vectorBits, 256); // what LLVM reports under vscale_range(2, 2)
  EXPECT_EQ(v1.sveVectorBits, 256);
}

TEST(DescribeCpuTarget, Errors) {
  EXPECT_NE(error("x86_64-linux-gnu", "pentium9").find("unknown CPU 'pentium9'"),
            std::string::npos);
  EXPECT_NE(error("nosuch-linux-gnu", "generic").find("no LLVM backend"), std::string::npos);
  EXPECT_NE(error("aarch64-linux-gnu", "neoverse-n1", 256).find("needs an SVE target"),
            std::string::npos);
  EXPECT_NE(error("aarch64-linux-gnu", "neoverse-v1", 384).find("power of two"),
            std::string::npos);
}

TEST(DescribeCpuTarget, TheHost) {
  CpuTarget host = describe("", "native");
  EXPECT_GE(host.vectorBits, 128);
  EXPECT_GE(host.vectorRegisters, 16);
  EXPECT_FALSE(host.cpu.empty());
  EXPECT_TRUE(host.host);
}

// A module's llvm.target names the host CPU once the driver resolved
// "native": the description is still the host's, caches from the OS
// included (LLVM's cost model would answer 256 KiB of L2 on any x86).
TEST(DescribeCpuTarget, TheHostByName) {
  CpuTarget native = describe("", "native");
  CpuTarget named = describe(native.triple, native.cpu, native.features);
  EXPECT_TRUE(named.host);
  EXPECT_EQ(named.l1dBytes, native.l1dBytes);
  EXPECT_EQ(named.l2Bytes, native.l2Bytes);
  EXPECT_EQ(named.l3Bytes, native.l3Bytes);
  // The host's model named without its features, and another CPU of the
  // same architecture, are not the host.
  EXPECT_FALSE(describe(native.triple, native.cpu).host);
  const char *other = native.cpu == "znver2" ? "skylake" : "znver2";
  if (native.isa == CpuIsa::X86) {
    EXPECT_FALSE(describe(native.triple, other).host);
  }
}

} // namespace
