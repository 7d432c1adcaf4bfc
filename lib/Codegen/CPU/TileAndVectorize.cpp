//===- TileAndVectorize.cpp - pe-tile-and-vectorize -----------------------===//
#include "pe/Codegen/CPU/Passes.h"

#include "pe/Target/CpuTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PETILEANDVECTORIZE
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {

/// Whether a tensor is contiguous in the buffer it will live in: anything
/// but a slice, or a slice [1, .., 1, n, full, .., full] with unit strides.
bool isContiguous(Value tensor) {
  auto slice = tensor.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice)
    return true;
  ArrayRef<int64_t> sizes = slice.getStaticSizes(), strides = slice.getStaticStrides();
  ArrayRef<int64_t> full = slice.getSourceType().getShape();
  if (sizes.size() != full.size() || llvm::any_of(strides, [](int64_t s) { return s != 1; }))
    return false;
  // The first dim that is not 1; every later one whole.
  size_t d = 0;
  while (d < sizes.size() && sizes[d] == 1)
    ++d;
  for (size_t i = d + 1; i < sizes.size(); ++i)
    if (ShapedType::isDynamic(sizes[i]) || sizes[i] != full[i])
      return false;
  return true;
}

/// `op` over one loop where it is elementwise (every loop parallel, every
/// operand indexed by the identity or a scalar) on static shapes: a fill or
/// map of a contiguous [.., 33] tensor is then one stream of whole vectors and
/// a single masked tail, not a masked tail per row (which LLVM unrolls into
/// one block of thousands of masked stores that instruction selection takes
/// seconds on).
linalg::LinalgOp collapseElementwise(RewriterBase &rewriter, linalg::LinalgOp op) {
  const int64_t loops = op.getNumLoops();
  // linalg.index would have to be delinearized per element (vector i64
  // divisions): such ops keep their loops.
  if (loops < 2 || op.getNumParallelLoops() != loops || !op.hasPureTensorSemantics() ||
      op.hasIndexSemantics() || llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return op;
  // Inside pe-distribute-over-threads' loops the operands are slices: one
  // that is not contiguous would be copied to be collapsed.
  if (!llvm::all_of(op->getOperands(), isContiguous))
    return op;
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isIdentity() || map.getNumResults() == 0;
      }))
    return op;
  rewriter.setInsertionPoint(op);
  if (isa<linalg::FillOp>(op)) {
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generic))
      return op;
    op = *generic;
  }
  if (!isa<linalg::GenericOp>(op))
    return op;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < loops; ++d)
    all[0].push_back(d);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, all, rewriter);
  if (failed(collapsed))
    return op;
  rewriter.replaceOp(op, collapsed->results);
  return collapsed->collapsedOp;
}

struct TileAndVectorizePass
    : pe::impl::PETileAndVectorizeBase<TileAndVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    if (vectorWidth < 0 || vectorWidth > pe::kMaxVectorWidth) {
      func.emitError() << "pe-tile-and-vectorize needs 0 <= vector-width <= "
                       << pe::kMaxVectorWidth << " (0: the target's), but got "
                       << static_cast<int64_t>(vectorWidth);
      return signalPassFailure();
    }
    int64_t vectorWidth = this->vectorWidth;
    if (vectorWidth == 0) {
      FailureOr<pe::CpuTarget> target = pe::getCpuTarget(func);
      if (failed(target))
        return signalPassFailure();
      vectorWidth = target->f32Lanes();
    }

    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      // An empty iteration space (a static extent 0) has nothing to tile.
      if (op.hasPureTensorSemantics() && op.getNumLoops() > 0 &&
          !llvm::is_contained(op.getStaticLoopRanges(), 0))
        ops.push_back(op);
    });

    IRRewriter rewriter(ctx);
    for (linalg::LinalgOp op : ops) {
      op = collapseElementwise(rewriter, op);
      // One vector along the innermost loop, one element along the others.
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      int64_t inner = ranges.back();
      int64_t width = ShapedType::isDynamic(inner)
                          ? int64_t(vectorWidth)
                          : std::min<int64_t>(vectorWidth, inner);
      // An innermost extent of one has nothing to vectorize: scalar loops.
      if (width < 2)
        continue;
      // Reductions into a kept unit dim (keep-dim sums and maxima, as
      // importers write softmax) stay scalar: the vector patterns below do
      // not converge on their transfers.
      if (op.getNumReductionLoops() > 0 &&
          llvm::any_of(op.getIndexingMapsArray(), [](AffineMap map) {
            return llvm::any_of(map.getResults(),
                                [](AffineExpr e) { return isa<AffineConstantExpr>(e); });
          }))
        continue;
      // A reduction along the innermost loop is vectorized only in full
      // vectors: masked multi-reductions do not lower reliably.
      bool innermostReduction = linalg::isReductionIterator(
          op.getIteratorTypesArray().back());
      if (innermostReduction &&
          (ShapedType::isDynamic(inner) || inner % width != 0))
        continue;
      SmallVector<int64_t> vectorSizes(ranges.size(), 1);
      vectorSizes.back() = width;

      rewriter.setInsertionPoint(op);
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(ctx, vectorSizes));
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        continue;
      rewriter.replaceOp(op, tiled->replacements);

      // Full tiles vectorize as they are; a partial last tile is masked.
      bool fullTiles = !ShapedType::isDynamic(inner) && inner % width == 0;
      SmallVector<bool> scalable(vectorSizes.size(), false);
      for (Operation *tiledOp : tiled->tiledOps) {
        rewriter.setInsertionPoint(tiledOp);
        FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
            rewriter, tiledOp,
            fullTiles ? ArrayRef<int64_t>() : ArrayRef<int64_t>(vectorSizes),
            fullTiles ? ArrayRef<bool>() : ArrayRef<bool>(scalable),
            /*vectorizeNDExtract=*/false);
        if (succeeded(vectorized))
          rewriter.replaceOp(tiledOp, vectorized->replacements);
      }
    }

    // Masks into the masked transfers first, then down to 1-D vectors, and
    // tensor slices folded into the transfers.
    RewritePatternSet masks(ctx);
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(masks);
    // The vector pattern sets can feed each other without end on IR that
    // did not come from pe ops (fused generic contractions of importers'
    // IR): a bounded number of rewrites, then an error instead of memory
    // growing until the process dies.
    GreedyRewriteConfig bounded;
    bounded.setMaxNumRewrites(200000);
    auto apply = [&](RewritePatternSet &&set) -> LogicalResult {
      if (succeeded(applyPatternsGreedily(func, std::move(set), bounded)))
        return success();
      return func.emitError()
             << "pe-tile-and-vectorize: the vector patterns did not converge on this "
                "function; compile it without vectorization (pe-compile --vectorize=false)";
    };
    if (failed(apply(std::move(masks))))
      return signalPassFailure();
    RewritePatternSet patterns(ctx);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(apply(std::move(patterns))))
      return signalPassFailure();

    // Reductions along the innermost loop become 1-D vector reductions;
    // what is left n-D is unrolled to 1-D for the LLVM lowering.
    RewritePatternSet lowering(ctx);
    vector::populateVectorMultiReductionLoweringPatterns(
        lowering, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorBroadcastLoweringPatterns(lowering);
    vector::populateVectorShapeCastLoweringPatterns(lowering);
    if (failed(apply(std::move(lowering))))
      return signalPassFailure();
  }
};
} // namespace
