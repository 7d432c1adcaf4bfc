//===- TileAttention.cpp - pe-tile-attention ------------------------------===//
//
// pe.attention as a call of a flash-attention kernel on buffers (the
// algorithm is stated in the pass description, include/pe/Conversion/
// Passes.td). This file prepares the operands, builds the kernel function of
// the op's plan (AttentionKernel.cpp and the variants) and shares it: an
// attention whose kernel body equals an existing kernel's calls that one, so
// a 32-layer model compiles one kernel, and two plans can never share a
// function by mistake.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/CPU/Passes.h"
#include "pe/Dialect/PE/IR/PE.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"

#include "AttentionTask.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PETILEATTENTION
#include "pe/Codegen/CPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;
using namespace mlir::pe;

namespace {

/// Kernel functions are named after this (uniqued by the symbol table).
constexpr char kKernelName[] = "pe_attention_kernel";

} // namespace

/// The buffers the kernel is called with, in its argument order: q, k, v,
/// the query positions, then where present the key positions, the page
/// table, sequence and key count of a paged cache (the key counts of a paged
/// batch), the mask, the tables, the slopes, the sinks and the shared key
/// block, then the output.
SmallVector<Value> mlir::pe::attentionKernelArguments(const AttentionBuffers &buf) {
  SmallVector<Value> args = {buf.q, buf.k, buf.v, buf.qPos};
  for (Value optional : {buf.kPos, buf.pageTable, buf.sequence, buf.keyCount, buf.kvLens,
                         buf.mask, buf.qCos, buf.qSin, buf.kCos, buf.kSin, buf.slopes,
                         buf.sinks, buf.sharedKey})
    if (optional)
      args.push_back(optional);
  args.push_back(buf.out);
  return args;
}

