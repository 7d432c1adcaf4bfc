//===- SpecializeRopeScaling.cpp - pe-specialize-rope-scaling -------------===//
#include "pe/Dialect/PE/Transforms/Passes.h"

#include <cmath>

namespace mlir::pe {
#define GEN_PASS_DEF_PESPECIALIZEROPESCALING
#include "pe/Dialect/PE/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

/// The same rotation with its sequence-length dependence decided for
/// sequences of up to `maxSeqLen` positions.
static RopeAttr specialize(RopeAttr rope, int64_t maxSeqLen) {
  MLIRContext *context = rope.getContext();
  if (auto dynamic = dyn_cast_if_present<DynamicNtkScalingAttr>(rope.getScaling())) {
    // theta' = theta (s L / L_max - (s - 1))^(r/(r-2)), L = max(N, L_max).
    double r = double(rope.getRotaryDim());
    double s = dynamic.getFactor().convertToDouble();
    double lMax = double(dynamic.getMaxPositionEmbeddings());
    double l = std::max(double(maxSeqLen), lMax);
    double theta = rope.getTheta().convertToDouble() * std::pow(s * l / lMax - (s - 1.0), r / (r - 2.0));
    return RopeAttr::get(context, APFloat(theta), rope.getRotaryDim(), rope.getStyle(),
                         RopeScalingAttrInterface());
  }
  if (auto longrope = dyn_cast_if_present<LongRopeScalingAttr>(rope.getScaling())) {
    if (longrope.getSelect() != LongRopeSelect::dynamic)
      return rope;
    LongRopeSelect select =
        maxSeqLen > longrope.getOriginalMaxPositionEmbeddings()
            ? LongRopeSelect::long_
            : LongRopeSelect::short_;
    auto scaling = LongRopeScalingAttr::get(
        context, longrope.getShortFactor(), longrope.getLongFactor(),
        longrope.getOriginalMaxPositionEmbeddings(), longrope.getFactor(),
        longrope.getAttentionFactor(), select);
    return RopeAttr::get(context, rope.getTheta(), rope.getRotaryDim(),
                         rope.getStyle(), scaling);
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
    getOperation()->walk([&](Operation *op) {
      for (NamedAttribute named : op->getAttrDictionary())
        if (auto rope = dyn_cast<RopeAttr>(named.getValue()))
          if (RopeAttr specialized = specialize(rope, maxSeqLen); specialized != rope)
            op->setAttr(named.getName(), specialized);
    });
  }
};
} // namespace
