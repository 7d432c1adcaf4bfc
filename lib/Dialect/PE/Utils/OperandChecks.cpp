//===- OperandChecks.cpp - operands and run-time checks of pe ops ---------===//
#include "pe/Dialect/PE/Utils/OperandChecks.h"
#include "pe/Dialect/PE/Utils/AttentionBuilders.h"

#include "pe/Dialect/PE/Utils/RopeBuilders.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pe;

int64_t pe::largestConstantTable(Operation *op) {
  return llvm::TypeSwitch<Operation *, int64_t>(op)
      .Case<RopeOp, RopeFrequenciesOp, RopeTablesOp>(
          [](auto ropeOp) { return ropeOp.getRope().getRotaryDim() / 2; })
      .Case([](SinusoidalOp sinusoidal) {
        return sinusoidal.getTable().sinCount();
      })
      .Case([](AlibiSlopesOp slopes) { return slopes.getType().getDimSize(0); })
      .Case([](AttentionOp attention) {
        int64_t entries = 0;
        if (RopeAttr rope = attention.getRopeAttr())
          entries = rope.getRotaryDim() / 2;
        if (attention.getAlibi())
          entries = std::max(entries, attention.getQuery().getType().getDimSize(1));
        return entries;
      })
      .Default([](Operation *) { return int64_t(0); });
}

LogicalResult pe::checkConstantTables(Operation *op) {
  int64_t entries = largestConstantTable(op);
  if (entries <= kMaxConstantTableEntries)
    return success();
  return op->emitOpError() << "needs a constant table of " << entries
                           << " entries (frequencies or slopes), more than the "
                           << kMaxConstantTableEntries
                           << " that are built at compile time";
}

LogicalResult pe::checkLoweringRoot(Operation *root, StringRef passName) {
  if (root->hasTrait<OpTrait::SymbolTable>())
    return success();
  return root->emitError() << passName
                           << " runs on a symbol table such as builtin.module "
                              "(it declares functions there), not on '"
                           << root->getName() << "'";
}

FlatSymbolRefAttr pe::declareRuntimeFunction(OpBuilder &b, Operation *op,
                                             StringRef name) {
  Operation *table = SymbolTable::getNearestSymbolTable(op);
  assert(table && "runtime calls need an enclosing symbol table");
  MLIRContext *ctx = b.getContext();
  if (!SymbolTable::lookupSymbolIn(table, name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&table->getRegion(0).front());
    Type i64 = b.getI64Type();
    auto fn = func::FuncOp::create(b, op->getLoc(), name,
                                   FunctionType::get(ctx, {i64, i64, i64}, {}));
    fn.setPrivate();
  }
  return FlatSymbolRefAttr::get(ctx, name);
}

void pe::buildSizeCheck(ImplicitLocOpBuilder &b, Operation *op,
                        pe_size_check check, Value got, Value want) {
  FlatSymbolRefAttr fn = declareRuntimeFunction(b, op, kSizeMismatchFn);
  Value differ = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, got, want);
  scf::IfOp::create(b, differ, [&](OpBuilder &tb, Location tloc) {
    Type i64 = tb.getI64Type();
    Value args[] = {arith::ConstantOp::create(tb, tloc, tb.getI64IntegerAttr(check)),
                    arith::IndexCastOp::create(tb, tloc, i64, got),
                    arith::IndexCastOp::create(tb, tloc, i64, want)};
    func::CallOp::create(tb, tloc, fn, TypeRange{}, args);
    scf::YieldOp::create(tb, tloc);
  });
}

void pe::buildAlignmentCheck(ImplicitLocOpBuilder &b, Operation *op, Value buffer,
                             int64_t bytes) {
  auto type = cast<MemRefType>(buffer.getType());
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, buffer);
  Value offset = memref::ExtractStridedMetadataOp::create(b, buffer).getOffset();
  Value elementBytes = arith::ConstantIndexOp::create(b, type.getElementTypeBitWidth() / 8);
  Value address = arith::AddIOp::create(b, base, arith::MulIOp::create(b, offset, elementBytes));
  Value misalignment =
      arith::RemUIOp::create(b, address, arith::ConstantIndexOp::create(b, bytes));
  buildSizeCheck(b, op, PE_CHECK_GPU_ALIGNMENT, misalignment,
                 arith::ConstantIndexOp::create(b, 0));
}

