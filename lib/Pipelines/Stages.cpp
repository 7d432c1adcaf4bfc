//===- Stages.cpp - pipeline stages shared by the CPU and GPU pipelines ---===//
#include "Stages.h"

#include "pe/Dialect/PE/Transforms/Passes.h"
#include "pe/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void pe::addFoldsAndFusions(OpPassManager &pm, bool fuse) {
  pm.addPass(createCanonicalizerPass());
  if (!fuse)
    return;
  pm.addPass(createPEFuseAlibiIntoAttention());
  pm.addPass(createPEFuseRopeIntoAttention());
  pm.addPass(createPEShareRopeTables());
  pm.addPass(createCanonicalizerPass());
}

void pe::addLinalgFusion(OpPassManager &pm) {
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
}

void pe::addBufferization(OpPassManager &pm) {
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
}
