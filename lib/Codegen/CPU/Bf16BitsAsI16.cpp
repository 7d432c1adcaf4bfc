//===- Bf16BitsAsI16.cpp - pe-bf16-bits-as-i16 ----------------------------===//
#include "pe/Codegen/CPU/Passes.h"

#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEBF16BITSASI16
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {

bool isBf16(Type type) { return getElementTypeOrSelf(type).isBF16(); }

/// The ops that only move bits.
bool movesBits(Operation *op) {
  return isa<LLVM::LoadOp, LLVM::StoreOp, LLVM::MaskedLoadOp, LLVM::MaskedStoreOp,
             LLVM::masked_gather, LLVM::masked_scatter, LLVM::SelectOp,
             LLVM::ShuffleVectorOp, LLVM::ExtractElementOp, LLVM::InsertElementOp>(op);
}

/// `op` recreated on i16 in place of bf16: bf16 operands bitcast to i16, the
/// new op's i16 results bitcast back for the users.
void moveAsI16(Operation *op) {
  OpBuilder b(op);
  Type i16 = b.getI16Type();
  auto asI16 = [&](Type type) { return isBf16(type) ? pe::withElementType(type, i16) : type; };
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(isBf16(operand.getType())
                           ? LLVM::BitcastOp::create(b, op->getLoc(), asI16(operand.getType()),
                                                     operand)
                                 .getResult()
                           : operand);
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  state.addAttributes(op->getAttrs());
  for (Type type : op->getResultTypes())
    state.addTypes(asI16(type));
  Operation *moved = b.create(state);
  for (auto [old, result] : llvm::zip(op->getResults(), moved->getResults())) {
    Value replacement = result;
    if (isBf16(old.getType()))
      replacement = LLVM::BitcastOp::create(b, op->getLoc(), old.getType(), result);
    old.replaceAllUsesWith(replacement);
  }
  op->erase();
}

struct Bf16BitsAsI16Pass : pe::impl::PEBf16BitsAsI16Base<Bf16BitsAsI16Pass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (movesBits(op) && (llvm::any_of(op->getOperandTypes(), isBf16) ||
                            llvm::any_of(op->getResultTypes(), isBf16)))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      moveAsI16(op);
  }
};

} // namespace
