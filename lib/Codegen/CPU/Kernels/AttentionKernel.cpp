//===- AttentionKernel.cpp - the tasks of a CPU attention kernel ----------===//
//
// Tasks = (batch row, KV head, group of query blocks, key range) in one
// parallel loop: a prefill task packs each K/V tile once for the blocks of
// its group (queryBlocksPerTask); for decode over a paged cache, a task
// walks every KV head inside each key tile instead (headsInner).
// Query groups run in the order 0, n-1, 1, n-2, ... so that the contiguous
// iteration ranges of the threads get equal causal work. With fewer tasks
// than 2 x threads the key blocks are split among tasks too; each writes
// (O, m, l) partials that a second parallel loop combines:
//   O = sum_s w_s O_s / sum_s w_s l_s,  w_s = exp(m_s - max_s m_s).
//
//===----------------------------------------------------------------------===//
#include "AttentionTask.h"

#include "pe/Dialect/PE/Utils/AttentionBuilders.h"

#include <algorithm>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::pe;

using IntPredicate = arith::CmpIPredicate;

namespace {

/// The task of the plan's variant.
std::unique_ptr<AttentionTask> createTask(KernelBuilder &g, const AttentionPlan &p,
                                          const AttentionBuffers &buf) {
  switch (p.kind) {
  case AttentionKernelKind::Tiled:
    return createTiledTask(g, p, buf);
  case AttentionKernelKind::Decode:
    return createDecodeTask(g, p, buf);
  case AttentionKernelKind::Bf16Dot:
    return createBf16DotTask(g, p, buf);
  case AttentionKernelKind::Amx:
    return createAmxTask(g, p, buf);
  }
  llvm_unreachable("unknown attention kernel");
}

/// How the tile of keys [k0, k0 + kCount) with positions [kMin, kMax] must
/// be masked for queries at [qMin, qMax]; `hidden` when it is skipped.
std::pair<Value, TileMasking> classifyTile(KernelBuilder &g, const AttentionPlan &p,
                                           Value kCount, Value qMin, Value qMax,
                                           Value kMin, Value kMax) {
  TileVisibility visibility =
      buildTileVisibility(g.b, p.positionMask, qMin, qMax, kMin, kMax);
  TileMasking masking;
  Value always = arith::ConstantOp::create(g.b, g.b.getBoolAttr(true));
  // Keys past the tail are never summed; the mask operand may hold -inf.
  masking.maskedKeys = p.hasMask ? always : visibility.partial;
  // The key tail, ALiBi and the mask operand also need per-score fixes.
  masking.partial = arith::OrIOp::create(
      g.b, visibility.partial, g.cmp(IntPredicate::slt, kCount, g.index(p.keysPerTile)));
  if (p.alibiMaxBias || p.hasMask)
    masking.partial = always;
  // Every distance is exact in f32 when hi - lo < 2^24 (unsigned: the
  // modular difference of i64 values is the true one).
  masking.base = g.min(qMin, kMin);
  Value hi = g.max(qMax, kMax);
  masking.nearby = g.cmp(IntPredicate::ult, g.sub(hi, masking.base),
                         g.i64Constant(int64_t(1) << 24));
  return {visibility.hidden, masking};
}

/// Combines the key-split partials of task (bi, kvh, query block), at
/// slots slot0 + s stride for s < nsplit, into the output:
/// O = sum_s w_s O_s / sum_s w_s l_s, w_s = exp(m_s - base),
/// base = max_s m_s (0 for a row without a visible key).
void combine(KernelBuilder &g, const AttentionPlan &p, const AttentionBuffers &buf,
             Value partials, Value slot0, Value stride, Value nsplit, Value bi, Value kvh,
             Value q0, Value qCount) {
  g.loop(0, qCount, 1, [&](Value i) {
    g.loop(0, g.index(p.group), 1, [&](Value hg) {
      Value r = g.add(g.mul(i, g.index(p.group)), hg);
      Value h = g.add(g.mul(kvh, g.index(p.group)), hg);
      Value mAt = g.add(g.index(p.valueDim * p.rows), r);
      Value lAt = g.add(g.index((p.valueDim + 1) * p.rows), r);
      auto partial = [&](Value s, Value at) {
        return g.load(partials, {g.add(slot0, g.mul(s, stride)), at});
      };
      auto sumOverSplits = [&](Value init, function_ref<Value(Value, Value)> step) {
        return g.loop(g.index(0), nsplit, g.index(1), {init},
                      [&](Value s, ValueRange acc) -> SmallVector<Value> {
                        return {step(s, acc[0])};
                      })[0];
      };
      // base = max_s m_s, or 0
      Value mMax = sumOverSplits(g.negInf(), [&](Value s, Value m) {
        return buildRunningRowMax(g.b, m, partial(s, mAt));
      });
      Value base = buildExponentBase(g.b, mMax);
      auto weight = [&](Value s) {
        return buildExpOfDifference(g.b, partial(s, mAt), base, buildExpNonPositive);
      };
      // l = sum_s w_s l_s
      Value l = sumOverSplits(g.f32Constant(0.0), [&](Value s, Value acc) {
        return g.fma(weight(s), partial(s, lAt), acc);
      });
      g.loop(0, g.index(p.valueDim), 1, [&](Value e) {
        Value at = g.add(g.mul(e, g.index(p.rows)), r);
        // O = sum_s w_s O_s
        Value o = sumOverSplits(g.f32Constant(0.0), [&](Value s, Value acc) {
          return g.fma(weight(s), partial(s, at), acc);
        });
        g.storeAs(buildNormalize(g.b, o, l), buf.out, {bi, h, g.add(q0, i), e});
      });
    });
  });
}

} // namespace

