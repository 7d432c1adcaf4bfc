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

} // namespace mlir::pe::driver

#endif // PE_DRIVER_COMMANDLINE_H
