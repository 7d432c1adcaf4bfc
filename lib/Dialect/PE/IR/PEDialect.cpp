//===- PEDialect.cpp - the pe dialect -------------------------------------===//
#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pe;

#include "pe/Dialect/PE/IR/PEOpsDialect.cpp.inc"

void PEDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "pe/Dialect/PE/IR/PEOps.cpp.inc"
      >();
}

/// `pe.in_place` (a unit attribute) marks a tensor argument of a function
/// that the compiled function updates in the caller's buffer (a memref
/// argument once bufferized).
LogicalResult PEDialect::verifyRegionArgAttribute(Operation *op, unsigned region,
                                                  unsigned index,
                                                  NamedAttribute attribute) {
  if (attribute.getName() != "pe.in_place")
    return op->emitError() << "unknown pe argument attribute '"
                           << attribute.getName() << "'";
  if (!isa<UnitAttr>(attribute.getValue()))
    return op->emitError() << "pe.in_place takes no value";
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn || region != 0 || index >= fn.getNumArguments() ||
      !isa<RankedTensorType, MemRefType>(fn.getArgumentTypes()[index]))
    return op->emitError() << "pe.in_place marks a ranked tensor argument of "
                              "a function";
  return success();
}

Operation *PEDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || !arith::ConstantOp::isBuildableWith(typed, type))
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type, typed);
}
