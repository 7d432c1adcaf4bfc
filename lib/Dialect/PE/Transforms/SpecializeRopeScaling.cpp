//===- SpecializeRopeScaling.cpp - pe-specialize-rope-scaling -------------===//
#include "pe/Dialect/PE/Transforms/Passes.h"

#include <cmath>
#include <string>

namespace mlir::pe {
#define GEN_PASS_DEF_PESPECIALIZEROPESCALING
#include "pe/Dialect/PE/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

/// The same rotation with its sequence-length dependence decided for
/// sequences of up to `maxSeqLen` positions, or a null attribute (and a
/// diagnostic) when the decided base is not a finite number.
static RopeAttr specialize(Operation *op, RopeAttr rope, int64_t maxSeqLen) {
  MLIRContext *context = rope.getContext();
  formula::RopeConfig config = rope.getConfig();
  if (isa_and_present<DynamicNtkScalingAttr>(rope.getScaling())) {
    double theta = formula::dynamicNtkTheta(config, maxSeqLen);
    if (!(std::isfinite(theta) && theta > 1.0)) {
      op->emitError() << "pe-specialize-rope-scaling: dynamic NTK at "
                      << maxSeqLen << " positions gives theta = "
                      << (std::isinf(theta) ? "inf" : std::to_string(theta))
                      << ", which is not a finite number > 1";
      return {};
    }
    return rope.withScaling(APFloat(theta), RopeScalingAttrInterface());
  }
  if (auto longrope = dyn_cast_if_present<LongRopeScalingAttr>(rope.getScaling())) {
    if (longrope.getSelect() != LongRopeSelect::dynamic)
      return rope;
    LongRopeSelect select = formula::longRopeUsesLong(config, maxSeqLen)
                                ? LongRopeSelect::long_
                                : LongRopeSelect::short_;
    auto scaling = LongRopeScalingAttr::get(
        context, longrope.getShortFactor(), longrope.getLongFactor(),
        longrope.getOriginalMaxPositionEmbeddings(), longrope.getFactor(),
        longrope.getAttentionFactor(), select);
    return rope.withScaling(rope.getTheta(), scaling);
  }
  return rope;
}

namespace {
struct SpecializeRopeScalingPass
    : pe::impl::PESpecializeRopeScalingBase<SpecializeRopeScalingPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxSeqLen <= 0) {
      getOperation()->emitError()
          << "pe-specialize-rope-scaling needs max-seq-len > 0, but got "
          << static_cast<int64_t>(maxSeqLen);
      return signalPassFailure();
    }
    WalkResult result = getOperation()->walk([&](Operation *op) {
      for (NamedAttribute named : op->getAttrDictionary()) {
        auto rope = dyn_cast<RopeAttr>(named.getValue());
        if (!rope)
          continue;
        RopeAttr specialized = specialize(op, rope, maxSeqLen);
        if (!specialized)
          return WalkResult::interrupt();
        if (specialized != rope)
          op->setAttr(named.getName(), specialized);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
