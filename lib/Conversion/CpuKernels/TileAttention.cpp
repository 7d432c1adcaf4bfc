//===- TileAttention.cpp - pe-tile-attention ------------------------------===//
//
// The flash-attention lowering of pe.attention for CPUs (the algorithm is
// stated in the pass description, include/pe/Conversion/Passes.td).
//
// Layout of a task's buffers (f32, rows r = i * group + g for query i of the
// block and head g of the KV head's group, padded to whole vectors):
//   Qt[D][rows]      rotated, scaled queries, transposed
//   St[Bk][rows]     scores, then probabilities, of one key tile (S^T)
//   Ot[Dv][rows]     unnormalized output (O^T)
//   Kr[Bk][D]        the rotated key tile, Vp[Bk][Dv] the value tile
//   m, l, alpha      [rows] online-softmax statistics
// Vectors run along the rows, so both matmuls are broadcast-FMA micro-tiles
// of at most 24 accumulators and the softmax needs no horizontal reduction.
// Decode (<= 8 rows) keeps Q and O row-major instead; with AMX, Q^T and V
// are bf16 VNNI pairs, P is transposed to bf16 rows and O is row-major
// (docs/compiling.md, "The flash-attention kernel").
//
//===----------------------------------------------------------------------===//
#include "pe/Conversion/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Math/PositionalMath.h"

#include "KernelBuilder.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <limits>

namespace mlir::pe {
#define GEN_PASS_DEF_PETILEATTENTION
#include "pe/Conversion/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

/// Accumulator registers of a micro-tile (of the 32 vector registers).
constexpr int64_t kAccumulators = 24;
/// The runtime function that enables AMX tiles (lib/Runtime).
constexpr char kEnableAmxFn[] = "pe_runtime_enable_amx";
/// Stack scratch of one task at most (OpenMP worker stacks are 4 MiB).
constexpr int64_t kMaxScratchBytes = 1 << 20;

/// The compile-time shape of one kernel.
struct Plan {
  int64_t hq, hkv, group, d, dv;
  int64_t bq;   // queries per task
  int64_t rows; // bq * group, rounded up to whole vectors
  int64_t bk;   // keys per K/V tile
  int64_t cw;   // row vectors per micro-tile
  int64_t nj;   // keys per micro-tile of S^T = Kr Qt
  int64_t ne;   // value channels per micro-tile of O^T += Vp^T P
  int64_t rotary = 0, half = 0;
  bool interleaved = false;
  Type element;
  double scale;
  bool causal;
  std::optional<int64_t> window;
  std::optional<double> alibi;
  bool hasMask;
  int64_t threads;
  /// Decode: at most 8 valid rows (Sq * group, Sq static). Q and O are kept
  /// row-major, scores are dot products along D and P V runs along Dv, so no
  /// lane is spent on padding rows.
  bool rowMajor = false;
  int64_t validRows = 0;
  /// bf16 prefill on AMX tiles: S^T = K Q^T and O = P V as 16 x 16 f32 tiles
  /// of 16 x 32 bf16 products; Q^T and V in VNNI pairs, P transposed to
  /// rows; O row-major.
  bool amx = false;

  /// O (and its partials) row-major [rows][Dv] rather than [Dv][rows].
  bool outputRowMajor() const { return rowMajor || amx; }
  int64_t outputRows() const { return rowMajor ? validRows : rows; }

  int64_t vectors() const { return rows / kLanes; }
};

/// The kernel builder with the plan of the kernel.
struct Gen : KernelBuilder {
  const Plan &p;
  Gen(ImplicitLocOpBuilder &b, const Plan &p) : KernelBuilder{b}, p(p) {}
};

/// The operands of one kernel, as buffers.
struct Buffers {
  Value q, k, v, mask, maskFlat, qPos, kPos, qCos, qSin, kCos, kSin, slopes, out;
};

/// Position `i` of batch row `bi` (positions [S] or [B, S]) as i64.
Value positionAt(Gen &g, Value pos, Value bi, Value i) {
  Value x = cast<MemRefType>(pos.getType()).getRank() == 2 ? g.load(pos, {bi, i})
                                                           : g.load(pos, {i});
  if (x.getType().isInteger(64))
    return x;
  return arith::ExtSIOp::create(g.b, g.i64(), x);
}

/// Indices of table entry (bi, i, c) for tables [S, r/2] or [B, S, r/2].
SmallVector<Value> tableIndex(Value table, Value bi, Value i, Value c) {
  if (cast<MemRefType>(table.getType()).getRank() == 3)
    return {bi, i, c};
  return {i, c};
}

/// Channel indices of pair c: (c, c + r/2) or (2c, 2c + 1).
std::pair<Value, Value> pairChannels(Gen &g, Value c) {
  if (g.p.interleaved) {
    Value first = g.mul(c, g.c(2));
    return {first, g.add(first, g.c(1))};
  }
  return {c, g.add(c, g.c(g.p.half))};
}

/// One task of the kernel.
struct Task {
  Gen &g;
  const Plan &p;
  const Buffers &buf;
  Value bi = {}, kvh = {}, q0 = {}, qCount = {}, sq = {}, skv = {};
  // Scratch.
  Value qt = {}, st = {}, ot = {}, kr = {}, vp = {}, mRow = {}, lRow = {}, alpha = {},
        qPosRow = {}, slopeRow = {}, maskRow = {}, kPosTile = {}, pa = {};

  void allocate() {
    Type bf16 = g.b.getBF16Type();
    qt = p.rowMajor ? g.scratch({p.rows, p.d}, g.f32())
         : p.amx    ? g.scratch({p.d / 2, 2 * p.rows}, bf16)
                    : g.scratch({p.d, p.rows}, g.f32());
    st = g.scratch({p.bk, p.rows}, g.f32());
    ot = p.outputRowMajor() ? g.scratch({p.rows, p.dv}, g.f32())
                            : g.scratch({p.dv, p.rows}, g.f32());
    kr = g.scratch({p.bk, p.d}, p.amx ? bf16 : g.f32());
    vp = p.amx ? g.scratch({p.bk / 2, 2 * p.dv}, bf16) : g.scratch({p.bk, p.dv}, g.f32());
    if (p.amx)
      pa = g.scratch({p.rows, p.bk}, bf16);
    mRow = g.scratch({p.rows}, g.f32());
    lRow = g.scratch({p.rows}, g.f32());
    alpha = g.scratch({p.rows}, g.f32());
    qPosRow = g.scratch({p.rows}, g.i64());
    kPosTile = g.scratch({p.bk}, g.i64());
    if (p.alibi)
      slopeRow = g.scratch({p.rows}, g.f32());
    if (p.hasMask)
      maskRow = g.scratch({p.rows}, g.i64());
  }

