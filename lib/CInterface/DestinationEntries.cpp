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
// Both entries call one private copy of the body, @f_shared, which takes the
// outputs and an i1 `into` after the arguments:
//
//   @f(args)            = @f_shared(args, placeholders, false)
//   @f_into(args, outs) = @f_shared(args, outs, true), buffer results dropped
//
// so the module holds each body once (LLVM optimizes and compiles it once).
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

/// Checks, where `into` holds, that every dynamic dimension of `out` equals
/// that of `result` (index values from `sizeOf`).
static void checkSizes(ImplicitLocOpBuilder &b, Operation *anchor, Value into, Value out,
                       function_ref<Value(ImplicitLocOpBuilder &, int64_t)> sizeOf) {
  auto type = cast<MemRefType>(out.getType());
  if (type.hasStaticShape())
    return; // checked at the C boundary
  scf::IfOp::create(b, into, [&](OpBuilder &tb, Location loc) {
    ImplicitLocOpBuilder t(loc, tb);
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        pe::buildSizeCheck(t, anchor, PE_CHECK_DESTINATION_SHAPE,
                           memref::DimOp::create(t, out, i), sizeOf(t, i));
    scf::YieldOp::create(t);
  });
}

/// Where `into` holds and `out` is aligned as `alloc` asks, `out` replaces
/// the allocation; elsewhere the allocation stays, and where `into` holds it
/// is copied into `out` (and freed) before `ret`.
static void replaceAllocation(memref::AllocOp alloc, Value into, Value out, func::ReturnOp ret) {
  ImplicitLocOpBuilder b(alloc.getLoc(), alloc);
  MemRefType type = alloc.getType();
  checkSizes(b, alloc, into, out, [&](ImplicitLocOpBuilder &t, int64_t i) -> Value {
    if (type.isDynamicDim(i))
      return alloc.getDynamicSizes()[type.getDynamicDimIndex(i)];
    return arith::ConstantIndexOp::create(t, type.getDimSize(i));
  });
  Value viewed = out;
  if (out.getType() != type)
    viewed = memref::CastOp::create(b, type, out);
  // direct = into && aligned(out) % alignment == 0 (out is a valid
  // descriptor either way: @f passes placeholders).
  Value direct = into;
  std::optional<uint64_t> alignment = alloc.getAlignment();
  if (alignment && *alignment > 1) {
    Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, out);
    Value misaligned = arith::RemUIOp::create(
        b, address, arith::ConstantIndexOp::create(b, *alignment));
    Value aligned = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, misaligned,
                                          arith::ConstantIndexOp::create(b, 0));
    direct = arith::AndIOp::create(b, into, aligned);
  }
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
  if (direct == into)
    return; // every output written is the caller's buffer
  b.setInsertionPoint(ret);
  // into && !direct (direct implies into).
  Value apart = arith::XOrIOp::create(b, into, direct);
  scf::IfOp::create(b, apart, [&](OpBuilder &tb, Location loc) {
    memref::CopyOp::create(tb, loc, choice.getResult(0), out);
    memref::DeallocOp::create(tb, loc, choice.getResult(0));
    scf::YieldOp::create(tb, loc);
  });
}

/// Makes `shared` (a copy of a public function: one block, one return)
/// the body of both entries: one output argument per buffer result after
/// its arguments, then an i1 `into`. Where `into` holds, each buffer result
/// is written into its output (computed there when it is the function's
/// own aligned allocation, else copied); either way the function returns
/// what it returned before, which @f passes on and @f_into drops.
static void addOutputs(func::FuncOp shared) {
  Block &body = shared.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Type> inputs(shared.getArgumentTypes());
  SmallVector<std::pair<unsigned, BlockArgument>> written; // (result, its output)
  for (OpOperand &result : ret->getOpOperands())
    if (auto memref = dyn_cast<MemRefType>(result.get().getType())) {
      inputs.push_back(memref);
      written.emplace_back(result.getOperandNumber(),
                           body.addArgument(memref, result.get().getLoc()));
    }
  Value into = body.addArgument(IntegerType::get(shared.getContext(), 1), shared.getLoc());
  inputs.push_back(into.getType());
  llvm::SmallPtrSet<Operation *, 4> replaced;
  for (const auto &[index, output] : written) {
    Value out = output; // captured below (a structured binding cannot be before C++20)
    // Read at each step: a replaced allocation is now its choice of buffer.
    Value value = ret.getOperand(index);
    memref::AllocOp alloc = allocationOf(value);
    if (alloc && alloc->getParentOp() == shared && replaced.insert(alloc).second) {
      replaceAllocation(alloc, into, out, ret);
      continue;
    }
    ImplicitLocOpBuilder b(ret.getLoc(), ret);
    checkSizes(b, ret, into, out, [&](ImplicitLocOpBuilder &t, int64_t i) -> Value {
      return memref::DimOp::create(t, value, i);
    });
    scf::IfOp::create(b, into, [&](OpBuilder &tb, Location loc) {
      memref::CopyOp::create(tb, loc, value, out);
      scf::YieldOp::create(tb, loc);
    });
  }
  shared.setFunctionType(FunctionType::get(shared.getContext(), inputs, ret.getOperandTypes()));
}