namespace {

/// The same buffers as the arguments of the kernel's entry block.
AttentionBuffers bindArguments(ImplicitLocOpBuilder &b, Block *entry,
                               const AttentionBuffers &outer) {
  AttentionBuffers inner;
  auto arg = entry->args_begin();
  inner.q = *arg++;
  inner.k = *arg++;
  inner.v = *arg++;
  inner.qPos = *arg++;
  if (outer.kPos)
    inner.kPos = *arg++;
  inner.layout = outer.layout;
  if (outer.pageTable)
    inner.pageTable = *arg++;
  if (outer.sequence) {
    inner.sequence = *arg++;
    inner.keyCount = *arg++;
  }
  if (outer.kvLens)
    inner.kvLens = *arg++;
  if (outer.mask) {
    inner.mask = *arg++;
    inner.maskFlat = memref::CollapseShapeOp::create(
        b, inner.mask, SmallVector<ReassociationIndices>{{0, 1, 2, 3}});
  }
  if (outer.qCos) {
    inner.qCos = *arg++;
    inner.qSin = *arg++;
    inner.kCos = *arg++;
    inner.kSin = *arg++;
  }
  if (outer.slopes)
    inner.slopes = *arg++;
  if (outer.sinks)
    inner.sinks = *arg++;
  if (outer.sharedKey)
    inner.sharedKey = *arg++;
  inner.out = *arg++;
  return inner;
}

/// A detached private function holding the kernel of plan `p` for `buf`
/// (with `batched`, the decode kernel of a paged batch).
func::FuncOp buildKernelFunction(MLIRContext *ctx, Location loc, const AttentionPlan &p,
                                 const AttentionBuffers &buf, bool batched) {
  OpBuilder builder(ctx);
  SmallVector<Value> args = attentionKernelArguments(buf);
  auto kernel = func::FuncOp::create(
      builder, loc, kKernelName, FunctionType::get(ctx, ValueRange(args).getTypes(), {}));
  kernel.setPrivate();
  // Internal to the object file once lowered to LLVM, and never inlined:
  // its registers are allocated for its own loops, whatever calls it (a
  // caller with one call site would otherwise take it in, and the two
  // functions' values then compete for the registers of its inner loops).
  kernel->setAttr("llvm.linkage", LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  kernel->setAttr("passthrough", builder.getArrayAttr({builder.getStringAttr("noinline")}));
  Block *entry = kernel.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  ImplicitLocOpBuilder b(loc, builder);
  auto ret = func::ReturnOp::create(b);
  b.setInsertionPoint(ret);
  KernelBuilder g{b, p.lanes};
  if (batched)
    buildBatchedDecodeKernel(g, p, bindArguments(b, entry, buf));
  else
    buildAttentionKernel(g, p, bindArguments(b, entry, buf));
  // Soft-capping's tanh as upstream's rational approximation (a few ulp,
  // vector code) rather than a libm call per lane.
  if (p.softcap) {
    RewritePatternSet patterns(ctx);
    populatePolynomialApproximateTanhPattern(patterns);
    walkAndApplyPatterns(kernel, std::move(patterns));
  }
  return kernel;
}

/// The kernel of `symbolTable` equal to `candidate` (same type and body), or
/// `candidate` inserted under a unique name.
func::FuncOp shareKernel(Operation *symbolTable, func::FuncOp candidate) {
  for (auto fn : symbolTable->getRegion(0).getOps<func::FuncOp>()) {
    if (!fn.getSymName().starts_with(kKernelName) ||
        fn.getFunctionType() != candidate.getFunctionType())
      continue;
    if (OperationEquivalence::isRegionEquivalentTo(
            &fn.getBody(), &candidate.getBody(),
            OperationEquivalence::Flags::IgnoreLocations)) {
      candidate.erase();
      return fn;
    }
  }
  SymbolTable(symbolTable).insert(candidate);
  return candidate;
}

/// Declares the AMX runtime entry `void pe_runtime_enable_amx()` once.
void declareEnableAmx(OpBuilder &b, Operation *symbolTable, Location loc) {
  if (SymbolTable::lookupSymbolIn(symbolTable, kEnableAmxFn))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&symbolTable->getRegion(0).front());
  func::FuncOp::create(b, loc, kEnableAmxFn, FunctionType::get(b.getContext(), {}, {}))
      .setPrivate();
}

struct TileAttention : OpRewritePattern<AttentionOp> {
  TileAttention(MLIRContext *ctx, const TileAttentionOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Operation *symbolTable = SymbolTable::getNearestSymbolTable(op);
    if (!symbolTable)
      return rewriter.notifyMatchFailure(op, "not inside a symbol table");
    auto [keys, values] = pagedOperands(op);
    std::optional<AttentionPlan> plan = planOf(op, options);
    if (!plan)
      return rewriter.notifyMatchFailure(op, "no kernel plan: reference lowering");
    if (largestConstantTable(op) > kMaxConstantTableEntries)
      return rewriter.notifyMatchFailure(op, "constant tables too large");

    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    KernelBuilder g{b, plan->lanes};
    AttentionBuffers buf = prepareBuffers(b, g, op, *plan);
    if (plan->kind == AttentionKernelKind::Amx)
      declareEnableAmx(rewriter, symbolTable, op.getLoc());
    auto kernelOf = [&](const AttentionPlan &p, const AttentionBuffers &buffers) {
      return getOrBuildAttentionKernel(symbolTable, op.getLoc(), p, buffers);
    };
    auto callOn = [&](func::FuncOp fn, const AttentionBuffers &buffers) {
      func::CallOp::create(b, fn, attentionKernelArguments(buffers));
    };
    // Every kernel reads the pages in place: each prefill task packs a K/V
    // tile once for its blocks of queries (queryBlocksPerTask), decode walks
    // the heads inside each key tile. A 512-query chunk against 16k keys
    // over nhd pages (GQA 32/8, D = 128, bf16 on AMX, Xeon, 2 threads): 170
    // ms in place against 184 through a dense copy of the sequence.
    func::FuncOp kernel = kernelOf(*plan, buf);
    auto prefill = [&] { callOn(kernel, buf); };
    if (std::optional<AttentionPlan> decode = singleQueryPlan(op, options, *plan)) {
      // A dynamic Sq of 1 (a decode step) runs the decode kernel; a prefill
      // tile would hold one query in rows / group of its rows.
      Value single = g.cmp(arith::CmpIPredicate::eq, memref::DimOp::create(b, buf.q, 2),
                           g.index(1));
      g.ifThenElse(single, [&] { callOn(kernelOf(*decode, buf), buf); }, prefill);
    } else {
      prefill();
    }

    rewriter.replaceOp(op, attentionResultFromBuffer(b, op, buf.out));
    if (keys) {
      dropGather(rewriter, keys);
      if (values != keys)
        dropGather(rewriter, values);
    }
    return success();
  }