/// The online-softmax updates of key blocks [kbBegin, kbEnd) for queries at
/// positions [qMin, qMax]: each block trimmed to its keys visible to some
/// query, classified, and passed to `process` (with its keys' position
/// range) unless every key is hidden.
static void streamKeyBlocks(
    KernelBuilder &g, const AttentionPlan &p, AttentionTask &task, Value kbBegin, Value kbEnd,
    Value skv, Value qMin, Value qMax,
    function_ref<void(Value, Value, const TileMasking &, Value, Value)> process) {
  ImplicitLocOpBuilder &b = g.b;
  g.loop(kbBegin, kbEnd, g.index(1), [&](Value kb) {
    Value k0 = g.mul(kb, g.index(p.keysPerTile));
    Value kCount = g.min(g.index(p.keysPerTile), g.sub(skv, k0));
    Value none = arith::ConstantOp::create(b, b.getBoolAttr(false));
    if (p.positionMask.any()) {
      // Only the keys from the first to the last one visible to a row: the
      // causal diagonal's tile stops at the block's last query.
      auto [first, count] = task.visibleKeyRange(k0, kCount, qMin, qMax);
      k0 = g.add(k0, first);
      kCount = count;
      none = g.cmp(IntPredicate::eq, count, g.index(0));
    }
    Value kMin, kMax, hidden;
    TileMasking masking;
    std::tie(kMin, kMax) = task.keyPositions(k0, kCount);
    std::tie(hidden, masking) = classifyTile(g, p, kCount, qMin, qMax, kMin, kMax);
    hidden = arith::OrIOp::create(b, hidden, none);
    Value visible = arith::XOrIOp::create(
        b, hidden, arith::ConstantOp::create(b, b.getBoolAttr(true)));
    g.ifThen(visible, [&] { process(k0, kCount, masking, kMin, kMax); });
  });
}

/// Whether one task holds every KV head of its query rows and walks the
/// heads inside each key tile: for decode over a paged cache (nhd: a key row
/// holds the heads side by side, and a task per head would read a short
/// piece of every row per pass, about 2/3 of the read bandwidth; hnd: a
/// page holds each head's rows in turn, and the heads of a tile read its
/// pages whole, 31.4 -> 28.1 ms on the 8 x 1k..32k f32 decode batch), while
/// the heads' state fits a task's scratch.
static bool headsInner(const AttentionPlan &p, const AttentionBuffers &buf) {
  constexpr int64_t kMaxStateBytes = 256 << 10;
  return buf.layout != CacheLayout::dense && p.kind == AttentionKernelKind::Decode &&
         p.kvHeads > 1 && p.blockStateBytes <= kMaxStateBytes / p.kvHeads;
}

