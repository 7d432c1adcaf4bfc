//===- GpuVectorizeLoops.cpp - pe-gpu-vectorize-loops ---------------------===//
//
// The innermost dimension of an elementwise parallel loop in chunks of 16
// bytes: one iteration (one GPU thread) computes V = 16 / element bytes
// consecutive elements as vectors and stores them with one 128-bit store.
//
//===----------------------------------------------------------------------===//
#include "pe/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"

namespace mlir::pe {
#define GEN_PASS_DEF_PEGPUVECTORIZELOOPS
#include "pe/Codegen/GPU/Passes.h.inc"
} // namespace mlir::pe

using namespace mlir;

namespace {

/// Bytes of one vector access.
constexpr int64_t kVectorBytes = 16;

/// The alignment of element [..., c * lanes] of `memref`: the vector's size
/// (at most 16 bytes) when the buffer is an allocation of this function
/// (allocators align to at least 16), row-major with rows of a multiple of
/// `lanes` or seen through views whose offset and outer strides are static
/// multiples of `lanes`; else the element's own alignment.
llvm::Align accessAlignment(Value memref, int64_t lanes) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8); // i1: a byte
  // Row-major: every outer stride is a multiple of the innermost size.
  bool rowsAligned = type.getLayout().isIdentity() && type.getRank() > 0 &&
                     !type.isDynamicDim(type.getRank() - 1) &&
                     type.getShape().back() % lanes == 0;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!rowsAligned) {
    if (failed(type.getStridesAndOffset(strides, offset)) || ShapedType::isDynamic(offset) ||
        offset % lanes)
      return llvm::Align(bytes);
    for (int64_t stride : ArrayRef<int64_t>(strides).drop_back())
      if (ShapedType::isDynamic(stride) || stride % lanes)
        return llvm::Align(bytes);
  }
  Value root = memref;
  while (Operation *def = root.getDefiningOp()) {
    if (isa<memref::AllocOp>(def))
      return llvm::Align(std::min(lanes * bytes, kVectorBytes)); // allocators give 16
    if (!isa<memref::SubViewOp, memref::CastOp, memref::CollapseShapeOp,
             memref::ExpandShapeOp>(def))
      break;
    root = def->getOperand(0);
  }
  return llvm::Align(bytes);
}

class LoopVectorizer {
public:
  LoopVectorizer(scf::ParallelOp loop) : loop(loop) {}

  /// The lanes per iteration, or 0 when the loop does not qualify: a
  /// straight-line body of arith, math and memref loads and stores, the
  /// innermost dimension 0..T step 1 with T a multiple of the lanes, every
  /// store at [..., innermost index] into a buffer whose innermost stride
  /// is 1, all stores of one element size.
  int64_t lanesIfVectorizable() {
    unsigned inner = loop.getNumLoops() - 1;
    APInt lb, ub, step;
    if (!matchPattern(loop.getLowerBound()[inner], m_ConstantInt(&lb)) || !lb.isZero() ||
        !matchPattern(loop.getStep()[inner], m_ConstantInt(&step)) || !step.isOne() ||
        !matchPattern(loop.getUpperBound()[inner], m_ConstantInt(&ub)))
      return 0;
    iv = loop.getInductionVars()[inner];
    // Values that depend on the innermost index.
    llvm::SmallPtrSet<Value, 16> varying = {iv};
    int64_t elementBytes = 0;
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (llvm::any_of(op.getOperands(), [&](Value v) { return varying.contains(v); }))
        varying.insert(op.result_begin(), op.result_end());
      if (op.getNumRegions() != 0 ||
          !isa<arith::ArithDialect, math::MathDialect, memref::MemRefDialect>(op.getDialect()))
        return 0;
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        // A lane-dependent load must be contiguous: [..., innermost index].
        bool varies = llvm::any_of(load.getIndices(), [&](Value v) { return varying.contains(v); });
        if (varies && (load.getIndices().back() != iv ||
                       llvm::any_of(load.getIndices().drop_back(),
                                    [&](Value v) { return varying.contains(v); }) ||
                       !stridedInnermost(load.getMemRefType())))
          return 0;
        continue;
      }
      if (auto store = dyn_cast<memref::StoreOp>(op)) {
        auto type = store.getMemRefType();
        if (!type.getElementType().isIntOrFloat()) // index: no fixed width
          return 0;
        int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8); // i1: a byte
        SmallVector<int64_t> strides;
        int64_t offset;
        if (store.getIndices().back() != iv ||
            llvm::any_of(store.getIndices().drop_back(),
                         [&](Value v) { return varying.contains(v); }) ||
            failed(type.getStridesAndOffset(strides, offset)) ||
            strides.back() != 1 || (elementBytes && bytes != elementBytes))
          return 0;
        elementBytes = bytes;
        continue;
      }
      if (isa<memref::MemRefDialect>(op.getDialect()) ||
          llvm::any_of(op.getResultTypes(), [](Type t) { return !t.isIntOrIndexOrFloat(); }))
        return 0;
    }
    if (elementBytes == 0 || elementBytes > kVectorBytes / 2)
      return 0;
    // A body whose lane-dependent values include f64 floats (the angle
    // reduction of sinusoidal and table kernels) keeps 16 bytes of each
    // per thread: with more lanes its registers spill.
    int64_t widest = elementBytes;
    for (Value value : varying)
      if (value.getType().isF64())
        widest = 8;
    int64_t lanes = kVectorBytes / widest;
    if (lanes < 2)
      return 0;
    return ub.getSExtValue() % lanes == 0 && ub.getSExtValue() > 0 ? lanes : 0;
  }

  /// Rewrites the loop with `lanes` elements of the innermost dimension
  /// per iteration.
  void vectorize(int64_t lanes) {
    this->lanes = lanes;
    ImplicitLocOpBuilder b(loop.getLoc(), loop);
    unsigned inner = loop.getNumLoops() - 1;
    SmallVector<Value> ubs(loop.getUpperBound());
    APInt trip;
    (void)matchPattern(ubs[inner], m_ConstantInt(&trip));
    ubs[inner] = arith::ConstantIndexOp::create(b, trip.getSExtValue() / lanes);
    auto chunked = scf::ParallelOp::create(b, loop.getLowerBound(), ubs, loop.getStep());
    b.setInsertionPoint(chunked.getBody()->getTerminator());
    for (auto [from, to] : llvm::zip(loop.getInductionVars(), chunked.getInductionVars()))
      scalars.map(from, to);
    // The first element of the chunk, and the lane indices first + [0, lanes).
    Value chunk = chunked.getInductionVars()[inner];
    first = arith::MulIOp::create(b, chunk, arith::ConstantIndexOp::create(b, lanes));
    SmallVector<int64_t> steps = llvm::to_vector(llvm::seq<int64_t>(0, lanes));
    Value laneSteps = arith::ConstantOp::create(
        b, DenseElementsAttr::get(VectorType::get({lanes}, b.getIndexType()),
                                  ArrayRef<int64_t>(steps)));
    vectors.map(iv, arith::AddIOp::create(b, broadcast(b, first), laneSteps).getResult());
    for (Operation &op : loop.getBody()->without_terminator())
      vectorizeOp(b, op);
    loop.erase();
  }

