//===- SetTarget.cpp - pe-set-target --------------------------------------===//
#include "pe/Codegen/CPU/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "pe/Target/CpuTarget.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PESETTARGET
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
struct SetTargetPass : pe::impl::PESetTargetBase<SetTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool named = !triple.empty() || !cpu.empty() || !features.empty() || sveVectorBits;
    if (!named && module->hasAttr(pe::kTargetAttrName))
      return;
    llvm::Expected<pe::CpuTarget> target =
        pe::describeCpuTarget(triple, cpu, features, sveVectorBits);
    if (!target) {
      module.emitError() << "pe-set-target: " << llvm::toString(target.takeError());
      return signalPassFailure();
    }
    module->setAttr(pe::kTargetAttrName, pe::getTargetAttr(&getContext(), *target));
    if (sveVectorBits)
      module->setAttr(pe::kSveVectorBitsAttrName,
                      IntegerAttr::get(IntegerType::get(&getContext(), 64), sveVectorBits));
    else
      module->removeAttr(pe::kSveVectorBitsAttrName);
  }
};
} // namespace
