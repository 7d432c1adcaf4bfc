//===- ExpandBf16Conversions.cpp - pe-expand-bf16-conversions -------------===//
#include "pe/Transforms/Passes.h"

#include "pe/Target/CpuTarget.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEEXPANDBF16CONVERSIONS
#include "pe/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
struct ExpandBf16ConversionsPass
    : pe::impl::PEExpandBf16ConversionsBase<ExpandBf16ConversionsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<pe::CpuTarget> target = pe::getCpuTarget(getOperation());
    if (failed(target))
      return signalPassFailure();
    if (target->bf16Convert)
      return;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
