//===- CommandLine.cpp - pe-compile's options -----------------------------===//
#include "pe/Driver/CommandLine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::pe::driver;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("pe-compile options");
cl::OptionCategory configCategory("pe-compile: a model's config.json instead of an input file");

/// The options, each writing into the CompileOptions it derives from.
struct CompileCLOptions : CompileOptions {
  CompileCLOptions();

  // Input and outputs.
  cl::opt<std::string, true> inputOpt{cl::Positional, cl::desc("<input file>"),
                                      cl::location(input), cl::cat(category)};
  cl::opt<std::string, true> outputOpt{"o", cl::desc("Output file"), cl::value_desc("file"),
                                       cl::location(output), cl::cat(category)};
  cl::opt<Emit> emitOpt{
      "emit", cl::desc("What to write (default: shared, ptx with --target=gpu)"),
      cl::values(
          clEnumValN(Emit::Pe, "pe",
                     "the input IR before any pass (with --config: the layers' pe IR)"),
          clEnumValN(Emit::Config, "config", "the config as pe reads it, as JSON (--config)"),
          clEnumValN(Emit::Mlir, "mlir", "the LLVM dialect"),
          clEnumValN(Emit::Llvm, "llvm", "LLVM IR"), clEnumValN(Emit::Asm, "asm", "assembly"),
          clEnumValN(Emit::Obj, "obj", "an object file"),
          clEnumValN(Emit::Shared, "shared", "a shared library"),
          clEnumValN(Emit::Jit, "jit", "run `main` (no arguments, no results)"),
          clEnumValN(Emit::Ptx, "ptx", "PTX of the GPU kernels (--target=gpu)"),
          clEnumValN(Emit::Cubin, "cubin", "a cubin of the GPU kernels (--target=gpu)"),
          clEnumValN(Emit::Fatbin, "fatbin", "a fatbin of the GPU kernels (--target=gpu)")),
      cl::callback([this](const Emit &value) { emit = value; }), cl::cat(category)};
  cl::opt<std::string, true> headerOpt{
      "header", cl::desc("Also write the C header of the public functions"),
      cl::value_desc("file"), cl::location(header), cl::cat(category)};
  cl::opt<std::string, true> interfaceOpt{
      "interface",
      cl::desc("Also write the exported functions as JSON (names, operand shapes and dtypes)"),
      cl::value_desc("file"), cl::location(interface), cl::cat(category)};
  cl::opt<std::string, true> manifestOpt{
      "manifest", cl::desc("Also write the JSON manifest of the GPU kernels (--target=gpu)"),
      cl::value_desc("file"), cl::location(manifest), cl::cat(category)};
  cl::opt<std::string> prefixOpt{
      "prefix",
      cl::desc("Prefix of every exported name (default: the output file's name without "
               "`lib` and extension, then `_`; `pe_` when writing to standard output)"),
      cl::value_desc("name"),
      cl::callback([this](const std::string &value) { prefix = value; }), cl::cat(category)};

  // The machine.
  cl::opt<Target, true> targetOpt{
      "target", cl::desc("What the code runs on"),
      cl::values(clEnumValN(Target::Cpu, "cpu", "the host CPU (pe-cpu-pipeline)"),
                 clEnumValN(Target::Gpu, "gpu", "an NVIDIA GPU (pe-gpu-pipeline)"),
                 clEnumValN(Target::GpuOnCpu, "gpu-on-cpu",
                            "the GPU kernels' schedule run in sequence on the CPU, to "
                            "check it without a GPU (pe-gpu-on-cpu-pipeline)")),
      cl::location(target), cl::cat(category)};
  cl::opt<std::string, true> mtripleOpt{
      "mtriple",
      cl::desc("Target triple of the CPU code, e.g. aarch64-linux-gnu (default: the "
               "host's; another architecture links with its cross toolchain)"),
      cl::location(mtriple), cl::cat(category)};
  cl::opt<std::string, true> mcpuOpt{
      "mcpu", cl::desc("Target CPU, e.g. znver2, x86-64-v3, neoverse-v2 (default: the host)"),
      cl::location(mcpu), cl::cat(category)};
  cl::opt<std::string, true> mattrOpt{
      "mattr",
      cl::desc("Target features added to the CPU's, e.g. +avx512f, -avx512bf16, +sve,+bf16"),
      cl::location(mattr), cl::cat(category)};
  cl::opt<int64_t, true> sveVectorBitsOpt{
      "sve-vector-bits",
      cl::desc("AArch64 SVE: build for this vector length (vector-length specific, as "
               "clang's -msve-vector-bits: 256, 512, ...; the code then needs exactly "
               "that length); default: any length, NEON-width kernels"),
      cl::location(sveVectorBits), cl::cat(category)};
  cl::opt<bool, true> printTargetOpt{
      "print-target",
      cl::desc("Print the target CPU as pe schedules for it (--mtriple, --mcpu, --mattr; "
               "JSON: vector registers, instructions, caches, the attention schedule) "
               "and exit"),
      cl::location(printTarget), cl::cat(category)};
  cl::opt<unsigned, true> optLevelOpt{"O", cl::desc("LLVM optimization level 0-3"),
                                      cl::location(optLevel), cl::Prefix, cl::cat(category)};
  cl::opt<Choice, true> amxOpt{
      "amx", cl::desc("bf16 attention on AMX tiles"),
      cl::values(
          clEnumValN(Choice::Auto, "auto",
                     "when the target CPU has amx-bf16 and amx-tile (default)"),
          clEnumValN(Choice::On, "on", "always (compiles for amx-tile and amx-bf16)"),
          clEnumValN(Choice::Off, "off", "never")),
      cl::location(amx), cl::cat(category)};
  cl::opt<Choice, true> bf16DotOpt{
      "bf16-dot",
      cl::desc("bf16 attention on bf16 dot products: vdpbf16ps (AVX512-BF16) or BFDOT "
               "(AArch64 BF16, NEON)"),
      cl::values(
          clEnumValN(Choice::Auto, "auto",
                     "when the target CPU has them and, on an x86 host, they outrun f32 "
                     "FMAs (measured once per machine; default)"),
          clEnumValN(Choice::On, "on", "always (compiles for avx512bf16 or +bf16)"),
          clEnumValN(Choice::Off, "off", "never: bf16 computed with f32 FMAs")),
      cl::location(bf16Dot), cl::cat(category)};