  void initialize() {
    auto rowsOf = [&](Value buf) {
      return g.c(cast<MemRefType>(buf.getType()).getDimSize(0));
    };
    g.zeroRows(qt, g.c(0), rowsOf(qt));
    g.zeroRows(ot, g.c(0), rowsOf(ot));
    g.zeroRows(st, g.c(0), rowsOf(st));
    for (int64_t r = 0; r < p.rows; r += kLanes) {
      g.vstore(g.splat(g.negInf()), mRow, {g.c(r)});
      g.vstore(g.vsplat(0.0), lRow, {g.c(r)});
      g.vstore(g.splat(g.ci64(0)), qPosRow, {g.c(r)});
      if (p.alibi)
        g.vstore(g.vsplat(0.0), slopeRow, {g.c(r)});
      if (p.hasMask)
        g.vstore(g.splat(g.ci64(0)), maskRow, {g.c(r)});
    }
  }

  SmallVector<Value> qtIndex(Value d, Value r) {
    if (p.rowMajor)
      return {r, d};
    if (p.amx) // Q^T in VNNI pairs: Qv[d / 2][2 r + d % 2]
      return {arith::DivUIOp::create(g.b, d, g.c(2)),
              g.add(g.mul(r, g.c(2)), arith::RemUIOp::create(g.b, d, g.c(2)))};
    return {d, r};
  }

  /// Qt[:, r] = scale * rope(q[bi, h, q0 + i, :]) for r = i * group + g, and
  /// the per-row position, slope and mask offset. Returns (min, max) of the
  /// block's query positions.
  std::pair<Value, Value> packQueries() {
    SmallVector<Value> range = g.loop(
        g.c(0), qCount, g.c(1),
        {g.ci64(std::numeric_limits<int64_t>::max()),
         g.ci64(std::numeric_limits<int64_t>::min())},
        [&](Value i, ValueRange minMax) -> SmallVector<Value> {
          Value qi = g.add(q0, i);
          Value qp = positionAt(g, buf.qPos, bi, qi);
          g.loop(0, g.c(p.group), 1, [&](Value hg) {
            Value h = g.add(g.mul(kvh, g.c(p.group)), hg);
            Value r = g.add(g.mul(i, g.c(p.group)), hg);
            g.store(qp, qPosRow, {r});
            if (p.alibi)
              g.store(g.load(buf.slopes, {h}), slopeRow, {r});
            if (p.hasMask) {
              auto maskType = cast<MemRefType>(buf.mask.getType());
              Value bm = maskType.getDimSize(0) == 1 ? g.c(0) : bi;
              Value hm = maskType.getDimSize(1) == 1 ? g.c(0) : h;
              Value row = g.add(g.mul(g.add(g.mul(bm, g.c(p.hq)), hm), sq), qi);
              if (maskType.getDimSize(1) == 1)
                row = g.add(g.mul(bm, sq), qi);
              g.store(g.toI64(g.mul(row, skv)), maskRow, {r});
            }
            Value scale = g.cf(p.scale);
            auto channel = [&](Value d) {
              return g.toF32(g.load(buf.q, {bi, h, qi, d}));
            };
            if (p.rotary) {
              g.loop(0, g.c(p.half), 1, [&](Value cc) {
                auto [d0, d1] = pairChannels(g, cc);
                Value cs = g.load(buf.qCos, tableIndex(buf.qCos, bi, qi, cc));
                Value sn = g.load(buf.qSin, tableIndex(buf.qSin, bi, qi, cc));
                auto [y0, y1] = g.rotate(channel(d0), channel(d1), cs, sn);
                g.storeAs(g.fmul(y0, scale), qt, qtIndex(d0, r));
                g.storeAs(g.fmul(y1, scale), qt, qtIndex(d1, r));
              });
            }
            g.loop(p.rotary, g.c(p.d), 1, [&](Value d) {
              g.storeAs(g.fmul(channel(d), scale), qt, qtIndex(d, r));
            });
          });
          return {g.min(minMax[0], qp), g.max(minMax[1], qp)};
        });
    return {range[0], range[1]};
  }

  /// Positions of keys [k0, k0 + kCount) into kPosTile; returns their range.
  std::pair<Value, Value> keyPositions(Value k0, Value kCount) {
    SmallVector<Value> range = g.loop(
        g.c(0), kCount, g.c(1),
        {g.ci64(std::numeric_limits<int64_t>::max()),
         g.ci64(std::numeric_limits<int64_t>::min())},
        [&](Value j, ValueRange minMax) -> SmallVector<Value> {
          Value kp = positionAt(g, buf.kPos, bi, g.add(k0, j));
          g.store(kp, kPosTile, {j});
          return {g.min(minMax[0], kp), g.max(minMax[1], kp)};
        });
    return {range[0], range[1]};
  }

  /// Kr[j, :] = rope(k[bi, kvh, k0 + j, :]) in f32, zero rows past the keys.
  void packKeys(Value k0, Value kCount) {
    bool vectorRope = p.rotary && p.half % kLanes == 0;
    bool vectorRest = (p.d - p.rotary) % kLanes == 0;
    g.loop(0, kCount, 1, [&](Value j) {
      Value kj = g.add(k0, j);
      if (p.rotary && vectorRope) {
        for (int64_t cc = 0; cc < p.half; cc += kLanes) {
          Value cs = g.vload(buf.kCos, tableIndex(buf.kCos, bi, kj, g.c(cc)));
          Value sn = g.vload(buf.kSin, tableIndex(buf.kSin, bi, kj, g.c(cc)));
          g.rotatePairs(
              cs, sn, cc, p.half, p.interleaved,
              [&](int64_t channel, int64_t lanes) {
                return g.vload(buf.k, {bi, kvh, kj, g.c(channel)}, lanes);
              },
              [&](Value v, int64_t channel) { g.storeAs(v, kr, {j, g.c(channel)}); });
        }
      } else if (p.rotary) {
        g.loop(0, g.c(p.half), 1, [&](Value cc) {
          auto [d0, d1] = pairChannels(g, cc);
          Value cs = g.load(buf.kCos, tableIndex(buf.kCos, bi, kj, cc));
          Value sn = g.load(buf.kSin, tableIndex(buf.kSin, bi, kj, cc));
          auto [y0, y1] =
              g.rotate(g.toF32(g.load(buf.k, {bi, kvh, kj, d0})),
                     g.toF32(g.load(buf.k, {bi, kvh, kj, d1})), cs, sn);
          g.storeAs(y0, kr, {j, d0});
          g.storeAs(y1, kr, {j, d1});
        });
      }
      if (vectorRest) {
        for (int64_t d = p.rotary; d < p.d; d += kLanes)
          g.storeAs(g.vload(buf.k, {bi, kvh, kj, g.c(d)}), kr, {j, g.c(d)});
      } else {
        g.loop(p.rotary, g.c(p.d), 1, [&](Value d) {
          g.storeAs(g.toF32(g.load(buf.k, {bi, kvh, kj, d})), kr, {j, d});
        });
      }
    });
    g.zeroRows(kr, kCount, g.c(p.bk));
  }

