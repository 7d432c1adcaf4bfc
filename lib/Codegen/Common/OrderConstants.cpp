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
#include "mlir/IR/AttrTypeSubElements.h"
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
    // New names, all at once: SymbolTable::rename walks the module for the
    // uses of each symbol, which made this pass quadratic in the module.
    llvm::DenseMap<StringAttr, FlatSymbolRefAttr> renamed;
    for (auto [i, usedGlobal] : llvm::enumerate(used)) {
      memref::GlobalOp global = usedGlobal;
      std::string name = "__constant_" + std::to_string(i) + "_" + typeName(global.getType());
      auto newName = StringAttr::get(&getContext(), name);
      Operation *existing = symbols.lookup(newName);
      if (existing && !used.contains(dyn_cast<memref::GlobalOp>(existing))) {
        global.emitError("cannot rename the constant to '") << name << "': the name is taken";
        return signalPassFailure();
      }
      renamed[global.getSymNameAttr()] = FlatSymbolRefAttr::get(newName);
    }
    if (renamed.empty())
      return;
    // Every reference in the module's own symbol scope (not inside a nested
    // symbol table, whose names are its own), then the globals themselves.
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](FlatSymbolRefAttr ref) -> std::optional<Attribute> {
      auto it = renamed.find(ref.getAttr());
      return it == renamed.end() ? std::optional<Attribute>() : Attribute(it->second);
    });
    module->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op != module.getOperation() && op->hasTrait<OpTrait::SymbolTable>())
        return WalkResult::skip();
      replacer.replaceElementsIn(op);
      return WalkResult::advance();
    });
    Operation *before = &module.getBody()->front();
    for (memref::GlobalOp global : used) {
      global.setSymNameAttr(renamed[global.getSymNameAttr()].getAttr());
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
