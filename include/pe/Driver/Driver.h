//===- Driver.h - the compiler driver ----------------------------*- C++ -*-===//
//
// pe IR (or a model's config, or importer IR to be raised) in; an object, a
// shared library, assembly, LLVM IR, PTX/cubin/fatbin with its manifest, a C
// header and an interface description out, or `main` run through the JIT.
// pe-compile is its command line; a program links PEDriver and calls the
// same functions (as mlir-opt's MlirOptMain and IREE's compiler API).
//
// Errors that have no place in the IR (options, files, tools, linking) are
// emitted as diagnostics at an unknown location; the client's diagnostic
// handler decides how they read.
//
//===----------------------------------------------------------------------===//
#ifndef PE_DRIVER_DRIVER_H
#define PE_DRIVER_DRIVER_H

#include "pe/Driver/CompileOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace mlir {
class DialectRegistry;
namespace pe::driver {

/// LLVM's targets (every backend LLVM was built with: CPU code for any
/// triple, PTX) and the native JIT.
void initializeLLVMTargets();

/// Every dialect, extension and translation a compilation may meet.
void registerCompilerDialects(DialectRegistry &registry);

/// Writes the target CPU of `options` as pe schedules for it, as JSON.
llvm::Error printCpuTarget(const CompileOptions &options, llvm::raw_ostream &os);

/// The input of `options`: its config's layers, or the input file parsed
/// (diagnostics of the parser refer to `sourceMgr`). Null on failure, and
/// when the config as read is the output (Emit::Config), which is then
/// written and `written` set.
OwningOpRef<ModuleOp> loadInput(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                const CompileOptions &options, bool &written);

/// Checks `options` (checkOptions), then raises (with `options.raise`),
/// compiles and writes `module` as they ask, or runs its `main`
/// (Emit::Jit). `module` is lowered in place; a file whose writing fails
/// (the output, header, interface or manifest) is removed.
LogicalResult compile(ModuleOp module, const CompileOptions &options);

} // namespace pe::driver
} // namespace mlir

#endif // PE_DRIVER_DRIVER_H
