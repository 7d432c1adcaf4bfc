//===- MathBuildersTest.cpp - the IR-built exp against the host's ---------===//
//
// buildExpNonPositive is the softmax's exponential in every CPU and GPU
// attention kernel. It is built as a scalar function, lowered to LLVM,
// JIT-compiled and compared with exp in double: across [ln(smallest
// normal), 0] within 0.9 ulp of the exact value; below it, and at -inf,
// exactly 0; exp(0) = 1; NaN stays NaN.
//
//===----------------------------------------------------------------------===//
#include "pe/Dialect/PE/Utils/MathBuilders.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>

using namespace mlir;

namespace {

using ExpFn = float (*)(float);

constexpr float kLowest = float(pe::kExpNonPositiveLowest);

/// buildExpNonPositive as a JIT-compiled f32 -> f32 function.
struct CompiledExp {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ExecutionEngine> jit;
  ExpFn exp = nullptr;
  /// Why `exp` is null.
  std::string error;

  CompiledExp() {
    DialectRegistry registry;
    registry.insert<arith::ArithDialect, func::FuncDialect, math::MathDialect,
                    LLVM::LLVMDialect>();
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();

    // func @exp_non_positive(%x: f32) -> f32 { return buildExpNonPositive(%x) }
    ImplicitLocOpBuilder b(UnknownLoc::get(&context), &context);
    module = ModuleOp::create(b);
    b.setInsertionPointToEnd(module->getBody());
    auto f32 = b.getF32Type();
    auto func =
        func::FuncOp::create(b, "exp_non_positive", b.getFunctionType({f32}, {f32}));
    b.setInsertionPointToStart(func.addEntryBlock());
    func::ReturnOp::create(b, pe::buildExpNonPositive(b, func.getArgument(0)));

    PassManager pm(&context);
    pm.addPass(createConvertMathToLLVMPass());
    pm.addPass(createArithToLLVMConversionPass());
    pm.addPass(createConvertFuncToLLVMPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    if (failed(pm.run(*module))) {
      error = "lowering to the LLVM dialect failed";
      return;
    }
    auto engine = ExecutionEngine::create(*module);
    if (!engine) {
      error = llvm::toString(engine.takeError());
      return;
    }
    jit = std::move(*engine);
    auto symbol = jit->lookup("exp_non_positive");
    if (!symbol) {
      error = llvm::toString(symbol.takeError());
      return;
    }
    exp = reinterpret_cast<ExpFn>(*symbol);
  }
};

/// Compiles the function once for the suite's tests.
class ExpNonPositiveTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    compiled = std::make_unique<CompiledExp>();
  }
  static void TearDownTestSuite() { compiled.reset(); }
  void SetUp() override {
    ASSERT_NE(compiled->exp, nullptr) << compiled->error;
    exp = compiled->exp;
  }

  static inline std::unique_ptr<CompiledExp> compiled;
  ExpFn exp = nullptr;
};

/// |got - want| in units of the f32 spacing in want's binade (want in the
/// normal range); NaN when got is NaN.
double ulpsFrom(float got, double want) {
  double spacing = std::ldexp(1.0, std::ilogb(want) - 23);
  return std::fabs(double(got) - want) / spacing;
}

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// The largest error of `exp` at every `stride`th f32 of [high, low] (high
/// and low <= 0, by their bits), and where it is; NaN if a result is NaN.
std::pair<double, float> worstError(ExpFn exp, float high, float low, uint32_t stride) {
  double worst = 0.0;
  float worstAt = high;
  for (uint32_t bits = bitsOf(high); bits <= bitsOf(low); bits += stride) {
    float x = fromBits(bits);
    double ulps = ulpsFrom(exp(x), std::exp(double(x)));
    if (!(ulps <= worst)) {
      worst = ulps;
      worstAt = x;
      if (std::isnan(ulps))
        break;
    }
  }
  return {worst, worstAt};
}

TEST_F(ExpNonPositiveTest, WithinAnUlpOverTheNormalRange) {
  // Every 31st f32 of [-87.34, -2^-25] (about 8 million values, each binade
  // of arguments alike); every f32 of [-2^-25, 0], where exp rounds to 1.
  auto [worst, at] = worstError(exp, -0x1p-25f, kLowest, 31);
  EXPECT_LE(worst, 0.9) << "at x = " << at;
  auto [tiny, tinyAt] = worstError(exp, -0.0f, -0x1p-25f, 1024);
  EXPECT_LE(tiny, 0.5) << "at x = " << tinyAt;
}

TEST_F(ExpNonPositiveTest, AroundTheReductionsBoundaries) {
  // x near (k + 1/2) ln2, where n = round(x log2(e)) changes: every f32
  // within 64 spacings of each such point.
  double worst = 0.0;
  for (int k = 0; k < 126; ++k) {
    float center = static_cast<float>(-(k + 0.5) * std::log(2.0));
    float x = center;
    for (int i = 0; i < 64; ++i)
      x = std::nextafter(x, 0.0f);
    for (int i = 0; i < 128; ++i, x = std::nextafter(x, -1000.0f)) {
      double ulps = ulpsFrom(exp(x), std::exp(double(x)));
      worst = std::isnan(ulps) ? ulps : std::max(worst, ulps);
      if (std::isnan(worst))
        break;
    }
  }
  EXPECT_LE(worst, 0.9);
}

TEST_F(ExpNonPositiveTest, SpecialValues) {
  EXPECT_EQ(exp(0.0f), 1.0f);
  EXPECT_EQ(exp(-0.0f), 1.0f);
  EXPECT_EQ(exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(exp(std::nextafter(kLowest, -1000.0f)), 0.0f);
  EXPECT_EQ(exp(-100.0f), 0.0f);
  EXPECT_EQ(exp(-1e30f), 0.0f);
  EXPECT_EQ(exp(-std::numeric_limits<float>::max()), 0.0f);
  EXPECT_TRUE(std::isnan(exp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(exp(-std::numeric_limits<float>::quiet_NaN())));
  // The smallest result, just above the smallest normal.
  EXPECT_LE(ulpsFrom(exp(kLowest), std::exp(double(kLowest))), 0.9);
}

} // namespace
