//===- Passes.h - conversions out of the pe dialect -----------------------===//
#ifndef PE_CONVERSION_PASSES_H
#define PE_CONVERSION_PASSES_H

#include "pe/Conversion/LinalgToPE/LinalgToPE.h"
#include "pe/Conversion/PEToLinalg/PEToLinalg.h"

#include "mlir/Pass/Pass.h"

namespace mlir::pe {

#define GEN_PASS_DECL
#include "pe/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pe/Conversion/Passes.h.inc"

} // namespace mlir::pe

#endif // PE_CONVERSION_PASSES_H
