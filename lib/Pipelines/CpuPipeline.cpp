//===- CpuPipeline.cpp - pe-cpu-pipeline ----------------------------------===//
#include "pe/Pipelines/Pipelines.h"

#include "Stages.h"

#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/Transforms/Passes.h"
#include "pe/Transforms/Passes.h"

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

void pe::buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  // The CPU every schedule below is chosen for (llvm.target).
  pm.addPass(createPESetTarget(PESetTargetOptions{
      options.targetTriple, options.targetCpu, options.targetFeatures,
      options.sveVectorBits}));
  addFoldsAndFusions(pm, options.fuse);
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
  if (options.tileRope)
    pm.addPass(createPETileRope(PETileRopeOptions{options.threads}));
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
