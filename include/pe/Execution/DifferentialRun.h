//===- DifferentialRun.h - run two functions and compare ---------*- C++ -*-===//
//
// Compiles two functions of one signature with the CPU pipeline, JIT-compiles
// them, runs both on the same random inputs and compares their results: the
// check behind pe-raise-positional-encodings{verify}.
//
//===----------------------------------------------------------------------===//
#ifndef PE_EXECUTION_DIFFERENTIALRUN_H
#define PE_EXECUTION_DIFFERENTIALRUN_H

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func
namespace pe {

/// Runs `reference` and `candidate` on the same inputs drawn from `seed` and
/// returns the largest difference of their results, |c - r| / max(1, max
/// |r|) (a NaN or infinity where the other result has none counts as
/// infinite). The functions must take tensors of static shapes (f32, f64,
/// f16, bf16, i1, i32 or i64 elements) and return one float tensor; float
/// inputs are standard normal, integer inputs (positions, ids) lie in
/// [0, L) with L their last dim, booleans are fair coins. Each function is
/// compiled alone by the CPU pipeline (one thread) and run through the JIT
/// with the pe runtime. Failure, with `why` set, when a function does not
/// have that form, does not compile or does not run.
FailureOr<double> compareOnRandomInputs(func::FuncOp reference, func::FuncOp candidate,
                                        uint64_t seed, std::string &why);

/// Makes compareOnRandomInputs the check of
/// pe-raise-positional-encodings{verify} (see setRaisingCheck).
void registerJitRaisingCheck();

} // namespace pe
} // namespace mlir

#endif // PE_EXECUTION_DIFFERENTIALRUN_H