/// Task (bi, taskHead, queries [q0, q0 + qCount)) over key blocks
/// [kbBegin, kbEnd) of its `skv` keys: the KV head taskHead, or with `inner`
/// every KV head in turn inside each key tile; the sinks join where
/// `firstSplit` (i1). Then `finish(kvh)` for each KV head, whose state the
/// task holds at that point.
static void runTask(KernelBuilder &g, const AttentionPlan &p, AttentionTask &task,
                    bool inner, Value bi, Value taskHead, Value q0, Value qCount,
                    Value firstSplit, Value kbBegin, Value kbEnd, Value skv,
                    function_ref<void(Value)> finish) {
  // body(kvh) for the task's KV head, or for each of them in turn.
  auto forHeads = [&](function_ref<void(Value)> body) {
    if (!inner) {
      task.setTask(bi, taskHead, q0, qCount);
      return body(taskHead);
    }
    g.loop(0, g.index(p.kvHeads), 1, [&](Value h) {
      task.selectHead(h);
      task.setTask(bi, h, q0, qCount);
      body(h);
    });
  };
  forHeads([&](Value) { task.initialize(firstSplit); });
  // The queries' position range (the same for every head).
  Value qMin, qMax;
  if (!inner) {
    std::tie(qMin, qMax) = task.packQueries();
  } else {
    SmallVector<Value> range = g.loop(
        g.index(0), g.index(p.kvHeads), g.index(1), {g.i64Constant(0), g.i64Constant(0)},
        [&](Value h, ValueRange) -> SmallVector<Value> {
          task.selectHead(h);
          task.setTask(bi, h, q0, qCount);
          auto [lo, hi] = task.packQueries();
          return {lo, hi};
        });
    qMin = range[0];
    qMax = range[1];
    task.setTask(bi, g.index(0), q0, qCount);
  }
  streamKeyBlocks(g, p, task, kbBegin, kbEnd, skv, qMin, qMax,
                  [&](Value k0, Value kCount, const TileMasking &m, Value, Value) {
                    task.setHeadWalkTile(inner ? kCount : Value());
                    forHeads([&](Value) { task.processTile(k0, kCount, m); });
                  });
  // kCount is a value of the stream's loop body: no use past it.
  task.setHeadWalkTile(Value());
  forHeads(finish);
}

/// The blocks of queries a prefill task holds: each K/V tile is packed once
/// (keys rotated, values as f32 or in the bf16 pairs of the AMX and
/// dot-product kernels) and attended by every block of the task,
/// so that the keys are rotated, and a head's rows read from memory (from a
/// paged cache: scattered, and in nhd interleaved with the other heads'),
/// once per task rather than once per block; as many as keep the task's
/// stack scratch within its bound (each further block adds its state: Q, O,
/// row statistics), at most 16 (13 at D = 128 and 64 rows). 1 for the
/// variants that cannot share a tile. Measured (Xeon, 2 threads, GQA 32/8,
/// D = 128, f32, ms): a 512-query chunk against 16k keys over nhd pages 663
/// (a dense copy of the pages, one block per task), 581 / 510 / 500 in place
/// with 4 / 8 / 16 blocks; over hnd pages 609 / 531 / 488 / 474 with 1 / 4
/// / 8 / 16; on dense tensors 540 -> 492; causal prefill with llama3 RoPE,
/// S = 2048, 158 -> 139, S = 512, 11.3 -> 10.9. bf16 (same machine and
/// shapes): causal prefill S = 2048 on AMX 100 -> 87, the 512-query chunk
/// over nhd pages (then through a dense copy) 257 -> 207 on AMX; with
/// the dot products 1391 (copied, a block per task) -> 1280 (in place).
static int64_t queryBlocksPerTask(const AttentionPlan &p, const AttentionTask &task) {
  constexpr int64_t kMaxBlocks = 16;
  if (!task.sharesTiles())
    return 1;
  // Beside the plan's scratch: the rows being rotated (lanes x D f32) and
  // the blocks' query position ranges.
  const int64_t fixed = p.taskScratchBytes + 4 * p.lanes * p.headDim + 16 * kMaxBlocks;
  const int64_t more = (kMaxTaskScratchBytes - fixed) / p.blockStateBytes;
  return std::clamp<int64_t>(1 + more, 1, kMaxBlocks);
}

