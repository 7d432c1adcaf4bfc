//===- RequestCWrappers.cpp - pe-request-c-wrappers -----------------------===//
#include "pe/CInterface/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEREQUESTCWRAPPERS
#include "pe/CInterface/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
struct RequestCWrappersPass
    : pe::impl::PERequestCWrappersBase<RequestCWrappersPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isPrivate() && !fn.isExternal())
      return;
    fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(&getContext()));
    if (!fn.isExternal())
      fn->setAttr(pe::kCInterfaceAttr, TypeAttr::get(fn.getFunctionType()));
  }
};
} // namespace
