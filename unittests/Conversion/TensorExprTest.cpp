//===- TensorExprTest.cpp - exact evaluation of the raising proofs --------===//
//
// Each case is one linalg.generic over i in [0, 8) whose scalar body spells
// an integer or float op on values made from i; the evaluator's value of
// every element must be the op's meaning as arith defines it (two's
// complement of the width, signed vs unsigned predicates and division,
// truncation, zero vs sign extension, NaN-aware float predicates), which the
// expectation computes with C++ integers of the same width.
//
//===----------------------------------------------------------------------===//
#include "TensorExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::pe::raising;

namespace {

class TensorExprTest : public ::testing::Test {
protected:
  TensorExprTest() {
    context.loadDialect<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                        math::MathDialect, tensor::TensorDialect>();
  }

  /// Checks element i of the generic computing `body` (from `%i : i32`
  /// to `%y : f32`) against want(i) for i in [0, 8).
  void check(StringRef body, const std::function<double(int32_t)> &want) {
    std::string ir = (R"(
func.func @f() -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>], iterator_types = ["parallel"]}
      outs(%e : tensor<8xf32>) {
  ^bb0(%o: f32):
    %idx = linalg.index 0 : index
    %i = arith.index_cast %idx : index to i32
)" + body + R"(
    linalg.yield %y : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
})")
                         .str();
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
    ASSERT_TRUE(module) << ir;
    Value result;
    module->walk([&](linalg::GenericOp op) { result = op.getResult(0); });
    Evaluator ev;
    int atom = ev.newAtom(8);
    ExprRef e = ev.eval(result, {Index::variable(atom)}, Depth::Everything);
    for (int32_t i = 0; i < 8; ++i) {
      std::optional<double> got = evaluateAt(e, {{atom, i}});
      ASSERT_TRUE(got) << "i = " << i << "\n" << body.str();
      double expected = want(i);
      if (std::isnan(expected))
        EXPECT_TRUE(std::isnan(*got)) << "i = " << i << "\n" << body.str();
      else
        EXPECT_EQ(*got, expected) << "i = " << i << "\n" << body.str();
    }
  }

  MLIRContext context;
};

/// `%y = select(cond, 1.0, 0.0)` after `cond_ir` defines `%c : i1`.
std::string boolean(StringRef condIr) {
  return (condIr + R"(
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %y = arith.select %c, %one, %zero : f32)")
      .str();
}

TEST_F(TensorExprTest, UnsignedAndSignedCompares) {
  // x = i - 4 is negative for i < 4: huge as an unsigned i32.
  const char *x = R"(
    %four = arith.constant 4 : i32
    %two = arith.constant 2 : i32
    %x = arith.subi %i, %four : i32)";
  check(boolean(std::string(x) + "\n    %c = arith.cmpi ult, %x, %two : i32"),
        [](int32_t i) { return double(uint32_t(i - 4) < 2u); });
  check(boolean(std::string(x) + "\n    %c = arith.cmpi slt, %x, %two : i32"),
        [](int32_t i) { return double(i - 4 < 2); });
  check(boolean(std::string(x) + "\n    %c = arith.cmpi uge, %x, %two : i32"),
        [](int32_t i) { return double(uint32_t(i - 4) >= 2u); });
}

TEST_F(TensorExprTest, TruncationWraps) {
  check(R"(
    %k = arith.constant 100 : i32
    %x = arith.muli %i, %k : i32
    %t = arith.trunci %x : i32 to i8
    %y = arith.sitofp %t : i8 to f32)",
        [](int32_t i) { return double(int8_t(uint8_t(i * 100))); });
}

TEST_F(TensorExprTest, ZeroAndSignExtension) {
  const char *x = R"(
    %t = arith.trunci %i : i32 to i8
    %four = arith.constant 4 : i8
    %x = arith.subi %t, %four : i8)";
  check(std::string(x) + R"(
    %z = arith.extui %x : i8 to i32
    %y = arith.sitofp %z : i32 to f32)",
        [](int32_t i) { return double(uint8_t(i - 4)); });
  check(std::string(x) + R"(
    %s = arith.extsi %x : i8 to i32
    %y = arith.sitofp %s : i32 to f32)",
        [](int32_t i) { return double(int8_t(i - 4)); });
  check(std::string(x) + "\n    %y = arith.uitofp %x : i8 to f32",
        [](int32_t i) { return double(uint8_t(i - 4)); });
}

