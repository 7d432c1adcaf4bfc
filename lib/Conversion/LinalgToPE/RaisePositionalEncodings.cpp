//===- RaisePositionalEncodings.cpp - pe-raise-positional-encodings -------===//
#include "pe/Conversion/LinalgToPE/LinalgToPE.h"
#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PERAISEPOSITIONALENCODINGS
#include "pe/Conversion/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

static pe::RaisingCheck &raisingCheck() {
  static pe::RaisingCheck check;
  return check;
}

void mlir::pe::setRaisingCheck(RaisingCheck check) { raisingCheck() = std::move(check); }

void mlir::pe::populateRaisePositionalEncodingsPatterns(RewritePatternSet &patterns,
                                                        RaisingNotes *notes) {
  populateRaiseRopePatterns(patterns, notes);
  populateRaiseAttentionPatterns(patterns, notes);
}

namespace {
/// Forgets the notes of erased ops (an address may be reused by a new op)
/// and remembers the first op a pattern rewrote (folds are not patterns).
struct Tracker : RewriterBase::Listener {
  explicit Tracker(pe::RaisingNotes &notes) : notes(notes) {}
  void notifyOperationErased(Operation *op) override {
    notes.notRaised.remove_if([&](auto &entry) { return entry.first == op; });
  }
  void notifyPatternBegin(const Pattern &, Operation *op) override { current = op; }
  void notifyPatternEnd(const Pattern &, LogicalResult status) override {
    if (succeeded(status) && !rewritten)
      rewritten = current;
  }
  pe::RaisingNotes &notes;
  Operation *current = nullptr;
  Operation *rewritten = nullptr;
};

GreedyRewriteConfig topDown() {
  // Producers first: a rotation is raised before the attention reading it.
  GreedyRewriteConfig config;
  config.setUseTopDownTraversal(true);
  return config;
}

struct RaisePositionalEncodingsPass
    : pe::impl::PERaisePositionalEncodingsBase<RaisePositionalEncodingsPass> {
  using Base::Base;

  void runOnOperation() override {
    pe::RaisingNotes notes;
    RewritePatternSet set(&getContext());
    pe::populateRaisePositionalEncodingsPatterns(set, remarks || verify ? &notes : nullptr);
    FrozenRewritePatternSet patterns(std::move(set));
    if (verify) {
      if (!raisingCheck()) {
        getOperation()->emitError("pe-raise-positional-encodings{verify} needs the JIT: "
                                  "this tool does not install a raising check");
        return signalPassFailure();
      }
      SmallVector<func::FuncOp> functions;
      getOperation()->walk([&](func::FuncOp fn) {
        if (!fn.isExternal())
          functions.push_back(fn);
      });
      for (func::FuncOp fn : functions)
        raiseChecked(fn, patterns, notes);
    } else {
      Tracker tracker(notes);
      GreedyRewriteConfig config = topDown();
      config.setListener(&tracker);
      if (failed(applyPatternsGreedily(getOperation(), patterns, config)))
        return signalPassFailure();
    }
    if (remarks)
      for (auto &[op, why] : notes.notRaised)
        op->emitRemark() << why;
  }

  /// Raises `fn` one rewrite at a time, each applied to a copy and kept only
  /// when the copy still computes what `fn` computed at first.
  void raiseChecked(func::FuncOp fn, const FrozenRewritePatternSet &patterns,
                    pe::RaisingNotes &notes) {
    OwningOpRef<func::FuncOp> original = fn.clone();
    StringAttr refused = StringAttr::get(&getContext(), pe::kRaiseRefusedAttr);
    // Each round accepts or refuses one rewrite; the bound only guards
    // against a pattern that would keep rewriting what it produced.
    for (int round = 0; round < 10000; ++round) {
      IRMapping map;
      OwningOpRef<func::FuncOp> trial = cast<func::FuncOp>(fn->clone(map));
      Tracker tracker(notes);
      GreedyRewriteConfig config = topDown();
      config.setListener(&tracker);
      config.setMaxNumRewrites(1);
      bool changed = false;
      (void)applyPatternsGreedily(trial->getOperation(), patterns, config, &changed);
      if (!changed)
        break;
      if (tracker.rewritten) {
        Operation *root = nullptr; // the op of `fn` that the pattern rewrote
        for (auto &[from, to] : map.getOperationMap())
          if (to == tracker.rewritten)
            root = from;
        std::string why;
        FailureOr<double> difference = raisingCheck()(*original, *trial, why);
        if (failed(difference) || *difference > verifyTolerance) {
          if (!root)
            break; // nothing to mark: keep what was checked so far
          root->setAttr(refused, UnitAttr::get(&getContext()));
          InFlightDiagnostic remark = root->emitRemark("not raised: ");
          if (failed(difference))
            remark << "the rewrite cannot be checked: " << why;
          else
            remark << "the raised form differs from the original by " << *difference
                   << " (relative; tolerance " << verifyTolerance << ") on random inputs";
          continue;
        }
      }
      fn.getBody().takeBody(trial->getBody());
    }
    fn.walk([&](Operation *op) { op->removeAttr(refused); });
  }
};
} // namespace
