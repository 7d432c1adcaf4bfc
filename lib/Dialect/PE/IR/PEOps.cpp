//===- PEOps.cpp - operations of the pe dialect: verifiers ----------------===//
//
// Every constraint of the op descriptions is checked here; each message says
// what is wrong and what was expected. Folds live in PEFolds.cpp.
//
//===----------------------------------------------------------------------===//
#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pe;

#define GET_OP_CLASSES
#include "pe/Dialect/PE/IR/PEOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

/// Positions are `[S]` or `[B, S]`.
static LogicalResult verifyPositionsRank(Operation *op, StringRef name,
                                         RankedTensorType type) {
  if (type.getRank() == 1 || type.getRank() == 2)
    return success();
  return op->emitOpError() << "expects " << name
                           << " of shape [S] or [B, S], but got rank "
                           << type.getRank();
}

/// A table computed per position: shape `positions.shape + [lastDim]`.
static LogicalResult verifyPerPositionResult(Operation *op, StringRef name,
                                             RankedTensorType positions,
                                             RankedTensorType result,
                                             int64_t lastDim,
                                             StringRef lastDimMeaning) {
  if (result.getRank() != positions.getRank() + 1)
    return op->emitOpError() << "expects " << name << " of rank "
                             << positions.getRank() + 1
                             << " (the positions' shape plus one dimension), "
                                "but got rank "
                             << result.getRank();
  for (int64_t i = 0; i < positions.getRank(); ++i)
    if (!compatible(positions.getDimSize(i), result.getDimSize(i)))
      return op->emitOpError()
             << "expects " << name << " dimension " << i
             << " to match the positions (" << dimStr(positions.getDimSize(i))
             << "), but got " << dimStr(result.getDimSize(i));
  if (result.getShape().back() != lastDim)
    return op->emitOpError() << "expects the last dimension of " << name
                             << " to be " << lastDimMeaning << " = " << lastDim
                             << ", but got " << dimStr(result.getShape().back());
  return success();
}

/// The positions of an op may be checked against a sequence dim `seq` and an
/// (optional) batch dim `batch`.
static LogicalResult verifyPositionsShape(Operation *op, StringRef name,
                                          RankedTensorType positions,
                                          int64_t batch, int64_t seq,
                                          StringRef seqName) {
  if (failed(verifyPositionsRank(op, name, positions)))
    return failure();
  int64_t s = positions.getShape().back();
  if (!compatible(s, seq))
    return op->emitOpError() << "expects " << name << " to have " << seqName
                             << " = " << dimStr(seq) << " entries, but got "
                             << dimStr(s);
  if (positions.getRank() == 2 && !compatible(positions.getDimSize(0), batch))
    return op->emitOpError()
           << "expects the batch dimension of " << name << " to be "
           << dimStr(batch) << ", but got " << dimStr(positions.getDimSize(0));
  return success();
}

/// The positions a RoPE rotates by: `[S]` or `[B, S]`, or for a multi-stream
/// `rope` of A streams `[A, S]` or `[B, A, S]` with A static.
static LogicalResult verifyRopePositions(Operation *op, StringRef name,
                                         RankedTensorType positions, RopeAttr rope,
                                         int64_t batch, int64_t seq, StringRef seqName) {
  if (!rope.isMultiStream())
    return verifyPositionsShape(op, name, positions, batch, seq, seqName);
  const int64_t rank = positions.getRank(), streams = rope.getNumStreams();
  if (rank != 2 && rank != 3)
    return op->emitOpError() << "expects " << name << " of shape [A, S] or [B, A, S] (A = "
                             << streams << " position streams, one per section of the "
                                           "rope), but got rank "
                             << rank;
  if (positions.getDimSize(rank - 2) != streams)
    return op->emitOpError() << "expects " << name << " to hold A = " << streams
                             << " position streams (dimension " << rank - 2
                             << ", one per section), but got "
                             << dimStr(positions.getDimSize(rank - 2));
  if (!compatible(positions.getDimSize(rank - 1), seq))
    return op->emitOpError() << "expects " << name << " to have " << seqName << " = "
                             << dimStr(seq) << " entries per stream, but got "
                             << dimStr(positions.getDimSize(rank - 1));
  if (rank == 3 && !compatible(positions.getDimSize(0), batch))
    return op->emitOpError()
           << "expects the batch dimension of " << name << " to be "
           << dimStr(batch) << ", but got " << dimStr(positions.getDimSize(0));
  return success();
}

static LogicalResult verifyStatic(Operation *op, StringRef what, int64_t dim) {
  if (!ShapedType::isDynamic(dim))
    return success();
  return op->emitOpError() << "expects a static " << what
                           << " (only batch and sequence dimensions may be "
                              "dynamic)";
}

static LogicalResult verifyRotaryDimFits(Operation *op, RopeAttr rope,
                                         int64_t headDim) {
  // (Subtracted: rotary_dim may be near INT64_MAX, the offset is at most 2^40.)
  if (rope.getRotaryDim() <= headDim - rope.getRotaryOffset())
    return success();
  if (rope.getRotaryOffset() == 0)
    return op->emitOpError() << "expects rotary_dim (" << rope.getRotaryDim()
                             << ") <= head dimension (" << headDim << ")";
  return op->emitOpError() << "expects rotary_offset + rotary_dim ("
                           << rope.getRotaryOffset() << " + " << rope.getRotaryDim()
                           << ") <= head dimension (" << headDim << ")";
}