private:
  bool isVector(Value v) const { return vectors.contains(v); }

  Value broadcast(ImplicitLocOpBuilder &b, Value scalar) {
    return vector::BroadcastOp::create(b, VectorType::get({lanes}, scalar.getType()), scalar);
  }

  /// `v` as a vector: its vector form, or its scalar form broadcast.
  Value asVector(ImplicitLocOpBuilder &b, Value v) {
    if (Value vec = vectors.lookupOrNull(v))
      return vec;
    return broadcast(b, scalars.lookupOrDefault(v));
  }

  void vectorizeOp(ImplicitLocOpBuilder &b, Operation &op) {
    bool varies = llvm::any_of(op.getOperands(), [&](Value v) { return isVector(v); });
    if (!varies) {
      b.clone(op, scalars); // the same for every lane
      return;
    }
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return vectorizeLoad(b, load);
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return vectorizeStore(b, store);
    // Elementwise: the op on vectors of its operands.
    OperationState state(op.getLoc(), op.getName(), {}, {}, op.getAttrs());
    for (Value operand : op.getOperands())
      state.operands.push_back(asVector(b, operand));
    for (Type type : op.getResultTypes())
      state.types.push_back(VectorType::get({lanes}, type));
    Operation *vectorOp = b.create(state);
    for (auto [from, to] : llvm::zip(op.getResults(), vectorOp->getResults()))
      vectors.map(from, to);
  }

  /// [..., innermost index] with the other indices the same for every
  /// lane (lanesIfVectorizable checked it): one vector load.
  void vectorizeLoad(ImplicitLocOpBuilder &b, memref::LoadOp load) {
    SmallVector<Value> at = mapScalars(load.getIndices().drop_back());
    at.push_back(first);
    Value memref = scalars.lookupOrDefault(load.getMemRef());
    vectors.map(load.getResult(),
                vector::LoadOp::create(b, VectorType::get({lanes}, load.getType()), memref, at,
                                       /*nontemporal=*/false, accessAlignment(memref, lanes))
                    .getResult());
  }

  void vectorizeStore(ImplicitLocOpBuilder &b, memref::StoreOp store) {
    SmallVector<Value> at = mapScalars(store.getIndices().drop_back());
    at.push_back(first);
    Value memref = scalars.lookupOrDefault(store.getMemRef());
    vector::StoreOp::create(b, asVector(b, store.getValueToStore()), memref, at,
                            /*nontemporal=*/false, accessAlignment(memref, lanes));
  }

  static bool stridedInnermost(MemRefType type) {
    SmallVector<int64_t> strides;
    int64_t offset;
    return succeeded(type.getStridesAndOffset(strides, offset)) && !strides.empty() &&
           strides.back() == 1;
  }

  SmallVector<Value> mapScalars(ValueRange values) {
    return llvm::map_to_vector(values, [&](Value v) { return scalars.lookupOrDefault(v); });
  }

  scf::ParallelOp loop;
  Value iv;             // the innermost induction variable
  Value first;          // the chunk's first innermost index
  int64_t lanes = 0;
  IRMapping scalars;    // values the same for every lane
  IRMapping vectors;    // values that vary with the lane, as vectors
};

struct GpuVectorizeLoopsPass : pe::impl::PEGpuVectorizeLoopsBase<GpuVectorizeLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() && loop.getNumResults() == 0)
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops) {
      LoopVectorizer vectorizer(loop);
      if (int64_t lanes = vectorizer.lanesIfVectorizable())
        vectorizer.vectorize(lanes);
    }
  }
};

} // namespace
