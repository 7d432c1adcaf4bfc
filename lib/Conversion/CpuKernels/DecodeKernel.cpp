//===- DecodeKernel.cpp - the decode variant of the attention kernel ------===//
//
// At most 8 rows (queries x heads of a group): Q[rows][D] and O[rows][Dv]
// stay row-major, so no lane holds a padding row.
//   S^T[j][r] = sum_d Q[r][d] K[j][d]      D/16 FMAs and one tree reduction
//   O[r][e] = alpha[r] O[r][e] + sum_j P^T[j][r] V[j][e]   vectors along Dv
// K and V are read in place (f32 keys without RoPE); rotated or narrow keys
// go through the key tile.
//
//===----------------------------------------------------------------------===//
#include "AttentionTask.h"

#include "pe/Dialect/PE/Utils/AttentionBuilders.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pe;

namespace {

class DecodeTask final : public AttentionTask {
public:
  using AttentionTask::AttentionTask;

  void processTile(Value k0, Value kCount, const TileMasking &masking) override {
    const bool packed = p.rotaryDim || !p.element.isF32();
    if (packed)
      packKeys(k0, kCount);
    computeScores(kCount, [&](Value j, int64_t c) {
      if (packed)
        return g.vload(keys, {j, g.index(c)});
      return g.vload(buf.k, {bi, kvh, g.add(k0, j), g.index(c)});
    });
    softmax(k0, kCount, masking);
    // Every tile skips weight-0 keys: the masked FMAs cost nothing here
    // (decode streams K and V from memory).
    accumulateValues(kCount, [&](Value j, int64_t c) {
      return g.vload(buf.v, {bi, kvh, g.add(k0, j), g.index(c)});
    });
  }

private:
  Value allocateQueries() override { return g.scratch({p.rows, p.headDim}, g.f32()); }
  Value allocateOutput() override { return g.scratch({p.rows, p.valueDim}, g.f32()); }
  SmallVector<Value> queryIndex(Value d, Value r) override { return {r, d}; }
  SmallVector<Value> outputIndex(Value e, Value r) override { return {r, e}; }

  /// `row(j, c)`: the 16 channels from c of key or value j, as f32.
  using TileRow = function_ref<Value(Value, int64_t)>;

  /// S^T[j][r] = sum_d Q[r][d] K[j][d] for the valid rows.
  void computeScores(Value kCount, TileRow key) {
    g.loop(0, kCount, 1, [&](Value j) {
      SmallVector<Value> k;
      for (int64_t c = 0; c < p.headDim; c += kLanes)
        k.push_back(key(j, c));
      for (int64_t r = 0; r < p.validRows; ++r) {
        Value acc = g.fmul(g.vload(queries, {g.index(r), g.index(0)}), k[0]);
        for (int64_t c = kLanes; c < p.headDim; c += kLanes)
          acc = g.fma(g.vload(queries, {g.index(r), g.index(c)}), k[c / kLanes], acc);
        auto sum = vector::ReductionOp::create(g.b, vector::CombiningKind::ADD, acc);
        sum.setFastmath(arith::FastMathFlags::reassoc);
        g.store(sum, scores, {j, g.index(r)});
      }
    });
  }

  /// O[r][e] = alpha[r] O[r][e] + sum_j P^T[j][r] V[j][e], in chunks of
  /// channels that keep rows x vectors <= 16 accumulators; keys of weight 0
  /// add nothing.
  void accumulateValues(Value kCount, TileRow value) {
    const int64_t vectors = p.valueDim / kLanes;
    const int64_t chunk = std::clamp<int64_t>(16 / p.validRows, 1, vectors);
    for (int64_t v0 = 0; v0 < vectors; v0 += chunk) {
      const int64_t nv = std::min(chunk, vectors - v0);
      // acc = alpha O
      SmallVector<Value> init;
      for (int64_t r = 0; r < p.validRows; ++r) {
        Value correction = g.splat(g.load(alpha, {g.index(r)}));
        for (int64_t v = 0; v < nv; ++v)
          init.push_back(buildRescale(
              g.b, g.vload(output, {g.index(r), g.index((v0 + v) * kLanes)}), correction));
      }
      // acc += p_j v_j
      SmallVector<Value> acc = g.loop(
          g.index(0), kCount, g.index(1), init,
          [&](Value j, ValueRange a) -> SmallVector<Value> {
            SmallVector<Value> vj, next;
            for (int64_t v = 0; v < nv; ++v)
              vj.push_back(value(j, (v0 + v) * kLanes));
            for (int64_t r = 0; r < p.validRows; ++r) {
              Value weight = g.splat(g.load(scores, {j, g.index(r)}));
              for (int64_t v = 0; v < nv; ++v)
                next.push_back(buildWeightedSum(g.b, a[r * nv + v], weight, vj[v]));
            }
            return next;
          });
      for (int64_t r = 0; r < p.validRows; ++r)
        for (int64_t v = 0; v < nv; ++v)
          g.vstore(acc[r * nv + v], output, {g.index(r), g.index((v0 + v) * kLanes)});
    }
  }
};

} // namespace

std::unique_ptr<AttentionTask> mlir::pe::createDecodeTask(KernelBuilder &g,
                                                          const AttentionPlan &p,
                                                          const AttentionBuffers &buf) {
  return std::make_unique<DecodeTask>(g, p, buf);
}
