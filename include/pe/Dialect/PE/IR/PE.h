//===- PE.h - the pe dialect, its attributes and operations ---------------===//
#ifndef PE_DIALECT_PE_IR_PE_H
#define PE_DIALECT_PE_IR_PE_H

#include "pe/Math/PositionalMath.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>
#include <optional>

namespace mlir::pe::param {
// Parsers and printers of the attribute parameters declared in PEAttrs.td.
FailureOr<llvm::APFloat> parseF64(AsmParser &parser);
/// The shortest decimal that parses back to the same double (always with a
/// `.`, so that it reads as a float); non-finite values as `0x... : f64`.
void printF64(AsmPrinter &printer, const llvm::APFloat &value);
FailureOr<std::optional<llvm::APFloat>> parseOptionalF64(AsmParser &parser);
FailureOr<DenseF64ArrayAttr> parseF64List(AsmParser &parser);
void printF64List(AsmPrinter &printer, DenseF64ArrayAttr values);
FailureOr<DenseI64ArrayAttr> parseI64List(AsmParser &parser);
void printI64List(AsmPrinter &printer, DenseI64ArrayAttr values);
FailureOr<bool> parseBool(AsmParser &parser);
/// Bitwise equality, so that -0.0 and NaN parameters stay distinct.
bool sameOptionalF64(const std::optional<llvm::APFloat> &lhs,
                     const std::optional<llvm::APFloat> &rhs);
} // namespace mlir::pe::param

namespace mlir::pe {
/// Whether `value` is a normal f32 > 0 (1.18e-38 <= value <= 3.4e38): a
/// factor the kernels apply in f32, where a larger one is infinite and a
/// smaller one 0 (an attention's scale and softcap).
inline bool isNormalPositiveF32(double value) {
  return value >= double(std::numeric_limits<float>::min()) &&
         value <= double(std::numeric_limits<float>::max());
}

/// Fails with a diagnostic when a static tensor shape among the operands and
/// results of `op` has a byte size that overflows 64 bits.
LogicalResult verifyBoundedShapes(Operation *op);

template <typename ConcreteType>
class BoundedShapes : public OpTrait::TraitBase<ConcreteType, BoundedShapes> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyBoundedShapes(op);
  }
};
} // namespace mlir::pe

#include "pe/Dialect/PE/IR/PEOpsDialect.h.inc"

#include "pe/Dialect/PE/IR/PEEnums.h.inc"

#include "pe/Dialect/PE/IR/PEAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "pe/Dialect/PE/IR/PEAttrs.h.inc"

#define GET_OP_CLASSES
#include "pe/Dialect/PE/IR/PEOps.h.inc"

#endif // PE_DIALECT_PE_IR_PE_H
