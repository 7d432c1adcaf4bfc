//===- DestinationEntries.cpp - pe-destination-entries --------------------===//
//
// Destination-passing entries: for every public function @f with buffer
// results, a public @f_into that takes one output buffer per result after
// its arguments and writes the results there. Where a result is a buffer the
// function allocates (the kernels' outputs), the output buffer replaces the
// allocation, so the kernel writes straight into the caller's memory; where
// that allocation asks for an alignment the output does not have, or the
// result is some other buffer, the result is computed as before and copied.
// Dynamic sizes of an output buffer are checked against the result's
// (PE_CHECK_DESTINATION_SHAPE); static ones at the C boundary.
//
// Runs after bufferization and buffer deallocation: the allocations it
// replaces are the ones whose ownership the function hands to its caller.
//
//===----------------------------------------------------------------------===//
#include "pe/CInterface/Passes.h"

#include "pe/Dialect/PE/Utils/OperandChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEDESTINATIONENTRIES
#include "pe/CInterface/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

/// The memref.alloc that `value` is (through casts), if any.
static memref::AllocOp allocationOf(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value.getDefiningOp<memref::AllocOp>();
}

/// Checks that every dynamic dimension of `out` equals that of `result`
/// (index values from `sizeOf`).
static void checkSizes(ImplicitLocOpBuilder &b, Operation *anchor, Value out,
                       function_ref<Value(int64_t)> sizeOf) {
  auto type = cast<MemRefType>(out.getType());
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      pe::buildSizeCheck(b, anchor, PE_CHECK_DESTINATION_SHAPE,
                         memref::DimOp::create(b, out, i), sizeOf(i));
}

/// `out` replaces `alloc` where it is aligned as the allocation asks;
/// elsewhere the allocation stays and is copied into `out` before `ret`.
static void replaceAllocation(memref::AllocOp alloc, Value out, func::ReturnOp ret) {
  ImplicitLocOpBuilder b(alloc.getLoc(), alloc);
  MemRefType type = alloc.getType();
  checkSizes(b, alloc, out, [&](int64_t i) -> Value {
    if (type.isDynamicDim(i))
      return alloc.getDynamicSizes()[type.getDynamicDimIndex(i)];
    return arith::ConstantIndexOp::create(b, type.getDimSize(i));
  });
  Value viewed = out;
  if (out.getType() != type)
    viewed = memref::CastOp::create(b, type, out);
  std::optional<uint64_t> alignment = alloc.getAlignment();
  if (!alignment || *alignment <= 1) {
    alloc.replaceAllUsesWith(viewed);
    alloc.erase();
    return;
  }
  // aligned(out) % alignment == 0 ? out : a buffer of its own, copied later.
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, out);
  Value misaligned = arith::RemUIOp::create(
      b, address, arith::ConstantIndexOp::create(b, *alignment));
  Value direct = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, misaligned,
                                       arith::ConstantIndexOp::create(b, 0));
  Operation *own = alloc->clone();
  auto choice = scf::IfOp::create(
      b, direct,
      [&](OpBuilder &tb, Location loc) { scf::YieldOp::create(tb, loc, viewed); },
      [&](OpBuilder &eb, Location loc) {
        eb.insert(own);
        scf::YieldOp::create(eb, loc, own->getResult(0));
      });
  alloc.replaceAllUsesWith(choice.getResult(0));
  alloc.erase();
  b.setInsertionPoint(ret);
  Value apart = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, misaligned,
                                      arith::ConstantIndexOp::create(b, 0));
  scf::IfOp::create(b, apart, [&](OpBuilder &tb, Location loc) {
    memref::CopyOp::create(tb, loc, choice.getResult(0), out);
    memref::DeallocOp::create(tb, loc, choice.getResult(0));
    scf::YieldOp::create(tb, loc);
  });
}

/// Turns the buffer results of `fn` (one block, one return) into trailing
/// output arguments.
static void resultsToOutputs(func::FuncOp fn) {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  FunctionType type = fn.getFunctionType();
  SmallVector<Type> inputs(type.getInputs()), results;
  SmallVector<Value> kept;
  llvm::SmallPtrSet<Operation *, 4> replaced;
  int64_t outputs = 0;
  for (Value value : ret.getOperands()) {
    auto memref = dyn_cast<MemRefType>(value.getType());
    if (!memref) {
      results.push_back(value.getType());
      kept.push_back(value);
      continue;
    }
    ++outputs;
    inputs.push_back(memref);
    Value out = fn.getBody().front().addArgument(memref, value.getLoc());
    memref::AllocOp alloc = allocationOf(value);
    if (alloc && alloc->getParentOp() == fn && replaced.insert(alloc).second) {
      replaceAllocation(alloc, out, ret);
      continue;
    }
    ImplicitLocOpBuilder b(ret.getLoc(), ret);
    checkSizes(b, ret, out, [&](int64_t i) -> Value {
      return memref::DimOp::create(b, value, i);
    });
    memref::CopyOp::create(b, value, out);
  }
  OpBuilder b(ret);
  func::ReturnOp::create(b, ret.getLoc(), kept);
  ret.erase();
  fn.setFunctionType(FunctionType::get(fn.getContext(), inputs, results));
  fn->setAttr(pe::kOutputsAttr, b.getI64IntegerAttr(outputs));
}

namespace {
struct DestinationEntriesPass
    : pe::impl::PEDestinationEntriesBase<DestinationEntriesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> entries;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal() && !fn->hasAttr(pe::kOutputsAttr) &&
          llvm::any_of(fn.getResultTypes(), llvm::IsaPred<MemRefType>))
        entries.push_back(fn);
    for (func::FuncOp fn : entries) {
      std::string name = (fn.getSymName() + "_into").str();
      if (symbols.lookup(name)) {
        fn.emitError() << "pe-destination-entries: the destination-passing "
                          "entry of @"
                       << fn.getSymName() << " would be @" << name
                       << ", which the module already defines";
        return signalPassFailure();
      }
      if (!fn.getBody().hasOneBlock()) {
        fn.emitError() << "pe-destination-entries: @" << fn.getSymName()
                       << " has more than one block";
        return signalPassFailure();
      }
      auto into = cast<func::FuncOp>(fn->clone());
      into.setSymName(name);
      // Argument and result attributes do not carry over to the new order.
      into.removeArgAttrsAttr();
      into.removeResAttrsAttr();
      symbols.insert(into, std::next(Block::iterator(fn)));
      resultsToOutputs(into);
    }
  }
};
} // namespace
