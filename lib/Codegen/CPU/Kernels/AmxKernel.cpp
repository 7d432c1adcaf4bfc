//===- AmxKernel.cpp - the AMX variant of the attention kernel ------------===//
//
// bf16 prefill on AMX tiles (16 x 16 f32 accumulators of 16 x 32 bf16
// operands); the softmax statistics stay f32.
//   S^T = Kr Q^T      A = 16 keys x 32 channels of Kr, B = Q^T in VNNI pairs
//                     Qv[d / 2][2 r + d % 2]
//   O += P V          A = P transposed to bf16 rows Pa[r][j], B = V in VNNI
//                     pairs Vv[j / 2][2 e + j % 2]
// A tile product cannot skip keys of weight 0, so a value tile that holds a
// NaN or inf takes a vector path that does (masked keys contribute nothing).
// Tiles stay within one block: every loop whose body carries a tile is
// unrolled at compile time. A task packs each K/V tile once (prepareTile)
// for the blocks of queries it holds, each of which then takes the products
// (processPreparedTile).
//
//===----------------------------------------------------------------------===//
#include "AttentionTask.h"

#include "pe/Dialect/PE/Utils/AttentionBuilders.h"

#include "mlir/Dialect/AMX/AMXDialect.h"

using namespace mlir;
using namespace mlir::pe;

namespace {

class AmxTask final : public AttentionTask {
public:
  using AttentionTask::AttentionTask;

