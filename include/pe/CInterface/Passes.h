//===- Passes.h - the C interface of compiled functions ---------*- C++ -*-===//
#ifndef PE_CINTERFACE_PASSES_H
#define PE_CINTERFACE_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::pe {

/// The buffer signature of a public function (a TypeAttr of its
/// FunctionType), set by pe-request-c-wrappers and read after the conversion
/// to LLVM by pe-export-c-interface and the driver's header writer.
inline constexpr char kCInterfaceAttr[] = "pe.c_interface";

/// On a destination-passing entry @f_into: how many trailing arguments are
/// outputs (pe-destination-entries).
inline constexpr char kOutputsAttr[] = "pe.outputs";

/// On a public function's tensor argument: the caller's buffer is updated in
/// place (a KV cache). The function returns the argument's new value; that
/// result is computed in the argument's buffer and is not returned to C
/// callers (pe-in-place-results).
inline constexpr char kInPlaceAttr[] = "pe.in_place";

/// On a public function after pe-in-place-results: the indices of its
/// in-place arguments (an array<i64>), for the header and interface writers.
inline constexpr char kInPlaceArgumentsAttr[] = "pe.in_place_arguments";

#define GEN_PASS_DECL
#include "pe/CInterface/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pe/CInterface/Passes.h.inc"

} // namespace mlir::pe

#endif // PE_CINTERFACE_PASSES_H
