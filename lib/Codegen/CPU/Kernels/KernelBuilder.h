//===- KernelBuilder.h - building CPU kernels on buffers --------*- C++ -*-===//
//
// Small helpers over an ImplicitLocOpBuilder for the hand-scheduled CPU
// kernels: loops with carried values, vector loads that extend f16/bf16 to
// f32, stack scratch, task-parallel loops. The positional math itself comes
// from the shared builders (pe/Dialect/PE/Utils).
//
//===----------------------------------------------------------------------===//
#ifndef PE_LIB_CONVERSION_CPUKERNELS_KERNELBUILDER_H
#define PE_LIB_CONVERSION_CPUKERNELS_KERNELBUILDER_H

#include "pe/Dialect/PE/Utils/Bf16PairDot.h"
#include "pe/Dialect/PE/Utils/KernelUtils.h"
#include "pe/Dialect/PE/Utils/ValueUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

namespace mlir::pe {

/// The most stack a scratch buffer takes beyond its elements (its skew).
constexpr int64_t kScratchSkewBytes = 960;

struct KernelBuilder {
  ImplicitLocOpBuilder &b;
  /// f32 lanes of the target's vectors (16 AVX-512, 8 AVX2, 4 NEON): the
  /// width of every vector the kernels build.
  int64_t lanes;
  /// The scratch buffers made so far (the next one's skew).
  int64_t scratchBuffers = 0;

