//===- GpuManifest.cpp - JSON description of compiled GPU kernels ---------===//
//
// The manifest lets a host without LLVM (CuPy, cuda-python, PyTorch) load
// the binary, find each kernel and launch it with the right parameters:
//
// {"format": "pe-gpu-manifest", "version": 1, "chip": ..., "features": ...,
//  "binary": {"file": ..., "format": "isa" | "bin" | "fatbin"},
//  "kernels": [{"name": ..., "block": [x, y, z],
//               "params": [{"kind": "memref", "element": "f32", "rank": 4},
//                          {"kind": "scalar", "type": "i64"}, ...]}],
//  "functions": [{"name": ..., "arguments": [T], "results": [T],
//                 "replayable": bool, "steps": [...], "returns": [B]}]}
//
// T = {"element": "f32", "shape": [1, 32, null, 128]} (null: dynamic).
// A memref parameter is passed as NVVM's memref descriptor: allocated
// pointer, aligned pointer, offset, sizes[rank], strides[rank] (pointers
// and i64s). Steps, in order:
//   {"op": "alloc", "buffer": k, "bytes": n}     device allocation #k
//   {"op": "free", "buffer": k}
//   {"op": "copy", "to": B, "from": B, "bytes": n}
//   {"op": "launch", "kernel": name, "grid": [x, y, z], "block": [x, y, z],
//    "shared_bytes": dynamic shared memory,
//    "args": [B | {"value": number | "inf" | "-inf" | "nan"}]}
//   {"op": "check_aligned", "to": B, "bytes": 16}  the host checks that the
//                                      view's first element is so aligned
//   {"op": "read_record", "slot": s, "from": B, "bytes": n}  a kernel's error
//                                      record (i64s) copied to host slot s
//   {"op": "check_record", "slot": s, "report": name, "arguments": n}  if
//                                      slot[0] != 0, the run-time error
//                                      `name`(slot[1], ..., slot[n]) happened
//   {"op": "tensor_map", "buffer": k, "of": B, "data_type": t, "box": [...],
//    "interleave": i, "swizzle": s, "l2_promotion": l, "oob_fill": f}
//                                      a TMA tensor map of the view B
//                                      (cuTensorMapEncodeTiled's enums; box
//                                      sizes outermost first, as the view's
//                                      sizes), in device buffer #k (128 bytes)
// A "pointer" parameter takes the device address of buffer k ({"buffer": k}).
// B = {"argument": i} | {"buffer": k}, with the "element" type, "offset"
// (elements), "sizes" and "strides" of the view the kernel sees. A function is replayable when
// every size, grid and scalar is a compile-time constant (static shapes);
// otherwise its steps are omitted and only the C entry point can run it.
//
//===----------------------------------------------------------------------===//
#include "GpuManifest.h"

#include "pe-c/Runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/JSON.h"

#include <cmath>

using namespace mlir;
namespace json = llvm::json;

static std::string typeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  if (type.isIndex())
    os << "i64"; // index is 64-bit on both sides
  else
    type.print(os);
  return name;
}

/// A float as JSON: a number, or "inf", "-inf", "nan" (which JSON numbers
/// cannot hold; Python's float() and numpy read them back).
static json::Value floatJson(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return value;
}

static json::Value shapeJson(ArrayRef<int64_t> shape) {
  json::Array dims;
  for (int64_t dim : shape)
    dims.push_back(ShapedType::isDynamic(dim) ? json::Value(nullptr) : json::Value(dim));
  return dims;
}

static json::Value tensorJson(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return json::Object{{"element", typeName(type)}, {"shape", json::Array()}};
  return json::Object{{"element", typeName(shaped.getElementType())},
                      {"shape", shapeJson(shaped.getShape())}};
}

static json::Value kernelJson(gpu::GPUFuncOp kernel) {
  json::Array params;
  for (Type type : kernel.getArgumentTypes()) {
    if (auto memref = dyn_cast<MemRefType>(type))
      params.push_back(json::Object{{"kind", "memref"},
                                    {"element", typeName(memref.getElementType())},
                                    {"rank", memref.getRank()}});
    else if (isa<LLVM::LLVMPointerType>(type))
      params.push_back(json::Object{{"kind", "pointer"}});
    else
      params.push_back(json::Object{{"kind", "scalar"}, {"type", typeName(type)}});
  }
  json::Array block{1, 1, 1};
  if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize())
    block = json::Array(*known);
  return json::Object{{"name", kernel.getName()}, {"block", std::move(block)},
                      {"params", std::move(params)}};
}

