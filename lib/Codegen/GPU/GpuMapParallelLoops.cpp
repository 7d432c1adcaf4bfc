//===- GpuMapParallelLoops.cpp - pe-gpu-map-parallel-loops ----------------===//
//
// Every outermost scf.parallel of a host function -> a gpu.launch over one
// linear index (grid-stride loop), named for outlining into one GPU module.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"
#include "pe/Dialect/PE/Utils/OperandChecks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUMAPPARALLELLOOPS
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

/// The GPU module every kernel is outlined into.

/// `name` as a PTX identifier ([A-Za-z_][A-Za-z0-9_]*): other characters
/// become `_`, and a changed name gets a hash of the original, so that
/// @"a-b" and @a_b still name different kernels.
static std::string ptxIdentifier(StringRef name) {
  std::string id;
  for (char c : name)
    id += llvm::isAlnum(c) ? c : '_';
  if (id.empty() || llvm::isDigit(id.front()))
    id.insert(id.begin(), '_');
  if (id != name)
    id += "_" + llvm::utohexstr(llvm::xxh3_64bits(name) & 0xffffffff, /*LowerCase=*/true);
  return id;
}

/// Trip count of `lb <= i < ub` by `step` (step > 0): ceil(max(ub - lb, 0) / step).
static Value tripCount(ImplicitLocOpBuilder &b, Value lb, Value ub, Value step) {
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value extent = arith::MaxSIOp::create(b, arith::SubIOp::create(b, ub, lb), zero);
  return arith::CeilDivUIOp::create(b, extent, step);
}

