//===- LibraryInterface.h - what a compiled library exports ---*- C++ -*-===//
#ifndef PE_LIB_DRIVER_LIBRARYINTERFACE_H
#define PE_LIB_DRIVER_LIBRARYINTERFACE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::pe {

/// Writes the C header of the entries that pe-export-c-interface defined in
/// `module` (the LLVM dialect, after the pipeline): `int32_t PREFIXf(...)`
/// per public function, `PREFIXlast_error`, the status codes and one
/// include-guarded descriptor struct per (rank, element type), so that the
/// headers of several libraries can be included together. Fails with a
/// diagnostic on a type without a C form. With `deviceBuffers`, the header
/// says that buffers are GPU memory (--gpu-memory=device).
LogicalResult emitCHeader(ModuleOp module, StringRef prefix, StringRef guard,
                          llvm::raw_ostream &os, bool deviceBuffers = false);

/// Writes the same as JSON: for every entry its symbol, the function it
/// computes, its arguments and results (kind, dtype, shape with -1 for a
/// dynamic size) and how many trailing arguments are outputs.
LogicalResult emitInterfaceJson(ModuleOp module, StringRef prefix,
                                llvm::raw_ostream &os);

} // namespace mlir::pe

#endif // PE_LIB_DRIVER_LIBRARYINTERFACE_H