  // Linking.
  cl::opt<bool, true> staticRuntimeOpt{
      "static-runtime",
      cl::desc("--emit=shared: link the pe runtime into the library (libpe_runtime.a, "
               "hidden) instead of depending on libpe_runtime.so"),
      cl::location(staticRuntime), cl::cat(category)};
  cl::opt<std::string, true> linkerOpt{
      "linker",
      cl::desc("Compiler driver that links --emit=shared (default: clang-22, clang or cc "
               "from PATH)"),
      cl::location(linker), cl::cat(category)};
  cl::opt<std::string, true> objectCacheOpt{
      "object-cache",
      cl::desc("Folder of the objects of earlier compilations (--emit=shared, obj): a "
               "module that the pipelines turn into the same LLVM IR for the same target "
               "skips LLVM's optimization and code generation (default: "
               "$PE_OBJECT_CACHE; empty: no cache; not used with LLVM's own options)"),
      cl::location(objectCache), cl::cat(category)};

  // GPU libraries.
  cl::opt<GpuBinary, true> gpuBinaryOpt{
      "gpu-binary",
      cl::desc("How a GPU library (--emit=shared, obj, asm, llvm) embeds its kernels"),
      cl::values(
          clEnumValN(GpuBinary::Auto, "auto",
                     "fatbin when a CUDA toolkit is found, else ptx (default)"),
          clEnumValN(GpuBinary::Ptx, "ptx", "PTX, compiled by the driver when loaded"),
          clEnumValN(GpuBinary::Cubin, "cubin", "SASS for --chip only (needs ptxas)"),
          clEnumValN(GpuBinary::Fatbin, "fatbin",
                     "SASS for --chip and PTX for newer chips (needs ptxas, fatbinary)")),
      cl::location(gpuBinary), cl::cat(category)};
  cl::opt<GpuMemory, true> gpuMemoryOpt{
      "gpu-memory", cl::desc("Where the buffers of a GPU library's functions live"),
      cl::values(clEnumValN(GpuMemory::Host, "host",
                            "host memory, copied to and from the GPU by each call (the "
                            "CPU build's interface; default)"),
                 clEnumValN(GpuMemory::Device, "device",
                            "GPU memory: arguments and results are device pointers")),
      cl::location(gpuMemory), cl::cat(category)};

  // Passes.
  cl::opt<bool, true> raiseOpt{
      "raise",
      cl::desc("First raise RoPE and attention written in linalg (as importers produce "
               "them) into pe ops (pe-raise-positional-encodings)"),
      cl::location(raise), cl::cat(category)};
  cl::opt<bool, true> verifyEachOpt{
      "verify-each",
      cl::desc("Verify the IR after every pass, as pe-opt does (off: the input and each "
               "pipeline's result are verified, and a CPU compilation takes about a "
               "third less time; the GPU pipelines always verify)"),
      cl::location(verifyEach), cl::cat(category)};

