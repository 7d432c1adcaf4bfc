//===- Stages.h - pipeline stages shared by the CPU and GPU pipelines -----===//
#ifndef PE_LIB_PIPELINES_STAGES_H
#define PE_LIB_PIPELINES_STAGES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace mlir {
class OpPassManager;
namespace pe {

/// With an `error` (an invalid option of `pipeline`), adds a pass that
/// fails on the module with its message and returns true: how an invalid
/// option reaches the user as a diagnostic (pipeline builders cannot fail).
bool reportInvalidOptions(OpPassManager &pm, llvm::StringRef pipeline, llvm::Error error);

/// Folds first (constants; chained rotations composed into one, so a chain
/// shares no tables and fuses as a single rotation), then, with `fuse`,
/// positional encodings fused into the attention that uses them and RoPE
/// tables shared.
void addFoldsAndFusions(OpPassManager &pm, bool fuse);

/// After pe-lower-to-linalg: elementwise arith on tensors (composed
/// positions) as linalg, cleaned up, elementwise chains fused.
void addLinalgFusion(OpPassManager &pm);

/// Tensors -> buffers: inputs are never written, every result owns its
/// buffer, temporaries are freed, results are returned to the caller; with
/// `destinationEntries`, also written into caller-provided buffers by
/// @f_into entries (pe-destination-entries).
void addBufferization(OpPassManager &pm, bool destinationEntries = false);

/// Host code on buffers -> the LLVM dialect for the CPU: C interface
/// wrappers for public functions, loops, vectors, math (libm), with
/// OpenMP for `threads` > 1 and AMX tile ops with `amx`.
void addCpuLowering(OpPassManager &pm, int64_t threads, bool amx);

} // namespace pe
} // namespace mlir

#endif // PE_LIB_PIPELINES_STAGES_H