  bool sharesTiles() const override { return true; }
  void prepareTile(Value k0, Value kCount) override {
    packKeys(k0, kCount);
    valuesNonFinite = packValues(k0, kCount);
  }
  void processPreparedTile(Value k0, Value kCount, const TileMasking &masking) override {
    computeScores(kCount);
    softmax(k0, kCount, masking);
    transposeWeights();
    rescaleOutput();
    auto branch = scf::IfOp::create(g.b, valuesNonFinite, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(g.b);
    g.b.setInsertionPoint(branch.thenBlock()->getTerminator());
    accumulateValuesSkippingZeroWeights(k0, kCount);
    g.b.setInsertionPoint(branch.elseBlock()->getTerminator());
    accumulateValues();
  }

private:
  /// V in VNNI pairs, and the weights P as bf16 rows.
  Value values, weights;
  /// i1 of the prepared tile: whether a value is NaN or inf.
  Value valuesNonFinite;

  Value allocateQueries() override {
    return stateScratch({p.headDim / 2, 2 * p.rows}, g.b.getBF16Type());
  }
  Value allocateOutput() override { return stateScratch({p.rows, p.valueDim}, g.f32()); }
  QueryLayout queryLayout() override { return QueryLayout::Pairs; }
  SmallVector<Value> outputIndex(Value e, Value r) override { return {r, e}; }
  Type keyTileType() override { return g.b.getBF16Type(); }
  void allocateVariant() override {
    values = g.scratch({p.keysPerTile / 2, 2 * p.valueDim}, g.b.getBF16Type());
    weights = g.scratch({p.rows, p.keysPerTile}, g.b.getBF16Type());
  }

  amx::TileType bf16Tile() { return amx::TileType::get({16, 32}, g.b.getBF16Type()); }
  amx::TileType f32Tile() { return amx::TileType::get({16, 16}, g.f32()); }

  /// acc[i][j] += A_i B_j over a reduction of `extent`, the accumulators
  /// row-major in `acc`: A_i = rows [rows[i], rows[i] + 16) of `a` (columns
  /// k), B_j = the VNNI pairs of `bPairs` at column cols[j] (rows k / 2).
  /// The products of one accumulator are a chain of dependent tdpbf16ps;
  /// a 2 x 2 block runs four chains side by side (4 accumulators and 2 + 2
  /// operands: the 8 tile registers). Causal prefill S = 2048, D = 128,
  /// bf16 (Xeon, 2 threads, same run): GQA 32/8 49 -> 44 ms, MHA 52 -> 47.
  SmallVector<Value> tileProducts(SmallVector<Value> acc, Value a, ArrayRef<Value> rows,
                                  Value bPairs, ArrayRef<Value> cols, int64_t extent) {
    for (int64_t k = 0; k < extent; k += 32) {
      SmallVector<Value> at, bt;
      for (Value row : rows)
        at.push_back(amx::TileLoadOp::create(g.b, bf16Tile(), a, ValueRange{row, g.index(k)}));
      for (Value col : cols)
        bt.push_back(amx::TileLoadOp::create(g.b, bf16Tile(), bPairs,
                                             ValueRange{g.index(k / 2), col}));
      for (size_t i = 0; i < rows.size(); ++i)
        for (size_t j = 0; j < cols.size(); ++j) {
          Value &sum = acc[i * cols.size() + j];
          sum = amx::TileMulFOp::create(g.b, f32Tile(), at[i], bt[j], sum);
        }
    }
    return acc;
  }

  /// The tiles [x0, x0 + 16 n) of a 2 x 2 block along a dimension of
  /// `extent` (n = 2 where `extent` is a multiple of 32).
  SmallVector<Value> blockTiles(Value x0, int64_t extent) {
    SmallVector<Value> starts = {x0};
    if (extent % 32 == 0)
      starts.push_back(g.add(x0, g.index(16)));
    return starts;
  }

  /// S^T[j][r] = sum_d Kr[j][d] Q[r][d], 16 x 16 tiles in 2 x 2 blocks; the
  /// keys up to a multiple of 32 (the tile's rows past the keys are 0).
  void computeScores(Value kCount) {
    Value jEnd = g.min(g.mul(g.ceilDiv(kCount, g.index(32)), g.index(32)),
                       g.index(p.keysPerTile));
    g.loop(g.index(0), jEnd, g.index(32), [&](Value j0) {
      const int64_t rowStep = p.rows % 32 == 0 ? 32 : 16;
      g.loop(0, g.index(p.rows), rowStep, [&](Value r0) {
        SmallVector<Value> keyRows = blockTiles(j0, 32), rows = blockTiles(r0, rowStep);
        SmallVector<Value> cols;
        for (Value r : rows)
          cols.push_back(g.mul(r, g.index(2)));
        SmallVector<Value> zeros(keyRows.size() * cols.size());
        for (Value &zero : zeros)
          zero = amx::TileZeroOp::create(g.b, f32Tile());
        SmallVector<Value> acc = tileProducts(zeros, keys, keyRows, queries, cols, p.headDim);
        for (size_t i = 0; i < keyRows.size(); ++i)
          for (size_t j = 0; j < rows.size(); ++j)
            amx::TileStoreOp::create(g.b, scores, ValueRange{keyRows[i], rows[j]},
                                     acc[i * rows.size() + j]);
      });
    });
  }

  /// Pa[r][j] = bf16(P^T[j][r]), by 16 x 16 transposes.
  void transposeWeights() {
    g.loop(0, g.index(p.keysPerTile), 16, [&](Value j0) {
      g.loop(0, g.index(p.rows), 16, [&](Value r0) {
        SmallVector<Value> rows;
        for (int64_t i = 0; i < 16; ++i)
          rows.push_back(g.vload(scores, {g.add(j0, g.index(i)), r0}));
        SmallVector<Value> columns = g.transpose(rows);
        for (int64_t r = 0; r < 16; ++r)
          g.storeAs(columns[r], weights, {g.add(r0, g.index(r)), j0});
      });
    });
  }

  /// Vv = V in pairs (zero past the keys and in the tile's last pair rows).
  /// Returns whether a value is NaN or inf.
  Value packValues(Value k0, Value kCount) {
    Value nonFinite = packValuePairs(values, k0, kCount);
    g.zeroRows(values, g.ceilDiv(kCount, g.index(2)), g.index(p.keysPerTile / 2));
    return nonFinite;
  }

  /// O = alpha O, for the rows whose max grew (alpha != 1; after the first
  /// tiles most rows keep their max, and the tile products outrun this loop
  /// over Dv channels of every row).
  void rescaleOutput() {
    Value one = g.f32Constant(1.0);
    g.loop(0, g.index(p.rows), 1, [&](Value r) {
      Value rowAlpha = g.load(alpha, {r});
      g.ifThen(arith::CmpFOp::create(g.b, arith::CmpFPredicate::UNE, rowAlpha, one), [&] {
        Value correction = g.splat(rowAlpha);
        for (int64_t e = 0; e < p.valueDim; e += g.lanes)
          g.vstore(buildRescale(g.b, g.vload(output, {r, g.index(e)}), correction), output,
                   {r, g.index(e)});
      });
    });
  }

  /// O += Pa Vv on tiles, in 2 x 2 blocks.
  void accumulateValues() {
    const int64_t rowStep = p.rows % 32 == 0 ? 32 : 16;
    const int64_t channelStep = p.valueDim % 32 == 0 ? 32 : 16;
    g.loop(0, g.index(p.rows), rowStep, [&](Value r0) {
      g.loop(0, g.index(p.valueDim), channelStep, [&](Value e0) {
        SmallVector<Value> rows = blockTiles(r0, rowStep), channels = blockTiles(e0, channelStep);
        SmallVector<Value> acc, cols;
        for (Value e : channels)
          cols.push_back(g.mul(e, g.index(2)));
        for (Value r : rows)
          for (Value e : channels)
            acc.push_back(amx::TileLoadOp::create(g.b, f32Tile(), output, ValueRange{r, e}));
        acc = tileProducts(acc, weights, rows, values, cols, p.keysPerTile);
        for (size_t i = 0; i < rows.size(); ++i)
          for (size_t j = 0; j < channels.size(); ++j)
            amx::TileStoreOp::create(g.b, output, ValueRange{rows[i], channels[j]},
                                     acc[i * channels.size() + j]);
      });
    });
  }

  /// O[r][e] += sum_j p_j v_j with f32 vectors, keys of weight 0 skipped.
  void accumulateValuesSkippingZeroWeights(Value k0, Value kCount) {
    g.loop(0, g.index(p.rows), 1, [&](Value r) {
      for (int64_t e = 0; e < p.valueDim; e += g.lanes) {
        Value acc = g.loop(g.index(0), kCount, g.index(1), {g.vload(output, {r, g.index(e)})},
                           [&](Value j, ValueRange a) -> SmallVector<Value> {
                             Value weight = g.splat(g.load(scores, {j, r}));
                             Value v = g.vload(buf.v, kvAt(g.add(k0, j), g.index(e)));
                             return {buildWeightedSum(g.b, a[0], weight, v)};
                           })[0];
        g.vstore(acc, output, {r, g.index(e)});
      }
    });
  }
};

} // namespace

std::unique_ptr<AttentionTask> mlir::pe::createAmxTask(KernelBuilder &g,
                                                       const AttentionPlan &p,
                                                       const AttentionBuffers &buf) {
  return std::make_unique<AmxTask>(g, p, buf);
}
