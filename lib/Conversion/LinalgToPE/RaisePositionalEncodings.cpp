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

void mlir::pe::populateRaisePositionalEncodingsPatterns(RewritePatternSet &patterns,
                                                        RaisingNotes *notes) {
  populateRaiseRopePatterns(patterns, notes);
  populateRaiseAttentionPatterns(patterns, notes);
}

namespace {
/// Forgets the notes of erased ops (an address may be reused by a new op).
struct ForgetErased : RewriterBase::Listener {
  explicit ForgetErased(pe::RaisingNotes &notes) : notes(notes) {}
  void notifyOperationErased(Operation *op) override { notes.notRaised.remove_if(
      [&](auto &entry) { return entry.first == op; }); }
  pe::RaisingNotes &notes;
};

struct RaisePositionalEncodingsPass
    : pe::impl::PERaisePositionalEncodingsBase<RaisePositionalEncodingsPass> {
  using Base::Base;

  void runOnOperation() override {
    pe::RaisingNotes notes;
    RewritePatternSet patterns(&getContext());
    pe::populateRaisePositionalEncodingsPatterns(patterns, remarks ? &notes : nullptr);
    // Producers first: a rotation is raised before the attention reading it.
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    ForgetErased forget(notes);
    if (remarks)
      config.setListener(&forget);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    for (auto &[op, why] : notes.notRaised)
      op->emitRemark() << why;
  }
};
} // namespace