LogicalResult mlir::pe::verifyBoundedShapes(Operation *op) {
  auto check = [&](Type type, StringRef kind, unsigned index) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    // Bytes = product of the static sizes times 8 (the widest element); an
    // empty tensor has none.
    if (llvm::is_contained(tensor.getShape(), 0))
      return success();
    int64_t bytes = 8;
    for (int64_t size : tensor.getShape())
      if (!ShapedType::isDynamic(size) && llvm::MulOverflow(bytes, size, bytes))
        return op->emitOpError()
               << kind << " #" << index << " of type " << tensor
               << " is too large: its size in bytes overflows 64 bits";
    return success();
  };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", i)))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", i)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

LogicalResult RopeFrequenciesOp::verify() {
  int64_t half = getRope().getRotaryDim() / 2;
  int64_t size = getType().getDimSize(0);
  if (size != half)
    return emitOpError() << "expects a result of rotary_dim/2 = " << half
                         << " elements, but got " << dimStr(size);
  return success();
}

LogicalResult RopeTablesOp::verify() {
  auto positions = getPositions().getType();
  if (failed(verifyRopePositions(*this, "positions", positions, getRope(),
                                 ShapedType::kDynamic, ShapedType::kDynamic, "S")))
    return failure();
  return verifyPerPositionResult(*this, "the tables", getRope().getTokenShape(positions),
                                 getCos().getType(),
                                 getRope().getRotaryDim() / 2, "rotary_dim/2");
}

