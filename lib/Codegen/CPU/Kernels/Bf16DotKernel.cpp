//===- Bf16DotKernel.cpp - bf16 prefill on bf16 dot products --------------===//
//
// bf16 prefill where the CPU has bf16 dot products: both products are
// micro-tiles of bf16 pair dot products (buildBf16PairDot; vdpbf16ps on
// AVX512-BF16, BFDOT on AArch64 with BF16), which add to each f32 lane the products of a bf16 pair,
//   acc[i] += a[2i] b[2i] + a[2i+1] b[2i+1],
// twice the f32 FMA rate. As in the Tiled kernel the vectors run along the
// rows, so the softmax (f32 statistics, shared code) needs no horizontal
// reduction; the operands come in pairs along each product's reduction:
//   S^T[j][r] = sum_d Kr[j][d] Q[r][d]    a = Q^T pairs Qv[d / 2][2 r + d % 2],
//                                         b = (Kr[j][d], Kr[j][d + 1]) broadcast
//   O^T[e][r] += sum_j V[j][e] P[r][j]    a = P^T pairs Pv[j / 2][2 r + j % 2],
//                                         b = (V[j][e], V[j + 1][e]) broadcast
//                                             from Vv[j / 2][2 e + j % 2]
// Q and Kr are rotated and scaled in f32 and rounded once to bf16; P is
// rounded to bf16 for the second product while l sums the f32 weights (as
// FlashAttention does). A dot product cannot skip a key of weight 0, so a
// tile with masked keys whose values hold a NaN or inf takes an f32 path that
// does. A task packs each K/V tile once (prepareTile) for the blocks of
// queries it holds, each of which then takes the products
// (processPreparedTile).
//
//===----------------------------------------------------------------------===//
#include "AttentionTask.h"

using namespace mlir;
using namespace mlir::pe;

namespace {

class Bf16DotTask final : public AttentionTask {
public:
  using AttentionTask::AttentionTask;

  bool sharesTiles() const override { return true; }
  void prepareTile(Value k0, Value kCount) override {
    packKeys(k0, kCount);
    valuesNonFinite = packValuePairs(values, k0, kCount);
  }
  void processPreparedTile(Value k0, Value kCount, const TileMasking &masking) override {
    computeScores(kCount);
    softmax(k0, kCount, masking);
    Value pairs = g.ceilDiv(kCount, g.index(2));
    packWeightPairs(weights, pairs);
    auto branch = scf::IfOp::create(
        g.b, arith::AndIOp::create(g.b, masking.maskedKeys, valuesNonFinite),
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(g.b);
    g.b.setInsertionPoint(branch.thenBlock()->getTerminator());
    accumulateWeightedValues(
        kCount,
        [&](Value j, Value e) { return g.toF32(g.load(buf.v, kvAt(g.add(k0, j), e))); },
        /*skipZeroWeights=*/true);
    g.b.setInsertionPoint(branch.elseBlock()->getTerminator());
    accumulateValues(pairs);
  }

private:
  /// P^T and V in bf16 pairs.
  Value weights, values;
  /// i1 of the prepared tile: whether a value is NaN or inf.
  Value valuesNonFinite;

  Type bf16() { return g.b.getBF16Type(); }
  VectorType pairVector() { return VectorType::get({2 * g.lanes}, bf16()); }

  Value allocateQueries() override {
    return stateScratch({p.headDim / 2, 2 * p.rows}, bf16());
  }
  Value allocateOutput() override { return stateScratch({p.valueDim, p.rows}, g.f32()); }
  QueryLayout queryLayout() override { return QueryLayout::Pairs; }
  SmallVector<Value> outputIndex(Value e, Value r) override { return {e, r}; }
  Type keyTileType() override { return bf16(); }
  void allocateVariant() override {
    weights = g.scratch({p.keysPerTile / 2, 2 * p.rows}, bf16());
    values = g.scratch({p.keysPerTile / 2, 2 * p.valueDim}, bf16());
  }

  /// The pairs of rows [r, r + 16) from a pair buffer (row of pairs `i`).
  Value rowPairs(Value mem, Value i, Value r) {
    return vector::LoadOp::create(g.b, pairVector(), mem,
                                  ValueRange{i, g.mul(r, g.index(2))});
  }
  /// S^T = Kr Q^T for keys [0, kCount) rounded up to whole micro-tiles
  /// (keysPerMicroTile keys x rowVectors row vectors), one channel pair per
  /// step.
  void computeScores(Value kCount) {
    const int64_t microKeys = p.keysPerMicroTile, rowVectors = p.rowVectors;
    Value jEnd = g.mul(g.ceilDiv(kCount, g.index(microKeys)), g.index(microKeys));
    g.loop(g.index(0), jEnd, g.index(microKeys), [&](Value j0) {
      g.loop(0, g.index(p.rows), rowVectors * g.lanes, [&](Value r0) {
        SmallVector<Value> init(microKeys * rowVectors, g.f32Splat(0.0));
        SmallVector<Value> acc = g.unrolledLoop(
            g.index(0), g.index(p.headDim / 2), 1, p.microTileUnroll, init,
            [&](Value dp, ValueRange a) -> SmallVector<Value> {
              SmallVector<Value> q, next;
              for (int64_t v = 0; v < rowVectors; ++v)
                q.push_back(rowPairs(queries, dp, g.add(r0, g.index(v * g.lanes))));
              Value d = g.mul(dp, g.index(2));
              for (int64_t jk = 0; jk < microKeys; ++jk) {
                Value k = broadcastPair(keys, g.add(j0, g.index(jk)), d);
                for (int64_t v = 0; v < rowVectors; ++v)
                  next.push_back(g.bf16Dot(a[jk * rowVectors + v], q[v], k));
              }
              return next;
            });
        for (int64_t jk = 0; jk < microKeys; ++jk)
          for (int64_t v = 0; v < rowVectors; ++v)
            g.vstore(acc[jk * rowVectors + v], scores,
                     {g.add(j0, g.index(jk)), g.add(r0, g.index(v * g.lanes))});
      });
    });
  }

  /// O^T[e][r] = alpha[r] O^T[e][r] + sum_{jp < pairs} of the pair products
  /// Pv[jp][2 r..] . (V[2 jp][e], V[2 jp + 1][e]).
  void accumulateValues(Value pairs) {
    accumulateOutputTiles(pairs, p.channelsPerMicroTile,
                          [&](Value jp, Value r0, Value e0, int64_t channels,
                                     ValueRange a) -> SmallVector<Value> {
      SmallVector<Value> w, next;
      for (int64_t v = 0; v < p.rowVectors; ++v)
        w.push_back(rowPairs(weights, jp, g.add(r0, g.index(v * g.lanes))));
      for (int64_t ec = 0; ec < channels; ++ec) {
        Value ve = broadcastPair(values, jp, g.mul(g.add(e0, g.index(ec)), g.index(2)));
        for (int64_t v = 0; v < p.rowVectors; ++v)
          next.push_back(g.bf16Dot(a[ec * p.rowVectors + v], w[v], ve));
      }
      return next;
    });
  }
};

} // namespace

std::unique_ptr<AttentionTask> mlir::pe::createBf16DotTask(KernelBuilder &g,
                                                           const AttentionPlan &p,
                                                           const AttentionBuffers &buf) {
  return std::make_unique<Bf16DotTask>(g, p, buf);
}
