//===- CompileGpu.cpp - the driver's compilation for NVIDIA GPUs ----------===//
#include "Steps.h"

#include "GpuManifest.h"

#include "pe/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::pe::driver;

/// The CUDA toolkit to assemble with: `given`, else CUDA_ROOT, CUDA_HOME,
/// CUDA_PATH, the folder above `ptxas` on PATH, /usr/local/cuda;
/// std::nullopt if none has bin/ptxas and bin/fatbinary.
static std::optional<std::string> findCudaToolkit(StringRef given) {
  auto complete = [](StringRef dir) {
    return llvm::sys::fs::can_execute(dir + "/bin/ptxas") &&
           llvm::sys::fs::can_execute(dir + "/bin/fatbinary");
  };
  if (!given.empty())
    return complete(given) ? std::optional<std::string>(given.str()) : std::nullopt;
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

/// The GPU pipeline's options for what is written: the kernels' format,
/// and for a library the toolkit and where its buffers live.
static void setOutputOptions(pe::GpuPipelineOptions &gpu, const CompileOptions &options) {
  const Emit emit = options.emitKind();
  gpu.format = emit == Emit::Cubin ? "bin" : emit == Emit::Fatbin ? "fatbin" : "isa";
  if (!options.emitsHostCode())
    return;
  std::optional<std::string> toolkit = findCudaToolkit(options.gpu.toolkit);
  if (toolkit)
    gpu.toolkit = *toolkit;
  switch (options.gpuBinary) {
  case GpuBinary::Auto: // SASS + PTX when it can, PTX alone otherwise
    gpu.format = toolkit ? "fatbin" : "isa";
    break;
  case GpuBinary::Ptx:
    gpu.format = "isa";
    break;
  case GpuBinary::Cubin:
    gpu.format = "bin";
    break;
  case GpuBinary::Fatbin:
    gpu.format = "fatbin";
    break;
  }
  gpu.hostBuffers = options.gpuMemory == GpuMemory::Host;
}

/// The manifest of the kernels, read while the host code is still in the
/// gpu dialect.
static LogicalResult writeManifest(ModuleOp module, const CompileOptions &options,
                                   const pe::GpuPipelineOptions &gpu, StringRef features) {
  std::string error;
  auto manifest = openOutputFile(options.manifest, &error);
  if (!manifest)
    return fail(module.getContext(), error);
  pe::GpuManifestTarget described{gpu.chip, features.str(), gpu.format,
                                  llvm::sys::path::filename(options.output).str()};
  if (failed(pe::writeGpuManifest(module, described, manifest->os())))
    return failure();
  manifest->keep();
  return success();
}

/// pe-gpu-pipeline in two halves, the manifest written between them. Leaves
/// the host code in the LLVM dialect with the kernels in a gpu.binary.
static LogicalResult lowerForGpu(ModuleOp module, const CompileOptions &options) {
  MLIRContext *context = module.getContext();
  pe::GpuPipelineOptions gpu;
  gpu.copyOptionValuesFrom(options.gpu);
  setOutputOptions(gpu, options);
  llvm::Expected<std::string> features = pe::gpuTargetFeatures(gpu);
  if (!features)
    return fail(context, llvm::toString(features.takeError()));

  PassManager kernels(context);
  if (failed(configure(kernels, options, /*always=*/true)))
    return failure();
  pe::buildGpuKernelPipeline(kernels, gpu);
  if (failed(runPasses(kernels, module, options)))
    return failure();
  if (!options.manifest.empty() && failed(writeManifest(module, options, gpu, *features)))
    return failure();

  PassManager binary(context);
  if (failed(configure(binary, options, /*always=*/true)))
    return failure();
  pe::buildGpuBinaryPipeline(binary, gpu);
  return runPasses(binary, module, options);
}

LogicalResult pe::driver::compileForGpu(ModuleOp module, const CompileOptions &options) {
  if (failed(lowerForGpu(module, options)))
    return failure();
  if (options.emitsGpuKernels())
    return writeGpuKernels(module, options);
  if (failed(exportEntries(module, options)))
    return failure();
  if (options.emitKind() == Emit::Mlir)
    return writeMlir(module, options);
  FailureOr<pe::CpuTarget> host = describeTarget(module.getContext(), options);
  return failed(host) ? failure() : emitHostCode(module, options, *host);
}