  /// The plan of `op`'s kernel, for the layout of the K/V it reads.
  static std::optional<AttentionPlan> planOf(AttentionOp op,
                                             const TileAttentionOptions &options) {
    GatherPagesOp keys = pagedOperands(op).first;
    return planAttention(op, options, std::nullopt,
                         keys ? keys.getLayout() : CacheLayout::dense);
  }

private:
  TileAttentionOptions options;

  /// The pe.gather_pages ops of the keys and the values when both read the
  /// same sequence of one block table (the kernel reads their pages in
  /// place); null otherwise.
  static std::pair<GatherPagesOp, GatherPagesOp> pagedOperands(AttentionOp op) {
    auto keys = op.getKey().getDefiningOp<GatherPagesOp>();
    auto values = op.getValue().getDefiningOp<GatherPagesOp>();
    if (!keys || !values || keys.getBlockTable() != values.getBlockTable() ||
        keys.getSequence() != values.getSequence() ||
        keys.getLength() != values.getLength() || keys.getLayout() != values.getLayout())
      return {};
    return {keys, values};
  }

  /// The sizes of `gather`'s result taken from its operands, so that no
  /// copy remains where the kernel reads the pages.
  static void dropGather(PatternRewriter &rewriter, GatherPagesOp gather) {
    for (Operation *user : llvm::make_early_inc_range(gather->getUsers())) {
      auto dim = dyn_cast<tensor::DimOp>(user);
      std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
      if (!index)
        continue;
      if (*index == 2) {
        rewriter.replaceOp(dim, gather.getLength());
      } else {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPoint(dim);
        rewriter.replaceOp(dim, arith::ConstantIndexOp::create(
                                    rewriter, dim.getLoc(), gather.getType().getDimSize(*index)));
      }
    }
    if (gather->use_empty())
      rewriter.eraseOp(gather);
  }

  /// The decode plan for one query when Sq is dynamic and `plan` is not
  /// already a decode kernel.
  static std::optional<AttentionPlan> singleQueryPlan(AttentionOp op,
                                                      const TileAttentionOptions &options,
                                                      const AttentionPlan &plan) {
    if (!op.getQuery().getType().isDynamicDim(2) || plan.kind == AttentionKernelKind::Decode)
      return std::nullopt;
    std::optional<AttentionPlan> decode =
        planAttention(op, options, /*queries=*/1, plan.cacheLayout);
    if (!decode || decode->kind != AttentionKernelKind::Decode)
      return std::nullopt;
    return decode;
  }

  /// Whether `values` are the first Dv channels of `keys` (a slice at offset
  /// 0 with unit strides that keeps every other dimension): absorbed
  /// multi-head latent attention, whose one KV head is the latent c_kv
  /// (the values) followed by the rotated k_pe. The kernel then reads the
  /// values in place from the keys' rows, as it only reads channels e < Dv
  /// of a value row; no copy of the latent is made.
  static bool valuesArePrefixOfKeys(Value keys, Value values) {
    auto slice = values.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || slice.getSource() != keys || !slice.hasUnitStride() ||
        !slice.hasZeroOffset())
      return false;
    auto source = cast<RankedTensorType>(keys.getType());
    auto result = slice.getResultType();
    if (result.getRank() != source.getRank())
      return false;
    for (int64_t d = 0; d + 1 < source.getRank(); ++d) {
      OpFoldResult size = slice.getMixedSizes()[d];
      std::optional<int64_t> constant = getConstantIntValue(size);
      bool whole = constant ? !source.isDynamicDim(d) && *constant == source.getDimSize(d)
                            : isWholeDim(keys, d, cast<Value>(size));
      if (!whole)
        return false;
    }
    return true;
  }

  /// Whether `size` is `tensor.dim %tensor, d`.
  static bool isWholeDim(Value tensor, int64_t d, Value size) {
    auto dim = size.getDefiningOp<tensor::DimOp>();
    return dim && dim.getSource() == tensor && dim.getConstantIndex() == d;
  }