void pe::buildIndexRangeCheck(ImplicitLocOpBuilder &b, Operation *op,
                              StringRef errorFn, Value indices, int64_t low,
                              Value high) {
  FlatSymbolRefAttr fn = declareRuntimeFunction(b, op, errorFn);
  Value flat = indices;
  if (cast<RankedTensorType>(indices.getType()).getRank() == 2)
    flat = tensor::CollapseShapeOp::create(b, indices,
                                           SmallVector<ReassociationIndices>{{0, 1}});
  Value count = tensor::DimOp::create(b, flat, 0);
  scf::ForOp::create(
      b, arith::ConstantIndexOp::create(b, 0), count,
      arith::ConstantIndexOp::create(b, 1), ValueRange{},
      [&](OpBuilder &nb, Location nloc, Value iv, ValueRange) {
        ImplicitLocOpBuilder n(nloc, nb);
        Value p = extendToI64(n, tensor::ExtractOp::create(n, flat, iv));
        Value below = arith::CmpIOp::create(n, arith::CmpIPredicate::slt, p,
                                            intConstantLike(n, p, low));
        Value above = arith::CmpIOp::create(n, arith::CmpIPredicate::sge, p, high);
        Value bad = arith::OrIOp::create(n, below, above);
        scf::IfOp::create(n, bad, [&](OpBuilder &tb, Location tloc) {
          Value index = arith::IndexCastOp::create(tb, tloc, tb.getI64Type(), iv);
          func::CallOp::create(tb, tloc, fn, TypeRange{}, ValueRange{p, index, high});
          scf::YieldOp::create(tb, tloc);
        });
        scf::YieldOp::create(n);
      });
}

void pe::buildSameSizeCheck(ImplicitLocOpBuilder &b, Operation *op,
                            pe_size_check check, Value a, int64_t da, Value c,
                            int64_t dc) {
  auto ta = cast<RankedTensorType>(a.getType());
  auto tc = cast<RankedTensorType>(c.getType());
  if (!ta.isDynamicDim(da) && !tc.isDynamicDim(dc))
    return;
  buildSizeCheck(b, op, check, tensor::DimOp::create(b, a, da),
                 tensor::DimOp::create(b, c, dc));
}

void pe::buildResultSizeChecks(ImplicitLocOpBuilder &b, Operation *op,
                               pe_size_check check, RankedTensorType type,
                               ArrayRef<OpFoldResult> sizes) {
  for (auto [i, size] : llvm::enumerate(sizes)) {
    auto dynamic = dyn_cast<Value>(size);
    if (!dynamic || type.isDynamicDim(i))
      continue;
    buildSizeCheck(b, op, check, dynamic,
                   arith::ConstantIndexOp::create(b, type.getDimSize(i)));
  }
}

/// Positions offset + i for element i of dimension `seqDim` of `tensor`
/// (i64; `offset` may be null for 0).
static Value buildDefaultPositions(ImplicitLocOpBuilder &b, Value tensor,
                                   int64_t seqDim, Value offset) {
  MLIRContext *ctx = b.getContext();
  Value init = tensor::EmptyOp::create(
      b, ArrayRef<OpFoldResult>{tensor::getMixedSize(b, b.getLoc(), tensor, seqDim)},
      b.getI64Type());
  return linalg::GenericOp::create(
             b, init.getType(), ValueRange{}, ValueRange{init},
             SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx)},
             SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
             [&](OpBuilder &nb, Location nloc, ValueRange) {
               Value i = linalg::IndexOp::create(nb, nloc, 0);
               Value p = arith::IndexCastOp::create(nb, nloc, nb.getI64Type(), i);
               if (offset)
                 p = arith::AddIOp::create(nb, nloc, p, offset);
               linalg::YieldOp::create(nb, nloc, ValueRange{p});
             })
      .getResult(0);
}

std::pair<Value, Value> pe::prepareAttentionOperands(ImplicitLocOpBuilder &b,
                                                     AttentionOp op, Value q,
                                                     Value k, Value v, Value mask,
                                                     Value qPos, Value kPos) {
  const int64_t hq = cast<RankedTensorType>(q.getType()).getDimSize(1);
  // Sizes the verifier could not see (dynamic) must agree at run time.
  buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_KEY_BATCH, k, 0, q, 0);
  buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_VALUE_BATCH, v, 0, q, 0);
  buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_VALUE_LENGTH, v, 2, k, 2);
  if (mask) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (maskType.getDimSize(0) != 1)
      buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_MASK_BATCH, mask, 0, q, 0);
    if (maskType.isDynamicDim(1))
      buildSizeCheck(b, op, PE_CHECK_ATTENTION_MASK_HEADS,
                     tensor::DimOp::create(b, mask, 1),
                     arith::ConstantIndexOp::create(b, hq));
    buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_MASK_ROWS, mask, 2, q, 2);
    buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_MASK_COLUMNS, mask, 3, k, 2);
  }
  for (auto [pos, x, check] :
       {std::tuple{qPos, q, PE_CHECK_ATTENTION_Q_POSITIONS},
        std::tuple{kPos, k, PE_CHECK_ATTENTION_K_POSITIONS}}) {
    if (!pos)
      continue;
    auto posType = cast<RankedTensorType>(pos.getType());
    buildSameSizeCheck(b, op, check, pos, posType.getRank() - 1, x, 2);
    if (posType.getRank() == 2)
      buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_POSITIONS_BATCH, pos, 0, x, 0);
  }
  if (!qPos) {
    // q_pos[i] = Skv - Sq + i.
    Type i64 = b.getI64Type();
    Value skv = arith::IndexCastOp::create(b, i64, tensor::DimOp::create(b, k, 2));
    Value sq = arith::IndexCastOp::create(b, i64, tensor::DimOp::create(b, q, 2));
    qPos = buildDefaultPositions(b, q, 2, arith::SubIOp::create(b, skv, sq));
  }
  if (!kPos)
    kPos = buildDefaultPositions(b, k, 2, nullptr);
  return {qPos, kPos};
}

