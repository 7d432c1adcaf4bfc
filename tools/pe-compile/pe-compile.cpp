//===- pe-compile.cpp - ahead-of-time compiler for pe IR ------------------===//
//
// In the spirit of Toy's `-emit=`: reads pe IR and writes it lowered to
//   --emit=mlir    the LLVM dialect (after pe-cpu-pipeline)
//   --emit=llvm    LLVM IR, optimized for the target
//   --emit=asm     assembly
//   --emit=obj     an object file
//   --emit=shared  a shared library linked with the pe runtime
//   --emit=jit     nothing: JIT-compiles the module and runs its `main`
// and, with --header=FILE, a C header declaring the exported entry of every
// public function, with --interface=FILE the same as JSON (the ABI is in
// LibraryInterface.cpp; entries are prefixed with --prefix). With --target=gpu (after
// pe-gpu-pipeline) it writes the kernels of every function as
//   --emit=ptx     PTX text (no CUDA needed)
//   --emit=cubin   a cubin for --chip (needs ptxas)
//   --emit=fatbin  a fatbin (needs ptxas and fatbinary)
//   --emit=mlir    the module after pe-gpu-pipeline
// or the host code that launches them (--emit=llvm, asm, obj, shared; the
// kernels embedded as a fatbin when a CUDA toolkit is found, else as PTX),
// with the same C interface as the CPU build, linked with
// libpe_cuda_runtime; and, with --manifest=FILE, the kernels' JSON manifest
// (GpuManifest.cpp).
//
//===----------------------------------------------------------------------===//
#include "GpuManifest.h"
#include "LibraryInterface.h"

#include "pe/Frontend/ModelConfig.h"
#include "pe/Conversion/Passes.h"
#include "pe/InitPE.h"
#include "pe/Target/CpuTarget.h"
#include "pe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { Pe, Config, Mlir, Llvm, Asm, Obj, Shared, Jit, Ptx, Cubin, Fatbin };
enum class Target { Cpu, Gpu, GpuOnCpu };
} // namespace

static cl::OptionCategory category("pe-compile options");
static cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input file>"),
                                          cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("file"),
                                           cl::init("-"), cl::cat(category));
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Shared),
    cl::values(clEnumValN(Emit::Pe, "pe", "the input IR before any pass (with "
                          "--config: the layers' pe IR)"),
               clEnumValN(Emit::Config, "config",
                          "the config as pe reads it, as JSON (--config)"),
               clEnumValN(Emit::Mlir, "mlir", "the LLVM dialect"),
               clEnumValN(Emit::Llvm, "llvm", "LLVM IR"),
               clEnumValN(Emit::Asm, "asm", "assembly"),
               clEnumValN(Emit::Obj, "obj", "an object file"),
               clEnumValN(Emit::Shared, "shared", "a shared library"),
               clEnumValN(Emit::Jit, "jit", "run `main` (no arguments, no results)"),
               clEnumValN(Emit::Ptx, "ptx", "PTX of the GPU kernels (--target=gpu)"),
               clEnumValN(Emit::Cubin, "cubin", "a cubin of the GPU kernels (--target=gpu)"),
               clEnumValN(Emit::Fatbin, "fatbin", "a fatbin of the GPU kernels (--target=gpu)")),
    cl::cat(category));
static cl::opt<Target> target(
    "target", cl::desc("What the code runs on"), cl::init(Target::Cpu),
    cl::values(clEnumValN(Target::Cpu, "cpu", "the host CPU (pe-cpu-pipeline)"),
               clEnumValN(Target::Gpu, "gpu", "an NVIDIA GPU (pe-gpu-pipeline)"),
               clEnumValN(Target::GpuOnCpu, "gpu-on-cpu",
                          "the GPU kernels' schedule run in sequence on the CPU, "
                          "to check it without a GPU (pe-gpu-on-cpu-pipeline)")),
    cl::cat(category));
static cl::opt<std::string> chip("chip",
                                 cl::desc("GPU the kernels are for (--target=gpu): "
                                          "sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, "
                                          "sm_100, sm_100a, sm_120, sm_120a"),
                                 cl::init("sm_90a"), cl::cat(category));
static cl::opt<std::string> ptxFeatures(
    "ptx-features", cl::desc("PTX version as a target feature, e.g. +ptx85 "
                             "(default: the one --chip needs)"),
    cl::cat(category));
static cl::opt<std::string> cudaToolkit(
    "cuda-toolkit", cl::desc("CUDA toolkit for ptxas, fatbinary and libdevice "
                             "(default: CUDA_ROOT, CUDA_HOME, CUDA_PATH, then PATH)"),
    cl::cat(category));
static cl::opt<int64_t> gpuBlockSize("gpu-block-size",
                                     cl::desc("Threads per block of the GPU kernels"),
                                     cl::init(256), cl::cat(category));
enum class GpuBinary { Auto, Ptx, Cubin, Fatbin };
static cl::opt<GpuBinary> gpuBinary(
    "gpu-binary", cl::desc("How a GPU library (--emit=shared, obj, asm, llvm) embeds its kernels"),
    cl::values(clEnumValN(GpuBinary::Auto, "auto",
                          "fatbin when a CUDA toolkit is found, else ptx (default)"),
               clEnumValN(GpuBinary::Ptx, "ptx", "PTX, compiled by the driver when loaded"),
               clEnumValN(GpuBinary::Cubin, "cubin", "SASS for --chip only (needs ptxas)"),
               clEnumValN(GpuBinary::Fatbin, "fatbin",
                          "SASS for --chip and PTX for newer chips (needs ptxas, fatbinary)")),
    cl::init(GpuBinary::Auto), cl::cat(category));
