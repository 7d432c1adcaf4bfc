//===- MathBuildersTest.cpp - the IR-built exp against the host's ---------===//
//
// buildExpNonPositive is the softmax's exponential in every CPU and GPU
// attention kernel. It is built as a scalar function, lowered to LLVM,
// JIT-compiled and compared with exp in double, rounded to f32: across
// [ln(smallest normal), 0] within 1 ulp; below it, and at -inf, exactly 0;
// exp(0) = 1; NaN stays NaN.
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

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace mlir;

namespace {

using ExpFn = float (*)(float);

/// ln of the smallest normal f32: the kernel's exp is 0 below it.
constexpr float kLowest = -87.33654f;

class ExpNonPositiveTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  void SetUp() override {
    DialectRegistry registry;
    registry.insert<arith::ArithDialect, func::FuncDialect, math::MathDialect,
                    LLVM::LLVMDialect>();
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();

    // func @exp(%x: f32) -> f32 { return buildExpNonPositive(%x) }
    ImplicitLocOpBuilder b(UnknownLoc::get(&context), &context);
    module = ModuleOp::create(b);
    b.setInsertionPointToEnd(module->getBody());
    auto f32 = b.getF32Type();
    auto func = func::FuncOp::create(b, "exp", b.getFunctionType({f32}, {f32}));
    b.setInsertionPointToStart(func.addEntryBlock());
    func::ReturnOp::create(b, pe::buildExpNonPositive(b, func.getArgument(0)));

    PassManager pm(&context);
    pm.addPass(createConvertMathToLLVMPass());
    pm.addPass(createArithToLLVMConversionPass());
    pm.addPass(createConvertFuncToLLVMPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    ASSERT_TRUE(succeeded(pm.run(*module)));
    auto engine = ExecutionEngine::create(*module);
    ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
    jit = std::move(*engine);
    auto symbol = jit->lookup("exp");
    ASSERT_TRUE(bool(symbol)) << llvm::toString(symbol.takeError());
    exp = reinterpret_cast<ExpFn>(*symbol);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ExecutionEngine> jit;
  ExpFn exp = nullptr;
};

/// |got - want| in units of the f32 spacing at want (want a normal f32).
double ulpsFrom(float got, double want) {
  float rounded = static_cast<float>(want);
  double spacing = std::nextafter(rounded, std::numeric_limits<float>::infinity()) - rounded;
  return std::fabs(double(got) - want) / spacing;
}

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

TEST_F(ExpNonPositiveTest, WithinOneUlpOverTheNormalRange) {
  // Every 61st f32 from -0 down to kLowest (about 18 million values), each
  // binade of arguments alike.
  double worst = 0.0;
  float worstAt = 0.0f;
  uint32_t last;
  float lowest = kLowest;
  std::memcpy(&last, &lowest, sizeof(last));
  for (uint32_t bits = 0x80000000u; bits <= last; bits += 61) {
    float x = fromBits(bits);
    double ulps = ulpsFrom(exp(x), std::exp(double(x)));
    if (ulps > worst) {
      worst = ulps;
      worstAt = x;
    }
  }
  EXPECT_LE(worst, 1.0) << "at x = " << worstAt;
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
    for (int i = 0; i < 128; ++i, x = std::nextafter(x, -1000.0f))
      worst = std::max(worst, ulpsFrom(exp(x), std::exp(double(x))));
  }
  EXPECT_LE(worst, 1.0);
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
  // The smallest result: exp(kLowest) is within 1 ulp of the smallest normal.
  EXPECT_LE(ulpsFrom(exp(kLowest), std::exp(double(kLowest))), 1.0);
}

} // namespace
