//===- TilePagedDecode.cpp - pe-tile-paged-decode -------------------------===//
//
// A decode step of pe.paged_attention (one query per sequence) as one call of
// the batched decode kernel (buildBatchedDecodeKernel), behind a run-time
// test that the batch is one; any other batch keeps the op for
// pe-expand-paged-attention. The pass description
// (include/pe/Codegen/CPU/Passes.td) states the schedule.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/CPU/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/KernelUtils.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"
#include "pe/Math/PositionalMath.h"

#include "AttentionTask.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PETILEPAGEDDECODE
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

/// The plan of the one-query decode kernel for `op`'s heads, attributes and
/// sinks (its queries already rotated), or nullopt: planned on a stand-in
/// pe.attention of [T, Hq, 1, D] queries against one sequence's keys.
std::optional<AttentionPlan> planBatchedDecode(ImplicitLocOpBuilder &b, PagedAttentionOp op,
                                               Value query,
                                               const TileAttentionOptions &options) {
  RankedTensorType qType = cast<RankedTensorType>(query.getType());
  auto stand = [&](Value cache) {
    auto type = cast<RankedTensorType>(cache.getType());
    const int64_t heads = type.getDimSize(op.getHeadsDim());
    return tensor::EmptyOp::create(b, ArrayRef<int64_t>{1, heads, 1, type.getDimSize(3)},
                                   type.getElementType());
  };
  Value key = stand(op.getKeyCache()), value = stand(op.getValueCache());
  // A mask: only its presence matters to the plan.
  Value mask;
  if (Value m = op.getMask()) {
    auto type = cast<RankedTensorType>(m.getType());
    mask = tensor::EmptyOp::create(b, ArrayRef<int64_t>{1, type.getDimSize(1), 1, 1},
                                   type.getElementType());
  }
  auto resultType =
      RankedTensorType::get({qType.getDimSize(0), qType.getDimSize(1), 1,
                             op.getType().getDimSize(2)},
                            op.getType().getElementType());
  auto proto = AttentionOp::create(
      b, resultType, query, key, value, mask, /*q_positions=*/Value(),
      /*k_positions=*/Value(), op.getSinks(), /*q_rope_positions=*/Value(),
      /*k_rope_positions=*/Value(), /*shared_key=*/Value(), op.getScaleAttr(),
      op.getCausalAttr(), op.getWindowAttr(),
      op.getChunkAttr(), /*rope=*/RopeAttr(), op.getAlibiAttr(), op.getSoftcapAttr(),
      op.getTemperatureAttr());
  std::optional<AttentionPlan> plan = planAttention(proto, options, /*queries=*/1, op.getLayout());
  proto.erase();
  for (Value stand : {key, value, mask})
    if (stand)
      stand.getDefiningOp()->erase();
  if (!plan || plan->kind != AttentionKernelKind::Decode)
    return std::nullopt;
  return plan;
}

/// i1: every sequence of the batch has exactly one query: T = B rows and
/// cu_seqlens 0, 1, ..., B. Read before the checks (which run in the branch
/// taken), so it reads cu_seqlens only within its size.
Value everySequenceOneQuery(ImplicitLocOpBuilder &b, PagedAttentionOp op) {
  Value cu = op.getCuSeqlens();
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value batch = dimValue(b, op.getBlockTable(), 0);
  Value entries = dimValue(b, cu, 0);
  Value sameCount = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, dimValue(b, op.getQuery(), 0), batch),
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, entries,
                            arith::AddIOp::create(b, batch, one)));
  auto loop = scf::ForOp::create(
      b, zero, arith::MinSIOp::create(b, batch, entries), one, ValueRange{sameCount},
      [&](OpBuilder &nb, Location nloc, Value seq, ValueRange all) {
        ImplicitLocOpBuilder n(nloc, nb);
        Value single = arith::CmpIOp::create(n, arith::CmpIPredicate::eq,
                                             extractIndex(n, cu, seq), seq);
        scf::YieldOp::create(n, ValueRange{arith::AndIOp::create(n, all[0], single)});
      });
  return loop.getResult(0);
}

/// The i64 positions [T, 1] of the queries: kv_lens[b] - 1.
Value lastPositions(ImplicitLocOpBuilder &b, PagedAttentionOp op, Value batch) {
  auto type = RankedTensorType::get({ShapedType::kDynamic, 1}, b.getI64Type());
  return tensor::GenerateOp::create(
      b, type, ValueRange{batch}, [&](OpBuilder &nb, Location nloc, ValueRange index) {
        ImplicitLocOpBuilder n(nloc, nb);
        Value keys = arith::IndexCastOp::create(n, n.getI64Type(),
                                                extractIndex(n, op.getKvLens(), index[0]));
        Value last = arith::SubIOp::create(n, keys, arith::ConstantIntOp::create(n, 1, 64));
        tensor::YieldOp::create(n, last);
      });
}