AttentionRopeTables pe::buildAttentionRopeTables(ImplicitLocOpBuilder &b, AttentionOp op,
                                                  Value q, Value k, Value qPos, Value kPos,
                                                  Value qRopePos, Value kRopePos) {
  RopeAttr rope = op.getRopeAttr();
  if (rope.isMultiStream()) {
    // [A, S] or [B, A, S]: the last dim against the tokens, a batch against B.
    for (auto [pos, x] : {std::pair{qRopePos, q}, std::pair{kRopePos, k}}) {
      auto posType = cast<RankedTensorType>(pos.getType());
      buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_ROPE_POSITIONS, pos,
                         posType.getRank() - 1, x, 2);
      if (posType.getRank() == 3)
        buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_ROPE_POSITIONS, pos, 0, x, 0);
    }
    qPos = qRopePos;
    kPos = kRopePos;
  }
  AttentionRopeTables tables;
  std::tie(tables.qCos, tables.qSin) = buildRopeTables(b, rope, qPos, b.getF32Type());
  std::tie(tables.kCos, tables.kSin) = std::pair{tables.qCos, tables.qSin};
  if (kPos != qPos)
    std::tie(tables.kCos, tables.kSin) = buildRopeTables(b, rope, kPos, b.getF32Type());
  return tables;
}

/// The shared key block's batch and length are the key's.
static void checkSharedKey(ImplicitLocOpBuilder &b, AttentionOp op) {
  for (int64_t dim : {0, 2})
    buildSameSizeCheck(b, op, PE_CHECK_ATTENTION_SHARED_KEY, op.getSharedKey(), dim,
                       op.getKey(), dim);
}

AttentionOp pe::expandSharedKey(RewriterBase &rewriter, AttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(op.getLoc(), rewriter);
  checkSharedKey(b, op);
  Value key = op.getKey(), shared = op.getSharedKey();
  RankedTensorType keyType = op.getKey().getType();
  const int64_t own = keyType.getDimSize(3);
  const int64_t dim = op.getQuery().getType().getDimSize(3);
  Value init = tensor::EmptyOp::create(
      b,
      ArrayRef<OpFoldResult>{tensor::getMixedSize(b, b.getLoc(), key, 0),
                             b.getIndexAttr(keyType.getDimSize(1)),
                             tensor::getMixedSize(b, b.getLoc(), key, 2), b.getIndexAttr(dim)},
      keyType.getElementType());
  // keys[b, h, j, c] = c < own ? key[b, h, j, c] : shared[b, 0, j, c - own];
  // both reads stay in bounds (the other index clamped).
  auto body = [&](OpBuilder &nb, Location nloc, ValueRange) {
    ImplicitLocOpBuilder n(nloc, nb);
    SmallVector<Value> at;
    for (int64_t d = 0; d < 4; ++d)
      at.push_back(linalg::IndexOp::create(n, d));
    Value ownDim = arith::ConstantIndexOp::create(n, own);
    Value isOwn = arith::CmpIOp::create(n, arith::CmpIPredicate::ult, at[3], ownDim);
    Value zero = arith::ConstantIndexOp::create(n, 0);
    Value ownChannel = arith::SelectOp::create(n, isOwn, at[3], zero);
    Value sharedChannel =
        arith::SelectOp::create(n, isOwn, zero, arith::SubIOp::create(n, at[3], ownDim));
    Value mine = tensor::ExtractOp::create(n, key, ValueRange{at[0], at[1], at[2], ownChannel});
    Value block =
        tensor::ExtractOp::create(n, shared, ValueRange{at[0], zero, at[2], sharedChannel});
    linalg::YieldOp::create(n, ValueRange{arith::SelectOp::create(n, isOwn, mine, block)});
  };
  auto identity = AffineMap::getMultiDimIdentityMap(4, b.getContext());
  Value keys = linalg::GenericOp::create(b, init.getType(), ValueRange{}, ValueRange{init},
                                         SmallVector<AffineMap>{identity},
                                         SmallVector<utils::IteratorType>(
                                             4, utils::IteratorType::parallel),
                                         body)
                   .getResult(0);
  auto expanded = AttentionOp::create(
      b, op.getType(), op.getQuery(), keys, op.getValue(), op.getMask(), op.getQPositions(),
      op.getKPositions(), op.getSinks(), op.getQRopePositions(), op.getKRopePositions(),
      /*shared_key=*/Value(), op.getScaleAttr(), op.getCausalAttr(), op.getWindowAttr(),
      op.getChunkAttr(), op.getRopeAttr(), op.getAlibiAttr(), op.getSoftcapAttr(),
      op.getTemperatureAttr());
  rewriter.replaceOp(op, expanded.getResult());
  return expanded;
}

