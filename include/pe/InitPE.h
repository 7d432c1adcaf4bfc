//===- InitPE.h - register everything pe-mlir provides --------------------===//
#ifndef PE_INITPE_H
#define PE_INITPE_H

#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PEGPU/IR/PEGPU.h"
#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/Transforms/Passes.h"
#include "pe/Execution/DifferentialRun.h"
#include "pe/Pipelines/Pipelines.h"
#include "pe/CInterface/Passes.h"
#include "pe/Codegen/Passes.h"

namespace mlir::pe {

/// Adds the pe dialects to `registry`: the model-level `pe` and the GPU
/// code generation's kernel-level `pe_gpu`.
inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<PEDialect, pe_gpu::PEGPUDialect>();
}

/// Registers the passes and pipelines of pe-mlir with the global registry,
/// and the JIT as the check of pe-raise-positional-encodings{verify}.
inline void registerAllPasses() {
  registerJitRaisingCheck();
  registerPEPasses();
  registerPEConversionPasses();
  registerCodegenPasses();
  registerPECInterfacePasses();
  registerPipelines();
}

} // namespace mlir::pe

#endif // PE_INITPE_H