LogicalResult RopeOp::verify() {
  RankedTensorType type = getInput().getType();
  bool bhsd = getLayout() == Layout::bhsd;
  if (type.getRank() != 4)
    return emitOpError() << "expects a rank-4 input ("
                         << (bhsd ? "[B, H, S, D]" : "[B, S, H, D]")
                         << "), but got rank " << type.getRank();
  int64_t batch = type.getDimSize(0);
  int64_t heads = type.getDimSize(bhsd ? 1 : 2);
  int64_t seq = type.getDimSize(bhsd ? 2 : 1);
  int64_t headDim = type.getDimSize(3);
  if (failed(verifyStatic(*this, "head count", heads)) ||
      failed(verifyStatic(*this, "head dimension", headDim)) ||
      failed(verifyRotaryDimFits(*this, getRope(), headDim)))
    return failure();
  if (failed(verifyRopePositions(*this, "positions", getPositions().getType(),
                                 getRope(), batch, seq, "S")))
    return failure();
  if (bool(getCos()) != bool(getSin()))
    return emitOpError() << "expects both tables (cos and sin) or neither";
  if (Value cos = getCos()) {
    if (cos.getType() != getSin().getType())
      return emitOpError() << "expects cos and sin tables of one type, but got "
                           << cos.getType() << " and " << getSin().getType();
    if (failed(verifyPerPositionResult(
            *this, "the tables", getRope().getTokenShape(getPositions().getType()),
            cast<RankedTensorType>(cos.getType()), getRope().getRotaryDim() / 2,
            "rotary_dim/2")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Absolute encodings
//===----------------------------------------------------------------------===//

formula::SinusoidalTable SinusoidalOp::getTable() {
  formula::SinusoidalTable table;
  table.dim = getType().getShape().back();
  table.base = getBase().convertToDouble();
  if (FloatAttr shift = getFreqShiftAttr())
    table.shift = shift.getValueAsDouble();
  else if (getSpacing() == SinusoidalSpacing::fairseq)
    table.shift = 1.0;
  table.scale = getScale().convertToDouble();
  table.interleaved = getLayout() == SinusoidalLayout::interleaved;
  table.cosFirst = getCosFirst();
  table.oddSin = getOdd() == SinusoidalOdd::sin;
  return table;
}

LogicalResult SinusoidalOp::verify() {
  auto positions = cast<RankedTensorType>(getPositions().getType());
  if (failed(verifyPositionsRank(*this, "positions", positions)))
    return failure();
  RankedTensorType type = getType();
  if (type.getRank() != positions.getRank() + 1)
    return emitOpError() << "expects a result of rank " << positions.getRank() + 1
                         << " (the positions' shape plus the embedding "
                            "dimension), but got rank "
                         << type.getRank();
  int64_t dim = type.getShape().back();
  if (failed(verifyStatic(*this, "embedding dimension", dim)))
    return failure();
  if (dim < 1)
    return emitOpError() << "expects an embedding dimension >= 1, but got " << dim;
  if (dim % 2 != 0 && !getOdd())
    return emitOpError() << "expects odd(zero) or odd(sin) with the odd embedding "
                            "dimension "
                         << dim << " (what its last channel holds)";
  if (dim % 2 == 0 && getOdd())
    return emitOpError() << "expects no odd(...) with the even embedding dimension "
                         << dim;
  if (getFreqShift() && getSpacing() == SinusoidalSpacing::fairseq)
    return emitOpError() << "expects spacing(fairseq) or freq_shift, not both "
                            "(spacing(fairseq) is freq_shift(1))";
  const double base = getBase().convertToDouble(), scale = getScale().convertToDouble();
  if (!(std::isfinite(base) && base > 0.0))
    return emitOpError() << "expects base to be a finite number > 0, but got "
                         << base;
  if (!std::isfinite(scale))
    return emitOpError() << "expects a finite scale, but got " << scale;
  formula::SinusoidalTable table = getTable();
  if (table.shift && !(std::isfinite(*table.shift) && table.half() - *table.shift > 0.0))
    return emitOpError() << "expects dim/2 - shift > 0 with spacing(fairseq) or "
                            "freq_shift (the exponent divides by it), but got "
                            "dim/2 = "
                         << table.half() << " and shift " << *table.shift;
  if (std::optional<int64_t> padding = getPaddingIdx()) {
    auto integer = dyn_cast<IntegerType>(positions.getElementType());
    if (!integer)
      return emitOpError() << "expects integer positions with padding_idx";
    // The pad row is compared in the positions' type: it must hold it.
    if (integer.getWidth() < 64 && (*padding < std::numeric_limits<int32_t>::min() ||
                                    *padding > std::numeric_limits<int32_t>::max()))
      return emitOpError() << "expects padding_idx " << *padding
                           << " to be an i32, as the positions are";
  }
  return verifyPerPositionResult(*this, "the result", positions, type, dim,
                                 "the embedding dimension");
}

LogicalResult LearnedOp::verify() {
  RankedTensorType table = getTable().getType();
  if (table.getRank() != 2)
    return emitOpError() << "expects a rank-2 table [N, D], but got rank "
                         << table.getRank();
  if (failed(verifyStatic(*this, "embedding dimension", table.getDimSize(1))))
    return failure();
  if (getType().getElementType() != table.getElementType())
    return emitOpError() << "expects the result element type to match the "
                            "table ("
                         << table.getElementType() << "), but got "
                         << getType().getElementType();
  auto positions = getPositions().getType();
  if (failed(verifyPositionsRank(*this, "positions", positions)) ||
      failed(verifyPerPositionResult(*this, "the result", positions, getType(),
                                     table.getDimSize(1),
                                     "the table's row size")))
    return failure();

  // Constant positions are checked here; others at run time.
  int64_t rows = table.getDimSize(0);
  DenseIntElementsAttr constant;
  if (!matchPattern(getPositions(), m_Constant(&constant)))
    return success();
  for (auto [i, p] : llvm::enumerate(constant.getValues<APInt>())) {
    int64_t position = p.getSExtValue();
    if (position < 0 || (!ShapedType::isDynamic(rows) && position >= rows))
      return emitOpError() << "position " << position << " (entry " << i
                           << ") is out of range for a table of "
                           << dimStr(rows) << " rows";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ALiBi
//===----------------------------------------------------------------------===//

LogicalResult AlibiSlopesOp::verify() {
  int64_t heads = getType().getDimSize(0);
  if (failed(verifyStatic(*this, "head count", heads)))
    return failure();
  if (heads < 1)
    return emitOpError() << "expects at least one head, but got " << heads;
  double maxBias = getMaxBias().convertToDouble();
  if (!(std::isfinite(maxBias) && maxBias > 0.0))
    return emitOpError() << "expects max_bias to be a finite number > 0 "
                            "(ggml's max_bias = 0 would make every slope 1), "
                            "but got "
                         << maxBias;
  return success();
}

LogicalResult AlibiBiasOp::verify() {
  int64_t heads = getSlopes().getType().getDimSize(0);
  if (failed(verifyStatic(*this, "head count", heads)))
    return failure();
  auto qPos = getQPositions().getType();
  auto kPos = getKPositions().getType();
  if (failed(verifyPositionsRank(*this, "q_positions", qPos)) ||
      failed(verifyPositionsRank(*this, "k_positions", kPos)))
    return failure();
  bool batched = qPos.getRank() == 2 || kPos.getRank() == 2;
  RankedTensorType type = getType();
  int64_t rank = batched ? 4 : 3;
  if (type.getRank() != rank)
    return emitOpError() << "expects a result of rank " << rank << " ("
                         << (batched ? "[B, H, Sq, Skv]" : "[H, Sq, Skv]")
                         << "), but got rank " << type.getRank();
  ArrayRef<int64_t> shape = type.getShape().take_back(3);
  int64_t batch = batched ? type.getDimSize(0) : ShapedType::kDynamic;
  if (shape[0] != heads)
    return emitOpError() << "expects the result to have " << heads
                         << " heads (the number of slopes), but got "
                         << dimStr(shape[0]);
  if (failed(verifyPositionsShape(*this, "q_positions", qPos, batch, shape[1],
                                  "Sq")) ||
      failed(verifyPositionsShape(*this, "k_positions", kPos, batch, shape[2],
                                  "Skv")))
    return failure();
  if (qPos.getRank() == 2 && kPos.getRank() == 2 &&
      !compatible(qPos.getDimSize(0), kPos.getDimSize(0)))
    return emitOpError() << "expects q_positions and k_positions of one batch "
                            "size, but got "
                         << dimStr(qPos.getDimSize(0)) << " and "
                         << dimStr(kPos.getDimSize(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

double AttentionOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  return formula::defaultAttentionScale(getQuery().getType().getDimSize(3));
}

int64_t AttentionOp::getSharedKeyDim() {
  Value shared = getSharedKey();
  return shared ? cast<RankedTensorType>(shared.getType()).getShape().back() : 0;
}

/// shared_key is [B, 1, Skv, Ds] with a static 1 <= Ds < D, of the key's
/// type (the key heads keep D - Ds >= 1 channels of their own).
static LogicalResult verifySharedKey(AttentionOp op) {
  Value shared = op.getSharedKey();
  if (!shared)
    return success();
  auto type = cast<RankedTensorType>(shared.getType());
  RankedTensorType k = op.getKey().getType();
  RankedTensorType q = op.getQuery().getType();
  if (k.getRank() != 4 || q.getRank() != 4 || q.isDynamicDim(3))
    return success(); // reported by verifyAttentionShapes
  if (type.getRank() != 4 || type.getDimSize(1) != 1 || type.isDynamicDim(3) ||
      type.getDimSize(3) < 1 || type.getDimSize(3) >= q.getDimSize(3) ||
      !compatible(type.getDimSize(0), k.getDimSize(0)) ||
      !compatible(type.getDimSize(2), k.getDimSize(2)))
    return op.emitOpError() << "expects shared_key of shape [" << dimStr(k.getDimSize(0))
                            << ", 1, " << dimStr(k.getDimSize(2)) << ", Ds] with 1 <= Ds < "
                            << q.getDimSize(3)
                            << " (one block per token, Ds static), but got " << type;
  if (type.getElementType() != k.getElementType())
    return op.emitOpError() << "expects shared_key to have the key's element type ("
                            << k.getElementType() << "), but got " << type.getElementType();
  return success();
}

/// Ranks, element types and the [B, H, S, D] shapes of query, key, value
/// and result.
static LogicalResult verifyAttentionShapes(AttentionOp op) {
  RankedTensorType q = op.getQuery().getType(), k = op.getKey().getType(),
                   v = op.getValue().getType(), out = op.getType();
  for (auto [name, type] : {std::pair{"query", q}, std::pair{"key", k},
                            std::pair{"value", v}, std::pair{"result", out}})
    if (type.getRank() != 4)
      return op.emitOpError() << "expects a rank-4 " << name
                           << " ([B, H, S, D]), but got rank "
                           << type.getRank();
  Type element = q.getElementType();
  if (k.getElementType() != element || v.getElementType() != element ||
      out.getElementType() != element)
    return op.emitOpError() << "expects query, key, value and result to share "
                            "one element type, but got "
                         << q.getElementType() << ", " << k.getElementType()
                         << ", " << v.getElementType() << ", "
                         << out.getElementType();

  int64_t batch = q.getDimSize(0), hq = q.getDimSize(1), sq = q.getDimSize(2),
          d = q.getDimSize(3), hkv = k.getDimSize(1), skv = k.getDimSize(2),
          dv = v.getDimSize(3);
  if (failed(verifyStatic(op, "query head count", hq)) ||
      failed(verifyStatic(op, "key/value head count", hkv)) ||
      failed(verifyStatic(op, "head dimension", d)) ||
      failed(verifyStatic(op, "value head dimension", dv)))
    return failure();
  if (!compatible(k.getDimSize(0), batch) || !compatible(v.getDimSize(0), batch))
    return op.emitOpError() << "expects query, key and value to share the batch "
                            "size, but got "
                         << dimStr(batch) << ", " << dimStr(k.getDimSize(0))
                         << ", " << dimStr(v.getDimSize(0));
  // With a shared block, each key head's channels are the key's then the
  // block's.
  const int64_t shared = op.getSharedKeyDim();
  if (k.getDimSize(3) != d - shared)
    return op.emitOpError() << "expects key head dimension " << d - shared
                         << (shared ? " (the query's less shared_key's)" : " (the query's)")
                         << ", but got " << dimStr(k.getDimSize(3));
  if (v.getDimSize(1) != hkv)
    return op.emitOpError() << "expects value to have " << hkv
                         << " heads (the key's), but got " << dimStr(v.getDimSize(1));
  if (!compatible(v.getDimSize(2), skv))
    return op.emitOpError() << "expects value to have " << dimStr(skv)
                         << " positions (the key's), but got "
                         << dimStr(v.getDimSize(2));
  if (hq < 1 || d < 1)
    return op.emitOpError() << "expects at least one query head and a head "
                            "dimension >= 1, but got "
                         << hq << " heads of dimension " << d;
  if (hkv < 1 || hq % hkv != 0)
    return op.emitOpError() << "expects the query head count (" << hq
                         << ") to be a multiple of the key/value head count ("
                         << hkv << ")";
  SmallVector<int64_t> expected = {batch, hq, sq, dv};
  for (int64_t i = 0; i < 4; ++i)
    if (!compatible(out.getDimSize(i), expected[i]))
      return op.emitOpError() << "expects result dimension " << i << " to be "
                           << dimStr(expected[i]) << " ([B, Hq, Sq, Dv]), but "
                           << "got " << dimStr(out.getDimSize(i));
  return success();
}

/// The mask and the position operands fit the attention's shapes, with one
/// batch size among all operands.
static LogicalResult verifyAttentionMaskAndPositions(AttentionOp op) {
  RankedTensorType q = op.getQuery().getType(), k = op.getKey().getType(),
                   v = op.getValue().getType();
  int64_t batch = q.getDimSize(0), hq = q.getDimSize(1), sq = q.getDimSize(2),
          skv = k.getDimSize(2);
  if (Value mask = op.getMask()) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (m.getRank() != 4)
      return op.emitOpError() << "expects a rank-4 mask ([B|1, Hq|1, Sq, Skv]), "
                              "but got rank "
                           << m.getRank();
    auto broadcastable = [](int64_t dim, int64_t full) {
      return dim == 1 || compatible(dim, full);
    };
    if (!broadcastable(m.getDimSize(0), batch) ||
        !broadcastable(m.getDimSize(1), hq) ||
        !compatible(m.getDimSize(2), sq) || !compatible(m.getDimSize(3), skv))
      return op.emitOpError() << "expects a mask of shape [" << dimStr(batch)
                           << "|1, " << hq << "|1, " << dimStr(sq) << ", "
                           << dimStr(skv) << "], but got " << m;
  }
  if (Value sinks = op.getSinks()) {
    // Static, as the head count is.
    auto type = cast<RankedTensorType>(sinks.getType());
    if (type.getRank() != 1 || type.getDimSize(0) != hq)
      return op.emitOpError() << "expects sinks [Hq] = [" << hq
                              << "] (one logit per query head), but got " << type;
  }
  if (Value qPos = op.getQPositions())
    if (failed(verifyPositionsShape(op, "q_positions",
                                    cast<RankedTensorType>(qPos.getType()),
                                    batch, sq, "Sq")))
      return failure();
  if (Value kPos = op.getKPositions())
    if (failed(verifyPositionsShape(op, "k_positions",
                                    cast<RankedTensorType>(kPos.getType()),
                                    batch, skv, "Skv")))
      return failure();
  RopeAttr rope = op.getRopeAttr();
  const bool multiStream = rope && rope.isMultiStream();
  if (bool(op.getQRopePositions()) != multiStream)
    return op.emitOpError() << (multiStream
                                    ? "expects rope_positions with a multi-stream rope "
                                      "(sections)"
                                    : "expects rope_positions only with a multi-stream "
                                      "rope (sections)");
  if (multiStream &&
      (failed(verifyRopePositions(op, "the query's rope_positions",
                                  op.getQRopePositions().getType(), rope, batch, sq,
                                  "Sq")) ||
       failed(verifyRopePositions(op, "the key's rope_positions",
                                  op.getKRopePositions().getType(), rope, batch, skv,
                                  "Skv"))))
    return failure();

  // Every batch dimension present must agree, also when B itself is dynamic.
  {
    SmallVector<std::pair<StringRef, int64_t>> batches = {
        {"query", batch}, {"key", k.getDimSize(0)}, {"value", v.getDimSize(0)}};
    for (auto [name, pos] : {std::pair{"q_positions", op.getQPositions()},
                             std::pair{"k_positions", op.getKPositions()}})
      if (pos && cast<RankedTensorType>(pos.getType()).getRank() == 2)
        batches.push_back({name, cast<RankedTensorType>(pos.getType()).getDimSize(0)});
    for (auto [name, pos] : {std::pair{"the query's rope_positions", op.getQRopePositions()},
                             std::pair{"the key's rope_positions", op.getKRopePositions()}})
      if (pos && cast<RankedTensorType>(pos.getType()).getRank() == 3)
        batches.push_back({name, cast<RankedTensorType>(pos.getType()).getDimSize(0)});
    for (auto [name, size] : batches)
      for (auto [otherName, otherSize] : batches)
        if (!compatible(size, otherSize))
          return op.emitOpError() << "expects one batch size, but " << name << " has "
                               << dimStr(size) << " and " << otherName << " has "
                               << dimStr(otherSize);
  }
  return success();
}

/// scale, window, rope, alibi and softcap parameters.
/// scale, window, rope, alibi and softcap of an attention op whose queries
/// have `d` channels (pe.attention, pe.paged_attention).
template <typename AttentionLikeOp>
static LogicalResult verifyAttentionParameters(AttentionLikeOp op, int64_t d) {
  if (std::optional<APFloat> scale = op.getScale()) {
    // Scores are scaled in f32.
    double s = scale->convertToDouble();
    if (!isNormalPositiveF32(s))
      return op.emitOpError() << "expects scale to be a normal f32 > 0 (scores "
                              "are scaled in f32), but got "
                           << s;
  }
  if (std::optional<int64_t> window = op.getWindow(); window && *window < 1)
    return op.emitOpError() << "expects window >= 1 (the number of visible "
                            "positions), but got "
                         << *window;
  if (std::optional<int64_t> chunk = op.getChunk(); chunk && *chunk < 1)
    return op.emitOpError() << "expects chunk >= 1 (the positions of a chunk), but got "
                            << *chunk;
  if (RopeAttr rope = op.getRopeAttr())
    if (failed(verifyRotaryDimFits(op, rope, d)))
      return failure();
  if (std::optional<APFloat> alibi = op.getAlibi()) {
    double maxBias = alibi->convertToDouble();
    if (!(std::isfinite(maxBias) && maxBias > 0.0))
      return op.emitOpError() << "expects alibi max_bias to be a finite number "
                              "> 0, but got "
                           << maxBias;
  }
  if (std::optional<APFloat> softcap = op.getSoftcap()) {
    // c tanh(s / c) is computed in f32.
    double cap = softcap->convertToDouble();
    if (!isNormalPositiveF32(cap))
      return op.emitOpError() << "expects softcap to be a normal f32 > 0 (the scores are "
                              "capped in f32), but got "
                           << cap;
  }
  return success();
}

LogicalResult AttentionOp::verify() {
  return failure(failed(verifySharedKey(*this)) || failed(verifyAttentionShapes(*this)) ||
                 failed(verifyAttentionMaskAndPositions(*this)) ||
                 failed(verifyAttentionParameters(*this, getQuery().getType().getDimSize(3))));
}


//===----------------------------------------------------------------------===//
// KV cache
//===----------------------------------------------------------------------===//

namespace {
/// The dimensions of pe.append_kv's operands that must agree, named by role.
struct AppendKvShape {
  int64_t batch = 1;        // B (dense), 1 otherwise
  int64_t tokens = 0;       // S (dense) or T (paged)
  int64_t heads = 0;        // Hkv
  int64_t dim = 0;          // D or Dv
  int64_t capacity = 0;     // Smax, or P * page_size (dynamic: unknown)
};
} // namespace

/// The shape of the new rows `rows` and their cache `cache` under `layout`,
/// or failure after a diagnostic naming `what` ("key" or "value").
static FailureOr<AppendKvShape> verifyAppendOperands(AppendKvOp op,
                                                     StringRef what,
                                                     RankedTensorType rows,
                                                     RankedTensorType cache) {
  const bool paged = op.isPaged();
  const int64_t rowsRank = paged ? 3 : 4;
  if (rows.getRank() != rowsRank)
    return op.emitOpError() << "expects the new " << what << " rows of rank "
                            << rowsRank << " ("
                            << (paged ? "[T, Hkv, D]" : "[B, Hkv, S, D]")
                            << "), but got rank " << rows.getRank();
  if (cache.getRank() != 4)
    return op.emitOpError() << "expects a rank-4 " << what << " cache, but got rank "
                            << cache.getRank();
  if (rows.getElementType() != cache.getElementType())
    return op.emitOpError() << "expects the new " << what
                            << " rows to have the cache's element type ("
                            << cache.getElementType() << "), but got "
                            << rows.getElementType();
  AppendKvShape shape;
  shape.heads = rows.getDimSize(1);
  shape.dim = rows.getShape().back();
  shape.tokens = rows.getDimSize(paged ? 0 : 2);
  if (!paged)
    shape.batch = rows.getDimSize(0);
  if (failed(verifyStatic(op, "head count", shape.heads)) ||
      failed(verifyStatic(op, "head dimension", shape.dim)))
    return failure();
  // Cache dims: dense [B, H, Smax, D], nhd [P, ps, H, D], hnd [P, H, ps, D].
  const int64_t headDim = op.getLayout() == CacheLayout::nhd ? 2 : 1;
  if (cache.getDimSize(headDim) != shape.heads ||
      cache.getDimSize(3) != shape.dim)
    return op.emitOpError() << "expects the " << what << " cache to hold "
                            << shape.heads << " heads of " << shape.dim
                            << " channels (dimensions " << headDim
                            << " and 3), but got " << cache;
  if (!paged) {
    if (!compatible(cache.getDimSize(0), shape.batch))
      return op.emitOpError() << "expects the " << what << " cache's batch ("
                              << dimStr(cache.getDimSize(0))
                              << ") to match the new rows' ("
                              << dimStr(shape.batch) << ")";
    shape.capacity = cache.getDimSize(2);
    return shape;
  }
  int64_t pages = cache.getDimSize(0);
  int64_t pageSize = cache.getDimSize(op.getLayout() == CacheLayout::nhd ? 1 : 2);
  if (failed(verifyStatic(op, "page size", pageSize)))
    return failure();
  if (pageSize <= 0)
    return op.emitOpError() << "expects a page size > 0, but got " << pageSize;
  if (ShapedType::isDynamic(pages) ||
      llvm::MulOverflow(pages, pageSize, shape.capacity))
    shape.capacity = ShapedType::kDynamic;
  return shape;
}

/// `indices` (slots or positions) have the shape of the new tokens: `[S]` or
/// `[B, S]` for a dense cache, `[T]` for a paged one.
static LogicalResult verifyTokenIndices(AppendKvOp op, StringRef name,
                                        RankedTensorType indices,
                                        const AppendKvShape &shape) {
  if (op.isPaged()) {
    if (indices.getRank() != 1)
      return op.emitOpError() << "expects " << name
                              << " of shape [T] for a paged cache, but got rank "
                              << indices.getRank();
    if (!compatible(indices.getDimSize(0), shape.tokens))
      return op.emitOpError() << "expects " << name << " to have T = "
                              << dimStr(shape.tokens) << " entries, but got "
                              << dimStr(indices.getDimSize(0));
    return success();
  }
  return verifyPositionsShape(op, name, indices, shape.batch, shape.tokens, "S");
}

LogicalResult AppendKvOp::verify() {
  FailureOr<AppendKvShape> keys = verifyAppendOperands(
      *this, "key", getKey().getType(), getKeyCache().getType());
  if (failed(keys))
    return failure();
  FailureOr<AppendKvShape> values = verifyAppendOperands(
      *this, "value", getValue().getType(), getValueCache().getType());
  if (failed(values))
    return failure();
  if (keys->heads != values->heads)
    return emitOpError() << "expects keys and values of one head count, but got "
                         << keys->heads << " and " << values->heads;
  if (!compatible(keys->tokens, values->tokens) ||
      !compatible(keys->batch, values->batch))
    return emitOpError() << "expects as many new values as new keys";
  if (!isPaged() && !compatible(getKeyCache().getType().getDimSize(2),
                                getValueCache().getType().getDimSize(2)))
    return emitOpError() << "expects key and value caches of one length Smax";
  if (isPaged()) {
    ArrayRef<int64_t> k = getKeyCache().getType().getShape();
    ArrayRef<int64_t> v = getValueCache().getType().getShape();
    if (!compatible(k[0], v[0]) || k[1] != v[1] || k[2] != v[2])
      return emitOpError() << "expects key and value caches of the same pages";
  }
  if (failed(verifyTokenIndices(*this, "slots", getSlots().getType(), *keys)))
    return failure();

  if (bool(getRope()) != bool(getPositions()))
    return emitOpError() << (getRope() ? "expects positions with rope"
                                       : "expects positions only with rope");
  if (RopeAttr rope = getRopeAttr()) {
    if (failed(verifyRotaryDimFits(*this, rope, keys->dim)))
      return failure();
    // A multi-stream rope's positions: [A, T] (paged), [A, S] or [B, A, S].
    if (rope.isMultiStream()) {
      if (isPaged() && getPositions().getType().getRank() != 2)
        return emitOpError() << "expects positions of shape [A, T] for a multi-stream rope "
                                "and a paged cache, but got rank "
                             << getPositions().getType().getRank();
      if (failed(verifyRopePositions(*this, "positions", getPositions().getType(), rope,
                                     keys->batch, keys->tokens, isPaged() ? "T" : "S")))
        return failure();
    } else if (failed(verifyTokenIndices(*this, "positions", getPositions().getType(),
                                         *keys))) {
      return failure();
    }
  }

  // Constant slots are checked here; others at run time.
  DenseIntElementsAttr constant;
  if (!matchPattern(getSlots(), m_Constant(&constant)))
    return success();
  for (auto [i, s] : llvm::enumerate(constant.getValues<APInt>())) {
    int64_t slot = s.getSExtValue();
    if (slot < -1 || (!ShapedType::isDynamic(keys->capacity) &&
                      slot >= keys->capacity))
      return emitOpError() << "slot " << slot << " (entry " << i
                           << ") is out of range for a cache of "
                           << dimStr(keys->capacity) << " slots";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Paged attention
//===----------------------------------------------------------------------===//

double PagedAttentionOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  return formula::defaultAttentionScale(getQuery().getType().getDimSize(2));
}

/// The [T, Hq, D] query and result and the paged caches.
static LogicalResult verifyPagedAttentionShapes(PagedAttentionOp op) {
  RankedTensorType q = op.getQuery().getType(), out = op.getType();
  RankedTensorType kc = op.getKeyCache().getType(), vc = op.getValueCache().getType();
  if (op.getLayout() == CacheLayout::dense)
    return op.emitOpError() << "reads a paged cache: expects layout(nhd) or "
                               "layout(hnd), but got layout(dense)";
  if (q.getRank() != 3 || out.getRank() != 3)
    return op.emitOpError() << "expects a query and a result of rank 3 ([T, Hq, "
                               "D]), but got ranks "
                            << q.getRank() << " and " << out.getRank();
  if (kc.getRank() != 4 || vc.getRank() != 4)
    return op.emitOpError() << "expects rank-4 key and value pages";
  Type element = q.getElementType();
  if (kc.getElementType() != element || vc.getElementType() != element ||
      out.getElementType() != element)
    return op.emitOpError() << "expects the query, the caches and the result "
                               "of one element type";
  const int64_t heads = op.getHeadsDim(), pageDim = op.getPageSizeDim();
  int64_t hq = q.getDimSize(1), d = q.getDimSize(2), hkv = kc.getDimSize(heads);
  if (failed(verifyStatic(op, "query head count", hq)) ||
      failed(verifyStatic(op, "head dimension", d)) ||
      failed(verifyStatic(op, "KV head count", hkv)) ||
      failed(verifyStatic(op, "page size", kc.getDimSize(pageDim))))
    return failure();
  if (hkv < 1 || hq % hkv != 0)
    return op.emitOpError() << "expects the query heads (" << hq
                            << ") to be a multiple of the KV heads (" << hkv << ")";
  if (kc.getDimSize(3) != d)
    return op.emitOpError() << "expects keys of the query's " << d
                            << " channels, but got " << dimStr(kc.getDimSize(3));
  if (!compatible(kc.getDimSize(0), vc.getDimSize(0)) ||
      kc.getDimSize(pageDim) != vc.getDimSize(pageDim) ||
      vc.getDimSize(heads) != hkv)
    return op.emitOpError() << "expects key and value caches of the same pages "
                               "and heads, but got "
                            << kc << " and " << vc;
  if (kc.getDimSize(pageDim) < 1)
    return op.emitOpError() << "expects a page size >= 1";
  if (!compatible(out.getDimSize(0), q.getDimSize(0)) || out.getDimSize(1) != hq ||
      out.getDimSize(2) != vc.getDimSize(3))
    return op.emitOpError() << "expects a result [T, Hq, Dv] = ["
                            << dimStr(q.getDimSize(0)) << ", " << hq << ", "
                            << dimStr(vc.getDimSize(3)) << "], but got " << out;
  return success();
}

/// block_table [B, M], kv_lens [B], cu_seqlens [B + 1].
static LogicalResult verifyPagedAttentionIndices(PagedAttentionOp op) {
  auto table = cast<RankedTensorType>(op.getBlockTable().getType());
  auto lens = cast<RankedTensorType>(op.getKvLens().getType());
  auto cu = cast<RankedTensorType>(op.getCuSeqlens().getType());
  if (table.getRank() != 2 || lens.getRank() != 1 || cu.getRank() != 1)
    return op.emitOpError() << "expects block_table [B, M], kv_lens [B] and "
                               "cu_seqlens [B + 1]";
  int64_t batch = table.getDimSize(0);
  if (!compatible(lens.getDimSize(0), batch))
    return op.emitOpError() << "expects kv_lens to have B = " << dimStr(batch)
                            << " entries, but got " << dimStr(lens.getDimSize(0));
  if (!ShapedType::isDynamic(batch) && !compatible(cu.getDimSize(0), batch + 1))
    return op.emitOpError() << "expects cu_seqlens to have B + 1 = " << batch + 1
                            << " entries, but got " << dimStr(cu.getDimSize(0));
  if (!ShapedType::isDynamic(lens.getDimSize(0)) &&
      !compatible(cu.getDimSize(0), lens.getDimSize(0) + 1))
    return op.emitOpError() << "expects cu_seqlens to have B + 1 = "
                            << lens.getDimSize(0) + 1 << " entries, but got "
                            << dimStr(cu.getDimSize(0));
  return success();
}

LogicalResult GatherPagesOp::verify() {
  RankedTensorType cache = getCache().getType(), out = getType();
  auto table = cast<RankedTensorType>(getBlockTable().getType());
  if (getLayout() == CacheLayout::dense)
    return emitOpError() << "reads a paged cache: expects layout(nhd) or "
                            "layout(hnd), but got layout(dense)";
  if (cache.getRank() != 4 || out.getRank() != 4 || table.getRank() != 2)
    return emitOpError() << "expects rank-4 pages, a rank-4 result [1, Hkv, L, "
                            "D] and a block table [B, M]";
  if (cache.getElementType() != out.getElementType())
    return emitOpError() << "expects the result of the cache's element type";
  const int64_t heads = cache.getDimSize(getHeadsDim()), d = cache.getDimSize(3);
  if (failed(verifyStatic(*this, "KV head count", heads)) ||
      failed(verifyStatic(*this, "head dimension", d)) ||
      failed(verifyStatic(*this, "page size", cache.getDimSize(getPageSizeDim()))))
    return failure();
  if (cache.getDimSize(getPageSizeDim()) < 1)
    return emitOpError() << "expects a page size >= 1";
  if (!compatible(out.getDimSize(0), 1) || out.getDimSize(1) != heads ||
      !out.isDynamicDim(2) || out.getDimSize(3) != d)
    return emitOpError() << "expects a result [1, " << heads << ", ?, " << d
                         << "] (the length is a run-time value), but got " << out;
  return success();
}

LogicalResult PagedAttentionOp::verify() {
  if (failed(verifyPagedAttentionShapes(*this)) ||
      failed(verifyPagedAttentionIndices(*this)))
    return failure();
  RankedTensorType q = getQuery().getType();
  const int64_t tokens = q.getDimSize(0), hq = q.getDimSize(1);
  // A multi-stream rope rotates each query row by its streams, [A, T].
  const bool multiStream = getRopeAttr() && getRopeAttr().isMultiStream();
  if (multiStream != bool(getRopePositions()))
    return emitOpError() << (multiStream
                                 ? "expects rope_positions with a multi-stream rope (sections)"
                                 : "expects rope_positions only with a multi-stream rope "
                                   "(sections)");
  if (multiStream) {
    if (getRopePositions().getType().getRank() != 2)
      return emitOpError() << "expects rope_positions of shape [A, T], but got rank "
                           << getRopePositions().getType().getRank();
    if (failed(verifyRopePositions(*this, "rope_positions", getRopePositions().getType(),
                                   getRopeAttr(), 1, tokens, "T")))
      return failure();
  }
  if (Value sinks = getSinks()) {
    auto type = cast<RankedTensorType>(sinks.getType());
    if (type.getRank() != 1 || type.getDimSize(0) != hq)
      return emitOpError() << "expects sinks [Hq] = [" << hq
                           << "] (one logit per query head), but got " << type;
  }
  if (Value mask = getMask()) {
    // The key columns are checked against each sequence's keys at run time.
    auto type = cast<RankedTensorType>(mask.getType());
    if (type.getRank() != 3 || !compatible(type.getDimSize(0), tokens) ||
        (type.getDimSize(1) != 1 && type.getDimSize(1) != hq))
      return emitOpError() << "expects a mask of shape [" << dimStr(tokens) << ", " << hq
                           << "|1, K] (a row of K >= L_b key columns per query), but got "
                           << type;
  }
  return verifyAttentionParameters(*this, q.getDimSize(2));
}