bool pe::rotationStraddlesSharedKey(AttentionOp op) {
  RopeAttr rope = op.getRopeAttr();
  if (!rope || !op.getSharedKey())
    return false;
  const int64_t own = op.getKey().getType().getDimSize(3);
  return rope.getRotaryOffset() < own && own < rope.getRotaryOffset() + rope.getRotaryDim();
}

void pe::expandSharedKeys(Operation *root, function_ref<bool(AttentionOp)> expand) {
  SmallVector<AttentionOp> ops;
  root->walk([&](AttentionOp op) {
    if (op.getSharedKey() && expand(op))
      ops.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (AttentionOp op : ops)
    expandSharedKey(rewriter, op);
}

AttentionTensors pe::prepareAttentionTensors(ImplicitLocOpBuilder &b, AttentionOp op) {
  AttentionTensors t;
  if ((t.sharedKey = op.getSharedKey()))
    checkSharedKey(b, op);
  t.q = op.getQuery();
  t.k = op.getKey();
  t.v = op.getValue();
  t.mask = op.getMask();
  std::tie(t.qPos, t.kPos) = prepareAttentionOperands(b, op, t.q, t.k, t.v, t.mask,
                                                      op.getQPositions(), op.getKPositions());
  if (op.getRopeAttr()) {
    AttentionRopeTables tables = buildAttentionRopeTables(
        b, op, t.q, t.k, t.qPos, t.kPos, op.getQRopePositions(), op.getKRopePositions());
    std::tie(t.qCos, t.qSin, t.kCos, t.kSin) =
        std::tuple{tables.qCos, tables.qSin, tables.kCos, tables.kSin};
  }
  if (std::optional<APFloat> alibi = op.getAlibi())
    t.slopes = buildAlibiSlopes(b, op.getQuery().getType().getDimSize(1),
                                alibi->convertToDouble());
  return t;
}

std::pair<Value, Value> pe::prepareRopeOperands(ImplicitLocOpBuilder &b,
                                                RopeOp op, Value x,
                                                Value positions, Value cos,
                                                Value sin) {
  int64_t seqDim = op.getLayout() == Layout::bhsd ? 2 : 1;
  auto posType = cast<RankedTensorType>(positions.getType());
  // [S] / [B, S], or [A, S] / [B, A, S] for a multi-stream rope.
  const bool multiStream = op.getRope().isMultiStream();
  const int64_t batchedRank = multiStream ? 3 : 2;
  buildSameSizeCheck(b, op, PE_CHECK_ROPE_POSITIONS_LENGTH, positions,
                     posType.getRank() - 1, x, seqDim);
  if (posType.getRank() == batchedRank)
    buildSameSizeCheck(b, op, PE_CHECK_ROPE_POSITIONS_BATCH, positions, 0, x, 0);
  // Shared tables when given (pe-share-rope-tables), else our own.
  if (!cos)
    return buildRopeTables(b, op.getRope(), positions, b.getF32Type());
  // Table dim i is the positions' dim i, skipping the stream dim.
  const int64_t tokenRank = posType.getRank() - (multiStream ? 1 : 0);
  for (int64_t i = 0; i < tokenRank; ++i) {
    int64_t posDim = multiStream && i == tokenRank - 1 ? i + 1 : i;
    buildSameSizeCheck(b, op, PE_CHECK_ROPE_TABLES, cos, i, positions, posDim);
  }
  return {cos, sin};
}

void pe::checkAttentionResult(ImplicitLocOpBuilder &b, AttentionOp op,
                              ArrayRef<OpFoldResult> sizes) {
  buildResultSizeChecks(b, op, PE_CHECK_ATTENTION_RESULT, op.getType(), sizes);
}

Value pe::attentionResultFromBuffer(ImplicitLocOpBuilder &b, AttentionOp op, Value out) {
  auto type = cast<MemRefType>(out.getType());
  Value result = bufferization::ToTensorOp::create(
      b, RankedTensorType::get(type.getShape(), type.getElementType()), out,
      /*restrict=*/true, /*writable=*/true);
  checkAttentionResult(b, op, tensor::getMixedSizes(b, b.getLoc(), result));
  if (result.getType() != op.getType())
    result = tensor::CastOp::create(b, op.getType(), result);
  return result;
}

std::optional<AttentionHeads> pe::attentionHeads(AttentionOp op) {
  AttentionHeads heads;
  heads.queryHeads = op.getQuery().getType().getDimSize(1);
  heads.kvHeads = op.getKey().getType().getDimSize(1);
  heads.headDim = op.getQuery().getType().getDimSize(3);
  heads.valueDim = op.getValue().getType().getDimSize(3);
  for (int64_t dim : {heads.queryHeads, heads.kvHeads, heads.headDim, heads.valueDim})
    if (ShapedType::isDynamic(dim) || dim < 1)
      return std::nullopt;
  return heads;
}

//===----------------------------------------------------------------------===//
// Paged caches
//===----------------------------------------------------------------------===//

namespace {

/// Element `indices` of an integer tensor as an index.
Value outside(ImplicitLocOpBuilder &b, Value x, Value low, Value high,
              arith::CmpIPredicate above) {
  return arith::OrIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, low),
      arith::CmpIOp::create(b, above, x, high));
}

} // namespace

