//===- Pipelines.h - named pass pipelines of pe-mlir ----------------------===//
#ifndef PE_PIPELINES_PIPELINES_H
#define PE_PIPELINES_PIPELINES_H

#include "pe/Target/CpuTarget.h"

#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir {
class OpPassManager;
namespace pe {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<std::string> targetTriple{
      *this, "target-triple",
      llvm::cl::desc("Triple the code is generated for (e.g. aarch64-linux-gnu; "
                     "default: the module's llvm.target, else the host's)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> targetCpu{
      *this, "target-cpu",
      llvm::cl::desc("CPU the code is scheduled and generated for (e.g. "
                     "znver2, neoverse-v2; default: the module's llvm.target, "
                     "else the host CPU)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> targetFeatures{
      *this, "target-features",
      llvm::cl::desc("Target features added to the CPU's (e.g. +avx512f, "
                     "-avx512bf16, +sve)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> sveVectorBits{
      *this, "sve-vector-bits",
      llvm::cl::desc("SVE vector length the code is built for (vector-length "
                     "specific; 0: any, with NEON-width vectors)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Elements per vector in the innermost loops of linalg ops "
                     "(0: the f32 lanes of the target's vector registers)"),
      llvm::cl::init(0)};
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
  PassOptions::Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 attention on AVX512-BF16 dot products, vdpbf16ps "
                     "(the target must have avx512bf16)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tileRope{
      *this, "tile-rope",
      llvm::cl::desc("Lower pe.rope with the streaming kernel of pe-tile-rope and "
                     "pe.append_kv with pe-tile-append-kv (off: the pe-lower-to-linalg "
                     "reference)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> attentionRows{
      *this, "attention-rows",
      llvm::cl::desc("Query rows per attention task (pe-tile-attention rows; "
                     "0: the target's schedule)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> attentionBlockKeys{
      *this, "attention-block-keys",
      llvm::cl::desc("Keys per streamed K/V tile (pe-tile-attention block-keys; "
                     "0: the target's schedule)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile and vectorize linalg ops (off: scalar loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> destinationEntries{
      *this, "destination-entries",
      llvm::cl::desc("Add @f_into, writing the results of every public @f into "
                     "caller-provided buffers (pe-destination-entries)"),
      llvm::cl::init(false)};
};

/// Checks the values of `options`; the error names the first invalid one.
llvm::Error checkCpuPipelineOptions(const CpuPipelineOptions &options);

/// The module's target (pe-set-target) -> pe fusions -> flash attention
/// kernels + linalg -> tiling + vectorization -> bufferization -> LLVM
/// dialect, scheduled for and marked with that target.
/// Public functions get C interface wrappers (`_mlir_ciface_<name>`).
void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVIDIA GPU the code is generated for: sm_80, sm_86, sm_87, "
                     "sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_120, sm_120a"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<int64_t> multiprocessors{
      *this, "multiprocessors",
      llvm::cl::desc("Multiprocessors of the GPU product the decode splits are "
                     "sized for (0: the chip's reference part, e.g. 132 for an "
                     "sm_90a H100/H200, 108 for an sm_80 A100)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX target features (e.g. +ptx85); default: the PTX "
                     "version the chip needs"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the gpu.binary holds: isa (PTX text, needs no CUDA), "
                     "bin (cubin, needs ptxas), fatbin (needs ptxas and fatbinary)"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit directory for ptxas, fatbinary and libdevice "
                     "(default: CUDA_ROOT, CUDA_HOME, CUDA_PATH, then PATH)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the elementwise kernels"),
      llvm::cl::init(256)};
  PassOptions::Option<int64_t> maxBlocks{
      *this, "max-blocks",
      llvm::cl::desc("Most blocks per kernel launch; threads loop over the rest "
                     "(grid-stride)"),
      llvm::cl::init(65536)};
  PassOptions::Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Share RoPE tables and fuse RoPE and ALiBi into attention "
                     "before lowering"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tileAttention{
      *this, "tile-attention",
      llvm::cl::desc("pe.attention as the fused flash-attention loop of "
                     "pe-gpu-tile-attention (off: the reference linalg lowering, "
                     "scores materialized)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("bf16/f16 attention (head dims multiples of 16 up to 256; "
                     "absorbed latent attention's 576/512 where the chip allows "
                     "its tiles) "
                     "on the tensor-core kernel of "
                     "pe-gpu-mma-attention (mma.sync, warpgroup MMA on sm_90a; "
                     "off: the SIMT kernel). The on-CPU schedule runs the SIMT "
                     "kernel and refuses tensor-cores=true"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> warpgroupMma{
      *this, "warpgroup-mma",
      llvm::cl::desc("With tensor-cores on sm_90a: the kernel's products on "
                     "warpgroup MMA (wgmma) from shared memory (off: mma.sync)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> warpSpecialize{
      *this, "warp-specialize",
      llvm::cl::desc("With warpgroup-mma: prefill kernels warp-specialized, a "
                     "producer warpgroup copying K and V into mbarrier stages "
                     "for two consumer warpgroups of 64 rows each (off: one "
                     "warpgroup of 64 rows copies and multiplies)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tma{
      *this, "tma",
      llvm::cl::desc("With warp-specialize: the producer loads K and V by TMA "
                     "with 128-byte swizzle (head dims that are multiples of "
                     "64; tensor maps encoded on the host) instead of cp.async"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tileRope{
      *this, "tile-rope",
      llvm::cl::desc("pe.rope and pe.append_kv as parallel loops over 16-byte "
                     "chunks (pe-gpu-tile-rope, pe-gpu-tile-append-kv; off: the "
                     "reference linalg lowering)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> hostBuffers{
      *this, "host-buffers",
      llvm::cl::desc("Public functions take and return host memory, copied to "
                     "and from the GPU, as their CPU builds do (off: device "
                     "pointers)"),
      llvm::cl::init(false)};
};

/// The PTX ISA version (x10, e.g. 78 = PTX 7.8) that `chip` needs at least,
/// or std::nullopt for a chip the pipeline does not support.
std::optional<int> minimumPtxVersion(llvm::StringRef chip);

/// Checks the chip, features and format of `options`; returns the target
/// features to use (the chip's PTX version when none is given), or an error
/// saying what is wrong.
llvm::Expected<std::string> gpuTargetFeatures(const GpuPipelineOptions &options);

/// Checks the chip, features, format and sizes of `options`; the error
/// names the first invalid one.
llvm::Error checkGpuPipelineOptions(const GpuPipelineOptions &options);

/// pe fusions -> linalg -> buffers in GPU memory -> every parallel loop a
/// kernel (`pe-gpu-map-parallel-loops`) -> one outlined `gpu.module`
/// `@pe_kernels`; host functions stay in the func/gpu dialects.
void buildGpuKernelPipeline(OpPassManager &pm, const GpuPipelineOptions &options);

/// After buildGpuKernelPipeline: the kernels -> NVVM -> `gpu.binary`, host
/// code -> the LLVM dialect (launches as calls of the mgpu* runtime).
void buildGpuBinaryPipeline(OpPassManager &pm, const GpuPipelineOptions &options);

/// The GPU schedule run on the CPU, to check its numerics without a GPU:
/// buildGpuKernelPipeline up to the launches, the kernels' math as on the
/// GPU (pe-gpu-lower-math), every launch as loops over its blocks and
/// threads (pe-gpu-launch-to-loops), then the CPU pipeline's lowering to
/// the LLVM dialect (same C interface as the CPU build).
void buildGpuOnCpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options);

/// Both halves: pe IR -> `gpu.binary` + host code in the LLVM dialect.
/// Invalid options make the first pass fail with a diagnostic.
void buildGpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options);

/// Registers `pe-cpu-pipeline` and `pe-gpu-pipeline`.
void registerPipelines();

} // namespace pe
} // namespace mlir

#endif // PE_PIPELINES_PIPELINES_H
