//===- Pipelines.h - named pass pipelines of pe-mlir ----------------------===//
#ifndef PE_PIPELINES_PIPELINES_H
#define PE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace pe {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Elements per vector in innermost loops (16 f32 = AVX-512)"),
      llvm::cl::init(16)};
  PassOptions::Option<std::string> targetCpu{
      *this, "target-cpu",
      llvm::cl::desc("CPU the LLVM functions are generated for (e.g. "
                     "sapphirerapids; default: left to the code generator)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> targetFeatures{
      *this, "target-features",
      llvm::cl::desc("Target features of the LLVM functions (e.g. +avx512f)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads (OpenMP) that share each op's outer parallel "
                     "loop; 1: single-threaded code without OpenMP"),
      llvm::cl::init(1)};
  PassOptions::Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Share RoPE tables and fuse RoPE and ALiBi into attention "
                     "before lowering"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tileAttention{
      *this, "tile-attention",
      llvm::cl::desc("Lower pe.attention with the flash-attention kernel of "
                     "pe-tile-attention (off: the pe-lower-to-linalg reference)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> amx{
      *this, "amx",
      llvm::cl::desc("bf16 attention on AMX tiles (the target must have "
                     "amx-bf16 and amx-tile)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tileRope{
      *this, "tile-rope",
      llvm::cl::desc("Lower pe.rope with the streaming kernel of pe-tile-rope "
                     "(off: the pe-lower-to-linalg reference)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> attentionRows{
      *this, "attention-rows",
      llvm::cl::desc("Query rows per attention task (pe-tile-attention rows)"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> attentionBlockKeys{
      *this, "attention-block-keys",
      llvm::cl::desc("Keys per streamed K/V tile (pe-tile-attention block-keys)"),
      llvm::cl::init(96)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile and vectorize linalg ops (off: scalar loops)"),
      llvm::cl::init(true)};
};

/// pe fusions -> flash attention kernels + linalg -> tiling + vectorization -> bufferization -> LLVM
/// dialect.
/// Public functions get C interface wrappers (`_mlir_ciface_<name>`).
void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Registers `pe-cpu-pipeline`.
void registerPipelines();

} // namespace pe
} // namespace mlir

#endif // PE_PIPELINES_PIPELINES_H