  // Both pipelines.
  cl::opt<bool> fuseOpt{
      "fuse",
      cl::desc("Fuse RoPE and ALiBi into attention and share RoPE tables (default; off: "
               "unfused lowering)"),
      cl::callback([this](const bool &value) { setFuse(value); }), cl::cat(category)};
  cl::opt<bool> tileAttentionOpt{
      "tile-attention",
      cl::desc("Flash-attention kernels for pe.attention (default; off: the reference "
               "linalg lowering)"),
      cl::callback([this](const bool &value) { setTileAttention(value); }),
      cl::cat(category)};
  cl::opt<bool> tileRopeOpt{
      "tile-rope",
      cl::desc("Streaming kernels for pe.rope (default; off: the reference linalg lowering)"),
      cl::callback([this](const bool &value) { setTileRope(value); }), cl::cat(category)};

  // The CPU pipeline.
  cl::opt<int64_t> vectorWidthOpt{
      "vector-width",
      cl::desc("Elements per vector of linalg ops (default 0: the f32 lanes of the "
               "target's vector registers)"),
      cl::callback([this](const int64_t &value) { cpu.vectorWidth = value; }),
      cl::cat(category)};
  cl::opt<int64_t> threadsOpt{
      "num-threads", cl::desc("Threads (OpenMP, libomp) per op (default 1: none)"),
      cl::callback([this](const int64_t &value) { cpu.threads = value; }), cl::cat(category)};
  cl::opt<int64_t> attentionRowsOpt{
      "attention-rows",
      cl::desc("Query rows per attention task, rounded up to whole vectors (default 0: "
               "the target's schedule)"),
      cl::callback([this](const int64_t &value) { cpu.attentionRows = value; }),
      cl::cat(category)};
  cl::opt<int64_t> attentionBlockKeysOpt{
      "attention-block-keys",
      cl::desc("Keys per streamed K/V tile, rounded up to whole micro-tiles (default 0: "
               "the target's schedule)"),
      cl::callback([this](const int64_t &value) { cpu.attentionBlockKeys = value; }),
      cl::cat(category)};
  cl::opt<bool> vectorizeOpt{
      "vectorize", cl::desc("Tile and vectorize (default; off: scalar loops)"),
      cl::callback([this](const bool &value) { cpu.vectorize = value; }), cl::cat(category)};
  cl::opt<bool> destinationEntriesOpt{
      "destination-entries",
      cl::desc("Also export PREFIXf_into, writing the results of each public function "
               "into caller-provided buffers (CPU targets; default)"),
      cl::callback([this](const bool &value) { cpu.destinationEntries = value; }),
      cl::cat(category)};

  // The GPU pipeline.
  cl::opt<std::string> chipOpt{
      "chip",
      cl::desc("GPU the kernels are for (--target=gpu): sm_80, sm_86, sm_87, sm_89, "
               "sm_90, sm_90a (default), sm_100, sm_100a, sm_120, sm_120a"),
      cl::callback([this](const std::string &value) { gpu.chip = value; }),
      cl::cat(category)};
  cl::opt<std::string> ptxFeaturesOpt{
      "ptx-features",
      cl::desc("PTX version as a target feature, e.g. +ptx85 (default: the one --chip "
               "needs)"),
      cl::callback([this](const std::string &value) { gpu.features = value; }),
      cl::cat(category)};
  cl::opt<std::string> cudaToolkitOpt{
      "cuda-toolkit",
      cl::desc("CUDA toolkit for ptxas, fatbinary and libdevice (default: CUDA_ROOT, "
               "CUDA_HOME, CUDA_PATH, then PATH)"),
      cl::callback([this](const std::string &value) { gpu.toolkit = value; }),
      cl::cat(category)};
  cl::opt<int64_t> gpuBlockSizeOpt{
      "gpu-block-size", cl::desc("Threads per block of the GPU kernels (default 256)"),
      cl::callback([this](const int64_t &value) { gpu.blockSize = value; }),
      cl::cat(category)};
  cl::opt<int64_t> gpuMultiprocessorsOpt{
      "gpu-multiprocessors",
      cl::desc("Multiprocessors of the GPU the decode splits are sized for (default 0: "
               "the --chip's reference part, e.g. 132 for sm_90a, 108 for sm_80)"),
      cl::callback([this](const int64_t &value) { gpu.multiprocessors = value; }),
      cl::cat(category)};
  cl::opt<int64_t> gpuMaxBlocksOpt{
      "gpu-max-blocks",
      cl::desc("Most blocks per GPU kernel launch; threads loop over the rest (default "
               "65536)"),
      cl::callback([this](const int64_t &value) { gpu.maxBlocks = value; }),
      cl::cat(category)};
  cl::opt<bool> tensorCoresOpt{
      "tensor-cores",
      cl::desc("--target=gpu: bf16/f16 attention on the tensor-core kernel (mma.sync, "
               "warpgroup MMA on sm_90a; head dims multiples of 16 up to 256, absorbed "
               "latent attention's 576/512 where the chip allows its tiles; default), "
               "or the SIMT kernel with --tensor-cores=false (--target=gpu-on-cpu runs "
               "the SIMT kernel)"),
      cl::callback([this](const bool &value) { gpu.tensorCores = value; }),
      cl::cat(category)};
  cl::opt<bool> warpgroupMmaOpt{
      "warpgroup-mma",
      cl::desc("--tensor-cores on sm_90a: products on warpgroup MMA (wgmma; default), or "
               "mma.sync with --warpgroup-mma=false"),
      cl::callback([this](const bool &value) { gpu.warpgroupMma = value; }),
      cl::cat(category)};
  cl::opt<bool> warpSpecializeOpt{
      "warp-specialize",
      cl::desc("--warpgroup-mma: prefill kernels warp-specialized (a producer warpgroup "
               "copies K and V into mbarrier stages for two consumer warpgroups; "
               "default), or one warpgroup that copies and multiplies with "
               "--warp-specialize=false"),
      cl::callback([this](const bool &value) { gpu.warpSpecialize = value; }),
      cl::cat(category)};
  cl::opt<bool> tmaOpt{
      "tma",
      cl::desc("--warp-specialize: the producer loads K and V by TMA with 128-byte "
               "swizzle (head dims that are multiples of 64; off by default: cp.async)"),
      cl::callback([this](const bool &value) { gpu.tma = value; }),
      cl::cat(category)};