/// The result of `op` (a batch of one query per sequence) computed by the
/// batched decode kernel of `plan`.
Value batchedDecode(ImplicitLocOpBuilder &b, PagedAttentionOp op, Value query,
                    const AttentionPlan &plan) {
  // Every tensor first, then the buffers (see pe-tile-attention).
  Value batch = dimValue(b, op.getQuery(), 0);
  Value positions = lastPositions(b, op, batch);
  if (RopeAttr rope = op.getRopeAttr())
    query = RopeOp::create(b, query, positions, rope, Layout::bhsd);
  Value slopes;
  if (std::optional<APFloat> alibi = op.getAlibi())
    slopes = buildAlibiSlopes(b, plan.queryHeads, alibi->convertToDouble());
  // A mask [T, H|1, K] as [T, H|1, 1, K]: row b is sequence b's query, its
  // keys the first kv_lens[b] of K columns.
  Value mask = op.getMask();
  if (mask) {
    auto type = cast<RankedTensorType>(mask.getType());
    auto rows = RankedTensorType::get(
        {type.getDimSize(0), type.getDimSize(1), 1, type.getDimSize(2)}, type.getElementType());
    mask = tensor::ExpandShapeOp::create(b, rows, mask,
                                         SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  }
  AttentionBuffers buf;
  buf.layout = op.getLayout();
  buf.q = toReadOnlyBuffer(b, query);
  buf.k = toReadOnlyBuffer(b, op.getKeyCache());
  buf.v = toReadOnlyBuffer(b, op.getValueCache());
  buf.qPos = toReadOnlyBuffer(b, positions);
  buf.pageTable = toReadOnlyBuffer(b, op.getBlockTable());
  buf.kvLens = toReadOnlyBuffer(b, op.getKvLens());
  buf.slopes = toReadOnlyBuffer(b, slopes);
  buf.sinks = toReadOnlyBuffer(b, op.getSinks());
  buf.mask = toReadOnlyBuffer(b, mask);
  auto outType = MemRefType::get({ShapedType::kDynamic, plan.queryHeads, 1, plan.valueDim},
                                 plan.element);
  buf.out = memref::AllocOp::create(b, outType, ValueRange{batch});

  Operation *symbolTable = SymbolTable::getNearestSymbolTable(op);
  func::FuncOp kernel =
      getOrBuildAttentionKernel(symbolTable, op.getLoc(), plan, buf, /*batched=*/true);
  func::CallOp::create(b, kernel, attentionKernelArguments(buf));
  Value out = bufferization::ToTensorOp::create(
      b, RankedTensorType::get(outType.getShape(), plan.element), buf.out,
      /*restrict=*/true, /*writable=*/true);
  Value rows = tensor::CollapseShapeOp::create(
      b, out, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  if (rows.getType() != op.getType())
    rows = tensor::CastOp::create(b, op.getType(), rows);
  return rows;
}

/// Rewrites `op` as the batched kernel (after the op's checks) or the op itself;
/// leaves it alone where the decode kernel does not apply.
void tileDecode(PagedAttentionOp op, const TileAttentionOptions &options) {
  // The batch's queries are rotated as one tensor: frequencies that depend
  // on the sequence's length (each sequence's own) stay with the expansion.
  if (RopeAttr rope = op.getRopeAttr();
      rope && (rope.isMultiStream() || formula::dependsOnSequenceLength(rope.getConfig())))
    return;
  OpBuilder builder(op);
  ImplicitLocOpBuilder b(op.getLoc(), builder);
  // [T, Hq, D] -> [T, Hq, 1, D]: batch row b is sequence b's query.
  auto qType = op.getQuery().getType();
  auto query4Type = RankedTensorType::get(
      {qType.getDimSize(0), qType.getDimSize(1), 1, qType.getDimSize(2)},
      qType.getElementType());
  Value query = tensor::ExpandShapeOp::create(
      b, query4Type, op.getQuery(), SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  std::optional<AttentionPlan> plan = planBatchedDecode(b, op, query, options);
  if (!plan) {
    query.getDefiningOp()->erase();
    return;
  }
  auto branch = scf::IfOp::create(b, op.getType(), everySequenceOneQuery(b, op),
                                  /*withElseRegion=*/true);
  // The checks of each branch: here, and the expansion's in the op's.
  b.setInsertionPointToStart(branch.thenBlock());
  buildPagedAttentionChecks(b, op);
  scf::YieldOp::create(b, batchedDecode(b, op, query, *plan));
  b.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(b, b.clone(*op)->getResults());
  op->replaceAllUsesWith(branch.getResults());
  op.erase();
}

struct TilePagedDecodePass : pe::impl::PETilePagedDecodeBase<TilePagedDecodePass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-tile-paged-decode")))
      return signalPassFailure();
    constexpr int64_t kMaxOption = int64_t(1) << 20;
    if (threads < 1 || blockKeys < 0 || threads > kMaxOption || blockKeys > kMaxOption) {
      getOperation()->emitError("pe-tile-paged-decode: threads must be positive, block-keys "
                                "non-negative (0: the target's), both at most 2^20");
      return signalPassFailure();
    }
    FailureOr<CpuTarget> target = getCpuTarget(getOperation());
    if (failed(target))
      return signalPassFailure();
    TileAttentionOptions options;
    options.target = *target;
    options.threads = threads;
    options.blockKeys = blockKeys;
    options.bf16Dot = bf16Dot;
    // Collected first: the clones the rewrite leaves are for the expansion.
    SmallVector<PagedAttentionOp> ops;
    getOperation()->walk([&](PagedAttentionOp op) { ops.push_back(op); });
    for (PagedAttentionOp op : ops)
      tileDecode(op, options);
  }
};

} // namespace