void pe::buildPagedCheck(ImplicitLocOpBuilder &b, Operation *op, Value cond,
                         StringRef errorFn, Value value, Value sequence, Value limit) {
  FlatSymbolRefAttr fn = declareRuntimeFunction(b, op, errorFn);
  scf::IfOp::create(b, cond, [&](OpBuilder &tb, Location tloc) {
    ImplicitLocOpBuilder t(tloc, tb);
    SmallVector<Value> args;
    for (Value x : {value, sequence, limit})
      args.push_back(arith::IndexCastOp::create(t, t.getI64Type(), x));
    func::CallOp::create(t, fn, TypeRange{}, args);
    scf::YieldOp::create(t);
  });
}

/// x == y (index).
static Value equalIndex(ImplicitLocOpBuilder &b, Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
}

/// Whether `length` keys lie outside [0, M * page_size] for a block table of
/// M columns (i1), and that capacity.
static std::pair<Value, Value> kvLengthOutside(ImplicitLocOpBuilder &b, Value table,
                                               Value length, Value pageSize) {
  Value capacity = arith::MulIOp::create(b, dimValue(b, table, 1), pageSize);
  Value zero = arith::ConstantIndexOp::create(b, 0);
  return {outside(b, length, zero, capacity, arith::CmpIPredicate::sgt), capacity};
}

Value pe::buildKvLengthCheck(ImplicitLocOpBuilder &b, Operation *op, Value table,
                             Value seq, Value length, Value pageSize) {
  auto [bad, capacity] = kvLengthOutside(b, table, length, pageSize);
  buildPagedCheck(b, op, bad,
                  isa<GatherPagesOp>(op) ? kGatherLengthOutOfRangeFn : kKvLengthOutOfRangeFn,
                  length, seq, capacity);
  return arith::XOrIOp::create(b, bad, arith::ConstantIntOp::create(b, 1, 1));
}

/// The check that block_table[seq, column] lies within [0, pages).
static void buildPageCheck(ImplicitLocOpBuilder &b, Operation *op, Value table, Value seq,
                           Value column, Value pages) {
  Value page = extractIndex(b, table, ValueRange{seq, column});
  Value bad =
      outside(b, page, arith::ConstantIndexOp::create(b, 0), pages, arith::CmpIPredicate::sge);
  buildPagedCheck(b, op, bad,
                  isa<GatherPagesOp>(op) ? kGatherPageOutOfRangeFn : kPageOutOfRangeFn, page,
                  seq, pages);
}

void pe::buildPageChecks(ImplicitLocOpBuilder &b, Operation *op, Value table, Value seq,
                         Value length, Value pageSize, Value pages, Value valid) {
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  // The block table's columns that hold keys; none where `valid` fails.
  Value used = arith::SelectOp::create(
      b, valid, arith::CeilDivSIOp::create(b, length, pageSize), zero);
  scf::ForOp::create(b, zero, used, one, ValueRange{},
                     [&](OpBuilder &nb, Location nloc, Value column, ValueRange) {
                       ImplicitLocOpBuilder n(nloc, nb);
                       buildPageCheck(n, op, table, seq, column, pages);
                       scf::YieldOp::create(n);
                     });
}