  // A model's config instead of an input file.
  cl::opt<std::string, true> configOpt{
      "config",
      cl::desc("Build the attention of a model's Hugging Face config.json "
               "(docs/configs.md): one function per kind of layer"),
      cl::value_desc("file"), cl::location(config.path), cl::cat(configCategory)};
  cl::opt<int64_t> batchOpt{
      "batch", cl::desc("Batch size (--config; default 1)"),
      cl::callback([this](const int64_t &value) { config.batch = value; }),
      cl::cat(configCategory)};
  cl::opt<int64_t> seqLenOpt{
      "seq-len", cl::desc("Queries per call (--config; default: any)"),
      cl::callback([this](const int64_t &value) { config.queries = value; }),
      cl::cat(configCategory)};
  cl::opt<int64_t> kvLenOpt{
      "kv-len", cl::desc("Keys per call (--config; default: --seq-len; -1: any)"),
      cl::callback([this](const int64_t &value) { config.keys = value; }),
      cl::cat(configCategory)};
  cl::opt<std::string> dtypeOpt{
      "dtype", cl::desc("Element type of the activations: f32 (default), f16 or bf16 "
                        "(--config)"),
      cl::callback([this](const std::string &value) { config.dtype = value; }),
      cl::cat(configCategory)};
  cl::opt<bool> sharedKeyOpt{
      "shared-key",
      cl::desc("Latent attention (--config; DeepSeek-V2/V3, MiniCPM3, ...): k holds each "
               "head's qk_nope_head_dim channels and the functions take the rotated block "
               "all heads share, k_pe [B, 1, Skv, qk_rope_head_dim], as their last "
               "argument (default off: keys with the block in every head)"),
      cl::callback([this](const bool &value) { config.sharedKey = value; }),
      cl::cat(configCategory)};
  cl::opt<bool> absorbedOpt{
      "absorbed",
      cl::desc("Latent attention (--config) in its absorbed form, decode over the "
               "compressed cache: q [B, H, Sq, kv_lora_rank + qk_rope_head_dim] (W_UK "
               "absorbed), the cache [B, 1, Skv, kv_lora_rank + qk_rope_head_dim], the "
               "result [B, H, Sq, kv_lora_rank] (before W_UV)"),
      cl::callback([this](const bool &value) { config.absorbed = value; }),
      cl::cat(configCategory)};
};

CompileCLOptions::CompileCLOptions() {
  // The storage's defaults, set before any option is parsed.
  inputOpt.setInitialValue(input);
  outputOpt.setInitialValue(output);
  mcpuOpt.setInitialValue(mcpu);
  optLevelOpt.setInitialValue(optLevel);
  if (const char *dir = std::getenv("PE_OBJECT_CACHE"))
    objectCacheOpt.setInitialValue(dir);
}

llvm::ManagedStatic<CompileCLOptions> clOptions;
} // namespace

CompileOptions &pe::driver::registerCompileCLOptions() { return *clOptions; }

void pe::driver::hideUnrelatedCLOptions() {
  cl::HideUnrelatedOptions({&category, &configCategory});
}

bool pe::driver::givenLLVMOptions() {
  for (auto &entry : cl::getRegisteredOptions()) {
    const cl::Option *option = entry.second;
    StringRef name = entry.first;
    if (option->getNumOccurrences() == 0 || name.starts_with("mlir-") || name == "help" ||
        name == "version")
      continue;
    if (!llvm::is_contained(option->Categories, &category) &&
        !llvm::is_contained(option->Categories, &configCategory))
      return true;
  }
  return false;
}