  /// Vp[j, :] = v[bi, kvh, k0 + j, :] in f32, zero rows past the keys.
  void packValues(Value k0, Value kCount) {
    g.loop(0, kCount, 1, [&](Value j) {
      Value kj = g.add(k0, j);
      if (p.dv % kLanes == 0) {
        for (int64_t e = 0; e < p.dv; e += kLanes)
          g.vstore(g.vload(buf.v, {bi, kvh, kj, g.c(e)}), vp, {j, g.c(e)});
      } else {
        g.loop(0, g.c(p.dv), 1, [&](Value e) {
          g.store(g.toF32(g.load(buf.v, {bi, kvh, kj, e})), vp, {j, e});
        });
      }
    });
    g.zeroRows(vp, kCount, g.c(p.bk));
  }

  /// St[j, r] = sum_d Kr[j, d] Qt[d, r] for keys [0, kCount) rounded up to
  /// whole micro-tiles (nj keys x cw row vectors).
  /// Element (j, d) of the key or value tile (a packed tile, or f32 values
  /// in place).
  using TileElement = function_ref<Value(Value j, Value d)>;

  void scores(Value kCount, TileElement key) {
    Value nj = g.c(p.nj);
    Value jEnd = g.mul(g.ceilDiv(kCount, nj), nj);
    int64_t tile = p.nj * p.cw;
    g.loop(g.c(0), jEnd, nj, [&](Value j0) {
      g.loop(0, g.c(p.rows), p.cw * kLanes, [&](Value r0) {
        SmallVector<Value> init(tile, g.vsplat(0.0));
        SmallVector<Value> acc = g.loop(
            g.c(0), g.c(p.d), g.c(1), init,
            [&](Value d, ValueRange a) -> SmallVector<Value> {
              SmallVector<Value> qv, next;
              for (int64_t cv = 0; cv < p.cw; ++cv)
                qv.push_back(g.vload(qt, {d, g.add(r0, g.c(cv * kLanes))}));
              for (int64_t jj = 0; jj < p.nj; ++jj) {
                Value kb = g.splat(key(g.add(j0, g.c(jj)), d));
                for (int64_t cv = 0; cv < p.cw; ++cv)
                  next.push_back(g.fma(kb, qv[cv], a[jj * p.cw + cv]));
              }
              return next;
            });
        for (int64_t jj = 0; jj < p.nj; ++jj)
          for (int64_t cv = 0; cv < p.cw; ++cv)
            g.vstore(acc[jj * p.cw + cv], st,
                     {g.add(j0, g.c(jj)), g.add(r0, g.c(cv * kLanes))});
      });
    });
  }

  /// s + ALiBi + mask, -inf where masked (causal, window, past the keys).
  /// The mask operand's entries for key j of the tile, 16 rows (gathered).
  Value maskValue(Value maskOffsets, Value j, Value k0, Value valid) {
    Value index = g.add(maskOffsets, g.splat(g.toI64(g.add(k0, j))));
    Type element = cast<MemRefType>(buf.maskFlat.getType()).getElementType();
    auto type = VectorType::get({kLanes}, element);
    Value pass = arith::ConstantOp::create(
        g.b, DenseElementsAttr::get(type, g.b.getFloatAttr(element, 0.0)));
    Value m = vector::GatherOp::create(g.b, type, buf.maskFlat, ValueRange{g.c(0)},
                                       index, g.splat(valid), pass);
    return g.toF32(m);
  }

  /// With `base`, `qp` holds q - base as f32 and the tile's positions lie
  /// within 2^24 of each other, so every distance k - q is exact in f32 and
  /// the bias and masks need no 64-bit lanes.
  Value fixScore(Value s, Value qp, Value slope, Value maskOffsets, Value j,
                 Value k0, Value kCount, Value base) {
    Value valid = g.cmp(arith::CmpIPredicate::slt, j, kCount);
    if (base) {
      Value kf = arith::SIToFPOp::create(g.b, g.f32(),
                                         g.sub(g.load(kPosTile, {j}), base));
      Value dist = g.fsub(g.splat(kf), qp); // k - q
      if (p.alibi)
        s = g.fma(slope, dist, s);
      if (p.hasMask)
        s = g.fadd(s, maskValue(maskOffsets, j, k0, valid));
      Value masked = g.splat(arith::XOrIOp::create(
          g.b, valid, arith::ConstantOp::create(g.b, g.b.getBoolAttr(true))));
      auto orIf = [&](arith::CmpFPredicate pred, Value x, Value y) {
        masked = arith::OrIOp::create(g.b, masked, arith::CmpFOp::create(g.b, pred, x, y));
      };
      if (p.causal)
        orIf(arith::CmpFPredicate::OGT, dist, g.vsplat(0.0));
      if (p.window) {
        Value w = g.vsplat(double(*p.window));
        orIf(arith::CmpFPredicate::OGE, arith::NegFOp::create(g.b, dist), w);
        if (!p.causal)
          orIf(arith::CmpFPredicate::OGE, dist, w);
      }
      return g.select(masked, g.splat(g.negInf()), s);
    }
    Value kp = g.splat(g.load(kPosTile, {j}));
    if (p.alibi) {
      // -slope (q - k) = slope (k - q).
      Value dist = arith::SIToFPOp::create(g.b, g.vf(), g.sub(kp, qp));
      s = g.fma(slope, dist, s);
    }
    if (p.hasMask)
      s = g.fadd(s, maskValue(maskOffsets, j, k0, valid));
    Value masked = g.splat(arith::XOrIOp::create(
        g.b, valid, arith::ConstantOp::create(g.b, g.b.getBoolAttr(true))));
    Value delta = g.sub(qp, kp); // q - k
    if (p.causal)
      masked = arith::OrIOp::create(
          g.b, masked, g.cmp(arith::CmpIPredicate::slt, delta, g.splat(g.ci64(0))));
    if (p.window) {
      Value w = g.splat(g.ci64(*p.window));
      masked = arith::OrIOp::create(g.b, masked,
                                    g.cmp(arith::CmpIPredicate::sge, delta, w));
      if (!p.causal)
        masked = arith::OrIOp::create(
            g.b, masked, g.cmp(arith::CmpIPredicate::sge, g.sub(kp, qp), w));
    }
    return g.select(masked, g.splat(g.negInf()), s);
  }

