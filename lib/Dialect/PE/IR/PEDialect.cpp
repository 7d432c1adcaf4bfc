//===- PEDialect.cpp - the pe dialect -------------------------------------===//
#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/IR/Builders.h"
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

Operation *PEDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || !arith::ConstantOp::isBuildableWith(typed, type))
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type, typed);
}