  /// The run-time checks, positions, tables and slopes of `op`, every
  /// operand as a buffer, and the output buffer.
  static AttentionBuffers prepareBuffers(ImplicitLocOpBuilder &b, KernelBuilder &g,
                                         AttentionOp op, const AttentionPlan &p) {
    // Every tensor first, then the buffers: bufferization sees the reads of
    // to_buffer, not those of the kernel, so no tensor may be computed after
    // another's to_buffer (it could reuse that tensor's buffer).
    AttentionTensors t = prepareAttentionTensors(b, op);
    AttentionBuffers buf;
    if (auto [keys, values] = pagedOperands(op); keys) {
      checkGatherPages(b, keys);
      if (values != keys)
        checkGatherPages(b, values);
      t.k = keys.getCache();
      t.v = values.getCache();
      buf.layout = keys.getLayout();
      buf.pageTable = g.toBuffer(keys.getBlockTable());
      buf.sequence = keys.getSequence();
      buf.keyCount = keys.getLength();
    }
    buf.qCos = g.toBuffer(t.qCos);
    buf.qSin = g.toBuffer(t.qSin);
    buf.kCos = t.kCos == t.qCos ? buf.qCos : g.toBuffer(t.kCos);
    buf.kSin = t.kSin == t.qSin ? buf.qSin : g.toBuffer(t.kSin);
    buf.slopes = g.toBuffer(t.slopes);
    buf.sinks = g.toBuffer(op.getSinks());
    buf.sharedKey = g.toBuffer(t.sharedKey);
    buf.q = g.toBuffer(t.q);
    buf.k = g.toBuffer(t.k);
    buf.v = valuesArePrefixOfKeys(t.k, t.v) ? buf.k : g.toBuffer(t.v);
    buf.qPos = g.toBuffer(t.qPos);
    buf.kPos = g.toBuffer(t.kPos);
    buf.mask = g.toBuffer(t.mask);
    SmallVector<OpFoldResult> sizes = {
        memref::getMixedSize(b, b.getLoc(), buf.q, 0), b.getIndexAttr(p.queryHeads),
        memref::getMixedSize(b, b.getLoc(), buf.q, 2), b.getIndexAttr(p.valueDim)};
    SmallVector<int64_t> shape;
    SmallVector<Value> dynamic;
    dispatchIndexOpFoldResults(sizes, dynamic, shape);
    buf.out = memref::AllocOp::create(b, MemRefType::get(shape, p.element), dynamic);
    return buf;
  }
};

struct TileAttentionPass : pe::impl::PETileAttentionBase<TileAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkLoweringRoot(getOperation(), "pe-tile-attention")))
      return signalPassFailure();
    // Bounded so that the tile arithmetic cannot overflow.
    constexpr int64_t kMaxOption = int64_t(1) << 20;
    if (threads < 1 || rows < 0 || blockKeys < 0 || threads > kMaxOption ||
        rows > kMaxOption || blockKeys > kMaxOption) {
      getOperation()->emitError(
          "pe-tile-attention: threads must be positive, rows and block-keys "
          "non-negative (0: the target's), all at most 2^20");
      return signalPassFailure();
    }
    FailureOr<CpuTarget> target = getCpuTarget(getOperation());
    if (failed(target))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    TileAttentionOptions options;
    options.target = *target;
    options.threads = threads;
    options.rows = rows;
    options.blockKeys = blockKeys;
    options.amx = amx;
    options.bf16Dot = bf16Dot;
    // A shared key block the kernels cannot read in place (over pages, or
    // split by the rotated channels) is written into every key head first.
    expandSharedKeys(getOperation(), [&](AttentionOp op) {
      return !TileAttention::planOf(op, options);
    });
    populateTileAttentionPatterns(patterns, options);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

func::FuncOp mlir::pe::getOrBuildAttentionKernel(Operation *symbolTable, Location loc,
                                                 const AttentionPlan &p,
                                                 const AttentionBuffers &buf, bool batched) {
  return shareKernel(symbolTable,
                     buildKernelFunction(symbolTable->getContext(), loc, p, buf, batched));
}

void mlir::pe::populateTileAttentionPatterns(RewritePatternSet &patterns,
                                             const TileAttentionOptions &options) {
  patterns.add<TileAttention>(patterns.getContext(), options);
}