  /// The online-softmax step over one score tile. `near` (i1): the tile's
  /// query and key positions lie within 2^24 of `base`'s range, so masks and
  /// biases run on f32 distances.
  void softmax(Value needsFix, Value k0, Value kCount, Value near, Value base) {
    Value bk = g.c(p.bk);
    g.loop(0, g.c(p.rows), kLanes, [&](Value r) {
      Value mOld = g.vload(mRow, {r});
      auto maxOver = [&](bool fix, bool f32Distances) {
        Value qp, slope, maskOffsets;
        if (fix) {
          qp = g.vloadI64(qPosRow, {r});
          if (f32Distances)
            qp = arith::SIToFPOp::create(g.b, g.vf(), g.sub(qp, g.splat(base)));
          if (p.alibi)
            slope = g.vload(slopeRow, {r});
          if (p.hasMask)
            maskOffsets = g.vloadI64(maskRow, {r});
        }
        return g.loop(g.c(0), bk, g.c(1), {mOld},
                      [&](Value j, ValueRange m) -> SmallVector<Value> {
                        Value s = g.vload(st, {j, r});
                        if (fix) {
                          s = fixScore(s, qp, slope, maskOffsets, j, k0, kCount,
                                       f32Distances ? base : Value());
                          g.vstore(s, st, {j, r});
                        }
                        return {arith::MaxNumFOp::create(g.b, m[0], s)};
                      })[0];
      };
      Value mNew = g.ifElse(
          needsFix, g.vf(),
          [&] {
            return g.ifElse(
                near, g.vf(), [&] { return maxOver(true, true); },
                [&] { return maxOver(true, false); });
          },
          [&] { return maxOver(false, false); });
      // A row with no visible key yet has m = -inf: exponents use 0 instead,
      // so p = exp(-inf) = 0 and alpha = 0, never NaN.
      Value empty = arith::CmpFOp::create(g.b, arith::CmpFPredicate::OEQ, mNew,
                                          g.splat(g.negInf()));
      Value mSafe = g.select(empty, g.vsplat(0.0), mNew);
      Value a = g.exp(g.fsub(mOld, mSafe));
      Value sum = g.loop(g.c(0), bk, g.c(1), {g.vsplat(0.0)},
                         [&](Value j, ValueRange acc) -> SmallVector<Value> {
                           Value e = g.exp(g.fsub(g.vload(st, {j, r}), mSafe));
                           g.vstore(e, st, {j, r});
                           return {g.fadd(acc[0], e)};
                         })[0];
      g.vstore(g.fma(g.vload(lRow, {r}), a, sum), lRow, {r});
      g.vstore(mNew, mRow, {r});
      g.vstore(a, alpha, {r});
    });
  }

  /// Ot[e, r] = alpha[r] Ot[e, r] + sum_j Vp[j, e] St[j, r].
  void values(Value kCount, TileElement value) {
    g.loop(0, g.c(p.rows), p.cw * kLanes, [&](Value r0) {
      SmallVector<Value> al;
      for (int64_t cv = 0; cv < p.cw; ++cv)
        al.push_back(g.vload(alpha, {g.add(r0, g.c(cv * kLanes))}));
      auto microTile = [&](Value e0, int64_t ne) {
        SmallVector<Value> init;
        for (int64_t ee = 0; ee < ne; ++ee)
          for (int64_t cv = 0; cv < p.cw; ++cv)
            init.push_back(g.fmul(
                g.vload(ot, {g.add(e0, g.c(ee)), g.add(r0, g.c(cv * kLanes))}),
                al[cv]));
        SmallVector<Value> acc = g.loop(
            g.c(0), kCount, g.c(1), init,
            [&](Value j, ValueRange a) -> SmallVector<Value> {
              SmallVector<Value> pv, next;
              for (int64_t cv = 0; cv < p.cw; ++cv)
                pv.push_back(g.vload(st, {j, g.add(r0, g.c(cv * kLanes))}));
              for (int64_t ee = 0; ee < ne; ++ee) {
                Value vb = g.splat(value(j, g.add(e0, g.c(ee))));
                for (int64_t cv = 0; cv < p.cw; ++cv)
                  next.push_back(g.fma(vb, pv[cv], a[ee * p.cw + cv]));
              }
              return next;
            });
        for (int64_t ee = 0; ee < ne; ++ee)
          for (int64_t cv = 0; cv < p.cw; ++cv)
            g.vstore(acc[ee * p.cw + cv], ot,
                     {g.add(e0, g.c(ee)), g.add(r0, g.c(cv * kLanes))});
      };
      int64_t main = p.dv - p.dv % p.ne;
      if (main > 0)
        g.loop(0, g.c(main), p.ne, [&](Value e0) { microTile(e0, p.ne); });
      if (p.dv % p.ne)
        microTile(g.c(main), p.dv % p.ne);
    });
  }

  /// Row-major decode kernels. `row(j, c)` is the 16 channels c.. of key or
  /// value j as f32.
  using TileRow = function_ref<Value(Value j, int64_t c)>;

  /// St[j, r] = sum_d Q[r, d] K[j, d]: per key, D/16 FMAs per row and one
  /// tree reduction.
  void scoresRowMajor(Value kCount, TileRow key) {
    g.loop(0, kCount, 1, [&](Value j) {
      SmallVector<Value> kv;
      for (int64_t c = 0; c < p.d; c += kLanes)
        kv.push_back(key(j, c));
      for (int64_t r = 0; r < p.validRows; ++r) {
        Value acc;
        for (int64_t c = 0; c < p.d; c += kLanes) {
          Value qv = g.vload(qt, {g.c(r), g.c(c)});
          acc = acc ? g.fma(qv, kv[c / kLanes], acc) : g.fmul(qv, kv[0]);
        }
        auto reduce = vector::ReductionOp::create(g.b, vector::CombiningKind::ADD, acc);
        reduce.setFastmath(arith::FastMathFlags::reassoc);
        g.store(reduce, st, {j, g.c(r)});
      }
    });
  }

  /// O[r, e] = alpha[r] O[r, e] + sum_j P[j, r] V[j, e], in chunks of
  /// channels that keep rows x vectors <= 16 accumulators.
  void valuesRowMajor(Value kCount, TileRow value) {
    int64_t vectors = p.dv / kLanes;
    int64_t chunk = std::clamp<int64_t>(16 / p.validRows, 1, vectors);
    for (int64_t v0 = 0; v0 < vectors; v0 += chunk) {
      int64_t nv = std::min(chunk, vectors - v0);
      SmallVector<Value> init;
      for (int64_t r = 0; r < p.validRows; ++r) {
        Value a = g.splat(g.load(alpha, {g.c(r)}));
        for (int64_t v = 0; v < nv; ++v)
          init.push_back(g.fmul(g.vload(ot, {g.c(r), g.c((v0 + v) * kLanes)}), a));
      }
      SmallVector<Value> acc = g.loop(
          g.c(0), kCount, g.c(1), init,
          [&](Value j, ValueRange a) -> SmallVector<Value> {
            SmallVector<Value> vv, next;
            for (int64_t v = 0; v < nv; ++v)
              vv.push_back(value(j, (v0 + v) * kLanes));
            for (int64_t r = 0; r < p.validRows; ++r) {
              Value pr = g.splat(g.load(st, {j, g.c(r)}));
              for (int64_t v = 0; v < nv; ++v)
                next.push_back(g.fma(pr, vv[v], a[r * nv + v]));
            }
            return next;
          });
      for (int64_t r = 0; r < p.validRows; ++r)
        for (int64_t v = 0; v < nv; ++v)
          g.vstore(acc[r * nv + v], ot, {g.c(r), g.c((v0 + v) * kLanes)});
    }
  }