/// The checks of sequence `seq` of paged attention `op`: its key count,
/// its query count, its mask columns, and with `pages` its pages (else
/// buildTablePageChecks checks them). Each only where the ones before it
/// passed, so that a sequence reports one error also where checks do not
/// stop (GPU check kernels).
static void buildSequenceChecks(ImplicitLocOpBuilder &b, PagedAttentionOp op, Value seq,
                                bool pages) {
  Value table = op.getBlockTable(), lens = op.getKvLens(), cu = op.getCuSeqlens();
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value pageSize = dimValue(b, op.getKeyCache(), op.getPageSizeDim());
  Value keys = extractIndex(b, lens, seq);
  Value queries = arith::SubIOp::create(
      b, extractIndex(b, cu, ValueRange{arith::AddIOp::create(b, seq, one)}),
      extractIndex(b, cu, seq));
  Value goodLength = buildKvLengthCheck(b, op, table, seq, keys, pageSize);
  Value badQueries =
      arith::OrIOp::create(b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, queries, zero),
                           arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, queries, keys));
  buildPagedCheck(b, op, arith::AndIOp::create(b, goodLength, badQueries),
                  kQueryCountOutOfRangeFn, queries, seq, keys);
  if (Value mask = op.getMask()) {
    Value columns = dimValue(b, mask, 2);
    Value fewColumns = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, keys, columns);
    buildPagedCheck(b, op, arith::AndIOp::create(b, goodLength, fewColumns),
                    kMaskColumnsOutOfRangeFn, keys, seq, columns);
  }
  if (pages)
    buildPageChecks(b, op, table, seq, keys, pageSize, dimValue(b, op.getKeyCache(), 0),
                    goodLength);
}

/// The checks of every page the sequences of paged attention `op` read:
/// one loop over the block table's B x M entries, entry t at (t / M, t %
/// M), checked where its column holds keys of a sequence whose cu_seqlens
/// ends and key count are right (what buildSequenceChecks reports
/// otherwise). Its iterations are independent: on the GPU, a thread each
/// (a nest of the sequences' pages would run in one thread). The CPU keeps
/// the nest, which visits only the columns that hold keys (a block table
/// padded to the longest context has far more).
static void buildTablePageChecks(ImplicitLocOpBuilder &b, PagedAttentionOp op, Value tokens) {
  Value table = op.getBlockTable(), lens = op.getKvLens(), cu = op.getCuSeqlens();
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value batch = dimValue(b, table, 0), columns = dimValue(b, table, 1);
  Value pageSize = dimValue(b, op.getKeyCache(), op.getPageSizeDim());
  Value pages = dimValue(b, op.getKeyCache(), 0);
  Value entries = arith::MulIOp::create(b, batch, columns);
  scf::ForOp::create(b, zero, entries, one, ValueRange{}, [&](OpBuilder &nb, Location nloc,
                                                              Value t, ValueRange) {
    ImplicitLocOpBuilder n(nloc, nb);
    Value seq = arith::DivUIOp::create(n, t, columns);
    Value column = arith::RemUIOp::create(n, t, columns);
    Value ends = arith::AndIOp::create(n, equalIndex(n, extractIndex(n, cu, zero), zero),
                                       equalIndex(n, extractIndex(n, cu, batch), tokens));
    Value keys = extractIndex(n, lens, seq);
    Value goodLength = arith::XOrIOp::create(
        n, kvLengthOutside(n, table, keys, pageSize).first, arith::ConstantIntOp::create(n, 1, 1));
    Value used = arith::CeilDivSIOp::create(n, keys, pageSize);
    Value holdsKeys = arith::CmpIOp::create(n, arith::CmpIPredicate::slt, column, used);
    Value check = arith::AndIOp::create(n, arith::AndIOp::create(n, ends, goodLength), holdsKeys);
    scf::IfOp::create(n, check, [&](OpBuilder &, Location) {
      buildPageCheck(n, op, table, seq, column, pages);
      scf::YieldOp::create(n);
    });
    scf::YieldOp::create(n);
  });
}

