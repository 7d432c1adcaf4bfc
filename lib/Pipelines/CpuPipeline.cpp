//===- CpuPipeline.cpp - pe-cpu-pipeline ----------------------------------===//
#include "pe/Pipelines/Pipelines.h"

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
  // Folds first: constants, and chained rotations composed into one (a
  // chain shares no tables and fuses as a single rotation).
  pm.addPass(createCanonicalizerPass());
  // Positional encodings into the attention that uses them, tables shared.
  if (options.fuse) {
    pm.addPass(createPEFuseAlibiIntoAttention());
    pm.addPass(createPEFuseRopeIntoAttention());
    pm.addPass(createPEShareRopeTables());
    pm.addPass(createCanonicalizerPass());
  }
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
  // Elementwise arith on tensors (composed positions) as linalg.
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());

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

  // Buffers; inputs are never written, temporaries are freed, results are
  // returned to the caller.
  pm.addNestedPass<func::FuncOp>(createPEReadOnlyArguments());
  pm.addNestedPass<func::FuncOp>(createPEDistinctResults());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  pm.addPass(createConvertBufferizationToMemRefPass());
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
