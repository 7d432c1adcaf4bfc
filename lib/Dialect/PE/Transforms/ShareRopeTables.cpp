//===- ShareRopeTables.cpp - pe-share-rope-tables -------------------------===//
#include "pe/Dialect/PE/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PESHAREROPETABLES
#include "pe/Dialect/PE/Transforms/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {
struct ShareRopeTablesPass
    : pe::impl::PEShareRopeTablesBase<ShareRopeTablesPass> {
  void runOnOperation() override {
    // Rotations by (positions, configuration), in program order.
    llvm::MapVector<std::pair<Value, Attribute>, SmallVector<RopeOp>> groups;
    getOperation()->walk([&](RopeOp op) {
      if (!op.getCos())
        groups[{op.getPositions(), op.getRope()}].push_back(op);
    });

    OpBuilder builder(&getContext());
    for (auto &[key, ropes] : groups) {
      if (ropes.size() < 2)
        continue;
      auto [positions, config] = key;
      auto rope = cast<RopeAttr>(config);
      // Right after the positions are defined, which dominates every use.
      if (Operation *def = positions.getDefiningOp())
        builder.setInsertionPointAfter(def);
      else
        builder.setInsertionPointToStart(cast<BlockArgument>(positions).getOwner());
      auto posType = rope.getTokenShape(cast<RankedTensorType>(positions.getType()));
      SmallVector<int64_t> shape(posType.getShape());
      shape.push_back(rope.getRotaryDim() / 2);
      auto tableType = RankedTensorType::get(shape, builder.getF32Type());
      auto tables = RopeTablesOp::create(builder, positions.getLoc(), tableType,
                                         tableType, positions, rope);
      for (RopeOp op : ropes) {
        op.getCosMutable().assign(tables.getCos());
        op.getSinMutable().assign(tables.getSin());
      }
    }
  }
};
} // namespace
