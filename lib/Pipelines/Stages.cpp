//===- Stages.cpp - pipeline stages shared by the CPU and GPU pipelines ---===//
#include "Stages.h"

#include "pe/Dialect/PE/Transforms/Passes.h"
#include "pe/CInterface/Passes.h"
#include "pe/Codegen/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
/// Fails on the module with a message, at the module's location, without
/// printing the module.
struct InvalidOptionPass : PassWrapper<InvalidOptionPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InvalidOptionPass)
  explicit InvalidOptionPass(std::string message) : message(std::move(message)) {}
  StringRef getArgument() const override { return "pe-invalid-pipeline-option"; }
  void runOnOperation() override {
    mlir::emitError(getOperation()->getLoc()) << message;
    signalPassFailure();
  }
  std::string message;
};
} // namespace

bool pe::reportInvalidOptions(OpPassManager &pm, StringRef pipeline, llvm::Error error) {
  if (!error)
    return false;
  pm.addPass(std::make_unique<InvalidOptionPass>(
      (pipeline + ": " + llvm::toString(std::move(error))).str()));
  return true;
}

void pe::addFoldsAndFusions(OpPassManager &pm, bool fuse) {
  pm.addPass(createCanonicalizerPass());
  if (!fuse)
    return;
  pm.addPass(createPEFuseAlibiIntoAttention());
  pm.addPass(createPEFuseRopeIntoAttention());
  pm.addPass(createPEFuseRopeIntoAppend());
  pm.addPass(createPEShareRopeTables());
  pm.addPass(createCanonicalizerPass());
}

void pe::addLinalgFusion(OpPassManager &pm) {
  // linalg.softmax (an importer's unraised softmax) as fills and generics.
  pm.addPass(createPEDecomposeAggregatedOps());
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
}

void pe::addBufferization(OpPassManager &pm, bool destinationEntries) {
  // Sizes of tiled loops' tensors from their initial values: the conflict
  // analysis then compares slices without walking back through loop nests.
  pm.addNestedPass<func::FuncOp>(createPEFoldLoopCarriedDims());
  pm.addNestedPass<func::FuncOp>(createPEReadOnlyArguments());
  pm.addNestedPass<func::FuncOp>(createPEDistinctResults());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Constants named in module order: the same input, the same output.
  pm.addPass(createPEOrderConstants());
  pm.addPass(createCanonicalizerPass());
  // A KV cache argument is updated in place: its result is not returned
  // (after canonicalization, which folds the loops that yield its buffer).
  pm.addPass(createPEInPlaceResults());
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  pm.addPass(createConvertBufferizationToMemRefPass());
  if (destinationEntries)
    pm.addPass(createPEDestinationEntries());
}

void pe::addCpuLowering(OpPassManager &pm, int64_t threads, bool amx) {
  // C interface wrappers (`_mlir_ciface_NAME`) for public functions and
  // declarations, requested before any conversion turns func.func into
  // llvm.func.
  pm.addNestedPass<func::FuncOp>(createPERequestCWrappers());

  // Dot products of bf16 pairs as vdpbf16ps, BFDOT or f32 FMAs (after
  // bufferization: the AArch64 intrinsic declares no memory effects).
  pm.addPass(createPELowerBf16Dot());

  // bf16 rounding in integer IR where the target has no instruction for it
  // (LLVM would call a compiler-rt helper that no library links).
  pm.addPass(createPEExpandBf16Conversions());

  // To the LLVM dialect (order matters: lower-affine after
  // expand-strided-metadata; ub lowering for vectorization's poison).
  pm.addNestedPass<func::FuncOp>(createPELowerStridedCopies());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertVectorToSCFPass());
  if (threads > 1) {
    // scf.forall -> scf.parallel -> OpenMP (libomp at run time).
    pm.addPass(createForallToParallelLoopPass());
    ConvertSCFToOpenMPPassOptions openmp;
    openmp.numThreads = threads;
    pm.addPass(createConvertSCFToOpenMPPass(openmp));
  }
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Before scf-to-cf: the OpenMP conversion wraps loop bodies in
  // memref.alloca_scope, which finalize-memref-to-llvm must see first.
  // aligned_alloc rather than malloc and a rounded pointer: LLVM knows each
  // buffer is a fresh allocation, so it can tell buffers apart (keeps loop
  // accumulators in registers instead of a store per iteration).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createSCFToControlFlowPass());
  if (threads > 1)
    pm.addPass(createConvertOpenMPToLLVMPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.amx = amx;
  // x86vector ops (avx512.dot = vdpbf16ps) become their LLVM intrinsics.
  vectorToLLVM.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // i1 vectors in memory as bytes (an i1 memref has a byte per element).
  pm.addPass(createPEBoolVectorsAsBytes());
  // bf16 bits moved as i16 where LLVM would legalize bf16 through f32.
  pm.addPass(createPEBf16BitsAsI16());
  // Folds of the LLVM dialect; unreachable blocks and dead block arguments
  // are left to LLVM (region simplification here took most of this pass's
  // time, and a sixth of the pipeline's).
  GreedyRewriteConfig folds;
  folds.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  pm.addPass(createCanonicalizerPass(folds));
}