  Type f32() { return b.getF32Type(); }
  Type i64() { return b.getI64Type(); }
  VectorType f32Vector() { return VectorType::get({lanes}, f32()); }
  VectorType i64Vector() { return VectorType::get({lanes}, i64()); }

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value i64Constant(int64_t v) {
    return arith::ConstantOp::create(b, b.getI64IntegerAttr(v));
  }
  Value f32Constant(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(float(v)));
  }
  Value f32Splat(double v) {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(f32Vector(), b.getF32FloatAttr(float(v))));
  }
  Value negInf() { return f32Constant(-std::numeric_limits<double>::infinity()); }

  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
  Value ceilDiv(Value x, Value y) { return arith::CeilDivUIOp::create(b, x, y); }
  Value cmp(arith::CmpIPredicate pred, Value x, Value y) {
    return arith::CmpIOp::create(b, pred, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, cond, x, y);
  }
  Value toI64(Value index) { return arith::IndexCastOp::create(b, i64(), index); }

  Value fma(Value x, Value y, Value z) { return math::FmaOp::create(b, x, y, z); }
  /// acc[i] + x[2i] y[2i] + x[2i+1] y[2i+1] (a vector.contract that
  /// pe-lower-bf16-dot makes vdpbf16ps, BFDOT or f32 FMAs for the target).
  Value bf16Dot(Value acc, Value x, Value y) { return pe::buildBf16PairDot(b, acc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  /// f16/bf16 (scalar or vector) to f32.
  Value toF32(Value x) { return extendToF32(b, x); }

  Value load(Value mem, ValueRange ids) { return memref::LoadOp::create(b, mem, ids); }
  void store(Value v, Value mem, ValueRange ids) { memref::StoreOp::create(b, v, mem, ids); }
  Value vload(Value mem, ValueRange ids, int64_t count = 0) {
    Type element = cast<MemRefType>(mem.getType()).getElementType();
    return toF32(
        vector::LoadOp::create(b, VectorType::get({count ? count : lanes}, element), mem, ids));
  }
  Value vloadI64(Value mem, ValueRange ids) {
    return vector::LoadOp::create(b, i64Vector(), mem, ids);
  }
  void vstore(Value v, Value mem, ValueRange ids) { vector::StoreOp::create(b, v, mem, ids); }
  Value splat(Value scalar) {
    return vector::BroadcastOp::create(
        b, VectorType::get({lanes}, scalar.getType()), scalar);
  }

  /// Stack scratch of `shape` (int or float elements). Each buffer starts
  /// its own number of cache lines past a 64-byte boundary: a task's tiles
  /// and states are mostly whole multiples of 4 KiB, and buffers at equal
  /// offsets modulo 4 KiB (where the stack layout happened to put them)
  /// make the loads of one wait on the stores of another to the same low
  /// address bits (4K aliasing). Measured (causal prefill S = 2048, D =
  /// 128, bf16 on AMX, Xeon, 2 threads, ms): GQA 32/8 46 or 65 and MHA
  /// 47 or 86 depending on the layout of the kernel's frame; 43-46 and 47
  /// with distinct offsets. At most kScratchSkewBytes more stack per buffer.
  Value scratch(ArrayRef<int64_t> shape, Type element) {
    const int64_t bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
    if (bits == 0 || bits % 8 != 0)
      return memref::AllocaOp::create(b, MemRefType::get(shape, element));
    int64_t bytes = bits / 8;
    for (int64_t d : shape)
      bytes *= d;
    const int64_t skew = 64 * ((5 * scratchBuffers++) % (kScratchSkewBytes / 64 + 1));
    auto arena = memref::AllocaOp::create(b, MemRefType::get({bytes + skew}, b.getI8Type()),
                                          ValueRange{}, b.getI64IntegerAttr(64));
    return memref::ViewOp::create(b, MemRefType::get(shape, element), arena, index(skew),
                                  ValueRange{});
  }

  /// for (iv = lb; iv < ub; iv += step) body(iv).
  void loop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    auto op = scf::ForOp::create(b, lb, ub, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op.getBody()->getTerminator());
    body(op.getInductionVar());
  }
  void loop(int64_t lb, Value ub, int64_t step, function_ref<void(Value)> body) {
    loop(index(lb), ub, index(step), body);
  }
  /// The same with loop-carried values.
  SmallVector<Value>
  loop(Value lb, Value ub, Value step, ValueRange init,
       function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto op = scf::ForOp::create(b, lb, ub, step, init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(op.getBody());
      scf::YieldOp::create(b, body(op.getInductionVar(), op.getRegionIterArgs()));
    }
    return SmallVector<Value>(op.getResults());
  }
  /// The loop with loop-carried values above, `factor` steps a trip (the
  /// body repeated), then the steps left one a trip (no such loop where the
  /// bounds are constants that leave none). Runs no step where ub <= lb.
  SmallVector<Value>
  unrolledLoop(Value lb, Value ub, int64_t step, int64_t factor, ValueRange init,
               function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    assert(step > 0 && factor > 0 && "steps and factors are positive");
    if (factor == 1)
      return loop(lb, ub, index(step), init, body);
    const int64_t trip = step * factor;
    std::optional<int64_t> first = getConstantIntValue(lb), last = getConstantIntValue(ub);
    Value split;
    if (first && last)
      split = index(*first + (*last - *first) / trip * trip);
    else
      split = add(lb, mul(arith::DivUIOp::create(
                              b, arith::MaxSIOp::create(b, sub(ub, lb), index(0)), index(trip)),
                          index(trip)));
    SmallVector<Value> acc = loop(lb, split, index(trip), init, [&](Value iv, ValueRange a) {
      SmallVector<Value> next(a.begin(), a.end());
      for (int64_t i = 0; i < factor; ++i)
        next = body(add(iv, index(i * step)), next);
      return next;
    });
    if (first && last && (*last - *first) % trip == 0)
      return acc;
    return loop(split, ub, index(step), acc, body);
  }
  /// for (c = from; c < to; c += lanes) body(c): unrolled up to
  /// `maxUnrolled` vectors, a loop beyond (an unrolled row of 16 NEON
  /// vectors lets the scheduler hoist enough loads to spill).
  void forEachVector(int64_t from, int64_t to, function_ref<void(Value)> body,
                     int64_t maxUnrolled = 8) {
    if ((to - from) / lanes <= maxUnrolled) {
      for (int64_t c = from; c < to; c += lanes)
        body(index(c));
      return;
    }
    loop(from, index(to), lanes, body);
  }
  void ifThen(Value cond, function_ref<void()> then) {
    auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op.thenBlock()->getTerminator());
    then();
  }
  void ifThenElse(Value cond, function_ref<void()> then, function_ref<void()> otherwise) {
    auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op.thenBlock()->getTerminator());
    then();
    b.setInsertionPoint(op.elseBlock()->getTerminator());
    otherwise();
  }
  Value ifElse(Value cond, Type type, function_ref<Value()> then,
               function_ref<Value()> otherwise) {
    auto op = scf::IfOp::create(b, TypeRange{type}, cond, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(op.thenBlock());
    scf::YieldOp::create(b, then());
    b.setInsertionPointToStart(op.elseBlock());
    scf::YieldOp::create(b, otherwise());
    return op.getResult(0);
  }
  /// Stores an f32 scalar or vector into `mem`, rounded once to its element
  /// type.
  void storeAs(Value v, Value mem, ValueRange ids) {
    v = convertFloat(b, v, cast<MemRefType>(mem.getType()).getElementType());
    if (isa<VectorType>(v.getType()))
      vstore(v, mem, ids);
    else
      store(v, mem, ids);
  }

  /// Fills rows [from, to) of a 2-D buffer with zeros.
  void zeroRows(Value buf, Value from, Value to) {
    auto type = cast<MemRefType>(buf.getType());
    int64_t width = type.getDimSize(1);
    Type element = type.getElementType();
    auto vt = VectorType::get({lanes}, element);
    loop(from, to, index(1), [&](Value j) {
      if (width % lanes == 0) {
        Value zero = arith::ConstantOp::create(b, b.getZeroAttr(vt));
        for (int64_t x = 0; x < width; x += lanes)
          vstore(zero, buf, {j, index(x)});
      } else {
        Value zero = arith::ConstantOp::create(b, b.getZeroAttr(element));
        loop(0, index(width), 1, [&](Value x) { store(zero, buf, {j, x}); });
      }
    });
  }

  /// The columns of a lanes x lanes matrix given as its row vectors:
  /// log2(lanes) stages that swap the off-diagonal s x s blocks (s = lanes/2,
  /// ..., 2, 1), each one two-source shuffle per row.
  SmallVector<Value> transpose(ArrayRef<Value> rows) {
    SmallVector<Value> m(rows.begin(), rows.end());
    for (int64_t s = lanes / 2; s >= 1; s /= 2) {
      SmallVector<int64_t> lo, hi;
      for (int64_t l = 0; l < lanes; ++l) {
        bool upper = l & s;
        lo.push_back(upper ? l - s + lanes : l);
        hi.push_back(upper ? l + lanes : l + s);
      }
      for (int64_t i = 0; i < lanes; ++i) {
        if (i & s)
          continue;
        Value a = m[i], bv = m[i + s];
        m[i] = vector::ShuffleOp::create(b, a, bv, lo);
        m[i + s] = vector::ShuffleOp::create(b, a, bv, hi);
      }
    }
    return m;
  }

  /// `tensor` as a read-only buffer of identity layout (null stays null).
  Value toBuffer(Value tensor) { return toReadOnlyBuffer(b, tensor); }

  /// Runs `body(ivs)` for every point of [0, ubs): an scf.parallel (an
  /// allocation scope, which OpenMP outlines) with threads, else a nest of
  /// scf.for whose scratch the caller allocates once, before the nest.
  void parallel(int64_t threads, ArrayRef<Value> ubs,
                function_ref<void(ValueRange)> body) {
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Value> ivs;
    if (threads > 1) {
      SmallVector<Value> lbs(ubs.size(), index(0)), steps(ubs.size(), index(1));
      auto par = scf::ParallelOp::create(b, lbs, ubs, steps);
      b.setInsertionPoint(par.getBody()->getTerminator());
      llvm::append_range(ivs, par.getInductionVars());
    } else {
      for (Value ub : ubs) {
        auto loop = scf::ForOp::create(b, index(0), ub, index(1));
        b.setInsertionPoint(loop.getBody()->getTerminator());
        ivs.push_back(loop.getInductionVar());
      }
    }
    body(ivs);
  }
};

} // namespace mlir::pe

#endif // PE_LIB_CONVERSION_CPUKERNELS_KERNELBUILDER_H
