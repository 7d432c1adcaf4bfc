//===- CpuPipeline.cpp - pe-cpu-pipeline ----------------------------------===//
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
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

llvm::Error pe::checkCpuPipelineOptions(const CpuPipelineOptions &options) {
  auto error = [](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  if (options.vectorWidth < 0 || options.vectorWidth > kMaxVectorWidth)
    return error("vector-width must be in [0, " + Twine(kMaxVectorWidth) +
                 "] (0: the target's), but got " + Twine(options.vectorWidth));
  if (options.threads < 1)
    return error("threads must be >= 1, but got " + Twine(options.threads));
  if (options.attentionRows < 0 || options.attentionBlockKeys < 0)
    return error("attention-rows and attention-block-keys must be >= 0 (0: the "
                 "target's schedule)");
  if (options.sveVectorBits < 0)
    return error("sve-vector-bits must be >= 0, but got " + Twine(options.sveVectorBits));
  return llvm::Error::success();
}

void pe::buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  if (reportInvalidOptions(pm, "pe-cpu-pipeline", checkCpuPipelineOptions(options)))
    return;
  // The CPU every schedule below is chosen for (llvm.target).
  pm.addPass(createPESetTarget(PESetTargetOptions{
      options.targetTriple, options.targetCpu, options.targetFeatures,
      options.sveVectorBits}));
  addFoldsAndFusions(pm, options.fuse);
  // Decode steps of a paged batch: one balanced kernel for the whole batch;
  // other batches loop over their sequences.
  if (options.tileAttention)
    pm.addPass(createPETilePagedDecode(
        PETilePagedDecodeOptions{options.threads, options.attentionBlockKeys, options.bf16Dot}));
  pm.addPass(createPEExpandPagedAttention());
  // Attention and RoPE as hand-scheduled loop nests on buffers; every other
  // pe op -> linalg on tensors, fused elementwise chains.
  if (options.tileAttention) {
    PETileAttentionOptions tiles;
    tiles.threads = options.threads;
    tiles.rows = options.attentionRows;
    tiles.blockKeys = options.attentionBlockKeys;
    tiles.amx = options.amx;
    tiles.bf16Dot = options.bf16Dot;
    pm.addPass(createPETileAttention(tiles));
  }
  if (options.tileRope) {
    pm.addPass(createPETileRope(PETileRopeOptions{options.threads}));
    pm.addPass(createPETileAppendKv());
  }
  pm.addPass(createPELowerToLinalg());
  addLinalgFusion(pm);

  // One outer parallel loop per op split over threads, then tiles of one
  // vector along the innermost loop.
  if (options.threads > 1)
    pm.addNestedPass<func::FuncOp>(createPEDistributeOverThreads(
        PEDistributeOverThreadsOptions{options.threads}));
  if (options.vectorize)
    pm.addNestedPass<func::FuncOp>(
        createPETileAndVectorize(PETileAndVectorizeOptions{options.vectorWidth}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  addBufferization(pm, options.destinationEntries);
  addCpuLowering(pm, options.threads, options.amx);
  // The target's CPU and features on every function, for LLVM.
  pm.addPass(createPESetLLVMTarget());
}
