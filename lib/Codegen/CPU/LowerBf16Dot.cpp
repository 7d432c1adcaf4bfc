//===- LowerBf16Dot.cpp - pe-lower-bf16-dot -------------------------------===//
#include "pe/Codegen/CPU/Passes.h"

#include "pe/Dialect/PE/Utils/Bf16PairDot.h"
#include "pe/Target/CpuTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PELOWERBF16DOT
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {

/// The instruction that computes a bf16 pair dot product of `lanes` f32
/// lanes on `target`.
enum class DotInstruction { Vdpbf16ps, Bfdot, Fma };

DotInstruction chooseInstruction(const pe::CpuTarget &target, int64_t lanes) {
  if (!target.bf16Dot)
    return DotInstruction::Fma;
  // vdpbf16ps on zmm registers (the 4- and 8-lane forms need AVX512-VL,
  // which the kernels' 16-lane vectors do not).
  if (target.isa == pe::CpuIsa::X86 && lanes == 16)
    return DotInstruction::Vdpbf16ps;
  if (target.isa == pe::CpuIsa::AArch64 && (lanes == 2 || lanes == 4))
    return DotInstruction::Bfdot;
  return DotInstruction::Fma;
}

/// `pairs` ([N x 2] bf16) as one vector of 2N.
Value flatten(ImplicitLocOpBuilder &b, Value pairs) {
  auto type = cast<VectorType>(pairs.getType());
  return vector::ShapeCastOp::create(
      b, VectorType::get({type.getNumElements()}, type.getElementType()), pairs);
}

/// The even (`odd` false) or odd lanes of the flat bf16 pairs, as f32.
Value pairHalf(ImplicitLocOpBuilder &b, Value flat, bool odd) {
  int64_t lanes = cast<VectorType>(flat.getType()).getDimSize(0) / 2;
  SmallVector<int64_t> picks;
  for (int64_t i = 0; i < lanes; ++i)
    picks.push_back(2 * i + (odd ? 1 : 0));
  Value half = vector::ShuffleOp::create(b, flat, flat, picks);
  return arith::ExtFOp::create(b, VectorType::get({lanes}, b.getF32Type()), half);
}

struct LowerBf16Dot : OpRewritePattern<vector::ContractionOp> {
  LowerBf16Dot(MLIRContext *context, const pe::CpuTarget &target)
      : OpRewritePattern(context), target(target) {}

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<pe::Bf16PairDotOperands> dot = pe::matchBf16PairDot(op);
    if (!dot)
      return rewriter.notifyMatchFailure(op, "not a dot product of bf16 pairs");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    auto accType = cast<VectorType>(dot->acc.getType());
    Value lhs = flatten(b, dot->lhs), rhs = flatten(b, dot->rhs);
    switch (chooseInstruction(target, accType.getDimSize(0))) {
    case DotInstruction::Vdpbf16ps:
      rewriter.replaceOpWithNewOp<x86vector::DotBF16Op>(op, accType, dot->acc, lhs, rhs);
      return success();
    case DotInstruction::Bfdot:
      // Overloaded on the f32 and bf16 vector types (v2f32/v4bf16, v4f32/v8bf16).
      rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
          op, accType, rewriter.getStringAttr("llvm.aarch64.neon.bfdot"),
          ValueRange{dot->acc, lhs, rhs});
      return success();
    case DotInstruction::Fma: {
      Value lhsEven = pairHalf(b, lhs, false), rhsEven = pairHalf(b, rhs, false);
      Value even = math::FmaOp::create(b, lhsEven, rhsEven, dot->acc);
      Value lhsOdd = pairHalf(b, lhs, true), rhsOdd = pairHalf(b, rhs, true);
      rewriter.replaceOpWithNewOp<math::FmaOp>(op, lhsOdd, rhsOdd, even);
      return success();
    }
    }
    llvm_unreachable("every instruction handled");
  }

  pe::CpuTarget target;
};

struct LowerBf16DotPass : pe::impl::PELowerBf16DotBase<LowerBf16DotPass> {
  using Base::Base;

  void runOnOperation() override {
    bool any = false;
    getOperation()->walk([&](vector::ContractionOp op) {
      any = pe::matchBf16PairDot(op).has_value();
      return any ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (!any)
      return;
    FailureOr<pe::CpuTarget> target = pe::getCpuTarget(getOperation());
    if (failed(target))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerBf16Dot>(&getContext(), *target);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