  /// AMX kernels (bf16). Tiles stay within one block: every loop whose body
  /// carries a tile is unrolled at compile time.
  amx::TileType tileBF16() { return amx::TileType::get({16, 32}, g.b.getBF16Type()); }
  amx::TileType tileF32() { return amx::TileType::get({16, 16}, g.f32()); }

  /// acc += A B over a reduction of `extent`: A = rows [row, row + 16) of
  /// `a` (columns k), B = VNNI pairs of `bPairs` at column `col` (rows k / 2).
  Value tileProduct(Value acc, Value a, Value row, Value bPairs, Value col,
                    int64_t extent) {
    for (int64_t k0 = 0; k0 < extent; k0 += 32) {
      Value at = amx::TileLoadOp::create(g.b, tileBF16(), a, ValueRange{row, g.c(k0)});
      Value bt = amx::TileLoadOp::create(g.b, tileBF16(), bPairs,
                                         ValueRange{g.c(k0 / 2), col});
      acc = amx::TileMulFOp::create(g.b, tileF32(), at, bt, acc);
    }
    return acc;
  }

  /// St[j, r] = sum_d Kr[j, d] Q[r, d]: A = 16 keys x 32 channels of Kr,
  /// B = the VNNI pairs of Q^T.
  void scoresAmx(Value kCount) {
    Value jEnd = g.mul(g.ceilDiv(kCount, g.c(16)), g.c(16));
    g.loop(g.c(0), jEnd, g.c(16), [&](Value j0) {
      g.loop(0, g.c(p.rows), 16, [&](Value r0) {
        Value acc = tileProduct(amx::TileZeroOp::create(g.b, tileF32()), kr, j0, qt,
                                g.mul(r0, g.c(2)), p.d);
        amx::TileStoreOp::create(g.b, st, ValueRange{j0, r0}, acc);
      });
    });
  }

  /// Pa[r, j] = bf16(St[j, r]), by 16 x 16 transposes.
  void transposeProbabilities() {
    g.loop(0, g.c(p.bk), 16, [&](Value j0) {
      g.loop(0, g.c(p.rows), 16, [&](Value r0) {
        SmallVector<Value> rows;
        for (int64_t i = 0; i < 16; ++i)
          rows.push_back(g.vload(st, {g.add(j0, g.c(i)), r0}));
        SmallVector<Value> cols = g.transpose16(rows);
        for (int64_t r = 0; r < 16; ++r)
          g.storeAs(cols[r], pa, {g.add(r0, g.c(r)), j0});
      });
    });
  }

  /// Vv[j / 2][2 e + j % 2] = v[bi, kvh, k0 + j, e] (bf16, zero past the
  /// keys): rows j and j + 1 zipped.
  void packValuesVnni(Value k0, Value kCount) {
    Value pairs = g.ceilDiv(kCount, g.c(2));
    auto raw = VectorType::get({kLanes}, p.element);
    Value zero = arith::ConstantOp::create(g.b, g.b.getZeroAttr(raw));
    g.loop(0, pairs, 1, [&](Value jp) {
      Value j = g.mul(jp, g.c(2));
      Value second = g.cmp(arith::CmpIPredicate::slt, g.add(j, g.c(1)), kCount);
      // The second row's index stays in bounds; past the keys it reads zeros.
      Value j1 = g.min(g.add(j, g.c(1)), g.sub(kCount, g.c(1)));
      for (int64_t e0 = 0; e0 < p.dv; e0 += kLanes) {
        Value x0 = vector::LoadOp::create(g.b, raw, buf.v,
                                          ValueRange{bi, kvh, g.add(k0, j), g.c(e0)});
        Value x1 = vector::LoadOp::create(g.b, raw, buf.v,
                                          ValueRange{bi, kvh, g.add(k0, j1), g.c(e0)});
        x1 = g.select(second, x1, zero);
        g.vstore(g.zip(x0, x1), vp, {jp, g.c(2 * e0)});
      }
    });
    g.zeroRows(vp, pairs, g.c(p.bk / 2));
  }

  /// O[r, e] = alpha[r] O[r, e] + sum_j Pa[r, j] V[j, e].
  void valuesAmx() {
    g.loop(0, g.c(p.rows), 1, [&](Value r) {
      Value a = g.splat(g.load(alpha, {r}));
      for (int64_t e = 0; e < p.dv; e += kLanes)
        g.vstore(g.fmul(g.vload(ot, {r, g.c(e)}), a), ot, {r, g.c(e)});
    });
    g.loop(0, g.c(p.rows), 16, [&](Value r0) {
      g.loop(0, g.c(p.dv), 16, [&](Value e0) {
        Value acc = amx::TileLoadOp::create(g.b, tileF32(), ot, ValueRange{r0, e0});
        acc = tileProduct(acc, pa, r0, vp, g.mul(e0, g.c(2)), p.bk);
        amx::TileStoreOp::create(g.b, ot, ValueRange{r0, e0}, acc);
      });
    });
  }

  /// out[bi, h, q0 + i, e] = l == 0 ? 0 : Ot[e, r] / l, rounded once.
  void writeOutput() {
    g.loop(0, qCount, 1, [&](Value i) {
      g.loop(0, g.c(p.group), 1, [&](Value hg) {
        Value r = g.add(g.mul(i, g.c(p.group)), hg);
        Value h = g.add(g.mul(kvh, g.c(p.group)), hg);
        Value l = g.load(lRow, {r});
        Value empty = arith::CmpFOp::create(g.b, arith::CmpFPredicate::OEQ, l, g.cf(0.0));
        g.loop(0, g.c(p.dv), 1, [&](Value e) {
          Value o = arith::DivFOp::create(
              g.b,
              g.load(ot, p.outputRowMajor() ? SmallVector<Value>{r, e}
                                            : SmallVector<Value>{e, r}),
              l);
          o = g.select(empty, g.cf(0.0), o);
          if (!p.element.isF32())
            o = arith::TruncFOp::create(g.b, p.element, o);
          g.store(o, buf.out, {bi, h, g.add(q0, i), e});
        });
      });
    });
  }

