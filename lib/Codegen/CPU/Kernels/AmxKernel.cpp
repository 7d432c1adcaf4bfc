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

  /// acc += A B over a reduction of `extent`: A = rows [row, row + 16) of
  /// `a` (columns k), B = VNNI pairs of `bPairs` at column `col` (rows k / 2).
  Value tileProduct(Value acc, Value a, Value row, Value bPairs, Value col,
                    int64_t extent) {
    for (int64_t k = 0; k < extent; k += 32) {
      Value at = amx::TileLoadOp::create(g.b, bf16Tile(), a, ValueRange{row, g.index(k)});
      Value bt = amx::TileLoadOp::create(g.b, bf16Tile(), bPairs,
                                         ValueRange{g.index(k / 2), col});
      acc = amx::TileMulFOp::create(g.b, f32Tile(), at, bt, acc);
    }
    return acc;
  }

  /// S^T[j][r] = sum_d Kr[j][d] Q[r][d], 16 x 16 tiles.
  void computeScores(Value kCount) {
    Value jEnd = g.mul(g.ceilDiv(kCount, g.index(16)), g.index(16));
    g.loop(g.index(0), jEnd, g.index(16), [&](Value j0) {
      g.loop(0, g.index(p.rows), 16, [&](Value r0) {
        Value acc = tileProduct(amx::TileZeroOp::create(g.b, f32Tile()), keys, j0,
                                queries, g.mul(r0, g.index(2)), p.headDim);
        amx::TileStoreOp::create(g.b, scores, ValueRange{j0, r0}, acc);
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

  /// O = alpha O.
  void rescaleOutput() {
    g.loop(0, g.index(p.rows), 1, [&](Value r) {
      Value correction = g.splat(g.load(alpha, {r}));
      for (int64_t e = 0; e < p.valueDim; e += g.lanes)
        g.vstore(buildRescale(g.b, g.vload(output, {r, g.index(e)}), correction), output,
                 {r, g.index(e)});
    });
  }

  /// O += Pa Vv on tiles.
  void accumulateValues() {
    g.loop(0, g.index(p.rows), 16, [&](Value r0) {
      g.loop(0, g.index(p.valueDim), 16, [&](Value e0) {
        Value acc = amx::TileLoadOp::create(g.b, f32Tile(), output, ValueRange{r0, e0});
        acc = tileProduct(acc, weights, r0, values, g.mul(e0, g.index(2)), p.keysPerTile);
        amx::TileStoreOp::create(g.b, output, ValueRange{r0, e0}, acc);
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
