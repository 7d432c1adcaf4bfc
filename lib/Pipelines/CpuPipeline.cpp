//===- CpuPipeline.cpp - pe-cpu-pipeline ----------------------------------===//
#include "pe/Pipelines/Pipelines.h"

#include "Stages.h"

#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/Transforms/Passes.h"
#include "pe/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void pe::buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  addFoldsAndFusions(pm, options.fuse);
  // Attention and RoPE as hand-scheduled loop nests on buffers; every other
  // pe op -> linalg on tensors, fused elementwise chains.
  if (options.tileAttention) {
    PETileAttentionOptions tiles;
    tiles.threads = options.threads;
    tiles.rows = options.attentionRows;
    tiles.blockKeys = options.attentionBlockKeys;
    tiles.amx = options.amx;
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

  addBufferization(pm);
  // C interface wrappers (`_mlir_ciface_NAME`) for public functions and
  // declarations, requested before any conversion turns func.func into
  // llvm.func.
  pm.addNestedPass<func::FuncOp>(createPERequestCWrappers());

  // To the LLVM dialect (order matters: lower-affine after
  // expand-strided-metadata; ub lowering for vectorization's poison).
  pm.addNestedPass<func::FuncOp>(createPELowerStridedCopies());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertVectorToSCFPass());
  if (options.threads > 1) {
    // scf.forall -> scf.parallel -> OpenMP (libomp at run time).
    pm.addPass(createForallToParallelLoopPass());
    ConvertSCFToOpenMPPassOptions openmp;
    openmp.numThreads = options.threads;
    pm.addPass(createConvertSCFToOpenMPPass(openmp));
  }
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Before scf-to-cf: the OpenMP conversion wraps loop bodies in
  // memref.alloca_scope, which finalize-memref-to-llvm must see first.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  if (options.threads > 1)
    pm.addPass(createConvertOpenMPToLLVMPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.amx = options.amx;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  if (!options.targetCpu.empty() || !options.targetFeatures.empty())
    pm.addPass(createPESetLLVMTarget(
        PESetLLVMTargetOptions{options.targetCpu, options.targetFeatures}));
}
