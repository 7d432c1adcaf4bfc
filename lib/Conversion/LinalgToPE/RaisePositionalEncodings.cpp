//===- RaisePositionalEncodings.cpp - pe-raise-positional-encodings -------===//
#include "pe/Conversion/LinalgToPE/LinalgToPE.h"
#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PERAISEPOSITIONALENCODINGS
#include "pe/Conversion/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

void mlir::pe::populateRaisePositionalEncodingsPatterns(RewritePatternSet &patterns) {
  populateRaiseRopePatterns(patterns);
  populateRaiseAttentionPatterns(patterns);
}

namespace {
struct RaisePositionalEncodingsPass
    : pe::impl::PERaisePositionalEncodingsBase<RaisePositionalEncodingsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    pe::populateRaisePositionalEncodingsPatterns(patterns);
    // Producers first: a rotation is raised before the attention reading it.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
