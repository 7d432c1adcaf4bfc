//===- InPlaceResults.cpp - pe-in-place-results ---------------------------===//
#include "pe/CInterface/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEINPLACERESULTS
#include "pe/CInterface/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {

/// `value` without the memref.casts bufferization puts on a returned buffer.
Value stripCasts(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

/// Drops the results of `fn` that are its in-place arguments' buffers.
LogicalResult dropInPlaceResults(func::FuncOp fn, ModuleOp module) {
  SmallVector<int64_t> inPlace;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (fn.getArgAttr(i, pe::kInPlaceAttr))
      inPlace.push_back(i);
  if (inPlace.empty())
    return success();
  if (!SymbolTable::symbolKnownUseEmpty(fn, module))
    return fn.emitError() << "a function with pe.in_place arguments is an "
                             "entry point and cannot be called from the module";
  auto returns = llvm::to_vector(fn.getOps<func::ReturnOp>());
  if (returns.size() != 1)
    return fn.emitError() << "a function with pe.in_place arguments needs a "
                             "single return";
  func::ReturnOp ret = returns.front();
  llvm::BitVector drop(fn.getNumResults());
  for (int64_t arg : inPlace) {
    auto at = llvm::find_if(llvm::enumerate(ret.getOperands()), [&](auto r) {
      return !drop[r.index()] && stripCasts(r.value()) == fn.getArgument(arg);
    });
    if (at == llvm::enumerate(ret.getOperands()).end())
      return fn.emitError()
             << "pe.in_place argument #" << arg
             << " must be updated in its own buffer and returned: return its "
                "new value (such as a pe.append_kv result) and do not read "
                "its old value after the update";
    drop.set((*at).index());
  }
  ret->eraseOperands(drop);
  if (failed(fn.eraseResults(drop)))
    return failure();
  for (int64_t arg : inPlace)
    fn.removeArgAttr(arg, pe::kInPlaceAttr);
  fn->setAttr(pe::kInPlaceArgumentsAttr,
              DenseI64ArrayAttr::get(fn.getContext(), inPlace));
  return success();
}

struct InPlaceResultsPass
    : pe::impl::PEInPlaceResultsBase<InPlaceResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (fn.isPublic() && !fn.isExternal() &&
          failed(dropInPlaceResults(fn, module)))
        return signalPassFailure();
  }
};

} // namespace