/// A descriptor of `type` over a one-element stack buffer, its dynamic sizes
/// and strides 0: what @f passes for the outputs it has not got, which the
/// shared body never reads or writes (`into` is false).
static Value placeholder(ImplicitLocOpBuilder &b, MemRefType type) {
  Value base = memref::AllocaOp::create(b, MemRefType::get({1}, type.getElementType()));
  auto [strides, offset] = type.getStridesAndOffset();
  Value zero = arith::ConstantIndexOp::create(b, 0);
  auto fold = [&](int64_t value) -> OpFoldResult {
    return ShapedType::isDynamic(value) ? OpFoldResult(zero) : b.getIndexAttr(value);
  };
  return memref::ReinterpretCastOp::create(b, type, base, fold(offset),
                                           llvm::map_to_vector(type.getShape(), fold),
                                           llvm::map_to_vector(strides, fold));
}

/// @f: the shared body with placeholder outputs and `into` false; returns
/// all its results.
static void callWithoutOutputs(func::FuncOp fn, func::FuncOp shared) {
  fn.eraseBody();
  Block *block = fn.addEntryBlock();
  auto b = ImplicitLocOpBuilder::atBlockEnd(fn.getLoc(), block);
  SmallVector<Value> operands(block->getArguments());
  for (Type type : shared.getArgumentTypes().drop_front(operands.size()).drop_back())
    operands.push_back(placeholder(b, cast<MemRefType>(type)));
  operands.push_back(arith::ConstantOp::create(b, b.getBoolAttr(false)));
  auto call = func::CallOp::create(b, shared, operands);
  func::ReturnOp::create(b, call.getResults());
}

/// @f_into, after @f: @f's arguments, then one output per buffer result;
/// calls the shared body with `into` true and returns the other results.
static func::FuncOp buildInto(func::FuncOp fn, func::FuncOp shared, StringRef name) {
  SmallVector<Type> results;
  llvm::copy_if(fn.getResultTypes(), std::back_inserter(results),
                [](Type type) { return !isa<MemRefType>(type); });
  auto type = FunctionType::get(fn.getContext(), shared.getArgumentTypes().drop_back(), results);
  OpBuilder after(fn);
  after.setInsertionPointAfter(fn);
  auto into = func::FuncOp::create(after, fn.getLoc(), name, type);
  // @f's own attributes (pe.in_place_arguments: its arguments lead).
  into->setDiscardableAttrs(fn->getDiscardableAttrDictionary());
  int64_t outputs = type.getNumInputs() - fn.getNumArguments();
  into->setAttr(pe::kOutputsAttr, after.getI64IntegerAttr(outputs));
  Block *block = into.addEntryBlock();
  auto b = ImplicitLocOpBuilder::atBlockEnd(fn.getLoc(), block);
  SmallVector<Value> operands(block->getArguments());
  operands.push_back(arith::ConstantOp::create(b, b.getBoolAttr(true)));
  auto call = func::CallOp::create(b, shared, operands);
  SmallVector<Value> kept;
  llvm::copy_if(call.getResults(), std::back_inserter(kept),
                [](Value value) { return !isa<MemRefType>(value.getType()); });
  func::ReturnOp::create(b, kept);
  return into;
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
      // One body, which both entries call (a clone for each would double
      // the code LLVM optimizes and compiles). Argument and result
      // attributes stay on @f's signature.
      auto shared = cast<func::FuncOp>(fn->clone());
      shared.setSymName((fn.getSymName() + "_shared").str());
      shared.setPrivate();
      shared.removeArgAttrsAttr();
      shared.removeResAttrsAttr();
      symbols.insert(shared, Block::iterator(fn)); // uniques the name
      addOutputs(shared);
      callWithoutOutputs(fn, shared);
      symbols.insert(buildInto(fn, shared, name));
    }
  }
};
} // namespace
