//===- CommandLine.h - the compiler driver's command line --------*- C++ -*-===//
//
// pe-compile's options as LLVM command-line options that write straight into
// one CompileOptions (the pipeline options by assignment, so a pipeline sees
// which were given), as MlirOptMainConfig does for mlir-opt.
//
//===----------------------------------------------------------------------===//
#ifndef PE_DRIVER_COMMANDLINE_H
#define PE_DRIVER_COMMANDLINE_H

#include "pe/Driver/CompileOptions.h"

namespace mlir::pe::driver {

/// Registers the options (once) and returns the options they write into.
CompileOptions &registerCompileCLOptions();

/// Hides every option but the driver's from --help.
void hideUnrelatedCLOptions();

/// After parsing: whether the command line set an option of LLVM's own
/// (one that is neither the driver's nor MLIR's `--mlir-*`, e.g.
/// `--unroll-threshold`). Such options change LLVM's output without changing
/// the module, so the object cache is not used with them.
bool givenLLVMOptions();

} // namespace mlir::pe::driver

#endif // PE_DRIVER_COMMANDLINE_H