enum class GpuMemory { Host, Device };
static cl::opt<GpuMemory> gpuMemory(
    "gpu-memory", cl::desc("Where the buffers of a GPU library's functions live"),
    cl::values(clEnumValN(GpuMemory::Host, "host",
                          "host memory, copied to and from the GPU by each call "
                          "(the CPU build's interface; default)"),
               clEnumValN(GpuMemory::Device, "device",
                          "GPU memory: arguments and results are device pointers")),
    cl::init(GpuMemory::Host), cl::cat(category));
static cl::opt<int64_t> gpuMultiprocessors(
    "gpu-multiprocessors",
    cl::desc("Multiprocessors of the GPU the decode splits are sized for (0: the "
             "--chip's reference part, e.g. 132 for sm_90a, 108 for sm_80)"),
    cl::init(0), cl::cat(category));
static cl::opt<int64_t> gpuMaxBlocks(
    "gpu-max-blocks",
    cl::desc("Most blocks per GPU kernel launch; threads loop over the rest"),
    cl::init(65536), cl::cat(category));
static cl::opt<std::string> manifestFilename(
    "manifest", cl::desc("Also write the JSON manifest of the GPU kernels (--target=gpu)"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> headerFilename(
    "header", cl::desc("Also write the C header of the public functions"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> interfaceFilename(
    "interface",
    cl::desc("Also write the exported functions as JSON (names, operand shapes "
             "and dtypes)"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string> prefixOption(
    "prefix",
    cl::desc("Prefix of every exported name (default: the output file's name "
             "without `lib` and extension, then `_`; `pe_` when writing to "
             "standard output)"),
    cl::value_desc("name"), cl::cat(category));
static cl::opt<bool> staticRuntime(
    "static-runtime",
    cl::desc("--emit=shared: link the pe runtime into the library (libpe_runtime.a, "
             "hidden) instead of depending on libpe_runtime.so"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> destinationEntries(
    "destination-entries",
    cl::desc("Also export PREFIXf_into, writing the results of each public "
             "function into caller-provided buffers (CPU targets)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> mtriple(
    "mtriple",
    cl::desc("Target triple of the CPU code, e.g. aarch64-linux-gnu (default: "
             "the host's; another architecture links with its cross toolchain)"),
    cl::cat(category));
static cl::opt<std::string> mcpu("mcpu",
                                 cl::desc("Target CPU, e.g. znver2, x86-64-v3, "
                                          "neoverse-v2 (default: the host)"),
                                 cl::init("native"), cl::cat(category));
static cl::opt<std::string> mattr("mattr",
                                  cl::desc("Target features added to the CPU's, "
                                           "e.g. +avx512f, -avx512bf16, +sve,+bf16"),
                                  cl::cat(category));
static cl::opt<int64_t> sveVectorBits(
    "sve-vector-bits",
    cl::desc("AArch64 SVE: build for this vector length (vector-length specific, "
             "as clang's -msve-vector-bits: 256, 512, ...; the code then needs "
             "exactly that length); default: any length, NEON-width kernels"),
    cl::init(0), cl::cat(category));
static cl::opt<bool> printTarget(
    "print-target",
    cl::desc("Print the target CPU as pe schedules for it (--mtriple, --mcpu, "
             "--mattr; JSON: vector registers, instructions, caches, the "
             "attention schedule) and exit"),
    cl::init(false), cl::cat(category));
static cl::opt<int64_t> vectorWidth(
    "vector-width",
    cl::desc("Elements per vector of linalg ops (0: the f32 lanes of the "
             "target's vector registers)"),
    cl::init(0), cl::cat(category));
static cl::opt<int64_t> threads("num-threads",
                                cl::desc("Threads (OpenMP, libomp) per op; 1: none"),
                                cl::init(1), cl::cat(category));
static cl::opt<bool> fuse("fuse",
                          cl::desc("Fuse RoPE and ALiBi into attention and "
                                   "share RoPE tables (off: unfused lowering)"),
                          cl::init(true), cl::cat(category));
static cl::opt<bool> raise(
    "raise",
    cl::desc("First raise RoPE and attention written in linalg (as importers "
             "produce them) into pe ops (pe-raise-positional-encodings)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass, as pe-opt does (off: the input "
             "and each pipeline's result are verified, and a CPU compilation "
             "takes about a third less time; the GPU pipelines always verify)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> tileAttention(
    "tile-attention",
    cl::desc("Flash-attention kernels for pe.attention (off: the reference "
             "linalg lowering)"),
    cl::init(true), cl::cat(category));
/// Whether a kernel that needs an instruction set is used.
enum class Choice { Auto, On, Off };
static cl::opt<Choice> amxMode(
    "amx", cl::desc("bf16 attention on AMX tiles"),
    cl::values(clEnumValN(Choice::Auto, "auto",
                          "when the target CPU has amx-bf16 and amx-tile"),
               clEnumValN(Choice::On, "on", "always (the target must have AMX)"),
               clEnumValN(Choice::Off, "off", "never (default: the AMX kernel is "
                                           "new and opt-in)")),
    cl::init(Choice::Off), cl::cat(category));
static cl::opt<Choice> bf16DotMode(
    "bf16-dot",
    cl::desc("bf16 attention on bf16 dot products: vdpbf16ps (AVX512-BF16) or "
             "BFDOT (AArch64 BF16, NEON)"),
    cl::values(clEnumValN(Choice::Auto, "auto",
                          "when the target CPU has them (default)"),
               clEnumValN(Choice::On, "on", "always (compiles for avx512bf16 or +bf16)"),
               clEnumValN(Choice::Off, "off", "never: bf16 computed with f32 FMAs")),
    cl::init(Choice::Auto), cl::cat(category));
static cl::opt<bool> tensorCores(
    "tensor-cores",
    cl::desc("--target=gpu: bf16/f16 attention on the tensor-core kernel "
             "(mma.sync, warpgroup MMA on sm_90a; head dims multiples of 16 "
             "up to 128; default), or the SIMT kernel with "
             "--tensor-cores=false (--target=gpu-on-cpu runs the SIMT kernel)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> warpgroupMma(
    "warpgroup-mma",
    cl::desc("--tensor-cores on sm_90a: products on warpgroup MMA (wgmma; "
             "default), or mma.sync with --warpgroup-mma=false"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> tileRope(
    "tile-rope",
    cl::desc("Streaming kernels for pe.rope (off: the reference linalg lowering)"),
    cl::init(true), cl::cat(category));
static cl::opt<int64_t> attentionRows(
    "attention-rows",
    cl::desc("Query rows per attention task, rounded up to whole vectors (0: the "
             "target's schedule)"),
    cl::init(0), cl::cat(category));
static cl::opt<int64_t> attentionBlockKeys(
    "attention-block-keys",
    cl::desc("Keys per streamed K/V tile, rounded up to whole micro-tiles (0: the "
             "target's schedule)"),
    cl::init(0), cl::cat(category));
static cl::opt<bool> vectorize("vectorize",
                               cl::desc("Tile and vectorize (off: scalar loops)"),
                               cl::init(true), cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level 0-3"),
                                  cl::init(3), cl::Prefix, cl::cat(category));
static cl::OptionCategory configCategory(
    "pe-compile: a model's config.json instead of an input file");
static cl::opt<std::string> configFilename(
    "config",
    cl::desc("Build the attention of a model's Hugging Face config.json "
             "(docs/configs.md): one function per kind of layer"),
    cl::value_desc("file"), cl::cat(configCategory));
static cl::opt<int64_t> configBatch("batch", cl::desc("Batch size (--config)"),
                                    cl::init(1), cl::cat(configCategory));
static cl::opt<int64_t> configSeqLen(
    "seq-len", cl::desc("Queries per call (--config; default: any)"),
    cl::init(-1), cl::cat(configCategory));
static cl::opt<int64_t> configKvLen(
    "kv-len", cl::desc("Keys per call (--config; default: --seq-len; -1: any)"),
    cl::init(-1), cl::cat(configCategory));
static cl::opt<std::string> configDtype(
    "dtype", cl::desc("Element type of the activations: f32, f16 or bf16 "
                      "(--config)"),
    cl::init("f32"), cl::cat(configCategory));

static cl::opt<std::string> linker(
    "linker", cl::desc("Compiler driver that links --emit=shared (default: "
                       "clang-22, clang or cc from PATH)"),
    cl::cat(category));

/// --emit=ptx, cubin or fatbin: the GPU kernels alone.
static bool emitsGpuKernels() {
  return emit == Emit::Ptx || emit == Emit::Cubin || emit == Emit::Fatbin;
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "pe-compile: error: " << message << "\n";
  return 1;
}

/// The CPU of --mtriple, --mcpu and --mattr, plus `extraFeatures` (the
/// instructions of kernels asked for with --amx=on or --bf16-dot=on, which
/// compile for them whatever the CPU is).
static FailureOr<pe::CpuTarget> describeTarget(StringRef extraFeatures = "") {
  std::string features = mattr;
  if (!extraFeatures.empty())
    features = features.empty() ? extraFeatures.str() : features + "," + extraFeatures.str();
  llvm::Expected<pe::CpuTarget> target =
      pe::describeCpuTarget(mtriple, mcpu, features, sveVectorBits);
  if (!target) {
    fail(llvm::toString(target.takeError()));
    return failure();
  }
  return *target;
}

/// Whether code for `target` runs on this machine: the host's architecture
/// and no feature the host lacks.
static LogicalResult checkRunsOnHost(const pe::CpuTarget &target) {
  if (llvm::Triple(target.triple).getArch() !=
      llvm::Triple(llvm::sys::getProcessTriple()).getArch())
    return failure(fail("--emit=jit runs on this machine, but the target is " +
                        target.triple));
  llvm::Expected<pe::CpuTarget> host = pe::describeCpuTarget("", "native", "");
  if (!host)
    return failure(fail(llvm::toString(host.takeError())));
  auto machine = pe::createTargetMachine(target);
  auto hostMachine = pe::createTargetMachine(*host);
  if (!machine || !hostMachine) {
    llvm::consumeError(machine.takeError());
    llvm::consumeError(hostMachine.takeError());
    return failure(fail("cannot compare the target's features with the host's"));
  }
  const llvm::MCSubtargetInfo &want = *(*machine)->getMCSubtargetInfo();
  const llvm::MCSubtargetInfo &have = *(*hostMachine)->getMCSubtargetInfo();
  SmallVector<StringRef> missing;
  for (const llvm::SubtargetFeatureKV &feature : want.getAllProcessorFeatures())
    if (want.getFeatureBits().test(feature.Value) && !have.getFeatureBits().test(feature.Value))
      missing.push_back(feature.Key);
  if (missing.empty())
    return success();
  return failure(fail("--emit=jit runs on this machine, which lacks features of the "
                      "target: " +
                      llvm::join(missing, ", ")));
}

static LogicalResult writeMachineCode(llvm::Module &module,
                                      llvm::TargetMachine &machine,
                                      llvm::CodeGenFileType type,
                                      StringRef path) {
  // Emitted into memory first: an object writer seeks, which a pipe cannot,
  // and a failure leaves no partial file.
  SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, type)) {
    fail("the target cannot emit this file type");
    return failure();
  }
  passes.run(module);
  std::string error;
  auto output = openOutputFile(path, &error);
  if (!output) {
    fail(error);
    return failure();
  }
  output->os() << StringRef(buffer.data(), buffer.size());
  output->keep();
  return success();
}

/// The directory of libpe_runtime.so: `../lib` next to this executable (the
/// build tree's and an install's layout, wherever it was moved), else the
/// install prefix it was configured with.
static std::string runtimeDirectory() {
  std::string self = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&runtimeDirectory));
  SmallString<256> dir(llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(dir, "lib");
  if (!self.empty() && llvm::sys::fs::exists(dir + "/libpe_runtime.so"))
    return std::string(dir);
  return PE_RUNTIME_INSTALL_DIR;
}

/// --emit=jit calls `void main(void)`: the module must define it.
static LogicalResult checkMain(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal()) {
    fail("--emit=jit needs a function @main");
    return failure();
  }
  if (main.getNumArguments() != 0 || main.getNumResults() != 0) {
    std::string type;
    llvm::raw_string_ostream os(type);
    os << main.getFunctionType();
    fail("--emit=jit runs @main without arguments or results, but @main has type " +
         type);
    return failure();
  }
  return success();
}

/// JIT-compiles `module` (in the LLVM dialect, entries exported with
/// `prefix`) and runs its `main` through the checked entry, with the pe
/// runtime and MLIR's runner utilities (printMemrefF32, ...) loaded. An
/// error status ends with its message and exit status 1.
static int runMain(ModuleOp module, StringRef prefix) {
  std::string runtime = runtimeDirectory() + "/libpe_runtime.so";
  std::string cRunnerUtils = std::string(PE_MLIR_LIB_DIR) + "/libmlir_c_runner_utils.so";
  std::string runnerUtils = std::string(PE_MLIR_LIB_DIR) + "/libmlir_runner_utils.so";
  SmallVector<StringRef> libs = {runtime, cRunnerUtils, runnerUtils};
  std::string openmp = std::string(PE_MLIR_LIB_DIR) + "/libomp.so";
  if (threads > 1)
    libs.push_back(openmp);
  ExecutionEngineOptions options;
  auto transformer = makeOptimizingTransformer(optLevel, 0, nullptr);
  options.transformer = transformer;
  options.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return fail("JIT compilation failed: " + llvm::toString(engine.takeError()));
  auto entry = (*engine)->lookup((prefix + "main").str());
  if (!entry)
    return fail("running main failed: " + llvm::toString(entry.takeError()));
  int32_t status = reinterpret_cast<int32_t (*)()>(*entry)();
  if (status == 0)
    return 0;
  auto lastError = (*engine)->lookup((prefix + "last_error").str());
  if (!lastError)
    return fail("main failed with status " + llvm::Twine(status));
  auto message = reinterpret_cast<const char *(*)()>(*lastError)();
  return fail("main failed (status " + llvm::Twine(status) + "): " + message);
}

/// Debian's name of the cross toolchain and runtime folder of `triple`
/// (`aarch64-linux-gnu`).
static std::string multiarchName(const llvm::Triple &triple) {
  return (triple.getArchName() + "-linux-gnu").str();
}

/// Whether `triple` is another architecture than this machine's.
static bool isCross(const llvm::Triple &triple) {
  return triple.getArch() != llvm::Triple(llvm::sys::getProcessTriple()).getArch();
}

/// The compiler driver that links for `triple`: --linker, else clang-22,
/// clang or cc for this machine, and for another architecture Debian's
/// cross gcc (`aarch64-linux-gnu-gcc`) or clang-22 --target=TRIPLE.
static FailureOr<SmallVector<std::string>> linkDriver(const llvm::Triple &triple) {
  auto find = [](StringRef name) -> std::string {
    auto found = llvm::sys::findProgramByName(name);
    return found ? *found : std::string();
  };
  if (!linker.empty()) {
    std::string driver = find(linker);
    if (driver.empty() && llvm::sys::fs::can_execute(linker))
      driver = linker;
    if (!driver.empty())
      return SmallVector<std::string>{driver};
    fail("--linker '" + linker + "' is not an executable");
    return failure();
  }
  if (!isCross(triple)) {
    for (StringRef candidate : {"clang-22", "clang", "cc"})
      if (std::string driver = find(candidate); !driver.empty())
        return SmallVector<std::string>{driver};
    fail("no compiler driver to link with (looked for clang-22, clang, cc; set --linker)");
    return failure();
  }
  std::string gcc = multiarchName(triple) + "-gcc";
  if (std::string driver = find(gcc); !driver.empty())
    return SmallVector<std::string>{driver};
  if (std::string driver = find("clang-22"); !driver.empty())
    return SmallVector<std::string>{driver, "--target=" + triple.str()};
  fail("no compiler driver links for " + triple.str() + " (looked for " + gcc +
       " and clang-22; Debian: apt-get install gcc-" + multiarchName(triple) +
       "; or set --linker)");
  return failure();
}

/// Links `object` into a shared library for `target` next to the pe runtime
/// (and the CUDA launch runtime for GPU host code).
static LogicalResult linkShared(StringRef object, StringRef output,
                                const pe::CpuTarget &cpuTarget) {
  llvm::Triple triple(cpuTarget.triple);
  FailureOr<SmallVector<std::string>> driver = linkDriver(triple);
  if (failed(driver))
    return failure();
  // Runtimes of another architecture live in a folder named for it.
  std::string runtimeDir = runtimeDirectory();
  if (isCross(triple)) {
    runtimeDir += "/" + multiarchName(triple);
    if (!llvm::sys::fs::exists(runtimeDir + "/libpe_runtime.so"))
      return failure(fail("no pe runtime for " + triple.str() + " in " + runtimeDir +
                          " (pe-mlir builds it where the cross compiler " +
                          multiarchName(triple) + "-gcc was found when it was configured)"));
    if (threads > 1)
      return failure(fail("--num-threads > 1 links libomp, which this machine has for "
                          "itself only: cross-compiled libraries are single-threaded"));
  }
  std::string mlirLibDir = PE_MLIR_LIB_DIR;
  // Libraries the code does not call are dropped (--as-needed); the
  // runtimes are found next to the library first ($ORIGIN), so that a
  // library and the runtimes copied into one folder travel together.
  SmallVector<std::string> args = *driver;
  args.append({"-shared", "-Wl,--as-needed", "-o", output.str(), object.str(),
               "-Wl,-rpath,$ORIGIN", "-lm"});
  if (staticRuntime)
    args.push_back(runtimeDir + "/libpe_runtime.a");
  else
    args.append({"-L" + runtimeDir, "-lpe_runtime", "-Wl,-rpath," + runtimeDir});
  if (threads > 1) // __kmpc_* of the OpenMP lowering
    args.append({"-L" + mlirLibDir, "-Wl,-rpath," + mlirLibDir, "-lomp"});
  if (target == Target::Gpu) // mgpu* of the gpu-to-llvm lowering
    args.append({"-L" + runtimeDir, "-lpe_cuda_runtime", "-Wl,-rpath," + runtimeDir});
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string error;
  int status = llvm::sys::ExecuteAndWait(args.front(), argRefs, std::nullopt, {}, 0, 0,
                                         &error);
  if (status != 0) {
    fail("linking with '" + args.front() + "' failed" +
         (error.empty() ? "" : ": " + error));
    return failure();
  }
  return success();
}

/// True for what --target=gpu writes from the host code (the kernels
/// embedded) rather than the kernels alone.
static bool emitsHostCode() {
  return emit == Emit::Llvm || emit == Emit::Asm || emit == Emit::Obj ||
         emit == Emit::Shared;
}

/// The CUDA toolkit to assemble with: --cuda-toolkit, else CUDA_ROOT,
/// CUDA_HOME, CUDA_PATH, the folder above `ptxas` on PATH, /usr/local/cuda;
/// std::nullopt if none has bin/ptxas and bin/fatbinary.
static std::optional<std::string> findCudaToolkit() {
  auto complete = [](StringRef dir) {
    return llvm::sys::fs::can_execute(dir + "/bin/ptxas") &&
           llvm::sys::fs::can_execute(dir + "/bin/fatbinary");
  };
  if (!cudaToolkit.empty())
    return complete(cudaToolkit) ? std::optional<std::string>(cudaToolkit) : std::nullopt;
  SmallVector<std::string> candidates;
  for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable); value && *value)
      candidates.push_back(value);
  if (auto ptxas = llvm::sys::findProgramByName("ptxas"))
    candidates.push_back(llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas)).str());
  candidates.push_back("/usr/local/cuda");
  for (const std::string &dir : candidates)
    if (complete(dir))
      return dir;
  return std::nullopt;
}

/// The command line's instrumentation of `pm`. Between passes the IR is
/// verified only with --verify-each (`runPasses` verifies the result), or
/// `always`: the GPU pipelines, where NVVM's verifier refuses an instruction
/// the chip lacks before LLVM's NVPTX backend would abort on it.
static LogicalResult configure(PassManager &pm, bool always = false) {
  pm.enableVerifier(verifyEach || always);
  return applyPassManagerCLOptions(pm);
}

/// Runs `pm` on `module` and verifies the result (a pass that produced
/// invalid IR is reported here rather than crashing translation).
static LogicalResult runPasses(PassManager &pm, ModuleOp module) {
  if (failed(pm.run(module)))
    return failure();
  return verifyEach ? success() : verify(module);
}

/// --target=gpu: pe-gpu-pipeline in two halves (the manifest is read between
/// them, while the host code is still in the gpu dialect). Leaves the host
/// code in the LLVM dialect with the kernels in a gpu.binary.
static LogicalResult lowerForGpu(ModuleOp module) {
  MLIRContext *context = module.getContext();
  pe::GpuPipelineOptions options;
  options.chip = chip;
  options.features = ptxFeatures;
  options.toolkit = cudaToolkit;
  options.blockSize = gpuBlockSize;
  options.maxBlocks = gpuMaxBlocks;
  options.multiprocessors = gpuMultiprocessors;
  options.fuse = fuse;
  options.tileAttention = tileAttention;
  options.tileRope = tileRope;
  options.tensorCores = tensorCores;
  options.warpgroupMma = warpgroupMma;
  options.format = emit == Emit::Cubin ? "bin" : emit == Emit::Fatbin ? "fatbin" : "isa";
  if (emitsHostCode()) {
    std::optional<std::string> toolkit = findCudaToolkit();
    if (toolkit)
      options.toolkit = *toolkit;
    switch (gpuBinary) {
    case GpuBinary::Auto: // SASS + PTX when it can, PTX alone otherwise
      options.format = toolkit ? "fatbin" : "isa";
      break;
    case GpuBinary::Ptx:
      options.format = "isa";
      break;
    case GpuBinary::Cubin:
      options.format = "bin";
      break;
    case GpuBinary::Fatbin:
      options.format = "fatbin";
      break;
    }
    options.hostBuffers = gpuMemory == GpuMemory::Host;
  }
  llvm::Expected<std::string> features = pe::gpuTargetFeatures(options);
  if (!features)
    return failure(fail(llvm::toString(features.takeError())));

  PassManager kernels(context);
  if (failed(configure(kernels, /*always=*/true)))
    return failure();
  pe::buildGpuKernelPipeline(kernels, options);
  if (failed(runPasses(kernels, module)))
    return failure();
  std::string error;
  if (!manifestFilename.empty()) {
    auto manifest = openOutputFile(manifestFilename, &error);
    if (!manifest)
      return failure(fail(error));
    pe::GpuManifestTarget described{chip, *features, options.format,
                                    llvm::sys::path::filename(outputFilename).str()};
    if (failed(pe::writeGpuManifest(module, described, manifest->os())))
      return failure();
    manifest->keep();
  }

  PassManager binary(context);
  if (failed(configure(binary, /*always=*/true)))
    return failure();
  pe::buildGpuBinaryPipeline(binary, options);
  return runPasses(binary, module);
}

/// --emit=ptx, cubin, fatbin: the kernels' binary alone.
static int writeGpuKernels(ModuleOp module) {
  auto kernelsBinary = module.lookupSymbol<gpu::BinaryOp>("pe_kernels");
  if (!kernelsBinary)
    return fail("the module has no GPU kernels (every op folded away?)");
  std::string error;
  auto output = openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  auto object = cast<gpu::ObjectAttr>(kernelsBinary.getObjects()[0]);
  output->os() << object.getObject().getValue();
  output->keep();
  return 0;
}

/// The module, in the LLVM dialect, as LLVM IR, assembly, an object or a
/// shared library for `cpuTarget`.
static int emitHostCode(ModuleOp module, const pe::CpuTarget &cpuTarget) {
  std::string error;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      pe::createTargetMachine(cpuTarget, optLevel);
  if (!machine)
    return fail(llvm::toString(machine.takeError()));
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  if (llvm::Error err =
          makeOptimizingTransformer(optLevel, 0, machine->get())(llvmModule.get()))
    return fail("LLVM optimization failed: " + llvm::toString(std::move(err)));

  switch (emit) {
  case Emit::Llvm: {
    auto output = openOutputFile(outputFilename, &error);
    if (!output)
      return fail(error);
    llvmModule->print(output->os(), nullptr);
    output->keep();
    return 0;
  }
  case Emit::Asm:
    return failed(writeMachineCode(*llvmModule, **machine,
                                   llvm::CodeGenFileType::AssemblyFile,
                                   outputFilename));
  case Emit::Obj:
    return failed(writeMachineCode(*llvmModule, **machine,
                                   llvm::CodeGenFileType::ObjectFile,
                                   outputFilename));
  case Emit::Shared: {
    SmallString<128> object;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("pe-compile", "o", object))
      return fail("cannot create a temporary file: " + ec.message());
    llvm::FileRemover removeObject(object);
    if (failed(writeMachineCode(*llvmModule, **machine,
                                llvm::CodeGenFileType::ObjectFile, object)) ||
        failed(linkShared(object, outputFilename, cpuTarget)))
      return 1;
    return 0;
  }
  default: // --emit=mlir, jit and the kernel binaries are written earlier
    break;
  }
  return 0;
}

/// `text` as a C identifier: other characters become '_', and `PE_`/`pe_`
/// (`guard`) goes in front of a leading digit or nothing.
static std::string cIdentifier(StringRef text, StringRef guard) {
  std::string id = text.str();
  for (char &c : id)
    if (!llvm::isAlnum(c))
      c = '_';
  if (id.empty() || llvm::isDigit(id.front()))
    id = (guard + id).str();
  return id;
}

/// The prefix of exported names: --prefix, else derived from the output
/// file (`libllama.so` -> `llama_`), else `pe_`.
static std::string exportPrefix() {
  if (prefixOption.getNumOccurrences())
    return prefixOption;
  StringRef stem = llvm::sys::path::stem(outputFilename);
  if (outputFilename == "-" || emit == Emit::Jit || stem.empty())
    return "pe_";
  stem.consume_front("lib");
  return cIdentifier(stem, "pe_") + "_";
}

/// The module as MLIR text, to the output.
static int writeMlir(ModuleOp module) {
  std::string error;
  auto output = openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  module->print(output->os());
  output->keep();
  return 0;
}

/// Exports the checked entries (pe-export-c-interface) and writes the
/// header and interface files asked for.
static LogicalResult exportEntries(ModuleOp module) {
  std::string prefix = exportPrefix();
  PassManager pm(module.getContext());
  pm.addPass(pe::createPEExportCInterface(pe::PEExportCInterfaceOptions{prefix}));
  if (failed(pm.run(module)))
    return failure();
  std::string error;
  if (!headerFilename.empty()) {
    auto header = openOutputFile(headerFilename, &error);
    if (!header)
      return failure(fail(error));
    std::string guard =
        cIdentifier(llvm::sys::path::stem(headerFilename).upper() + "_H", "PE_");
    bool deviceBuffers = target == Target::Gpu && gpuMemory == GpuMemory::Device;
    if (failed(pe::emitCHeader(module, prefix, guard, header->os(), deviceBuffers)))
      return failure();
    header->keep();
  }
  if (!interfaceFilename.empty()) {
    auto json = openOutputFile(interfaceFilename, &error);
    if (!json)
      return failure(fail(error));
    if (failed(pe::emitInterfaceJson(module, prefix, json->os())))
      return failure();
    json->keep();
  }
  return success();
}

/// The module of `--config`: the model's attention per kind of layer; with
/// --emit=config the config as read, written as JSON (then a null module and
/// `written` set).
static OwningOpRef<ModuleOp> buildFromConfig(MLIRContext &context, bool &written) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(configFilename);
  if (!buffer) {
    fail("cannot read " + configFilename + ": " + buffer.getError().message());
    return nullptr;
  }
  llvm::Expected<llvm::json::Value> root = pe::parseConfigJson((*buffer)->getBuffer());
  if (!root) {
    fail(configFilename + " is not JSON: " + llvm::toString(root.takeError()));
    return nullptr;
  }
  // "pe-compile: error: FILE: config field 'a.b': ..." (a JSON file has no
  // line to show: the reader names the field).
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
      fail(configFilename + ": " + diagnostic.str());
    return success();
  });
  Location location = FileLineColLoc::get(&context, configFilename, 1, 1);
  FailureOr<pe::ModelConfig> config = pe::readModelConfig(
      *root, &context, [&] { return emitError(location); });
  if (failed(config))
    return nullptr;
  if (emit == Emit::Config) {
    std::string error;
    auto output = openOutputFile(outputFilename, &error);
    if (!output) {
      fail(error);
      return nullptr;
    }
    output->os() << llvm::formatv("{0:2}", pe::describeModelConfig(*config)) << "\n";
    output->keep();
    written = true;
    return nullptr;
  }
  pe::ModelShapes shapes;
  shapes.batch = configBatch;
  shapes.queries = configSeqLen < 0 ? ShapedType::kDynamic : int64_t(configSeqLen);
  int64_t keys = configKvLen.getNumOccurrences() ? int64_t(configKvLen)
                                                 : int64_t(configSeqLen);
  shapes.keys = keys < 0 ? ShapedType::kDynamic : keys;
  Builder builder(&context);
  shapes.element = llvm::StringSwitch<Type>(configDtype)
                       .Case("f32", builder.getF32Type())
                       .Case("f16", builder.getF16Type())
                       .Case("bf16", builder.getBF16Type())
                       .Default(Type());
  if (!shapes.element) {
    fail("--dtype must be f32, f16 or bf16, but got '" + configDtype + "'");
    return nullptr;
  }
  OwningOpRef<ModuleOp> module = pe::buildModelModule(*config, shapes, location);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

/// The CPU the module is scheduled and compiled for (llvm.target), with
/// the instructions of the bf16 kernels chosen on it (`amx`, `bf16Dot`).
static FailureOr<pe::CpuTarget> chooseCpuTarget(bool &amx, bool &bf16Dot) {
  FailureOr<pe::CpuTarget> cpuTarget = describeTarget();
  if (failed(cpuTarget))
    return failure();
  const bool x86 = cpuTarget->isa == pe::CpuIsa::X86;
  // bf16 dot products: vdpbf16ps (x86), BFDOT on NEON's 4-lane vectors.
  const bool dotIsa =
      x86 || (cpuTarget->isa == pe::CpuIsa::AArch64 && cpuTarget->sveVectorBits == 0);
  if (amxMode == Choice::On && !x86)
    return failure(fail("--amx=on is an x86 kernel, but the target is " + cpuTarget->triple));
  if (bf16DotMode == Choice::On && !dotIsa)
    return failure(fail("--bf16-dot=on computes with vdpbf16ps (x86) or BFDOT (AArch64 "
                        "NEON), but the target is " + cpuTarget->summary()));
  amx = amxMode == Choice::On || (amxMode == Choice::Auto && cpuTarget->amx);
  bf16Dot = bf16DotMode == Choice::On ||
            (bf16DotMode == Choice::Auto && dotIsa && cpuTarget->bf16Dot);
  if (target == Target::GpuOnCpu)
    amx = bf16Dot = false;
  if ((amx && !cpuTarget->amx) || (bf16Dot && !cpuTarget->bf16Dot))
    return describeTarget(amx   ? "+amx-tile,+amx-bf16"
                          : x86 ? "+avx512bf16"
                                : "+bf16");
  return cpuTarget;
}

/// The CPU pipeline's options from the command line.
static void setCpuPipelineOptions(pe::CpuPipelineOptions &options, bool amx, bool bf16Dot) {
  options.vectorWidth = vectorWidth;
  options.vectorize = vectorize;
  options.fuse = fuse;
  options.tileAttention = tileAttention;
  options.tileRope = tileRope;
  options.amx = amx;
  options.bf16Dot = bf16Dot;
  options.attentionRows = attentionRows;
  options.attentionBlockKeys = attentionBlockKeys;
  options.threads = threads;
  options.destinationEntries = destinationEntries;
}

/// --target=gpu-on-cpu: the GPU kernels' loop nests, run in sequence on the
/// CPU.
static void setGpuOnCpuOptions(pe::GpuPipelineOptions &options) {
  options.blockSize = gpuBlockSize;
  options.maxBlocks = gpuMaxBlocks;
  options.multiprocessors = gpuMultiprocessors;
  options.fuse = fuse;
  options.tileAttention = tileAttention;
  options.tileRope = tileRope;
  // The schedule runs the SIMT kernel; only an explicit request for
  // tensor cores reaches it, to be refused.
  if (tensorCores.getNumOccurrences())
    options.tensorCores = tensorCores;
}

/// --target=cpu or gpu-on-cpu: the pipeline, then the output (or the run of
/// `main`).
static int compileForCpu(ModuleOp module) {
  MLIRContext *context = module.getContext();
  bool amx = false, bf16Dot = false;
  FailureOr<pe::CpuTarget> cpuTarget = chooseCpuTarget(amx, bf16Dot);
  if (failed(cpuTarget))
    return 1;
  module->setAttr(pe::kTargetAttrName, pe::getTargetAttr(context, *cpuTarget));
  if (sveVectorBits)
    module->setAttr(pe::kSveVectorBitsAttrName,
                    IntegerAttr::get(IntegerType::get(context, 64), sveVectorBits));

  PassManager pm(context);
  if (failed(configure(pm)))
    return 1;
  if (target == Target::GpuOnCpu) {
    pe::GpuPipelineOptions options;
    setGpuOnCpuOptions(options);
    pe::buildGpuOnCpuPipeline(pm, options);
  } else {
    pe::CpuPipelineOptions options;
    setCpuPipelineOptions(options, amx, bf16Dot);
    pe::buildCpuPipeline(pm, options);
  }
  if (failed(runPasses(pm, module)) || failed(exportEntries(module)))
    return 1;
  if (emit == Emit::Mlir)
    return writeMlir(module);
  if (emit == Emit::Jit)
    return failed(checkRunsOnHost(*cpuTarget)) ? 1 : runMain(module, exportPrefix());
  return emitHostCode(module, *cpuTarget);
}

/// --target=gpu: the kernels alone (--emit=ptx, cubin, fatbin) or the host
/// code that launches them.
static int compileForGpu(ModuleOp module) {
  if (failed(lowerForGpu(module)))
    return 1;
  if (emitsGpuKernels())
    return writeGpuKernels(module);
  if (failed(exportEntries(module)))
    return 1;
  if (emit == Emit::Mlir)
    return writeMlir(module);
  FailureOr<pe::CpuTarget> host = describeTarget();
  return failed(host) ? 1 : emitHostCode(module, *host);
}

/// The input module: --config's layers, or the input file parsed. `written`
/// when --config's output (--emit=config) is all there is to do.
static OwningOpRef<ModuleOp> loadInput(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                       bool &written) {
  if (!configFilename.empty())
    return buildFromConfig(context, written);
  std::string error;
  auto input = openInputFile(inputFilename, &error);
  if (!input) {
    fail(error);
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

/// --raise: pe-raise-positional-encodings before everything else.
static LogicalResult raisePositionalEncodings(ModuleOp module) {
  PassManager raising(module.getContext());
  if (failed(configure(raising)))
    return failure();
  raising.addPass(pe::createPERaisePositionalEncodings());
  return runPasses(raising, module);
}

/// Option values and combinations that cannot work, before any input is
/// read. Sets the default --emit of --target=gpu (ptx).
static LogicalResult checkOptions() {
  if (vectorWidth < 0 || vectorWidth > 64)
    return failure(fail("--vector-width must be in [0, 64] (0: the target's), but got " +
                        llvm::Twine(vectorWidth)));
  if (attentionRows < 0 || attentionBlockKeys < 0)
    return failure(fail("--attention-rows and --attention-block-keys must be >= 0 (0: the "
                        "target's schedule)"));
  if (target == Target::Gpu && !mtriple.empty())
    return failure(fail("--mtriple names the CPU of CPU code: --target=gpu compiles host code "
                        "for this machine"));
  if (threads < 1)
    return failure(fail("--num-threads must be >= 1, but got " + llvm::Twine(threads)));
  if (optLevel > 3)
    return failure(fail("-O must be 0, 1, 2 or 3, but got " + llvm::Twine(optLevel)));
  if (target != Target::Cpu && (gpuBlockSize < 1 || gpuBlockSize > 1024))
    return failure(fail("--gpu-block-size must be in [1, 1024], but got " + llvm::Twine(gpuBlockSize)));
  if (gpuMultiprocessors < 0 || gpuMultiprocessors > (1 << 16))
    return failure(fail("--gpu-multiprocessors must be in [0, 65536] (0: the chip's), but got " +
                        llvm::Twine(gpuMultiprocessors)));
  if (target != Target::Cpu &&
      (gpuMaxBlocks < 1 || gpuMaxBlocks > std::numeric_limits<int32_t>::max()))
    return failure(fail("--gpu-max-blocks must be in [1, 2^31 - 1], but got " +
                        llvm::Twine(gpuMaxBlocks)));
  if (configFilename.empty() &&
      (configBatch.getNumOccurrences() || configSeqLen.getNumOccurrences() ||
       configKvLen.getNumOccurrences() || configDtype.getNumOccurrences() ||
       emit == Emit::Config))
    return failure(fail("--batch, --seq-len, --kv-len, --dtype and --emit=config need --config"));
  if (!configFilename.empty() && inputFilename.getNumOccurrences())
    return failure(fail("--config builds the input: give it or an input file, not both"));
  if (configBatch < 1 || configSeqLen < -1 || configKvLen < -1)
    return failure(fail("--batch must be >= 1 and --seq-len, --kv-len >= 0 (-1: any)"));
  if (target == Target::Gpu && emit.getNumOccurrences() == 0)
    emit = Emit::Ptx;
  if (target != Target::Gpu && emitsGpuKernels())
    return failure(fail("--emit=ptx, cubin and fatbin need --target=gpu"));
  if (target == Target::Gpu && emit == Emit::Jit)
    return failure(fail("--emit=jit runs on the CPU: it needs --target=cpu"));
  if (target == Target::Gpu && emit == Emit::Shared &&
      !llvm::sys::fs::exists(runtimeDirectory() + "/libpe_cuda_runtime.so"))
    return failure(fail("--target=gpu --emit=shared links libpe_cuda_runtime, which this "
                        "pe-mlir was built without (no CUDA headers were found when it was "
                        "configured); --emit=ptx, cubin, fatbin and obj need no runtime"));
  if (target != Target::Gpu && !manifestFilename.empty())
    return failure(fail("--manifest describes GPU kernels: it needs --target=gpu"));
  if (staticRuntime && (emit != Emit::Shared || target == Target::Gpu))
    return failure(fail("--static-runtime links a CPU library: it needs --emit=shared and "
                        "--target=cpu or gpu-on-cpu"));
  if (emitsGpuKernels() && (!headerFilename.empty() || !interfaceFilename.empty()))
    return failure(fail("--header and --interface describe a library: they need "
                        "--emit=shared, obj, asm, llvm or mlir"));
  if (emit == Emit::Shared && outputFilename == "-")
    return failure(fail("--emit=shared needs an output file (-o)"));
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Every backend LLVM was built with: CPU code for any --mtriple.
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  llvm::InitializeAllAsmPrinters();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  cl::HideUnrelatedOptions({&category, &configCategory});
  cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "pe-mlir version " PE_VERSION "\n"; });
  cl::ParseCommandLineOptions(argc, argv, "pe-mlir ahead-of-time compiler\n");
  if (printTarget) {
    FailureOr<pe::CpuTarget> described = describeTarget();
    if (failed(described))
      return 1;
    llvm::outs() << llvm::formatv("{0:2}", pe::toJson(*described)) << "\n";
    return 0;
  }
  if (failed(checkOptions()))
    return 1;

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  pe::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  bool written = false;
  OwningOpRef<ModuleOp> module = loadInput(context, sourceMgr, written);
  if (written)
    return 0;
  if (!module || (raise && failed(raisePositionalEncodings(*module))))
    return 1;
  if (emit == Emit::Pe)
    return writeMlir(*module);
  if (emit == Emit::Jit && failed(checkMain(*module)))
    return 1;
  return target == Target::Gpu ? compileForGpu(*module) : compileForCpu(*module);
}