namespace {
/// Replays a host function's ops into manifest steps; gives up (not
/// replayable) at the first value not known at compile time.
class StepRecorder {
public:
  explicit StepRecorder(func::FuncOp func) {
    for (auto [i, arg] : llvm::enumerate(func.getArguments()))
      bases[arg] = json::Object{{"argument", static_cast<int64_t>(i)}};
  }

  /// The steps and returns, or std::nullopt when the function is not
  /// replayable.
  std::optional<std::pair<json::Array, json::Array>> record(func::FuncOp func) {
    for (Operation &op : func.getBody().front())
      if (failed(step(op)))
        return std::nullopt;
    return std::make_pair(std::move(steps), std::move(returns));
  }

private:
  LogicalResult step(Operation &op) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value value : ret.getOperands()) {
        std::optional<json::Value> view = viewJson(value);
        if (!view)
          return failure();
        returns.push_back(std::move(*view));
      }
      return success();
    }
    if (isa<arith::ConstantOp>(op) || isMemoryFree(op))
      return success();
    if (auto alloc = dyn_cast<gpu::AllocOp>(op))
      return recordAlloc(alloc);
    if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
      std::optional<int64_t> id = bufferId(dealloc.getMemref());
      if (!id)
        return failure();
      steps.push_back(json::Object{{"op", "free"}, {"buffer", *id}});
      return success();
    }
    if (auto copy = dyn_cast<gpu::MemcpyOp>(op))
      return recordCopy(copy);
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
      return recordLaunch(launch);
    if (auto check = dyn_cast<scf::IfOp>(op))
      return succeeded(recordAlignmentCheck(check)) ? success() : recordErrorReport(check);
    if (auto alloca = dyn_cast<memref::AllocaOp>(op))
      return recordSlot(alloca);
    if (auto call = dyn_cast<LLVM::CallOp>(op))
      return recordTensorMap(call);
    // The stack array of a tensor map's box sizes (read by recordTensorMap).
    if (auto alloca = dyn_cast<LLVM::AllocaOp>(op))
      return success(isTensorMapBox(alloca));
    if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
      auto gep = store.getAddr().getDefiningOp<LLVM::GEPOp>();
      auto box = gep ? gep.getBase().getDefiningOp<LLVM::AllocaOp>() : nullptr;
      return success(box && isTensorMapBox(box));
    }
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return success(slots.count(load.getMemRef()) != 0); // read back on the host
    if (isa<memref::SubViewOp, memref::CastOp, memref::ReinterpretCastOp,
            memref::ExpandShapeOp, memref::CollapseShapeOp>(op)) {
      // A view of the same memory: its offset and strides come from its type.
      if (auto base = baseOf(op.getOperand(0))) {
        bases[op.getResult(0)] = std::move(*base);
        return success();
      }
    }
    return failure(); // control flow, host loads, run-time checks: dynamic
  }

  static bool isMemoryFree(Operation &op) {
    return isMemoryEffectFree(&op) && op.getNumRegions() == 0 &&
           !isa<memref::SubViewOp, memref::CastOp, memref::ReinterpretCastOp,
                memref::ExpandShapeOp, memref::CollapseShapeOp>(op);
  }

  /// if (address(buffer) % 16 != 0) pe_runtime_size_mismatch(GPU_ALIGNMENT,
  /// ...): the host checks the alignment of the buffer's first element.
  LogicalResult recordAlignmentCheck(scf::IfOp check) {
    if (check.getNumResults() != 0 || !check.getElseRegion().empty())
      return failure();
    func::CallOp call;
    for (Operation &inner : check.thenBlock()->without_terminator()) {
      if (auto found = dyn_cast<func::CallOp>(inner); found && !call)
        call = found;
      else if (!isMemoryFree(inner))
        return failure();
    }
    APInt kind;
    if (!call || call.getCallee() != "pe_runtime_size_mismatch" || call.getNumOperands() != 3 ||
        !matchPattern(call.getOperand(0), m_ConstantInt(&kind)) ||
        kind.getSExtValue() != PE_CHECK_GPU_ALIGNMENT)
      return failure();
    // The buffer whose aligned pointer the condition reads.
    SmallVector<Value> work = {check.getCondition()};
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def)
        continue;
      if (auto pointer = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(def)) {
        std::optional<json::Value> view = viewJson(pointer.getSource());
        if (!view)
          return failure();
        steps.push_back(json::Object{{"op", "check_aligned"}, {"to", std::move(*view)},
                                     {"bytes", 16}});
        return success();
      }
      llvm::append_range(work, def->getOperands());
    }
    return failure();
  }

  /// `value` without the unrealized casts around it.
  static Value throughCasts(Value value) {
    while (auto cast = value.getDefiningOp<UnrealizedConversionCastOp>())
      value = cast.getOperand(0);
    return value;
  }

  /// The constant integer `value` is, through the casts of the nvgpu
  /// lowering (index to i64).
  static std::optional<int64_t> constantThroughCasts(Value value) {
    APInt constant;
    if (!matchPattern(throughCasts(value), m_ConstantInt(&constant)))
      return std::nullopt;
    return constant.getSExtValue();
  }

  /// Whether `alloca` is only the box array of mgpuTensorMapEncodeTiledMemref
  /// calls: stored to through GEPs, read by nothing else.
  static bool isTensorMapBox(LLVM::AllocaOp alloca) {
    bool called = false;
    for (Operation *user : alloca->getUsers()) {
      if (auto call = dyn_cast<LLVM::CallOp>(user)) {
        called = call.getCallee() == "mgpuTensorMapEncodeTiledMemref" &&
                 call.getNumOperands() == 8 && call.getOperand(7) == alloca.getResult() &&
                 llvm::count(call.getOperands(), alloca.getResult()) == 1;
        if (!called)
          return false;
        continue;
      }
      auto gep = dyn_cast<LLVM::GEPOp>(user);
      if (!gep || !llvm::all_of(gep->getUsers(), [&](Operation *store) {
            auto written = dyn_cast<LLVM::StoreOp>(store);
            return written && written.getAddr() == gep.getResult();
          }))
        return false;
    }
    return called;
  }

  /// The box sizes of a tensor-map call (`rank` of them, outermost first):
  /// the one `store size, gep(box, i)` of each i into its stack array.
  std::optional<json::Array> tensorMapBox(LLVM::CallOp call, int64_t rank) {
    auto boxArray = call.getOperand(7).getDefiningOp<LLVM::AllocaOp>();
    if (!boxArray || !isTensorMapBox(boxArray))
      return std::nullopt;
    // 8-byte elements (the nvgpu lowering indexes the i64 array as pointers).
    auto eightBytes = [](Type type) {
      return type.isInteger(64) || isa<LLVM::LLVMPointerType>(type);
    };
    SmallVector<std::optional<int64_t>> box(rank);
    for (Operation *user : boxArray->getUsers()) {
      auto gep = dyn_cast<LLVM::GEPOp>(user);
      if (!gep)
        continue;
      std::optional<int64_t> at;
      if (gep.getDynamicIndices().size() == 1 && eightBytes(gep.getElemType()))
        at = constantThroughCasts(gep.getDynamicIndices()[0]);
      for (Operation *store : gep->getUsers()) {
        if (!at || *at < 0 || *at >= rank || box[*at])
          return std::nullopt; // an index out of range or written twice
        box[*at] = constantThroughCasts(cast<LLVM::StoreOp>(store).getValue());
      }
    }
    json::Array sizes;
    for (std::optional<int64_t> size : box) {
      if (!size)
        return std::nullopt;
      sizes.push_back(*size);
    }
    return sizes;
  }

  /// mgpuTensorMapEncodeTiledMemref(rank, descriptor, type, interleave,
  /// swizzle, l2Promotion, oobFill, box) as the nvgpu lowering of
  /// nvgpu.tma.create.descriptor calls it: the descriptor is the unranked
  /// cast of a view, the box a stack array of constants.
  LogicalResult recordTensorMap(LLVM::CallOp call) {
    if (call.getCallee() != "mgpuTensorMapEncodeTiledMemref" || call.getNumOperands() != 8)
      return failure();
    auto field = call.getOperand(1).getDefiningOp<LLVM::ExtractValueOp>();
    Value unranked = field ? throughCasts(field.getContainer()) : Value();
    auto erased = unranked ? unranked.getDefiningOp<memref::CastOp>() : nullptr;
    std::optional<json::Value> view = erased ? viewJson(erased.getSource()) : std::nullopt;
    if (!view)
      return failure();
    const int64_t rank = erased.getSource().getType().getRank();
    json::Object step{{"op", "tensor_map"}, {"of", std::move(*view)}};
    const char *enums[] = {"data_type", "interleave", "swizzle", "l2_promotion", "oob_fill"};
    for (auto [i, name] : llvm::enumerate(enums)) {
      std::optional<int64_t> value = constantThroughCasts(call.getOperand(i + 2));
      if (!value)
        return failure();
      step[name] = *value;
    }
    // The rank and the descriptor: fields 0 and 1 of the unranked memref.
    auto rankField = call.getOperand(0).getDefiningOp<LLVM::ExtractValueOp>();
    if (!rankField || rankField.getContainer() != field.getContainer() ||
        rankField.getPosition() != ArrayRef<int64_t>{0} ||
        field.getPosition() != ArrayRef<int64_t>{1})
      return failure();
    std::optional<json::Array> sizes = tensorMapBox(call, rank);
    if (!sizes)
      return failure();
    step["box"] = std::move(*sizes);
    int64_t id = nextBuffer++;
    step["buffer"] = id;
    tensorMaps[call.getResult()] = id;
    steps.push_back(std::move(step));
    return success();
  }

  /// A host stack slot of i64s that a deferred error record is read into.
  LogicalResult recordSlot(memref::AllocaOp alloca) {
    MemRefType type = alloca.getType();
    if (!type.hasStaticShape() || !type.getElementType().isInteger(64))
      return failure();
    slots[alloca.getResult()] = nextSlot++;
    return success();
  }

  /// if (slot[0] != 0) pe_runtime_*(slot[1], ...): a run-time error that a
  /// kernel recorded (pe-gpu-map-parallel-loops), reported by the host.
  LogicalResult recordErrorReport(scf::IfOp check) {
    if (check.getNumResults() != 0 || !check.getElseRegion().empty())
      return failure();
    auto claimed = check.getCondition().getDefiningOp<arith::CmpIOp>();
    auto flag = claimed ? claimed.getLhs().getDefiningOp<memref::LoadOp>() : nullptr;
    auto slot = flag ? slots.find(flag.getMemRef()) : slots.end();
    if (slot == slots.end())
      return failure();
    func::CallOp call;
    for (Operation &inner : check.thenBlock()->without_terminator()) {
      if (auto found = dyn_cast<func::CallOp>(inner); found && !call)
        call = found;
      else if (!isMemoryFree(inner) && !isa<memref::LoadOp>(inner))
        return failure();
    }
    if (!call || !call.getCallee().starts_with("pe_runtime_"))
      return failure();
    steps.push_back(json::Object{{"op", "check_record"},
                                 {"slot", slot->second},
                                 {"report", call.getCallee()},
                                 {"arguments", static_cast<int64_t>(call.getNumOperands())}});
    return success();
  }

  LogicalResult recordAlloc(gpu::AllocOp alloc) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !bytes(type) || alloc.getAsyncToken())
      return failure();
    int64_t id = nextBuffer++;
    bases[alloc.getMemref()] = json::Object{{"buffer", id}};
    steps.push_back(json::Object{{"op", "alloc"}, {"buffer", id}, {"bytes", *bytes(type)}});
    return success();
  }

  LogicalResult recordCopy(gpu::MemcpyOp copy) {
    auto type = cast<MemRefType>(copy.getSrc().getType());
    if (auto slot = slots.find(copy.getDst()); slot != slots.end()) {
      std::optional<json::Value> from = viewJson(copy.getSrc());
      if (!from)
        return failure();
      steps.push_back(json::Object{{"op", "read_record"},
                                   {"slot", slot->second},
                                   {"from", std::move(*from)},
                                   {"bytes", *bytes(type)}});
      return success();
    }
    std::optional<json::Value> to = viewJson(copy.getDst());
    std::optional<json::Value> from = viewJson(copy.getSrc());
    if (!type.hasStaticShape() || !bytes(type) || !to || !from)
      return failure();
    steps.push_back(json::Object{{"op", "copy"},
                                 {"to", std::move(*to)},
                                 {"from", std::move(*from)},
                                 {"bytes", *bytes(type)}});
    return success();
  }

  LogicalResult recordLaunch(gpu::LaunchFuncOp launch) {
    auto constants = [](ValueRange values) -> std::optional<json::Array> {
      json::Array out;
      for (Value value : values) {
        APInt constant;
        if (!matchPattern(value, m_ConstantInt(&constant)))
          return std::nullopt;
        out.push_back(constant.getSExtValue());
      }
      return out;
    };
    gpu::KernelDim3 g = launch.getGridSizeOperandValues();
    gpu::KernelDim3 b = launch.getBlockSizeOperandValues();
    std::optional<json::Array> grid = constants({g.x, g.y, g.z});
    std::optional<json::Array> block = constants({b.x, b.y, b.z});
    if (!grid || !block)
      return failure();
    // Dynamic shared memory in bytes (the kernels' static shared memory is
    // in the binary).
    int64_t sharedBytes = 0;
    if (Value size = launch.getDynamicSharedMemorySize()) {
      std::optional<json::Array> known = constants({size});
      if (!known)
        return failure();
      sharedBytes = *(*known)[0].getAsInteger();
    }
    json::Array args;
    for (Value operand : launch.getKernelOperands()) {
      if (isa<MemRefType>(operand.getType())) {
        std::optional<json::Value> view = viewJson(operand);
        if (!view)
          return failure();
        args.push_back(std::move(*view));
        continue;
      }
      if (auto map = tensorMaps.find(throughCasts(operand)); map != tensorMaps.end()) {
        args.push_back(json::Object{{"buffer", map->second}});
        continue;
      }
      Attribute constant;
      if (!matchPattern(operand, m_Constant(&constant)))
        return failure();
      if (auto integer = dyn_cast<IntegerAttr>(constant))
        args.push_back(json::Object{{"value", integer.getValue().getSExtValue()}});
      else if (auto real = dyn_cast<FloatAttr>(constant))
        args.push_back(json::Object{{"value", floatJson(real.getValueAsDouble())}});
      else
        return failure();
    }
    steps.push_back(json::Object{{"op", "launch"},
                                 {"kernel", launch.getKernelName().getValue()},
                                 {"grid", std::move(*grid)},
                                 {"block", std::move(*block)},
                                 {"shared_bytes", sharedBytes},
                                 {"args", std::move(args)}});
    return success();
  }

  std::optional<json::Object> baseOf(Value memref) const {
    auto it = bases.find(memref);
    if (it == bases.end())
      return std::nullopt;
    return it->second;
  }

  std::optional<int64_t> bufferId(Value memref) const {
    std::optional<json::Object> base = baseOf(memref);
    if (!base)
      return std::nullopt;
    return base->getInteger("buffer");
  }

  /// The base buffer of `memref` with the offset, sizes and strides of the
  /// view (all static), as a kernel's memref descriptor needs them.
  std::optional<json::Value> viewJson(Value memref) const {
    std::optional<json::Object> base = baseOf(memref);
    auto type = dyn_cast<MemRefType>(memref.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!base || !type || !type.hasStaticShape() || !bytes(type) ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        llvm::any_of(strides, ShapedType::isDynamic) || ShapedType::isDynamic(offset))
      return std::nullopt;
    json::Object view = std::move(*base);
    view["element"] = typeName(type.getElementType());
    view["offset"] = offset;
    view["sizes"] = shapeJson(type.getShape());
    view["strides"] = shapeJson(strides);
    return json::Value(std::move(view));
  }

  /// The size of a static buffer of ints or floats, else std::nullopt.
  static std::optional<int64_t> bytes(MemRefType type) {
    if (!type.getElementType().isIntOrFloat())
      return std::nullopt;
    return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
  }

  DenseMap<Value, json::Object> bases;
  DenseMap<Value, int64_t> slots;
  /// Tensor maps made on the host: the device buffer of each.
  DenseMap<Value, int64_t> tensorMaps;
  int64_t nextSlot = 0;
  json::Array steps;
  json::Array returns;
  int64_t nextBuffer = 0;
};
} // namespace