namespace {
struct GpuMapParallelLoopsPass
    : pe::impl::PEGpuMapParallelLoopsBase<GpuMapParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024)
      return signalFailure("block-size must be in [1, 1024], got ",
                           static_cast<int64_t>(blockSize));
    if (maxBlocks < 1 || maxBlocks > std::numeric_limits<int32_t>::max())
      return signalFailure("max-blocks must be in [1, 2^31 - 1], got ",
                           static_cast<int64_t>(maxBlocks));
    func::FuncOp func = getOperation();
    prefix = ptxIdentifier(func.getSymName());
    kernels = 0;
    unmappableCall = false;
    SmallVector<Operation *> work;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ParallelOp>(op) || (isa<scf::ForOp, memref::StoreOp>(op) && touchesMemory(op)) ||
          isa<memref::LoadOp>(op)) {
        work.push_back(op);
        return WalkResult::skip();
      }
      return isa<gpu::LaunchOp>(op) ? WalkResult::skip() : WalkResult::advance();
    });
    for (Operation *op : work) {
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        if (loop.getNumResults() != 0) {
          loop.emitOpError("with reductions cannot be mapped to GPU threads");
          return signalPassFailure();
        }
        mapToLaunch(loop);
      } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
        loadThroughScratch(load);
      } else if (auto check = dyn_cast<scf::ForOp>(op); check && writesNothing(check)) {
        mapToLaunch(toParallel(check));
      } else {
        runInOneThread(op);
      }
    }
    if (unmappableCall)
      signalPassFailure();
  }

  /// True if `op` or an op inside it reads or writes a memref.
  static bool touchesMemory(Operation *op) {
    return op->walk([](Operation *inner) {
               return isa<memref::LoadOp, memref::StoreOp>(inner) ? WalkResult::interrupt()
                                                                  : WalkResult::advance();
             }).wasInterrupted();
  }

  /// Whether `loop` carries no values, holds no loop and its body writes no
  /// memory: it reads and reports run-time errors (a check of each entry of
  /// an index tensor such as a KV-cache append's slots), so its iterations
  /// are independent and may run one a GPU thread. Where several iterations
  /// report, the first thread to claim the record is reported (on the CPU,
  /// the first iteration). A loop holding a loop stays in one thread (the
  /// checks that must run on the GPU are built without nests: a block
  /// table's, an iteration per entry).
  static bool writesNothing(scf::ForOp loop) {
    if (loop.getNumResults() != 0 || loop.getUnsignedCmp() ||
        !loop.getInductionVar().getType().isIndex())
      return false;
    return !loop.getBody()
                ->walk([](Operation *op) {
                  if (isa<LoopLikeOpInterface>(op))
                    return WalkResult::interrupt();
                  // The runtime's error reports: deferred to the host
                  // (deferCalls). Any other call may write.
                  if (auto call = dyn_cast<func::CallOp>(op))
                    return pe::isRuntimeErrorReport(call.getCallee()) ? WalkResult::advance()
                                                                       : WalkResult::interrupt();
                  if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
                    return WalkResult::advance();
                  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
                  if (!effects || effects.hasEffect<MemoryEffects::Write>() ||
                      effects.hasEffect<MemoryEffects::Allocate>() ||
                      effects.hasEffect<MemoryEffects::Free>())
                    return WalkResult::interrupt();
                  return WalkResult::advance();
                })
                .wasInterrupted();
  }

  /// `loop` (no loop-carried values) as the scf.parallel of its iterations.
  static scf::ParallelOp toParallel(scf::ForOp loop) {
    ImplicitLocOpBuilder b(loop.getLoc(), loop);
    auto parallel = scf::ParallelOp::create(b, ValueRange{loop.getLowerBound()},
                                            ValueRange{loop.getUpperBound()},
                                            ValueRange{loop.getStep()});
    Block *body = parallel.getBody();
    loop.getInductionVar().replaceAllUsesWith(parallel.getInductionVars()[0]);
    body->getOperations().splice(body->begin(), loop.getBody()->getOperations(),
                                 loop.getBody()->begin(),
                                 std::prev(loop.getBody()->end()));
    loop.erase();
    return parallel;
  }

  /// A launch of `grid` x `block` threads whose kernel is outlined as
  /// @pe_kernels::@<function>_kernel_<n>.
  gpu::LaunchOp createLaunch(ImplicitLocOpBuilder &b, Value grid, Value block) {
    Value one = arith::ConstantIndexOp::create(b, 1);
    std::string name = prefix + "_kernel_" + std::to_string(kernels++);
    auto launch = gpu::LaunchOp::create(
        b, grid, one, one, block, one, one, /*dynamicSharedMemorySize=*/nullptr,
        /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
        /*workgroupAttributions=*/{}, /*privateAttributions=*/{}, nullptr, nullptr,
        nullptr, FlatSymbolRefAttr::get(b.getContext(), pe::kGpuKernelModule),
        FlatSymbolRefAttr::get(b.getContext(), name));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::TerminatorOp::create(b);
    return launch;
  }

  /// Host work that reads or writes buffers (a sequential loop such as a
  /// reduction to a scalar, a scalar store) -> one GPU thread.
  void runInOneThread(Operation *op) {
    ImplicitLocOpBuilder b(op->getLoc(), op);
    Value one = arith::ConstantIndexOp::create(b, 1);
    gpu::LaunchOp launch = createLaunch(b, one, one);
    op->moveBefore(&launch.getBody().front().back());
    finishLaunch(launch);
  }

  /// v = device[i] on the host -> one thread copies device[i] to a device
  /// scratch element, gpu.memcpy brings it to a host stack slot.
  void loadThroughScratch(memref::LoadOp load) {
    ImplicitLocOpBuilder b(load.getLoc(), load);
    auto elementType = MemRefType::get({1}, load.getType());
    Value scratch = gpu::AllocOp::create(b, elementType, Type(), ValueRange(), ValueRange(),
                                         ValueRange())
                        .getMemref();
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value one = arith::ConstantIndexOp::create(b, 1);
    gpu::LaunchOp launch = createLaunch(b, one, one);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(&launch.getBody().front().back());
      Value value = memref::LoadOp::create(b, load.getMemRef(), load.getIndices());
      memref::StoreOp::create(b, value, scratch, zero);
    }
    finishLaunch(launch);
    Value slot = memref::AllocaOp::create(b, elementType);
    gpu::MemcpyOp::create(b, Type(), ValueRange(), slot, scratch);
    gpu::DeallocOp::create(b, Type(), ValueRange(), scratch);
    Value value = memref::LoadOp::create(b, slot, zero);
    load.replaceAllUsesWith(value);
    load.erase();
  }

  template <typename... Args>
  void signalFailure(Args &&...args) {
    auto diag = mlir::emitError(getOperation().getLoc(), "pe-gpu-map-parallel-loops: ");
    (diag << ... << args);
    signalPassFailure();
  }

  /// if N > 0: gpu.launch blocks(min(ceil(N / B), maxBlocks)) threads(B),
  /// each thread running t = blockIdx * B + threadIdx, t + gridDim * B, ...
  /// below N through the loop body at the delinearized indices.
  void mapToLaunch(scf::ParallelOp loop) {
    ImplicitLocOpBuilder b(loop.getLoc(), loop);
    SmallVector<Value> trips;
    Value total = arith::ConstantIndexOp::create(b, 1);
    for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(),
                                         loop.getStep())) {
      trips.push_back(tripCount(b, lb, ub, step));
      total = arith::MulIOp::create(b, total, trips.back());
    }
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value block = arith::ConstantIndexOp::create(b, blockSize);
    Value nonEmpty = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, total, zero);
    auto ifOp = scf::IfOp::create(b, nonEmpty, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value grid = arith::MinUIOp::create(b, arith::CeilDivUIOp::create(b, total, block),
                                        arith::ConstantIndexOp::create(b, maxBlocks));
    gpu::LaunchOp launch = createLaunch(b, grid, block);

    b.setInsertionPoint(&launch.getBody().front().back());
    // t0 = blockIdx.x * B + threadIdx.x; stride = gridDim.x * B.
    Value first = arith::AddIOp::create(
        b, arith::MulIOp::create(b, launch.getBlockIds().x, block), launch.getThreadIds().x);
    Value stride = arith::MulIOp::create(b, launch.getGridSize().x, block);
    auto stepLoop = scf::ForOp::create(b, first, total, stride);

    b.setInsertionPointToStart(stepLoop.getBody());
    auto indices = affine::AffineDelinearizeIndexOp::create(
        b, stepLoop.getInductionVar(), ValueRange(trips), /*hasOuterBound=*/true);
    IRMapping mapping;
    for (auto [iv, index, lb, step] :
         llvm::zip(loop.getInductionVars(), indices.getResults(), loop.getLowerBound(),
                   loop.getStep())) {
      // i = lb + index * step
      mapping.map(iv, arith::AddIOp::create(b, lb, arith::MulIOp::create(b, index, step)));
    }
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    loop.erase();
    finishLaunch(launch);
  }

  /// Host calls deferred; a failure ends the pass.
  void finishLaunch(gpu::LaunchOp launch) {
    if (failed(deferCalls(launch)))
      unmappableCall = true;
  }

  /// A func.call inside the kernel (a run-time error report such as
  /// pe_runtime_learned_out_of_range(position, index, rows)) cannot run on
  /// the GPU: the first thread that reaches it claims a device record
  /// [claimed, arguments...] with an atomic exchange and writes its
  /// arguments; after the launch the host reads the record and makes the
  /// call if it was claimed.
  LogicalResult deferCalls(gpu::LaunchOp launch) {
    SmallVector<func::CallOp> calls;
    launch.walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls) {
      if (call.getNumResults() != 0 ||
          !llvm::all_of(call.getOperandTypes(), [](Type t) { return t.isIntOrIndex(); }))
        return call.emitOpError("in a GPU kernel must take integers and return nothing "
                                "(a run-time error report) to be made from the host");
      auto recordType =
          MemRefType::get({1 + static_cast<int64_t>(call.getNumOperands())},
                          IntegerType::get(call.getContext(), 64));
      Value record = zeroedDeviceRecord(launch, recordType);
      claimAndRecord(call, record);
      callFromHost(launch, call, record);
      call.erase();
    }
    return success();
  }

  /// A device buffer of `type` (i64s) set to zero by a one-thread kernel
  /// before `launch` (a launch, not a host copy, so that a manifest can
  /// replay it).
  Value zeroedDeviceRecord(gpu::LaunchOp launch, MemRefType type) {
    ImplicitLocOpBuilder b(launch.getLoc(), launch);
    Value record = gpu::AllocOp::create(b, type, Type(), ValueRange(), ValueRange(), ValueRange())
                       .getMemref();
    Value one = arith::ConstantIndexOp::create(b, 1);
    gpu::LaunchOp zero = createLaunch(b, one, one);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(&zero.getBody().front().back());
    Value zeroValue = arith::ConstantIntOp::create(b, 0, 64);
    for (int64_t i = 0; i < type.getDimSize(0); ++i)
      memref::StoreOp::create(b, zeroValue, record,
                              ValueRange{arith::ConstantIndexOp::create(b, i)});
    return record;
  }

  /// In the kernel: if atomic_exchange(record[0], 1) == 0, record[1 + i] = arg i.
  static void claimAndRecord(func::CallOp call, Value record) {
    ImplicitLocOpBuilder b(call.getLoc(), call);
    Value zero = arith::ConstantIntOp::create(b, 0, 64);
    Value one = arith::ConstantIntOp::create(b, 1, 64);
    Value previous = memref::AtomicRMWOp::create(
        b, arith::AtomicRMWKind::assign, one, record,
        ValueRange{arith::ConstantIndexOp::create(b, 0)});
    Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, previous, zero);
    auto ifFirst = scf::IfOp::create(b, first, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    for (auto [i, arg] : llvm::enumerate(call.getOperands())) {
      Value wide = arg.getType().isIndex()
                       ? arith::IndexCastOp::create(b, b.getI64Type(), arg).getResult()
                       : arg.getType().getIntOrFloatBitWidth() < 64
                             ? arith::ExtSIOp::create(b, b.getI64Type(), arg).getResult()
                             : arg;
      memref::StoreOp::create(b, wide, record,
                              ValueRange{arith::ConstantIndexOp::create(b, 1 + i)});
    }
  }

  /// After `launch`: copy the record to the host; if claimed, make `call`
  /// with the recorded arguments.
  static void callFromHost(gpu::LaunchOp launch, func::CallOp call, Value record) {
    ImplicitLocOpBuilder b(call.getLoc(), launch->getBlock(),
                           std::next(launch->getIterator()));
    auto type = cast<MemRefType>(record.getType());
    Value host = memref::AllocaOp::create(b, type);
    gpu::MemcpyOp::create(b, Type(), ValueRange(), host, record);
    gpu::DeallocOp::create(b, Type(), ValueRange(), record);
    auto load = [&](int64_t i) {
      return memref::LoadOp::create(b, host, ValueRange{arith::ConstantIndexOp::create(b, i)});
    };
    Value claimed = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, load(0),
                                          arith::ConstantIntOp::create(b, 0, 64));
    auto ifClaimed = scf::IfOp::create(b, claimed, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifClaimed.thenBlock());
    SmallVector<Value> args;
    for (auto [i, type] : llvm::enumerate(call.getOperandTypes())) {
      Value wide = load(1 + i);
      args.push_back(type.isIndex() ? arith::IndexCastOp::create(b, type, wide).getResult()
                     : type.getIntOrFloatBitWidth() < 64
                         ? arith::TruncIOp::create(b, type, wide).getResult()
                         : wide);
    }
    func::CallOp::create(b, call.getCalleeAttr(), TypeRange(), args);
  }

  std::string prefix;
  int64_t kernels = 0;
  bool unmappableCall = false;
};
} // namespace