/// Task (bi, kvh, query blocks [qb0, qb0 + count)) over key blocks
/// [kbBegin, kbEnd): slot i holds block qb0 + i; each tile visible to some
/// block is packed once and attended by each block it is visible to. Then
/// `finish(qb)` for each block, whose state the task holds at that point.
static void runQueryBlocksTask(KernelBuilder &g, const AttentionPlan &p, AttentionTask &task,
                               Value bi, Value kvh, Value qb0, Value count, Value sq,
                               Value firstSplit, Value kbBegin, Value kbEnd, Value skv,
                               function_ref<void(Value)> finish) {
  ImplicitLocOpBuilder &b = g.b;
  Value ranges = task.slotQueryRanges();
  auto forBlocks = [&](function_ref<void(Value, Value)> body) {
    g.loop(g.index(0), count, g.index(1), [&](Value i) {
      Value qb = g.add(qb0, i);
      Value q0 = g.mul(qb, g.index(p.queriesPerTask));
      task.selectSlot(i);
      task.setTask(bi, kvh, q0, g.min(g.index(p.queriesPerTask), g.sub(sq, q0)));
      body(i, qb);
    });
  };
  auto rangeOf = [&](Value i) {
    return std::pair{g.load(ranges, {i, g.index(0)}), g.load(ranges, {i, g.index(1)})};
  };
  forBlocks([&](Value i, Value) {
    task.initialize(firstSplit);
    auto [lo, hi] = task.packQueries();
    g.store(lo, ranges, {i, g.index(0)});
    g.store(hi, ranges, {i, g.index(1)});
  });
  // The positions of every block's queries.
  SmallVector<Value> all = g.loop(
      g.index(0), count, g.index(1),
      {g.i64Constant(std::numeric_limits<int64_t>::max()),
       g.i64Constant(std::numeric_limits<int64_t>::min())},
      [&](Value i, ValueRange acc) -> SmallVector<Value> {
        auto [lo, hi] = rangeOf(i);
        return {arith::MinSIOp::create(b, acc[0], lo), arith::MaxSIOp::create(b, acc[1], hi)};
      });
  Value always = arith::ConstantOp::create(b, b.getBoolAttr(true));
  streamKeyBlocks(g, p, task, kbBegin, kbEnd, skv, all[0], all[1],
                  [&](Value k0, Value kCount, const TileMasking &, Value kMin, Value kMax) {
                    task.prepareTile(k0, kCount);
                    forBlocks([&](Value i, Value) {
                      auto [lo, hi] = rangeOf(i);
                      Value hidden;
                      TileMasking masking;
                      std::tie(hidden, masking) =
                          classifyTile(g, p, kCount, lo, hi, kMin, kMax);
                      g.ifThen(arith::XOrIOp::create(b, hidden, always), [&] {
                        task.processPreparedTile(k0, kCount, masking);
                      });
                    });
                  });
  forBlocks([&](Value, Value qb) { finish(qb); });
}