  /// partials[slot] = (Ot, m, l) flattened.
  void writePartials(Value partials, Value slot) {
    if (p.outputRowMajor()) {
      g.loop(0, g.c(p.dv), 1, [&](Value e) {
        for (int64_t r = 0; r < p.outputRows(); ++r)
          g.store(g.load(ot, {g.c(r), e}), partials,
                  {slot, g.add(g.mul(e, g.c(p.rows)), g.c(r))});
      });
    } else {
      g.loop(0, g.c(p.dv), 1, [&](Value e) {
        Value base = g.mul(e, g.c(p.rows));
        for (int64_t r = 0; r < p.rows; r += kLanes)
          g.vstore(g.vload(ot, {e, g.c(r)}), partials, {slot, g.add(base, g.c(r))});
      });
    }
    for (int64_t r = 0; r < p.rows; r += kLanes) {
      g.vstore(g.vload(mRow, {g.c(r)}), partials, {slot, g.c(p.dv * p.rows + r)});
      g.vstore(g.vload(lRow, {g.c(r)}), partials,
               {slot, g.c((p.dv + 1) * p.rows + r)});
    }
  }
};

/// Combines the key-split partials of task (bi, kvh, qb) into the output:
/// O = sum_s w_s O_s / sum_s w_s l_s with w_s = exp(m_s - max_s m_s).
void combine(Gen &g, const Buffers &buf, Value partials, Value slot0, Value nsplit,
             Value bi, Value kvh, Value q0, Value qCount) {
  const Plan &p = g.p;
  g.loop(0, qCount, 1, [&](Value i) {
    g.loop(0, g.c(p.group), 1, [&](Value hg) {
      Value r = g.add(g.mul(i, g.c(p.group)), hg);
      Value h = g.add(g.mul(kvh, g.c(p.group)), hg);
      Value mAt = g.add(g.c(p.dv * p.rows), r);
      Value lAt = g.add(g.c((p.dv + 1) * p.rows), r);
      Value mMax = g.loop(g.c(0), nsplit, g.c(1), {g.negInf()},
                          [&](Value s, ValueRange m) -> SmallVector<Value> {
                            Value ms = g.load(partials, {g.add(slot0, s), mAt});
                            return {arith::MaxNumFOp::create(g.b, m[0], ms)};
                          })[0];
      Value empty = arith::CmpFOp::create(g.b, arith::CmpFPredicate::OEQ, mMax, g.negInf());
      Value mSafe = g.select(empty, g.cf(0.0), mMax);
      auto weight = [&](Value s) {
        return g.exp(g.fsub(g.load(partials, {g.add(slot0, s), mAt}), mSafe));
      };
      Value l = g.loop(g.c(0), nsplit, g.c(1), {g.cf(0.0)},
                       [&](Value s, ValueRange acc) -> SmallVector<Value> {
                         Value ls = g.load(partials, {g.add(slot0, s), lAt});
                         return {g.fma(weight(s), ls, acc[0])};
                       })[0];
      Value zero = arith::CmpFOp::create(g.b, arith::CmpFPredicate::OEQ, l, g.cf(0.0));
      g.loop(0, g.c(p.dv), 1, [&](Value e) {
        Value at = g.add(g.mul(e, g.c(p.rows)), r);
        Value o = g.loop(g.c(0), nsplit, g.c(1), {g.cf(0.0)},
                         [&](Value s, ValueRange acc) -> SmallVector<Value> {
                           Value os = g.load(partials, {g.add(slot0, s), at});
                           return {g.fma(weight(s), os, acc[0])};
                         })[0];
        o = g.select(zero, g.cf(0.0), arith::DivFOp::create(g.b, o, l));
        if (!p.element.isF32())
          o = arith::TruncFOp::create(g.b, p.element, o);
        g.store(o, buf.out, {bi, h, g.add(q0, i), e});
      });
    });
  });
}

/// The kernel over all tasks.
void buildKernel(Gen &g, const Buffers &buf) {
  const Plan &p = g.p;
  ImplicitLocOpBuilder &b = g.b;
  if (p.amx) // the AMX tile state, once per process, before any tile op
    func::CallOp::create(b, kEnableAmxFn, TypeRange{}, ValueRange{});
  Value batch = memref::DimOp::create(b, buf.q, 0);
  Value sq = memref::DimOp::create(b, buf.q, 2);
  Value skv = memref::DimOp::create(b, buf.k, 2);
  Value nqb = g.ceilDiv(sq, g.c(p.bq));
  Value nkb = g.ceilDiv(skv, g.c(p.bk));
  Value tasks = g.mul(g.mul(batch, g.c(p.hkv)), nqb);
  // Fewer tasks than 2 x threads: split the key blocks too.
  Value nsplit = g.c(1);
  if (p.threads > 1) {
    nsplit = g.ceilDiv(g.c(2 * p.threads), g.max(tasks, g.c(1)));
    nsplit = g.max(g.c(1), g.min(nsplit, nkb));
  }
  Value perSplit = g.ceilDiv(nkb, nsplit);
  Value split = g.cmp(arith::CmpIPredicate::sgt, nsplit, g.c(1));
  Value slots = g.select(split, g.mul(tasks, nsplit), g.c(0));
  Value partials = memref::AllocOp::create(
      b, MemRefType::get({ShapedType::kDynamic, (p.dv + 2) * p.rows}, g.f32()),
      ValueRange{slots});

  // Query block of iteration `it`: 0, n-1, 1, n-2, ... so that the contiguous
  // iteration ranges of the threads get equal causal work.
  auto queryBlock = [&](Value it) {
    Value half = arith::DivUIOp::create(b, it, g.c(2));
    Value odd = g.cmp(arith::CmpIPredicate::ne,
                      arith::RemUIOp::create(b, it, g.c(2)), g.c(0));
    return g.select(odd, g.sub(g.sub(nqb, g.c(1)), half), half);
  };

  // Scratch: per iteration of the parallel loop, or once for sequential code.
  Task scratch{g, p, buf};
  scratch.sq = sq;
  scratch.skv = skv;
  if (p.threads == 1)
    scratch.allocate();
  g.parallel(p.threads, {batch, g.c(p.hkv), nqb, nsplit}, [&](ValueRange ivs) {
    Value bi = ivs[0], kvh = ivs[1], qb = queryBlock(ivs[2]), s = ivs[3];
    Value q0 = g.mul(qb, g.c(p.bq));
    Task t = scratch;
    t.bi = bi;
    t.kvh = kvh;
    t.q0 = q0;
    t.qCount = g.min(g.c(p.bq), g.sub(sq, q0));
    if (p.threads > 1)
      t.allocate();
    t.initialize();
    Value qMin, qMax;
    std::tie(qMin, qMax) = t.packQueries();
    Value kbBegin = g.mul(s, perSplit);
    Value kbEnd = g.min(nkb, g.add(kbBegin, perSplit));
    g.loop(kbBegin, kbEnd, g.c(1), [&](Value kb) {
      Value k0 = g.mul(kb, g.c(p.bk));
      Value kCount = g.min(g.c(p.bk), g.sub(skv, k0));
      Value kMin, kMax;
      std::tie(kMin, kMax) = t.keyPositions(k0, kCount);
      using P = arith::CmpIPredicate;
      Value no = arith::ConstantOp::create(b, b.getBoolAttr(false));
      Value skip = no;
      Value fix = g.cmp(P::slt, kCount, g.c(p.bk));
      if (p.alibi || p.hasMask)
        fix = arith::ConstantOp::create(b, b.getBoolAttr(true));
      if (p.causal) {
        skip = g.cmp(P::sgt, kMin, qMax);
        fix = arith::OrIOp::create(b, fix, g.cmp(P::sgt, kMax, qMin));
      }
      if (p.window) {
        Value w = g.ci64(*p.window);
        skip = arith::OrIOp::create(b, skip, g.cmp(P::sge, g.sub(qMin, kMax), w));
        fix = arith::OrIOp::create(b, fix, g.cmp(P::sge, g.sub(qMax, kMin), w));
        if (!p.causal) {
          skip = arith::OrIOp::create(b, skip, g.cmp(P::sge, g.sub(kMin, qMax), w));
          fix = arith::OrIOp::create(b, fix, g.cmp(P::sge, g.sub(kMax, qMin), w));
        }
      }
      // Every distance exact in f32: hi - lo < 2^24 (as unsigned: the
      // modular difference of i64 values is the true one).
      Value lo = g.min(qMin, kMin), hi = g.max(qMax, kMax);
      Value near = g.cmp(P::ult, g.sub(hi, lo), g.ci64(1 << 24));
      g.ifThen(arith::XOrIOp::create(b, skip, arith::ConstantOp::create(b, b.getBoolAttr(true))),
               [&] {
                 auto packed = [&](Value j, Value d) { return g.load(t.kr, {j, d}); };
                 if (p.amx) {
                   t.packKeys(k0, kCount);
                   t.scoresAmx(kCount);
                   t.softmax(fix, k0, kCount, near, lo);
                   t.transposeProbabilities();
                   t.packValuesVnni(k0, kCount);
                   t.valuesAmx();
                   return;
                 }
                 if (p.rowMajor) {
                   // Rotated keys from the packed tile; f32 keys without
                   // RoPE in place.
                   if (p.rotary || !p.element.isF32())
                     t.packKeys(k0, kCount);
                   t.scoresRowMajor(kCount, [&](Value j, int64_t c) {
                     if (p.rotary || !p.element.isF32())
                       return g.vload(t.kr, {j, g.c(c)});
                     return g.vload(buf.k, {bi, kvh, g.add(k0, j), g.c(c)});
                   });
                 } else {
                   t.packKeys(k0, kCount);
                   t.scores(kCount, packed);
                 }
                 t.softmax(fix, k0, kCount, near, lo);
                 // f32 values are read in place (only keys < kCount).
                 if (p.rowMajor) {
                   t.valuesRowMajor(kCount, [&](Value j, int64_t c) {
                     return g.vload(buf.v, {bi, kvh, g.add(k0, j), g.c(c)});
                   });
                 } else if (p.element.isF32()) {
                   t.values(kCount, [&](Value j, Value e) {
                     return g.load(buf.v, {bi, kvh, g.add(k0, j), e});
                   });
                 } else {
                   t.packValues(k0, kCount);
                   t.values(kCount, [&](Value j, Value e) { return g.load(t.vp, {j, e}); });
                 }
               });
    });
    Value task = g.add(g.mul(g.add(g.mul(bi, g.c(p.hkv)), kvh), nqb), qb);
    Value slot = g.add(g.mul(task, nsplit), s);
    auto ifOp = scf::IfOp::create(b, split, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      t.writePartials(partials, slot);
      b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
      t.writeOutput();
    }
  });

  g.ifThen(split, [&] {
    g.parallel(p.threads, {batch, g.c(p.hkv), nqb}, [&](ValueRange ivs) {
      Value bi = ivs[0], kvh = ivs[1], qb = ivs[2];
      Value q0 = g.mul(qb, g.c(p.bq));
      Value task = g.add(g.mul(g.add(g.mul(bi, g.c(p.hkv)), kvh), nqb), qb);
      combine(g, buf, partials, g.mul(task, nsplit), nsplit, bi, kvh, q0,
              g.min(g.c(p.bq), g.sub(sq, q0)));
    });
  });
}

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/// Lowers one pe.attention; fails (leaving it to pe-lower-to-linalg) when a
/// head dimension is dynamic.
LogicalResult tileAttention(RewriterBase &rewriter, AttentionOp op,
                            const PETileAttentionOptions &options,
                            llvm::StringMap<func::FuncOp> &kernels) {
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  auto kType = cast<RankedTensorType>(op.getKey().getType());
  auto vType = cast<RankedTensorType>(op.getValue().getType());
  if (qType.isDynamicDim(1) || qType.isDynamicDim(3) || kType.isDynamicDim(1) ||
      vType.isDynamicDim(3))
    return failure();

  Plan p;
  p.hq = qType.getDimSize(1);
  p.hkv = kType.getDimSize(1);
  p.group = p.hq / p.hkv;
  p.d = qType.getDimSize(3);
  p.dv = vType.getDimSize(3);
  p.element = qType.getElementType();
  p.scale = op.getEffectiveScale();
  p.causal = op.getCausal();
  p.window = op.getWindow();
  if (std::optional<APFloat> alibi = op.getAlibi())
    p.alibi = alibi->convertToDouble();
  p.hasMask = bool(op.getMask());
  p.threads = options.threads;
  if (RopeAttr rope = op.getRopeAttr()) {
    p.rotary = rope.getRotaryDim();
    p.half = p.rotary / 2;
    p.interleaved = rope.getStyle() == RopeStyle::interleaved;
  }
  // Rows: the requested count, fewer when the whole call has fewer (decode).
  int64_t rowsTarget = std::max<int64_t>(kLanes, roundUp(options.rows, kLanes));
  if (!qType.isDynamicDim(2))
    rowsTarget = std::min(rowsTarget,
                          roundUp(std::max<int64_t>(1, qType.getDimSize(2) * p.group), kLanes));
  p.bq = std::max<int64_t>(1, rowsTarget / p.group);
  p.rows = roundUp(p.bq * p.group, kLanes);
  int64_t vectors = p.rows / kLanes;
  p.cw = vectors % 4 == 0 ? 4 : vectors % 3 == 0 ? 3 : vectors % 2 == 0 ? 2 : 1;
  p.nj = kAccumulators / p.cw;
  p.ne = kAccumulators / p.cw;
  p.bk = std::max<int64_t>(48, roundUp(options.blockKeys, 48));
  if (options.amx && p.element.isBF16() && p.d % 32 == 0 && p.dv % kLanes == 0) {
    p.amx = true;
    p.bk = roundUp(p.bk, 96); // whole 16-key score tiles and 32-key P V steps
  }
  if (!qType.isDynamicDim(2) && qType.getDimSize(2) * p.group <= 8 &&
      p.d % kLanes == 0 && p.dv % kLanes == 0) {
    p.rowMajor = true;
    p.bq = std::max<int64_t>(1, qType.getDimSize(2));
    p.validRows = p.bq * p.group;
    p.rows = kLanes;
    p.amx = false;
  }

  // The task's scratch lives on its thread's stack: very wide heads use the
  // reference lowering instead.
  int64_t scratchBytes =
      4 * (p.rows * (p.d + p.dv + p.bk + 8) + p.bk * (p.d + p.dv + 2));
  if (scratchBytes > kMaxScratchBytes)
    return failure();

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  ImplicitLocOpBuilder b(loc, rewriter);
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue(), mask = op.getMask();
  auto [qPos, kPos] = prepareAttentionOperands(rewriter, loc, op, q, k, v, mask,
                                               op.getQPositions(), op.getKPositions());
  Gen g(b, p);
  Buffers buf;
  if (RopeAttr rope = op.getRopeAttr()) {
    auto [qCos, qSin] = buildRopeTables(rewriter, loc, rope, qPos);
    Value kCos = qCos, kSin = qSin;
    if (kPos != qPos)
      std::tie(kCos, kSin) = buildRopeTables(rewriter, loc, rope, kPos);
    buf.qCos = g.toBuffer(qCos);
    buf.qSin = g.toBuffer(qSin);
    buf.kCos = kPos != qPos ? g.toBuffer(kCos) : buf.qCos;
    buf.kSin = kPos != qPos ? g.toBuffer(kSin) : buf.qSin;
  }
  if (p.alibi) {
    std::vector<double> slopes = formula::alibiSlopes(p.hq, *p.alibi);
    SmallVector<float> values(slopes.begin(), slopes.end());
    auto type = RankedTensorType::get({p.hq}, b.getF32Type());
    buf.slopes = g.toBuffer(arith::ConstantOp::create(
                                 b, DenseElementsAttr::get(type, ArrayRef<float>(values))));
  }
  buf.q = g.toBuffer(q);
  buf.k = g.toBuffer(k);
  buf.v = g.toBuffer(v);
  buf.qPos = g.toBuffer(qPos);
  buf.kPos = g.toBuffer(kPos);
  if (mask)
    buf.mask = g.toBuffer(mask);
  SmallVector<OpFoldResult> sizes = {
      memref::getMixedSize(b, loc, buf.q, 0), b.getIndexAttr(p.hq),
      memref::getMixedSize(b, loc, buf.q, 2), b.getIndexAttr(p.dv)};
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamic;
  dispatchIndexOpFoldResults(sizes, dynamic, shape);
  auto outType = MemRefType::get(shape, p.element);
  buf.out = memref::AllocOp::create(b, outType, dynamic);

  // The kernel is a private function shared by every attention of the same
  // plan and operand types (a 32-layer model compiles one kernel).
  SmallVector<Value> args = {buf.q, buf.k, buf.v, buf.qPos, buf.kPos};
  for (Value optional : {buf.mask, buf.qCos, buf.qSin, buf.kCos, buf.kSin, buf.slopes})
    if (optional)
      args.push_back(optional);
  args.push_back(buf.out);
  std::string key;
  {
    llvm::raw_string_ostream os(key);
    os << p.bq << ',' << p.rows << ',' << p.bk << ',' << p.cw << ',' << p.rotary
       << ',' << p.interleaved << ',' << llvm::format("%a", p.scale) << ','
       << p.causal << ',' << p.window.value_or(-1) << ','
       << llvm::format("%a", p.alibi.value_or(0.0)) << ',' << bool(p.alibi) << ','
       << p.hasMask << ',' << p.threads << ',' << p.rowMajor << ',' << p.amx << ',';
    for (Value arg : args)
      os << arg.getType() << ';';
  }
  func::FuncOp &kernel = kernels[key];
  if (!kernel) {
    auto module = op->getParentOfType<ModuleOp>();
    OpBuilder::InsertionGuard guard(b);
    if (p.amx && !module.lookupSymbol(kEnableAmxFn)) {
      b.setInsertionPointToStart(module.getBody());
      func::FuncOp::create(b, kEnableAmxFn, FunctionType::get(b.getContext(), {}, {}))
          .setPrivate();
    }
    b.setInsertionPointToEnd(module.getBody());
    kernel = func::FuncOp::create(
        b, "pe_attention_kernel",
        FunctionType::get(b.getContext(), ValueRange(args).getTypes(), {}));
    kernel.setPrivate();
    // Internal to the object file once lowered to LLVM.
    kernel->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(b.getContext(), LLVM::Linkage::Internal));
    SymbolTable(module).insert(kernel); // uniques the name
    Block *entry = kernel.addEntryBlock();
    b.setInsertionPointToStart(entry);
    auto ret = func::ReturnOp::create(b);
    b.setInsertionPoint(ret);
    Buffers inner;
    auto arg = entry->args_begin();
    inner.q = *arg++;
    inner.k = *arg++;
    inner.v = *arg++;
    inner.qPos = *arg++;
    inner.kPos = *arg++;
    if (buf.mask) {
      inner.mask = *arg++;
      inner.maskFlat = memref::CollapseShapeOp::create(
          b, inner.mask, SmallVector<ReassociationIndices>{{0, 1, 2, 3}});
    }
    if (buf.qCos) {
      inner.qCos = *arg++;
      inner.qSin = *arg++;
      inner.kCos = *arg++;
      inner.kSin = *arg++;
    }
    if (buf.slopes)
      inner.slopes = *arg++;
    inner.out = *arg++;
    buildKernel(g, inner);
  }
  func::CallOp::create(b, kernel, args);

  Value result = bufferization::ToTensorOp::create(
      b, RankedTensorType::get(shape, p.element), buf.out, /*restrict=*/true,
      /*writable=*/true);
  checkAttentionResult(rewriter, loc, op, sizes);
  if (result.getType() != op.getType())
    result = tensor::CastOp::create(b, op.getType(), result);
  rewriter.replaceOp(op, result);

  return success();
}

struct TileAttentionPass : pe::impl::PETileAttentionBase<TileAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    // Bounded so that the tile arithmetic cannot overflow.
    constexpr int64_t kMaxOption = int64_t(1) << 20;
    if (threads < 1 || rows < 1 || blockKeys < 1 || threads > kMaxOption ||
        rows > kMaxOption || blockKeys > kMaxOption) {
      getOperation()->emitError(
          "pe-tile-attention: threads, rows and block-keys must be positive "
          "(at most 2^20)");
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    PETileAttentionOptions options{threads, blockKeys, rows, amx};
    llvm::StringMap<func::FuncOp> kernels;
    for (AttentionOp op : ops)
      (void)tileAttention(rewriter, op, options, kernels);
  }
};

} // namespace
