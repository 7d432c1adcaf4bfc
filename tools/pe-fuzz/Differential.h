//===- Differential.h - run a program two ways and compare ------*- C++ -*-===//
//
// The execution half of pe-fuzz: a generated program is compiled by the CPU
// pipeline twice, with the pe kernels (fusion, pe-tile-attention,
// pe-tile-rope) and with the reference lowering (no fusion,
// pe-lower-to-linalg), JIT-compiled, run on the same inputs drawn from the
// fuzzer's bytes, and the two results are compared (NaN where NaN, the same
// infinities, finite values within the element type's tolerance). A
// difference aborts, so libFuzzer records the input.
//
//===----------------------------------------------------------------------===//
#ifndef PE_TOOLS_PE_FUZZ_DIFFERENTIAL_H
#define PE_TOOLS_PE_FUZZ_DIFFERENTIAL_H

#include "ProgramGenerator.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::pe::fuzz {

/// Runs `module` (the parsed `program`) both ways on inputs drawn from
/// `seed` and aborts with a report when the results differ. Returns quietly
/// when either compilation fails (a diagnostic, not a finding).
void checkDifferential(const Program &program, ModuleOp module, uint64_t seed,
                       int64_t threads);

/// False, with the reason on stderr, when PE_FUZZ_OPT_LEVEL (LLVM's level
/// for both ways, default 0) is set to anything but 0, 1, 2 or 3.
bool checkOptLevelVariable();

} // namespace mlir::pe::fuzz

#endif // PE_TOOLS_PE_FUZZ_DIFFERENTIAL_H