TEST_F(TensorExprTest, IntegerDivisionAsSpelled) {
  const char *x = R"(
    %four = arith.constant 4 : i32
    %three = arith.constant 3 : i32
    %x = arith.subi %i, %four : i32)";
  auto floorDiv = [](int32_t a, int32_t b) {
    int32_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  };
  check(std::string(x) + "\n    %d = arith.divsi %x, %three : i32\n    %y = arith.sitofp %d : i32 to f32",
        [](int32_t i) { return double((i - 4) / 3); });
  check(std::string(x) + "\n    %d = arith.floordivsi %x, %three : i32\n    %y = arith.sitofp %d : i32 to f32",
        [&](int32_t i) { return double(floorDiv(i - 4, 3)); });
  check(std::string(x) + "\n    %d = arith.remsi %x, %three : i32\n    %y = arith.sitofp %d : i32 to f32",
        [](int32_t i) { return double((i - 4) % 3); });
  check(std::string(x) + "\n    %d = arith.divui %x, %three : i32\n    %y = arith.uitofp %d : i32 to f32",
        [](int32_t i) { return double(float(uint32_t(i - 4) / 3u)); }); // rounded to f32
}

TEST_F(TensorExprTest, OverflowWrapsInItsWidth) {
  check(R"(
    %big = arith.constant 2147483647 : i32
    %x = arith.addi %i, %big : i32
    %w = arith.extsi %x : i32 to i64
    %y = arith.sitofp %w : i64 to f32)",
        [](int32_t i) { return double(float(int32_t(uint32_t(i) + 2147483647u))); });
}

TEST_F(TensorExprTest, FloatPredicatesSeeNaN) {
  const char *x = R"(
    %nan = arith.constant 0x7FC00000 : f32
    %f = arith.sitofp %i : i32 to f32)";
  check(boolean(std::string(x) + "\n    %c = arith.cmpf ult, %nan, %f : f32"),
        [](int32_t) { return 1.0; });
  check(boolean(std::string(x) + "\n    %c = arith.cmpf olt, %nan, %f : f32"),
        [](int32_t) { return 0.0; });
}

TEST_F(TensorExprTest, FloatCastsRound) {
  // i + 2^24 + 0.5 is not an f32: the truncf rounds it.
  check(R"(
    %f = arith.sitofp %i : i32 to f64
    %k = arith.constant 16777216.5 : f64
    %x = arith.addf %f, %k : f64
    %y = arith.truncf %x : f64 to f32)",
        [](int32_t i) { return double(float(double(i) + 16777216.5)); });
}

TEST_F(TensorExprTest, SubtractionOfIndicesIsExpandedOnlyWhenItCannotWrap) {
  // j - i of loop indices cannot overflow i64: a sum of two terms. The same
  // subtraction of two i64 tensor reads can: one opaque factor.
  std::string ir = R"(
func.func @f(%p: tensor<8xi64>) -> (tensor<8x8xi64>, tensor<8x8xi64>) {
  %e = tensor.empty() : tensor<8x8xi64>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<8x8xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %d = arith.subi %jj, %ii : i64
    linalg.yield %d : i64
  } -> tensor<8x8xi64>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%p, %p : tensor<8xi64>, tensor<8xi64>) outs(%e : tensor<8x8xi64>) {
  ^bb0(%x: i64, %z: i64, %o: i64):
    %d = arith.subi %z, %x : i64
    linalg.yield %d : i64
  } -> tensor<8x8xi64>
  return %a, %b : tensor<8x8xi64>, tensor<8x8xi64>
})";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
  ASSERT_TRUE(module);
  SmallVector<Value> results;
  module->walk([&](linalg::GenericOp op) { results.push_back(op.getResult(0)); });
  ASSERT_EQ(results.size(), 2u);
  Evaluator ev;
  Point point = {Index::variable(ev.newAtom(8)), Index::variable(ev.newAtom(8))};
  EXPECT_EQ(expand(ev.eval(results[0], point, Depth::Everything)).size(), 2u);
  EXPECT_EQ(expand(ev.eval(results[1], point, Depth::Everything)).size(), 1u);
}

} // namespace
