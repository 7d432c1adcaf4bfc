//===- OrderConstants.cpp - pe-order-constants ----------------------------===//
//
// One-shot bufferization turns each constant tensor into a memref.global
// named `__constant_<shape>` (with `_0`, `_1`, ... on a repeated shape) in
// the order it visits the functions, which is not the order of the module.
// Renaming the globals by their first use, in module order, makes the
// output of a compilation depend on its input only.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/Common/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEORDERCONSTANTS
#include "pe/Codegen/Common/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {
struct OrderConstantsPass : pe::impl::PEOrderConstantsBase<OrderConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // The bufferization constants, by first use (memref.get_global in
    // module order).
    llvm::SetVector<memref::GlobalOp> used;
    module.walk([&](memref::GetGlobalOp get) {
      auto global = symbols.lookup<memref::GlobalOp>(get.getName());
      if (global && global.getConstant() && global.getSymName().starts_with("__constant_"))
        used.insert(global);
    });
    // Out of the way first (a new name may be an old one), then in order.
    SmallVector<memref::GlobalOp> globals(used.begin(), used.end());
    for (auto [i, global] : llvm::enumerate(globals))
      if (failed(symbols.rename(global, "__pe_constant_renaming_" + std::to_string(i))))
        return signalPassFailure();
    Operation *before = globals.empty() ? nullptr : &module.getBody()->front();
    for (auto [i, global] : llvm::enumerate(globals)) {
      std::string name = "__constant_" + std::to_string(i) + "_" + typeName(global.getType());
      if (failed(symbols.rename(global, name)))
        return signalPassFailure();
      global->moveBefore(before);
      before = global->getNextNode();
    }
  }

  /// `64xf64` for memref<64xf64>.
  static std::string typeName(MemRefType type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    for (int64_t dim : type.getShape())
      os << dim << "x";
    os << type.getElementType();
    return text;
  }
};
} // namespace
