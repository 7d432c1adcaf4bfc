//===- DistributeOverThreads.cpp - pe-distribute-over-threads -------------===//
#include "pe/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEDISTRIBUTEOVERTHREADS
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

/// The loop to split: the first parallel loop with a static extent of at
/// least `threads`, else the first dynamic parallel loop.
static std::optional<unsigned> chooseLoop(linalg::LinalgOp op, int64_t threads) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  std::optional<unsigned> dynamic;
  for (unsigned i = 0; i < ranges.size(); ++i) {
    if (!(iterators[i] == utils::IteratorType::parallel))
      continue;
    if (ShapedType::isDynamic(ranges[i])) {
      if (!dynamic)
        dynamic = i;
      continue;
    }
    if (ranges[i] >= threads)
      return i;
  }
  return dynamic;
}

namespace {
struct DistributeOverThreadsPass
    : pe::impl::PEDistributeOverThreadsBase<DistributeOverThreadsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads <= 1)
      return;
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      // An empty iteration space (a static extent 0) has nothing to split
      // (and the upstream tiling does not expect it).
      if (op.hasPureTensorSemantics() && op.getNumLoops() > 0 &&
          !isa<linalg::FillOp>(op) && !llvm::is_contained(op.getStaticLoopRanges(), 0))
        ops.push_back(op);
    });
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    for (linalg::LinalgOp op : ops) {
      std::optional<unsigned> loop = chooseLoop(op, threads);
      if (!loop)
        continue;
      // `threads` parts along `loop`; 0 leaves the other loops whole.
      SmallVector<OpFoldResult> numThreads(op.getNumLoops(),
                                           rewriter.getIndexAttr(0));
      numThreads[*loop] = rewriter.getIndexAttr(threads);
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      options.setNumThreads(numThreads);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue;
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};
} // namespace
