//===- BoolVectorsAsBytes.cpp - pe-bool-vectors-as-bytes ------------------===//
//
// An i1 memref stores one byte per element; an LLVM `<N x i1>` vector in
// memory is N bits. Vector loads and stores of i1 therefore move `<N x i8>`
// and convert in registers: `icmp ne 0` after a load, `zext` before a store.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/Common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEBOOLVECTORSASBYTES
#include "pe/Codegen/Common/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {

bool isBoolVector(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  return vector && vector.getElementType().isInteger(1);
}

VectorType asBytes(Type type) {
  auto vector = cast<VectorType>(type);
  return vector.clone(IntegerType::get(type.getContext(), 8));
}

Value toBytes(OpBuilder &b, Location loc, Value bits) {
  return LLVM::ZExtOp::create(b, loc, asBytes(bits.getType()), bits);
}

Value toBits(OpBuilder &b, Location loc, Value bytes) {
  Value zero = LLVM::ZeroOp::create(b, loc, bytes.getType());
  return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, bytes, zero);
}

/// `op` recreated with the operands at `dataOperands` widened to bytes and
/// an i1-vector result (if any) loaded as bytes.
void moveAsBytes(Operation *op, ArrayRef<unsigned> dataOperands) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  SmallVector<Value> operands(op->getOperands());
  for (unsigned i : dataOperands)
    if (isBoolVector(operands[i].getType()))
      operands[i] = toBytes(b, loc, operands[i]);
  OperationState state(loc, op->getName());
  state.addOperands(operands);
  state.addAttributes(op->getAttrs());
  for (Type type : op->getResultTypes())
    state.addTypes(isBoolVector(type) ? Type(asBytes(type)) : type);
  Operation *moved = b.create(state);
  for (auto [old, result] : llvm::zip(op->getResults(), moved->getResults()))
    old.replaceAllUsesWith(isBoolVector(old.getType()) ? toBits(b, loc, result) : result);
  op->erase();
}

struct BoolVectorsAsBytesPass
    : pe::impl::PEBoolVectorsAsBytesBase<BoolVectorsAsBytesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<Operation *, SmallVector<unsigned, 2>>> work;
    getOperation()->walk([&](Operation *op) {
      // The data operands: what is stored, or the masked load's pass-through
      // values (never its mask, which is a mask of lanes, not memory).
      if (auto load = dyn_cast<LLVM::LoadOp>(op); load && isBoolVector(load.getType()))
        work.push_back({op, {}});
      else if (auto load = dyn_cast<LLVM::MaskedLoadOp>(op); load && isBoolVector(load.getType()))
        work.push_back({op, llvm::to_vector<2>(llvm::seq<unsigned>(2, op->getNumOperands()))});
      else if (auto store = dyn_cast<LLVM::StoreOp>(op);
               store && isBoolVector(store.getValue().getType()))
        work.push_back({op, {0}});
      else if (auto store = dyn_cast<LLVM::MaskedStoreOp>(op);
               store && isBoolVector(store.getValue().getType()))
        work.push_back({op, {0}});
    });
    for (auto &[op, data] : work)
      moveAsBytes(op, data);
  }
};

} // namespace
