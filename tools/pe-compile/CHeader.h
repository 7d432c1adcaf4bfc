//===- CHeader.h - the C header of compiled pe functions ------------------===//
#ifndef PE_COMPILE_CHEADER_H
#define PE_COMPILE_CHEADER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::pe {

/// Writes a C header declaring `_mlir_ciface_<name>` for every public
/// function of `module` (before lowering: tensor types), with one memref
/// descriptor struct per (rank, element type). Fails with a diagnostic on a
/// type that has no C form. With `deviceBuffers`, the header says that the
/// buffers are GPU memory (a GPU library built with --gpu-memory=device).
LogicalResult emitCHeader(ModuleOp module, StringRef guard, llvm::raw_ostream &os,
                          bool deviceBuffers = false);

} // namespace mlir::pe

#endif // PE_COMPILE_CHEADER_H
