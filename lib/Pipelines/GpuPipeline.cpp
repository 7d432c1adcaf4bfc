//===- GpuPipeline.cpp - pe-gpu-pipeline ----------------------------------===//
#include "pe/Pipelines/Pipelines.h"

#include "Stages.h"

#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/Transforms/Passes.h"
#include "pe/CInterface/Passes.h"
#include "pe/Codegen/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

std::optional<int> pe::minimumPtxVersion(StringRef chip) {
  return llvm::StringSwitch<std::optional<int>>(chip)
      .Case("sm_80", 70)
      .Case("sm_86", 71)
      .Case("sm_87", 74)
      .Case("sm_89", 78)
      .Case("sm_90", 78)
      .Case("sm_90a", 80)
      .Cases({"sm_100", "sm_100a"}, 86)
      .Cases({"sm_120", "sm_120a"}, 87)
      .Default(std::nullopt);
}

/// The PTX versions the NVPTX back end of LLVM 22 knows (x10).
static bool knownPtxVersion(int version) {
  static constexpr int kVersions[] = {60, 61, 62, 63, 64, 65, 70, 71, 72, 73, 74, 75, 76,
                                      77, 78, 80, 81, 82, 83, 84, 85, 86, 87, 88, 90};
  return llvm::is_contained(kVersions, version);
}

llvm::Expected<std::string> pe::gpuTargetFeatures(const GpuPipelineOptions &options) {
  auto error = [](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  std::optional<int> minimum = minimumPtxVersion(options.chip);
  if (!minimum)
    return error("unsupported GPU chip '" + options.chip +
                 "' (expected sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, "
                 "sm_100a, sm_120 or sm_120a)");
  if (options.format != "isa" && options.format != "bin" && options.format != "fatbin")
    return error("unknown GPU binary format '" + options.format +
                 "' (expected isa, bin or fatbin)");
  if (options.features.empty())
    return "+ptx" + std::to_string(*minimum);
  // A PTX version below the chip's makes the NVPTX back end abort the
  // process: refuse it here with a diagnostic instead.
  SmallVector<StringRef> features;
  StringRef(options.features).split(features, ',', -1, /*KeepEmpty=*/false);
  for (StringRef feature : features) {
    int version = 0;
    StringRef digits = feature;
    if (!digits.consume_front("+ptx") || digits.getAsInteger(10, version) ||
        !knownPtxVersion(version))
      return error("unsupported GPU target feature '" + feature +
                   "' (expected +ptxNN, a PTX version such as +ptx80)");
    if (version < *minimum)
      return error("PTX " + Twine(version / 10) + "." + Twine(version % 10) +
                   " is too old for " + options.chip + ", which needs PTX " +
                   Twine(*minimum / 10) + "." + Twine(*minimum % 10) + " or newer");
  }
  return options.features.getValue();
}

llvm::Error pe::checkGpuPipelineOptions(const GpuPipelineOptions &options) {
  if (llvm::Expected<std::string> features = gpuTargetFeatures(options); !features)
    return features.takeError();
  auto error = [](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  if (options.blockSize < 1 || options.blockSize > 1024)
    return error("block-size must be in [1, 1024], but got " + Twine(options.blockSize));
  if (options.maxBlocks < 1 || options.maxBlocks > std::numeric_limits<int32_t>::max())
    return error("max-blocks must be in [1, 2^31 - 1], but got " + Twine(options.maxBlocks));
  if (options.multiprocessors < 0 || options.multiprocessors > (1 << 16))
    return error("multiprocessors must be in [0, 65536] (0: the chip's), but got " +
                 Twine(options.multiprocessors));
  return llvm::Error::success();
}

/// pe IR -> every parallel loop a gpu.launch on device buffers, not yet
/// outlined (what the GPU and the on-CPU pipelines share).
/// The kernels of `options`, on tensor cores where `tensorCores` says so.
static void addGpuSchedule(OpPassManager &pm, const pe::GpuPipelineOptions &options,
                           bool tensorCores) {
  pe::addFoldsAndFusions(pm, options.fuse);
  if (options.tileAttention)
    pm.addPass(pe::createPEGpuTileAttention(pe::PEGpuTileAttentionOptions{
        tensorCores, options.chip, options.multiprocessors, options.warpgroupMma}));
  // Paged attention without pe-gpu-tile-attention is refused.
  pm.addPass(pe::createPEExpandPagedAttention(
      pe::PEExpandPagedAttentionOptions{/*gpu=*/true}));
  if (options.tileRope) {
    pm.addPass(pe::createPEGpuTileRope());
    pm.addPass(pe::createPEGpuTileAppendKv());
  }
  pm.addPass(pe::createPELowerToLinalg());
  pe::addLinalgFusion(pm);
  // Buffers with the CPU pipeline's guarantees, then in device memory.
  pe::addBufferization(pm);
  // Tensor-core kernels on buffers (their nvgpu ops have no memory effects
  // that deallocation could read).
  // wgmma exists on sm_90a only (not sm_90, nor the later chips).
  if (options.tileAttention && tensorCores)
    pm.addPass(pe::createPEGpuMmaAttention(pe::PEGpuMmaAttentionOptions{
        options.warpgroupMma && options.chip == "sm_90a", options.warpSpecialize,
        options.tma}));
  pm.addNestedPass<func::FuncOp>(pe::createPELowerStridedCopies());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(pe::createPEGpuVectorizeLoops());
  pm.addNestedPass<func::FuncOp>(pe::createPEGpuMapParallelLoops(
      pe::PEGpuMapParallelLoopsOptions{options.blockSize, options.maxBlocks}));
  pm.addNestedPass<func::FuncOp>(pe::createPEGpuDeviceMemory());
  pm.addPass(createCanonicalizerPass());
}

void pe::buildGpuKernelPipeline(OpPassManager &pm, const GpuPipelineOptions &options) {
  if (pe::reportInvalidOptions(pm, "pe-gpu-pipeline", pe::checkGpuPipelineOptions(options)))
    return;
  addGpuSchedule(pm, options, options.tensorCores);
  // Tensor-core, async-copy and TMA ops (nvgpu) to NVVM while the kernels
  // are still inside their launches: a TMA descriptor made on the host then
  // enters its kernel as a pointer. After the constants are sunk into the
  // launches: the conversion casts a value where it is defined, and a cast
  // made on the host would enter its kernel as one more argument.
  pm.addNestedPass<func::FuncOp>(pe::createPEGpuSinkConstants());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addNestedPass<gpu::GPUModuleOp>(pe::createPEGpuTensorCoreOccupancy());
  // Outlining copies the kernels' shared-memory globals into their module;
  // the host's unused copies go.
  pm.addPass(createSymbolDCEPass());
}

void pe::buildGpuOnCpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options) {
  if (pe::reportInvalidOptions(pm, "pe-gpu-pipeline", pe::checkGpuPipelineOptions(options)))
    return;
  // Warp-collective mma.sync, wgmma and shuffles need the warp's 32 lanes at
  // once: the schedule runs the SIMT kernel, and refuses a request for more.
  if (options.tensorCores.hasValue() && options.tensorCores) {
    pe::reportInvalidOptions(
        pm, "pe-gpu-pipeline",
        llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "tensor-cores: the tensor-core kernel does not run on the on-CPU schedule"));
    return;
  }
  addGpuSchedule(pm, options, /*tensorCores=*/false);
  // The kernels' math as the GPU computes it, their threads in sequence.
  pm.addNestedPass<func::FuncOp>(pe::createPEGpuLowerMath());
  pm.addNestedPass<func::FuncOp>(pe::createPEGpuLaunchToLoops());
  pm.addPass(createCanonicalizerPass());
  pe::addCpuLowering(pm, /*threads=*/1, /*amx=*/false);
}