void pe::buildPagedAttentionChecks(ImplicitLocOpBuilder &b, PagedAttentionOp op,
                                   bool pagesPerEntry) {
  Value table = op.getBlockTable(), lens = op.getKvLens(), cu = op.getCuSeqlens();
  Value batch = dimValue(b, table, 0);
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  buildSameSizeCheck(b, op, PE_CHECK_PAGED_BATCH, lens, 0, table, 0);
  buildSizeCheck(b, op, PE_CHECK_PAGED_BATCH, dimValue(b, cu, 0),
                 arith::AddIOp::create(b, batch, one));
  buildSameSizeCheck(b, op, PE_CHECK_PAGED_CACHES, op.getValueCache(), 0,
                     op.getKeyCache(), 0);
  // No sequence: cu_seqlens = [0] and no query rows, read here (the loop
  // below reads them otherwise).
  Value tokens = dimValue(b, op.getQuery(), 0);
  Value empty = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, batch, zero);
  scf::IfOp::create(b, empty, [&](OpBuilder &, Location) {
    Value start = extractIndex(b, cu, zero);
    buildSizeCheck(b, op, PE_CHECK_PAGED_QUERY_START, start, zero);
    buildSizeCheck(b, op, PE_CHECK_PAGED_QUERY_END, start, tokens);
    scf::YieldOp::create(b);
  });
  if (Value mask = op.getMask())
    buildSameSizeCheck(b, op, PE_CHECK_PAGED_MASK, mask, 0, op.getQuery(), 0);
  if (Value ropePositions = op.getRopePositions())
    buildSameSizeCheck(b, op, PE_CHECK_PAGED_ROPE_POSITIONS, ropePositions, 1, op.getQuery(),
                       0);
  // Device data is read inside the loop only (on the GPU a thread per
  // sequence, whose reports are deferred, where the host would read values
  // back): cu_seqlens' first entry with the first sequence, its last with
  // the last (where the first is right), and each sequence's checks where
  // both ends are.
  scf::ForOp::create(b, zero, batch, one, ValueRange{}, [&](OpBuilder &nb, Location nloc,
                                                           Value seq, ValueRange) {
    ImplicitLocOpBuilder n(nloc, nb);
    auto inside = [&](Value cond, function_ref<void()> body) {
      scf::IfOp::create(n, cond, [&](OpBuilder &, Location) {
        body();
        scf::YieldOp::create(n);
      });
    };
    auto equal = [&](Value x, Value y) { return equalIndex(n, x, y); };
    Value start = extractIndex(n, cu, zero), end = extractIndex(n, cu, batch);
    Value startOk = equal(start, zero);
    inside(equal(seq, zero), [&] {
      buildSizeCheck(n, op, PE_CHECK_PAGED_QUERY_START, start, zero);
    });
    inside(arith::AndIOp::create(n, startOk, equal(seq, arith::SubIOp::create(n, batch, one))),
           [&] { buildSizeCheck(n, op, PE_CHECK_PAGED_QUERY_END, end, tokens); });
    inside(arith::AndIOp::create(n, startOk, equal(end, tokens)),
           [&] { buildSequenceChecks(n, op, seq, /*pages=*/!pagesPerEntry); });
    scf::YieldOp::create(n);
  });
  if (pagesPerEntry)
    buildTablePageChecks(b, op, tokens);
}

void pe::checkGatherPages(ImplicitLocOpBuilder &b, GatherPagesOp op) {
  Value table = op.getBlockTable(), seq = op.getSequence();
  Value rows = dimValue(b, table, 0);
  Value badSequence = outside(b, seq, arith::ConstantIndexOp::create(b, 0), rows,
                              arith::CmpIPredicate::sge);
  buildPagedCheck(b, op, badSequence, kSequenceOutOfRangeFn, seq, seq, rows);
  // The other checks read the table's row: only for a sequence inside it.
  scf::IfOp::create(
      b, arith::XOrIOp::create(b, badSequence, arith::ConstantIntOp::create(b, 1, 1)),
      [&](OpBuilder &tb, Location tloc) {
        ImplicitLocOpBuilder t(tloc, tb);
        Value cache = op.getCache();
        Value pageSize = dimValue(t, cache, op.getPageSizeDim());
        Value valid = buildKvLengthCheck(t, op, table, seq, op.getLength(), pageSize);
        buildPageChecks(t, op, table, seq, op.getLength(), pageSize, dimValue(t, cache, 0),
                        valid);
        scf::YieldOp::create(t);
      });
}

//===----------------------------------------------------------------------===//
// KV-cache append
//===----------------------------------------------------------------------===//

/// Slots per cache, as i64: Smax, or pages * page_size.
static Value appendCapacity(ImplicitLocOpBuilder &b, AppendKvOp op, Value cache) {
  auto dim = [&](int64_t d) {
    return b.createOrFold<arith::IndexCastOp>(b.getI64Type(), dimValue(b, cache, d));
  };
  if (!op.isPaged())
    return dim(2);
  return b.createOrFold<arith::MulIOp>(dim(0),
                                       dim(op.getLayout() == CacheLayout::nhd ? 1 : 2));
}

