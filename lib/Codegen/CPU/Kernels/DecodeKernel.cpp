//===- DecodeKernel.cpp - the decode variant of the attention kernel ------===//
//
// At most 8 rows (queries x heads of a group): Q[rows][D] and O[rows][Dv]
// stay row-major, so no lane holds a padding row.
//   S^T[j][r] = sum_d Q[r][d] K[j][d]      D/lanes FMAs per row, then one
//                                          reduction shared by the rows
//   O[r][e] = alpha[r] O[r][e] + sum_j P^T[j][r] V[j][e]   vectors along Dv
// K and V are read in place (f16 and bf16 widened to f32 as they are read);
// rotated keys go through the key tile. Decode streams K and V from memory
// once: the loops over a tile's keys prefetch the rows ahead (4 KiB into L1,
// 6 KiB into L2), so the memory stays busy through the softmax and the
// products. Reading bf16 keys in place instead of through the tile and
// sharing the rows' reduction took the bf16 decode of 8 x 1k..32k keys over
// nhd pages from 18.4 to 15.6 ms (Xeon, 2 threads).
// A paged cache (pe.gather_pages operands) is read in place the same way,
// each key row at its page of the block table.
//
// bf16 with dot products (plan.dotProducts, vdpbf16ps): Q is stored as bf16,
// the scores are dot products of 32-channel pair vectors read in place (or
// from the bf16 key tile); in tiles without masked keys P V is a pair product
// of the bf16-rounded weights Pv[j / 2][2 r + j % 2] and two zipped rows of V,
// other tiles take the f32 FMAs that skip weight-0 keys.
//
//===----------------------------------------------------------------------===//
#include "AttentionTask.h"

#include "pe/Dialect/PE/Utils/AttentionBuilders.h"
#include "pe/Dialect/PE/Utils/RopeBuilders.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pe;

namespace {

class DecodeTask final : public AttentionTask {
public:
  using AttentionTask::AttentionTask;