void pe::buildGpuBinaryPipeline(OpPassManager &pm, const GpuPipelineOptions &options) {
  if (pe::reportInvalidOptions(pm, "pe-gpu-pipeline", pe::checkGpuPipelineOptions(options)))
    return;
  std::string features = cantFail(gpuTargetFeatures(options));
  if (options.hostBuffers)
    pm.addNestedPass<func::FuncOp>(pe::createPEGpuHostBuffers());
  // `_mlir_ciface_<name>` for C callers, as on the CPU.
  pm.addNestedPass<func::FuncOp>(pe::createPERequestCWrappers());
  // Math as instructions and polynomials, so that PTX needs no libdevice.
  pm.addNestedPass<gpu::GPUModuleOp>(pe::createPEGpuLowerMath());
  // Host memory operations must be asynchronous for the runtime calls.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  pm.addNestedPass<gpu::GPUModuleOp>(createStripDebugInfoPass());
  // Vector ops the NVVM conversion does not lower (strided slices, shuffles
  // of the interleaved RoPE kernel) through the vector dialect's own lowering.
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertVectorToLLVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createPEBoolVectorsAsBytes());

  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createPEBoolVectorsAsBytes());
}

void pe::buildGpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options) {
  if (pe::reportInvalidOptions(pm, "pe-gpu-pipeline", pe::checkGpuPipelineOptions(options)))
    return;
  buildGpuKernelPipeline(pm, options);
  buildGpuBinaryPipeline(pm, options);
}
