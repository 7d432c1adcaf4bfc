//===- TiledKernel.cpp - the prefill variant of the attention kernel ------===//
//
// Q^T[D][rows] (rotated, scaled) and O^T[Dv][rows]: vectors run along the
// rows, so both products are broadcast-FMA micro-tiles of at most 24
// accumulators and the softmax needs no horizontal reduction:
//   S^T[j][r] = sum_d Kr[j][d] Q^T[d][r]
//   O^T[e][r] = alpha[r] O^T[e][r] + sum_j V[j][e] P^T[j][r]
// f32 values are read in place; f16/bf16 values are converted into a tile,
// and so are f32 values where a task holds several blocks of queries that
// share each packed K/V tile (prepareTile, processPreparedTile).
//
//===----------------------------------------------------------------------===//
#include "AttentionTask.h"

#include "pe/Dialect/PE/Utils/AttentionBuilders.h"

#include <limits>

using namespace mlir;
using namespace mlir::pe;

namespace {

class TiledTask final : public AttentionTask {
public:
  using AttentionTask::AttentionTask;

  void processTile(Value k0, Value kCount, const TileMasking &masking) override {
    packKeys(k0, kCount);
    if (!p.element.isF32())
      packValues(k0, kCount);
    processPacked(k0, kCount, masking, /*valuesPacked=*/!p.element.isF32());
  }

  bool sharesTiles() const override { return true; }
  void prepareTile(Value k0, Value kCount) override {
    packKeys(k0, kCount);
    packValues(k0, kCount);
  }
  void processPreparedTile(Value k0, Value kCount, const TileMasking &masking) override {
    processPacked(k0, kCount, masking, /*valuesPacked=*/true);
  }

private:
  /// V[j][e] as f32: for f16/bf16 values, and for tiles shared by blocks of
  /// queries.
  Value values;

  /// The scores, softmax and P V of the tile whose keys are packed (and
  /// values too where `valuesPacked`; f32 values are read in place else).
  void processPacked(Value k0, Value kCount, const TileMasking &masking, bool valuesPacked) {
    computeScores(kCount);
    softmax(k0, kCount, masking);
    auto value = [&](Value j, Value e) {
      if (!valuesPacked)
        return g.load(buf.v, kvAt(g.add(k0, j), e));
      return g.load(values, {j, e});
    };
    // Only a tile with masked keys needs the FMAs that skip weight-0 keys.
    auto branch = scf::IfOp::create(g.b, masking.maskedKeys, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(g.b);
    g.b.setInsertionPoint(branch.thenBlock()->getTerminator());
    accumulateWeightedValues(kCount, value, /*skipZeroWeights=*/true);
    g.b.setInsertionPoint(branch.elseBlock()->getTerminator());
    accumulateWeightedValues(kCount, value, /*skipZeroWeights=*/false);
  }

  Value allocateQueries() override { return stateScratch({p.headDim, p.rows}, g.f32()); }
  Value allocateOutput() override { return stateScratch({p.valueDim, p.rows}, g.f32()); }
  QueryLayout queryLayout() override { return QueryLayout::Transposed; }
  SmallVector<Value> outputIndex(Value e, Value r) override { return {e, r}; }
  void allocateVariant() override {
    // Several slots: blocks of queries sharing each packed tile.
    if (!p.element.isF32() || slotCount() > 1)
      values = g.scratch({p.keysPerTile, p.valueDim}, g.f32());
    // Soft-capped scores are rewritten before their max is taken.
    if (!p.softcap)
      scoreRowMax = g.scratch({p.rows}, g.f32());
  }

  /// S^T = Kr Q^T for keys [0, kCount) rounded up to whole micro-tiles
  /// (keysPerMicroTile keys x rowVectors row vectors), and each row's max
  /// over them into scoreRowMax, taken from the accumulators as they are
  /// stored (the softmax's own pass over the scores would read them again,
  /// one dependent max per key).
  void computeScores(Value kCount) {
    const int64_t microKeys = p.keysPerMicroTile, rowVectors = p.rowVectors;
    Value jEnd = g.mul(g.ceilDiv(kCount, g.index(microKeys)), g.index(microKeys));
    if (scoreRowMax)
      for (int64_t r = 0; r < p.rows; r += g.lanes)
        g.vstore(g.f32Splat(-std::numeric_limits<float>::infinity()), scoreRowMax,
                 {g.index(r)});
    g.loop(g.index(0), jEnd, g.index(microKeys), [&](Value j0) {
      g.loop(0, g.index(p.rows), rowVectors * g.lanes, [&](Value r0) {
        SmallVector<Value> init(microKeys * rowVectors, g.f32Splat(0.0));
        SmallVector<Value> acc = g.unrolledLoop(
            g.index(0), g.index(p.headDim), 1, p.microTileUnroll, init,
            [&](Value d, ValueRange a) -> SmallVector<Value> {
              SmallVector<Value> q, next;
              for (int64_t v = 0; v < rowVectors; ++v)
                q.push_back(g.vload(queries, {d, g.add(r0, g.index(v * g.lanes))}));
              for (int64_t jk = 0; jk < microKeys; ++jk) {
                Value k = g.splat(g.load(keys, {g.add(j0, g.index(jk)), d}));
                for (int64_t v = 0; v < rowVectors; ++v)
                  next.push_back(g.fma(k, q[v], a[jk * rowVectors + v]));
              }
              return next;
            });
        for (int64_t jk = 0; jk < microKeys; ++jk)
          for (int64_t v = 0; v < rowVectors; ++v)
            g.vstore(acc[jk * rowVectors + v], scores,
                     {g.add(j0, g.index(jk)), g.add(r0, g.index(v * g.lanes))});
        if (!scoreRowMax)
          return;
        for (int64_t v = 0; v < rowVectors; ++v) {
          Value r = g.add(r0, g.index(v * g.lanes));
          Value m = g.vload(scoreRowMax, {r});
          for (int64_t jk = 0; jk < microKeys; ++jk)
            m = buildRunningRowMax(g.b, m, acc[jk * rowVectors + v]);
          g.vstore(m, scoreRowMax, {r});
        }
      });
    });
  }

  /// V[j, :] = v[bi, kvh, k0 + j, :] in f32, zero rows past the keys.
  void packValues(Value k0, Value kCount) {
    g.loop(0, kCount, 1, [&](Value j) {
      Value kj = g.add(k0, j);
      if (p.valueDim % g.lanes == 0) {
        for (int64_t e = 0; e < p.valueDim; e += g.lanes)
          g.vstore(g.vload(buf.v, kvAt(kj, g.index(e))), values, {j, g.index(e)});
      } else {
        g.loop(0, g.index(p.valueDim), 1, [&](Value e) {
          g.store(g.toF32(g.load(buf.v, kvAt(kj, e))), values, {j, e});
        });
      }
    });
    g.zeroRows(values, kCount, g.index(p.keysPerTile));
  }
};

} // namespace

std::unique_ptr<AttentionTask> mlir::pe::createTiledTask(KernelBuilder &g,
                                                         const AttentionPlan &p,
                                                         const AttentionBuffers &buf) {
  return std::make_unique<TiledTask>(g, p, buf);
}
