//===- Registration.cpp - the named pipelines of pe-mlir ------------------===//
#include "pe/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void pe::registerPipelines() {
  PassPipelineRegistration<CpuPipelineOptions>(
      "pe-cpu-pipeline",
      "Lower pe IR to the LLVM dialect for the CPU: pe -> linalg -> tiling + "
      "vectorization -> bufferization -> LLVM",
      buildCpuPipeline);
  PassPipelineRegistration<GpuPipelineOptions>(
      "pe-gpu-pipeline",
      "Lower pe IR for NVIDIA GPUs: pe -> linalg -> buffers in GPU memory -> "
      "kernels -> NVVM -> gpu.binary (PTX, cubin or fatbin) + host code in "
      "the LLVM dialect",
      buildGpuPipeline);
  PassPipelineRegistration<GpuPipelineOptions>(
      "pe-gpu-on-cpu-pipeline",
      "Run the GPU schedule of pe IR on the CPU to check it: pe-gpu-pipeline's "
      "kernels as sequential loops over their blocks and threads, lowered to "
      "the LLVM dialect for the host",
      buildGpuOnCpuPipeline);
}