static json::Value functionJson(func::FuncOp func) {
  json::Array arguments, results;
  for (Type type : func.getArgumentTypes())
    arguments.push_back(tensorJson(type));
  for (Type type : func.getResultTypes())
    results.push_back(tensorJson(type));
  json::Object out{{"name", func.getName()},
                   {"arguments", std::move(arguments)},
                   {"results", std::move(results)}};
  std::optional<std::pair<json::Array, json::Array>> replay = StepRecorder(func).record(func);
  out["replayable"] = replay.has_value();
  if (replay) {
    out["steps"] = std::move(replay->first);
    out["returns"] = std::move(replay->second);
  }
  return out;
}

LogicalResult pe::writeGpuManifest(ModuleOp module, const GpuManifestTarget &target,
                                   llvm::raw_ostream &os) {
  json::Array kernels, functions;
  module.walk([&](gpu::GPUFuncOp func) {
    if (func.isKernel())
      kernels.push_back(kernelJson(func));
  });
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      functions.push_back(functionJson(func));
  json::Object manifest{
      {"format", "pe-gpu-manifest"},
      {"version", 1},
      {"chip", target.chip},
      {"features", target.features},
      {"binary", json::Object{{"file", target.binary}, {"format", target.format}}},
      {"kernels", std::move(kernels)},
      {"functions", std::move(functions)}};
  os << llvm::formatv("{0:2}", json::Value(std::move(manifest))) << "\n";
  return success();
}