/// The sizes of an append the verifier could not compare (dynamic ones).
static void checkAppendSizes(ImplicitLocOpBuilder &b, AppendKvOp op, Value k, Value v,
                             Value kc, Value vc, Value slots, Value positions) {
  const int64_t tokenDim = op.isPaged() ? 0 : 2;
  const int64_t slotRank = cast<RankedTensorType>(slots.getType()).getRank();
  buildSameSizeCheck(b, op, PE_CHECK_APPEND_VALUES, v, tokenDim, k, tokenDim);
  buildSameSizeCheck(b, op, PE_CHECK_APPEND_SLOTS, slots, slotRank - 1, k, tokenDim);
  buildSameSizeCheck(b, op, PE_CHECK_APPEND_CACHES, vc, 0, kc, 0);
  if (!op.isPaged()) {
    buildSameSizeCheck(b, op, PE_CHECK_APPEND_VALUES, v, 0, k, 0);
    buildSameSizeCheck(b, op, PE_CHECK_APPEND_BATCH, k, 0, kc, 0);
    buildSameSizeCheck(b, op, PE_CHECK_APPEND_CACHES, vc, 2, kc, 2);
    if (slotRank == 2)
      buildSameSizeCheck(b, op, PE_CHECK_APPEND_SLOTS, slots, 0, k, 0);
  }
  if (!positions)
    return;
  const int64_t rank = cast<RankedTensorType>(positions.getType()).getRank();
  if (!op.getRopeAttr().isMultiStream()) {
    // [T], [S] or [B, S], whatever the slots' rank: the tokens against the
    // keys', a batch against the keys'.
    buildSameSizeCheck(b, op, PE_CHECK_APPEND_POSITIONS, positions, rank - 1, k, tokenDim);
    if (rank == 2)
      buildSameSizeCheck(b, op, PE_CHECK_APPEND_POSITIONS, positions, 0, k, 0);
    return;
  }
  // [A, T], [A, S] or [B, A, S]: the tokens against the slots', a batch
  // against the keys'.
  buildSameSizeCheck(b, op, PE_CHECK_APPEND_POSITIONS, positions, rank - 1, slots,
                     slotRank - 1);
  if (rank == 3)
    buildSameSizeCheck(b, op, PE_CHECK_APPEND_POSITIONS, positions, 0, k, 0);
}

Value pe::buildAppendKvChecks(ImplicitLocOpBuilder &b, AppendKvOp op, Value key, Value value,
                              Value keyCache, Value valueCache, Value slots,
                              Value positions) {
  checkAppendSizes(b, op, key, value, keyCache, valueCache, slots, positions);
  Value capacity = appendCapacity(b, op, keyCache);
  // Slot -1 skips a token; every other slot is in [0, capacity).
  buildIndexRangeCheck(b, op, kSlotOutOfRangeFn, slots, -1, capacity);
  return capacity;
}

Value pe::buildAppendTokenPositions(ImplicitLocOpBuilder &b, Value positions,
                                    bool multiStream) {
  auto type = cast<RankedTensorType>(positions.getType());
  if (!multiStream)
    return tensor::ExpandShapeOp::create(
        b, RankedTensorType::get({type.getDimSize(0), 1}, type.getElementType()), positions,
        SmallVector<ReassociationIndices>{{0, 1}});
  SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, b.getLoc(), positions, 1),
                                     b.getIndexAttr(type.getDimSize(0))};
  Value init = tensor::EmptyOp::create(b, sizes, type.getElementType());
  Value byToken =
      linalg::TransposeOp::create(b, positions, init, ArrayRef<int64_t>{1, 0}).getResult()[0];
  auto transposed = cast<RankedTensorType>(byToken.getType());
  return tensor::ExpandShapeOp::create(
      b,
      RankedTensorType::get({transposed.getDimSize(0), transposed.getDimSize(1), 1},
                            type.getElementType()),
      byToken, SmallVector<ReassociationIndices>{{0}, {1, 2}});
}

const char *pe::appendKernelRefusal(AppendKvOp op, int64_t keyLanes, int64_t valueLanes) {
  const int64_t d = op.getKey().getType().getShape().back();
  const int64_t dv = op.getValue().getType().getShape().back();
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv) || d % keyLanes ||
      dv % valueLanes)
    return "rows are not whole vectors";
  if (RopeAttr rope = op.getRopeAttr()) {
    if (rope.isMultiStream())
      return "multi-stream rope";
    const RotatedChannels rotation = RotatedChannels::of(rope);
    if ((rope.getRotaryDim() / 2) % keyLanes || !rotation.passThroughAligned(d, keyLanes))
      return "rotated pairs are not whole vectors";
  }
  if (!SymbolTable::getNearestSymbolTable(op) ||
      largestConstantTable(op) > kMaxConstantTableEntries)
    return "left to the reference lowering";
  return nullptr;
}
