//===- SetLLVMTarget.cpp - pe-set-llvm-target -----------------------------===//
#include "pe/Codegen/CPU/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "pe/Target/CpuTarget.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PESETLLVMTARGET
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
struct SetLLVMTargetPass : pe::impl::PESetLLVMTargetBase<SetLLVMTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    StringAttr cpuAttr =
        cpu.empty() ? StringAttr() : StringAttr::get(ctx, cpu.getValue());
    LLVM::TargetFeaturesAttr featuresAttr =
        features.empty() ? LLVM::TargetFeaturesAttr()
                         : LLVM::TargetFeaturesAttr::get(ctx, features.getValue());
    // Without options: the module's target (pe-set-target).
    auto target =
        getOperation()->getAttrOfType<LLVM::TargetAttrInterface>(pe::kTargetAttrName);
    if (cpu.empty() && features.empty() && target) {
      cpuAttr = target.getChip();
      featuresAttr = dyn_cast_or_null<LLVM::TargetFeaturesAttr>(target.getFeatures());
    }
    LLVM::VScaleRangeAttr vscale;
    if (auto bits = getOperation()->getAttrOfType<IntegerAttr>(pe::kSveVectorBitsAttrName)) {
      auto granules = IntegerAttr::get(IntegerType::get(ctx, 32), bits.getInt() / 128);
      vscale = LLVM::VScaleRangeAttr::get(ctx, granules, granules);
    }
    getOperation().walk([&](LLVM::LLVMFuncOp fn) {
      if (cpuAttr)
        fn.setTargetCpuAttr(cpuAttr);
      if (featuresAttr)
        fn.setTargetFeaturesAttr(featuresAttr);
      if (vscale)
        fn.setVscaleRangeAttr(vscale);
    });
  }
};
} // namespace
