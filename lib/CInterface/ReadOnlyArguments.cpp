//===- ReadOnlyArguments.cpp - pe-read-only-arguments ---------------------===//
#include "pe/CInterface/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEREADONLYARGUMENTS
#include "pe/CInterface/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
struct ReadOnlyArgumentsPass
    : pe::impl::PEReadOnlyArgumentsBase<ReadOnlyArgumentsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isPrivate() || fn.isExternal())
      return;
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes()))
      if (isa<TensorType>(type))
        fn.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                      BoolAttr::get(&getContext(),
                                    bool(fn.getArgAttr(i, pe::kInPlaceAttr))));
  }
};
} // namespace
