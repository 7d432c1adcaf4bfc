//===- Steps.h - the driver's steps, shared by its files ---------*- C++ -*-===//
#ifndef PE_LIB_DRIVER_STEPS_H
#define PE_LIB_DRIVER_STEPS_H

#include "pe/Driver/CompileOptions.h"
#include "pe/Target/CpuTarget.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
class PassManager;
namespace pe::driver {

/// Emits `message` as an error at an unknown location (no place in the IR).
LogicalResult fail(MLIRContext *context, const Twine &message);

/// The CPU of --mtriple, --mcpu and --mattr, plus `extraFeatures`.
FailureOr<pe::CpuTarget> describeTarget(MLIRContext *context, const CompileOptions &options,
                                        StringRef extraFeatures = "");

/// The verifier between passes as `options` asks (or `always`), and the
/// client's setup of the pass manager.
LogicalResult configure(PassManager &pm, const CompileOptions &options, bool always = false);

/// Runs `pm` and verifies the result where the passes did not.
LogicalResult runPasses(PassManager &pm, ModuleOp module, const CompileOptions &options);

/// --target=gpu: pe-gpu-pipeline, then the kernels alone (PTX, cubin,
/// fatbin) or the host code that launches them.
LogicalResult compileForGpu(ModuleOp module, const CompileOptions &options);

/// The module as MLIR text, to the output.
LogicalResult writeMlir(ModuleOp module, const CompileOptions &options);

/// The GPU kernels' binary alone (PTX, cubin, fatbin), to the output.
LogicalResult writeGpuKernels(ModuleOp module, const CompileOptions &options);

/// The module, in the LLVM dialect, as LLVM IR, assembly, an object or a
/// shared library for `cpuTarget`.
LogicalResult emitHostCode(ModuleOp module, const CompileOptions &options,
                           const pe::CpuTarget &cpuTarget);

/// Exports the checked entries (pe-export-c-interface) and writes the C
/// header and interface files asked for.
LogicalResult exportEntries(ModuleOp module, const CompileOptions &options);

/// The module must define `void main(void)`.
LogicalResult checkMain(ModuleOp module);

/// JIT-compiles `module` (the LLVM dialect, entries exported) and runs its
/// `main` on this machine; a non-zero status fails with its message.
LogicalResult runMain(ModuleOp module, const CompileOptions &options,
                      const pe::CpuTarget &cpuTarget);

} // namespace pe::driver
} // namespace mlir

#endif // PE_LIB_DRIVER_STEPS_H