  void processTile(Value k0, Value kCount, const TileMasking &masking) override {
    const bool packed = p.packsKeys();
    if (packed)
      packKeys(k0, kCount);
    // f32 channels (f16 and bf16 keys widened as they are read), or bf16
    // pairs for dot products, as the keys hold them.
    auto type = VectorType::get({chunkWidth()}, p.dotProducts ? p.element : g.f32());
    computeScores(k0, kCount, [&](Value j, Value c) -> Value {
      if (packed)
        return vector::LoadOp::create(g.b, type, keys, ValueRange{j, c});
      if (p.dotProducts)
        return vector::LoadOp::create(g.b, type, buf.k, kvAt(g.add(k0, j), c));
      return g.vload(buf.k, kvAt(g.add(k0, j), c));
    });
    softmax(k0, kCount, masking);
    // Only a tile with masked keys needs the FMAs that skip weight-0 keys
    // (a blend per FMA where the ISA has no masked FMA).
    auto values = [&](bool skipZeroWeights) {
      accumulateValues(
          k0, kCount,
          [&](Value j, Value c) { return g.vload(buf.v, kvAt(g.add(k0, j), c)); },
          skipZeroWeights);
    };
    auto branch = scf::IfOp::create(g.b, masking.maskedKeys, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(g.b);
    g.b.setInsertionPoint(branch.thenBlock()->getTerminator());
    values(/*skipZeroWeights=*/true);
    g.b.setInsertionPoint(branch.elseBlock()->getTerminator());
    if (!p.dotProducts)
      return values(/*skipZeroWeights=*/false);
    Value pairs = g.ceilDiv(kCount, g.index(2));
    packWeightPairs(weights, pairs);
    accumulateValuePairs(k0, kCount, pairs);
  }

private:
  /// bf16 weight pairs (dot products).
  Value weights;

  Value allocateQueries() override {
    return stateScratch({p.rows, p.headDim}, p.dotProducts ? p.element : g.f32());
  }
  /// Only rotated keys, and keys with a shared block, go through the tile.
  Type keyTileType() override {
    if (!p.packsKeys())
      return Type();
    return p.dotProducts ? p.element : g.f32();
  }
  void allocateVariant() override {
    if (p.dotProducts)
      weights = g.scratch({p.keysPerTile / 2, 2 * p.rows}, p.element);
  }
  /// Channels of a query or key chunk: one vector of f32, or of bf16 pairs
  /// for dot products.
  int64_t chunkWidth() const { return p.dotProducts ? 2 * g.lanes : g.lanes; }
  Value allocateOutput() override { return stateScratch({p.rows, p.valueDim}, g.f32()); }
  QueryLayout queryLayout() override { return QueryLayout::RowMajor; }
  SmallVector<Value> outputIndex(Value e, Value r) override { return {r, e}; }

  /// `row(j, c)`: the chunk of channels from c of key or value j (`lanes` f32,
  /// or 2 x lanes bf16 for the scores' dot products).
  using TileRow = function_ref<Value(Value, Value)>;

  /// S^T[j][r] = sum_d Q[r][d] K[j][d] for the valid rows: FMAs of f32
  /// chunks or dot products of bf16 pair chunks, then the rows' sums.
  void computeScores(Value k0, Value kCount, TileRow key) {
    const int64_t width = chunkWidth();
    auto queryType =
        VectorType::get({width}, cast<MemRefType>(queries.getType()).getElementType());
    g.loop(0, kCount, 1, [&](Value j) {
      prefetchAhead(buf.k, k0, j);
      // Each chunk of the key once, against every row: the registers hold
      // the rows' accumulators and one chunk, whatever D is. More than 8
      // chunks (D = 128 on NEON) loop, so that the rows of Q are read where
      // they are used rather than hoisted out of the key loop and spilled.
      auto step = [&](Value c, ValueRange in) -> SmallVector<Value> {
        Value k = key(j, c);
        SmallVector<Value> acc;
        for (int64_t r = 0; r < p.validRows; ++r) {
          Value q = vector::LoadOp::create(g.b, queryType, queries, ValueRange{g.index(r), c});
          acc.push_back(p.dotProducts ? g.bf16Dot(in[r], q, k) : g.fma(q, k, in[r]));
        }
        return acc;
      };
      SmallVector<Value> acc(p.validRows, g.f32Splat(0.0));
      if (p.headDim / width <= 8) {
        for (int64_t c = 0; c < p.headDim; c += width)
          acc = step(g.index(c), acc);
      } else {
        acc = g.loop(g.index(0), g.index(p.headDim), g.index(width), acc, step);
      }
      storeRowSums(acc, j);
    });
  }

  /// S^T[j][r] = the sum of the lanes of acc[r], for every row. One row is a
  /// vector reduction. Several rows share their reduction: the halves of
  /// two rows' vectors are added into one vector (two shuffles and an add),
  /// which holds both rows in blocks of half the lanes, and so on until one
  /// vector holds every row (or blocks of one lane); the lanes of each
  /// block are then added within the vector. 4 rows of 16 lanes take 16
  /// instructions instead of about 36 for four reductions.
  void storeRowSums(ArrayRef<Value> acc, Value j) {
    const int64_t lanes = g.lanes, rows = acc.size();
    if (rows == 1) {
      auto sum = vector::ReductionOp::create(g.b, vector::CombiningKind::ADD, acc[0]);
      sum.setFastmath(arith::FastMathFlags::reassoc);
      return g.store(sum, scores, {j, g.index(0)});
    }
    auto add = [&](Value x, Value y) {
      auto sum = arith::AddFOp::create(g.b, x, y);
      sum.setFastmath(arith::FastMathFlags::reassoc);
      return sum.getResult();
    };
    SmallVector<Value> vectors(acc.begin(), acc.end());
    int64_t block = lanes; // lanes of one row in each vector
    while (vectors.size() > 1 && block > 1) {
      // Lanes [first, first + block / 2) of every block of x, then of y.
      auto halves = [&](Value x, Value y, int64_t first) {
        SmallVector<int64_t> mask;
        for (int64_t operand = 0; operand < 2; ++operand)
          for (int64_t b0 = 0; b0 < lanes; b0 += block)
            for (int64_t l = 0; l < block / 2; ++l)
              mask.push_back(operand * lanes + b0 + first + l);
        return vector::ShuffleOp::create(g.b, x, y, mask).getResult();
      };
      SmallVector<Value> next;
      for (size_t i = 0; i < vectors.size(); i += 2) {
        Value x = vectors[i];
        Value y = i + 1 < vectors.size() ? vectors[i + 1] : g.f32Splat(0.0);
        Value low = halves(x, y, 0);
        Value high = halves(x, y, block / 2);
        next.push_back(add(low, high));
      }
      vectors = std::move(next);
      block /= 2;
    }
    // Each vector: lanes / block rows, row k's sum at lane k * block.
    const int64_t rowsPerVector = lanes / block;
    for (size_t i = 0; i < vectors.size(); ++i) {
      Value v = vectors[i];
      for (int64_t half = block / 2; half >= 1; half /= 2) {
        SmallVector<int64_t> swap;
        for (int64_t l = 0; l < lanes; ++l)
          swap.push_back(l % (2 * half) < half ? l + half : l - half);
        v = add(v, vector::ShuffleOp::create(g.b, v, v, swap));
      }
      const int64_t first = i * rowsPerVector;
      const int64_t count = std::min(rowsPerVector, rows - first);
      if (count <= 0)
        break;
      SmallVector<int64_t> pick;
      for (int64_t k = 0; k < count; ++k)
        pick.push_back(k * block);
      Value sums = vector::ShuffleOp::create(g.b, v, v, pick);
      g.vstore(sums, scores, {j, g.index(first)});
    }
  }

  /// One step of a chunk of P V: the accumulators (index r * vectors + v)
  /// after step `s` for the value vectors [v0, v0 + vectors) of every row.
  using ChunkStep =
      function_ref<SmallVector<Value>(Value s, int64_t v0, int64_t vectors, ValueRange acc)>;

  /// O[r][e] = alpha[r] O[r][e] + the sum over steps [0, steps) of `step`, in
  /// chunks of value channels that keep rows x vectors within `accumulators`.
  void accumulateChunks(Value steps, int64_t accumulators, ChunkStep step) {
    const int64_t vectors = p.valueDim / g.lanes;
    const int64_t chunk = std::clamp<int64_t>(accumulators / p.validRows, 1, vectors);
    auto at = [&](int64_t r, int64_t v) {
      return SmallVector<Value>{g.index(r), g.index(v * g.lanes)};
    };
    for (int64_t v0 = 0; v0 < vectors; v0 += chunk) {
      const int64_t nv = std::min(chunk, vectors - v0);
      // acc = alpha O, then the steps.
      SmallVector<Value> init;
      for (int64_t r = 0; r < p.validRows; ++r) {
        Value correction = g.splat(g.load(alpha, {g.index(r)}));
        for (int64_t v = 0; v < nv; ++v)
          init.push_back(buildRescale(g.b, g.vload(output, at(r, v0 + v)), correction));
      }
      SmallVector<Value> acc = g.loop(g.index(0), steps, g.index(1), init,
                                      [&](Value s, ValueRange a) -> SmallVector<Value> {
                                        return step(s, v0, nv, a);
                                      });
      for (int64_t r = 0; r < p.validRows; ++r)
        for (int64_t v = 0; v < nv; ++v)
          g.vstore(acc[r * nv + v], output, at(r, v0 + v));
    }
  }

  /// O[r][e] = alpha[r] O[r][e] + sum_j P^T[j][r] V[j][e]; with
  /// `skipZeroWeights` keys of weight 0 add nothing even where their value is
  /// NaN or inf. The first chunk prefetches rows of V ahead.
  void accumulateValues(Value k0, Value kCount, TileRow value, bool skipZeroWeights) {
    int64_t accumulators =
        skipZeroWeights ? p.decodeMaskedAccumulators : p.decodeAccumulators;
    accumulateChunks(kCount, accumulators, [&](Value j, int64_t v0, int64_t nv,
                                 ValueRange a) -> SmallVector<Value> {
      if (v0 == 0)
        prefetchAhead(buf.v, k0, j);
      SmallVector<Value> vj, next;
      for (int64_t v = 0; v < nv; ++v)
        vj.push_back(value(j, g.index((v0 + v) * g.lanes)));
      for (int64_t r = 0; r < p.validRows; ++r) {
        Value weight = g.splat(g.load(scores, {j, g.index(r)}));
        for (int64_t v = 0; v < nv; ++v)
          next.push_back(skipZeroWeights ? buildWeightedSum(g.b, a[r * nv + v], weight, vj[v])
                                         : g.fma(weight, vj[v], a[r * nv + v]));
      }
      return next;
    });
  }

  /// O[r][e] = alpha[r] O[r][e] + sum_{jp < pairs} of the pair products
  /// Pv[jp][2 r..] . (V[2 jp][e], V[2 jp + 1][e]) (V's rows zipped as they
  /// are read; the second row of a last odd pair is zero).
  void accumulateValuePairs(Value k0, Value kCount, Value pairs) {
    auto raw = VectorType::get({g.lanes}, p.element);
    Value zero = arith::ConstantOp::create(g.b, g.b.getZeroAttr(raw));
    Value last = g.sub(kCount, g.index(1));
    accumulateChunks(pairs, p.decodeAccumulators, [&](Value jp, int64_t v0, int64_t nv,
                                ValueRange a) -> SmallVector<Value> {
      Value j = g.mul(jp, g.index(2));
      Value j1 = g.add(j, g.index(1));
      if (v0 == 0) {
        prefetchAhead(buf.v, k0, j);
        prefetchAhead(buf.v, k0, j1);
      }
      Value second = g.cmp(arith::CmpIPredicate::slt, j1, kCount);
      auto row = [&](Value key, int64_t v) {
        return vector::LoadOp::create(g.b, raw, buf.v, kvAt(g.add(k0, key), g.index(v * g.lanes)));
      };
      SmallVector<Value> zipped, next;
      for (int64_t v = v0; v < v0 + nv; ++v)
        zipped.push_back(
            buildZip(g.b, row(j, v), g.select(second, row(g.min(j1, last), v), zero)));
      for (int64_t r = 0; r < p.validRows; ++r) {
        Value weight = broadcastPair(weights, jp, g.index(2 * r));
        for (int64_t v = 0; v < nv; ++v)
          next.push_back(g.bf16Dot(a[r * nv + v], zipped[v], weight));
      }
      return next;
    });
  }
};

} // namespace

std::unique_ptr<AttentionTask> mlir::pe::createDecodeTask(KernelBuilder &g,
                                                          const AttentionPlan &p,
                                                          const AttentionBuffers &buf) {
  return std::make_unique<DecodeTask>(g, p, buf);
}