void mlir::pe::buildAttentionKernel(KernelBuilder &g, const AttentionPlan &p,
                                    const AttentionBuffers &buf) {
  ImplicitLocOpBuilder &b = g.b;
  if (p.kind == AttentionKernelKind::Amx) // the tile state, before any tile op
    func::CallOp::create(b, kEnableAmxFn, TypeRange{}, ValueRange{});
  const bool inner = headsInner(p, buf);
  std::unique_ptr<AttentionTask> task = createTask(g, p, buf);
  const int64_t blocksPerTask = inner ? 1 : queryBlocksPerTask(p, *task);
  Value batch = memref::DimOp::create(b, buf.q, 0);
  Value sq = memref::DimOp::create(b, buf.q, 2);
  Value skv = keyCountOf(g, buf);
  Value queryBlocks = g.ceilDiv(sq, g.index(p.queriesPerTask));
  // Blocks per group: at most blocksPerTask, and fewer where the call would
  // otherwise have less than 4 tasks per thread to balance.
  Value groupSize = g.index(1);
  if (blocksPerTask > 1) {
    Value blocks = g.mul(g.mul(batch, g.index(inner ? 1 : p.kvHeads)), queryBlocks);
    groupSize = g.max(g.index(1), g.min(g.index(blocksPerTask),
                                        arith::DivUIOp::create(b, blocks, g.index(4 * p.threads))));
  }
  Value queryGroups = g.ceilDiv(queryBlocks, groupSize);
  Value keyBlocks = g.ceilDiv(skv, g.index(p.keysPerTile));
  // KV heads of the parallel loop: 1 where a task walks them all.
  Value taskHeads = g.index(inner ? 1 : p.kvHeads);
  Value tasks = g.mul(g.mul(batch, taskHeads), queryGroups);
  // Fewer tasks than 2 x threads: split the key blocks too.
  Value nsplit = g.index(1);
  if (p.threads > 1) {
    nsplit = g.ceilDiv(g.index(2 * p.threads), g.max(tasks, g.index(1)));
    nsplit = g.max(g.index(1), g.min(nsplit, keyBlocks));
  }
  Value perSplit = g.ceilDiv(keyBlocks, nsplit);
  Value split = g.cmp(IntPredicate::sgt, nsplit, g.index(1));
  // One slot per (batch row, KV head, query block, split).
  Value headTasks = g.mul(g.mul(batch, g.index(p.kvHeads)), queryBlocks);
  Value slots = g.select(split, g.mul(headTasks, nsplit), g.index(0));
  Value partials = memref::AllocOp::create(
      b, MemRefType::get({ShapedType::kDynamic, (p.valueDim + 2) * p.rows}, g.f32()),
      ValueRange{slots});

  // Query group of iteration `it`: 0, n-1, 1, n-2, ... (groups of
  // blocksPerTask query blocks).
  auto queryGroup = [&](Value it) {
    Value half = arith::DivUIOp::create(b, it, g.index(2));
    Value odd = g.cmp(IntPredicate::ne, arith::RemUIOp::create(b, it, g.index(2)), g.index(0));
    return g.select(odd, g.sub(g.sub(queryGroups, g.index(1)), half), half);
  };
  auto taskIndex = [&](Value bi, Value kvh, Value qb) {
    return g.add(g.mul(g.add(g.mul(bi, g.index(p.kvHeads)), kvh), queryBlocks), qb);
  };

  task->setSizes(sq, skv);
  const int64_t heldSlots = inner ? p.kvHeads : blocksPerTask;
  // Scratch once for sequential code, per iteration of the parallel loop.
  if (p.threads == 1)
    task->allocate(heldSlots);
  g.parallel(p.threads, {batch, taskHeads, queryGroups, nsplit}, [&](ValueRange ivs) {
    Value bi = ivs[0], qb0 = g.mul(queryGroup(ivs[2]), groupSize), s = ivs[3];
    if (p.threads > 1)
      task->allocate(heldSlots);
    Value kbBegin = g.mul(s, perSplit);
    Value kbEnd = g.min(keyBlocks, g.add(kbBegin, perSplit));
    // The sinks join the softmax once per row: in the first split of its keys.
    Value firstSplit = g.cmp(IntPredicate::eq, s, g.index(0));
    // The output of query block qb of head kvh, or its split's partials.
    auto finish = [&](Value kvh, Value qb) {
      Value slot = g.add(g.mul(taskIndex(bi, kvh, qb), nsplit), s);
      auto branch = scf::IfOp::create(b, split, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      task->writePartials(partials, slot);
      b.setInsertionPoint(branch.elseBlock()->getTerminator());
      task->writeOutput();
    };
    if (blocksPerTask > 1) {
      Value count = g.min(groupSize, g.sub(queryBlocks, qb0));
      return runQueryBlocksTask(g, p, *task, bi, ivs[1], qb0, count, sq, firstSplit, kbBegin,
                                kbEnd, skv, [&](Value qb) { finish(ivs[1], qb); });
    }
    Value q0 = g.mul(qb0, g.index(p.queriesPerTask));
    Value qCount = g.min(g.index(p.queriesPerTask), g.sub(sq, q0));
    runTask(g, p, *task, inner, bi, ivs[1], q0, qCount, firstSplit, kbBegin, kbEnd, skv,
            [&](Value kvh) { finish(kvh, qb0); });
  });

  g.ifThen(split, [&] {
    g.parallel(p.threads, {batch, g.index(p.kvHeads), queryBlocks}, [&](ValueRange ivs) {
      Value bi = ivs[0], kvh = ivs[1], qb = ivs[2];
      Value q0 = g.mul(qb, g.index(p.queriesPerTask));
      combine(g, p, buf, partials, g.mul(taskIndex(bi, kvh, qb), nsplit), g.index(1), nsplit,
              bi, kvh, q0, g.min(g.index(p.queriesPerTask), g.sub(sq, q0)));
    });
  });
}

// The batched decode kernel. Unit u is one key block of one (sequence, task
// head) segment; segments are laid out in order, segment (bi, th) at units
// [start[bi] + th nb, start[bi] + (th + 1) nb), nb = ceil(L_bi / Bk). Worker w
// of n = min(threads, U) takes units [floor(w U / n), floor((w + 1) U / n)),
// at least one, so every worker streams the same number of key blocks
// whatever the lengths. A segment that one worker holds whole is written as
// output; the pieces of a segment shared by workers w0 .. w1 (consecutive:
// no range is empty) are partials at slots (segment + w) heldHeads + head:
// (segment, w) -> segment + w is one-to-one, since the workers of a later
// segment are never before those of an earlier one.
void mlir::pe::buildBatchedDecodeKernel(KernelBuilder &g, const AttentionPlan &p,
                                        const AttentionBuffers &buf) {
  ImplicitLocOpBuilder &b = g.b;
  const bool inner = headsInner(p, buf);
  const int64_t taskHeads = inner ? 1 : p.kvHeads, heldHeads = inner ? p.kvHeads : 1;
  const int64_t threads = p.threads;
  Value batch = memref::DimOp::create(b, buf.q, 0);
  Value zero = g.index(0), one = g.index(1);
  auto blocksOf = [&](Value skv) { return g.ceilDiv(skv, g.index(p.keysPerTile)); };

  // start[bi]: the first unit of sequence bi; start[B]: every unit.
  Value starts = memref::AllocOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getIndexType()),
      ValueRange{g.add(batch, one)});
  auto addSequence = [&](Value bi, ValueRange acc) -> SmallVector<Value> {
    g.store(acc[0], starts, {bi});
    return {g.add(acc[0], g.mul(blocksOf(keyCountOf(g, buf, bi)), g.index(taskHeads)))};
  };
  Value units = g.loop(zero, batch, one, {zero}, addSequence)[0];
  g.store(units, starts, {batch});
  Value workers = g.min(g.index(threads), units);
  auto rangeEdge = [&](Value w) {
    return arith::DivUIOp::create(b, g.mul(w, units), workers).getResult();
  };
  // The first unit of segment (bi, th) and its key blocks.
  auto segment = [&](Value bi, Value th) {
    Value skv = keyCountOf(g, buf, bi);
    Value blocks = blocksOf(skv);
    return std::tuple{g.add(g.load(starts, {bi}), g.mul(th, blocks)), blocks, skv};
  };
  auto slotOf = [&](Value bi, Value th, Value w, Value kvh) {
    Value seg = g.add(g.mul(bi, g.index(taskHeads)), th);
    return g.add(g.mul(g.add(seg, w), g.index(heldHeads)), inner ? kvh : zero);
  };
  Value slots = g.mul(g.add(g.mul(batch, g.index(taskHeads)), g.index(threads)),
                      g.index(heldHeads));
  Value partials = memref::AllocOp::create(
      b, MemRefType::get({ShapedType::kDynamic, (p.valueDim + 2) * p.rows}, g.f32()),
      ValueRange{threads > 1 ? slots : zero});

  std::unique_ptr<AttentionTask> task = createTask(g, p, buf);
  if (p.threads == 1)
    task->allocate(heldHeads);
  g.parallel(p.threads, {workers}, [&](ValueRange ivs) {
    Value w = ivs[0];
    Value begin = rangeEdge(w), end = rangeEdge(g.add(w, one));
    if (p.threads > 1)
      task->allocate(heldHeads);
    g.loop(0, batch, 1, [&](Value bi) {
      Value meets = arith::AndIOp::create(
          b, g.cmp(IntPredicate::ult, g.load(starts, {bi}), end),
          g.cmp(IntPredicate::ugt, g.load(starts, {g.add(bi, one)}), begin));
      g.ifThen(meets, [&] {
        g.loop(0, g.index(taskHeads), 1, [&](Value th) {
          // Not a structured binding: C++17 lambdas cannot capture one.
          Value first, blocks, skv;
          std::tie(first, blocks, skv) = segment(bi, th);
          Value last = g.add(first, blocks);
          Value lo = g.max(first, begin), hi = g.min(last, end);
          g.ifThen(g.cmp(IntPredicate::ult, lo, hi), [&] {
            Value head = g.cmp(IntPredicate::eq, lo, first);
            Value whole = arith::AndIOp::create(b, head, g.cmp(IntPredicate::eq, hi, last));
            task->setSizes(one, skv);
            runTask(g, p, *task, inner, bi, th, zero, one, head, g.sub(lo, first),
                    g.sub(hi, first), skv, [&](Value kvh) {
                      g.ifThenElse(whole, [&] { task->writeOutput(); },
                                   [&] { task->writePartials(partials, slotOf(bi, th, w, kvh)); });
                    });
          });
        });
      });
    });
  });
  if (threads == 1)
    return;

  // Each (sequence, KV head) whose segment more than one worker shares.
  g.parallel(p.threads, {batch, g.index(p.kvHeads)}, [&](ValueRange ivs) {
    Value bi = ivs[0], kvh = ivs[1];
    Value th = inner ? zero : kvh;
    // Not a structured binding: C++17 lambdas cannot capture one.
    Value first, blocks, skv;
    std::tie(first, blocks, skv) = segment(bi, th);
    Value last = g.add(first, blocks);
    // The workers that meet [first, last): w0 and how many.
    // Worker w wrote a piece of the segment where max(its begin, first) <
    // min(its end, last), as in the loop above (an empty range meets nothing).
    auto meet = [&](Value w, ValueRange acc) -> SmallVector<Value> {
      Value meets = g.cmp(IntPredicate::ult, g.max(rangeEdge(w), first),
                          g.min(rangeEdge(g.add(w, one)), last));
      Value firstMeet = arith::AndIOp::create(b, meets, g.cmp(IntPredicate::eq, acc[1], zero));
      return {g.select(firstMeet, w, acc[0]), g.add(acc[1], g.select(meets, one, zero))};
    };
    SmallVector<Value> shared = g.loop(zero, workers, one, {zero, zero}, meet);
    g.ifThen(g.cmp(IntPredicate::ugt, shared[1], one), [&] {
      combine(g, p, buf, partials, slotOf(bi, th, shared[0], kvh), g.index(heldHeads),
              shared[1], bi, kvh, zero, one);
    });
  });
}
