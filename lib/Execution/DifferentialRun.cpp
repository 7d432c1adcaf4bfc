//===- DifferentialRun.cpp - run two functions and compare ----------------===//
#include "pe/Execution/DifferentialRun.h"
#include "pe/Execution/Jit.h"

#include "pe/Conversion/LinalgToPE/LinalgToPE.h"
#include "pe/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/TargetSelect.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace mlir;

namespace {

/// A tensor argument or result: its bytes and its memref descriptor
/// (allocated, aligned, offset, sizes[rank], strides[rank]).
struct Buffer {
  std::vector<uint8_t> bytes;
  std::vector<int64_t> descriptor;
};

int64_t elementBytes(Type element) {
  return element.isInteger(1) ? 1 : int64_t(element.getIntOrFloatBitWidth() / 8);
}

bool supportedElement(Type element) {
  return element.isF32() || element.isF64() || element.isF16() || element.isBF16() ||
         element.isInteger(1) || element.isInteger(32) || element.isInteger(64);
}

std::vector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// A random input for `type`.
Buffer makeInput(RankedTensorType type, std::mt19937_64 &rng) {
  Type element = type.getElementType();
  int64_t n = type.getNumElements(), width = elementBytes(element);
  Buffer buffer;
  buffer.bytes.resize(std::max<int64_t>(n, 1) * width);
  int64_t last = type.getRank() ? std::max<int64_t>(type.getShape().back(), 1) : 1;
  for (int64_t i = 0; i < n; ++i) {
    uint8_t *at = buffer.bytes.data() + i * width;
    if (element.isInteger(1)) {
      *at = uint8_t(rng() & 1);
    } else if (element.isInteger()) {
      int64_t v = int64_t(rng() % uint64_t(last));
      std::memcpy(at, &v, width); // little-endian: the low bytes of an i32
    } else {
      llvm::APFloat x(std::normal_distribution<double>(0.0, 1.0)(rng));
      bool losesInfo;
      x.convert(cast<FloatType>(element).getFloatSemantics(),
                llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      uint64_t bits = x.bitcastToAPInt().getZExtValue();
      std::memcpy(at, &bits, width);
    }
  }
  auto address = int64_t(reinterpret_cast<intptr_t>(buffer.bytes.data()));
  buffer.descriptor = {address, address, 0};
  llvm::append_range(buffer.descriptor, type.getShape());
  llvm::append_range(buffer.descriptor, stridesOf(type.getShape()));
  return buffer;
}

double elementAt(const uint8_t *data, FloatType element, int64_t i) {
  int64_t width = elementBytes(element);
  uint64_t bits = 0;
  std::memcpy(&bits, data + i * width, width);
  llvm::APFloat value(element.getFloatSemantics(), llvm::APInt(width * 8, bits));
  bool losesInfo;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToDouble();
}

/// `fn` alone in a module, compiled by the CPU pipeline and the JIT.
FailureOr<std::unique_ptr<ExecutionEngine>> compile(func::FuncOp fn, std::string &why) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry translations;
  registerAllToLLVMIRTranslations(translations);
  fn.getContext()->appendDialectRegistry(translations);
  OpBuilder builder(fn.getContext());
  OwningOpRef<ModuleOp> module = ModuleOp::create(fn.getLoc());
  builder.setInsertionPointToEnd(module->getBody());
  auto copy = cast<func::FuncOp>(builder.clone(*fn));
  copy.setName("pe_check");
  copy.setPublic();
  PassManager pm(fn.getContext());
  pe::CpuPipelineOptions options;
  options.threads = 1;
  pe::buildCpuPipeline(pm, options);
  if (failed(pm.run(*module))) {
    why = "it does not compile for the CPU";
    return failure();
  }
  auto engine = pe::createJitEngine(*module, pe::JitOptions{});
  if (!engine) {
    why = "the JIT failed: " + llvm::toString(engine.takeError());
    return failure();
  }
  return std::move(*engine);
}

/// Calls the compiled function; its result descriptor.
FailureOr<std::vector<int64_t>> run(ExecutionEngine &engine, std::vector<Buffer> &inputs,
                                    int64_t rank, std::string &why) {
  std::vector<int64_t> result(3 + 2 * rank, 0);
  void *resultPointer = result.data();
  std::vector<void *> pointers;
  for (Buffer &input : inputs)
    pointers.push_back(input.descriptor.data());
  SmallVector<void *> packed = {&resultPointer};
  for (void *&pointer : pointers)
    packed.push_back(&pointer);
  if (llvm::Error error = engine.invokePacked("_mlir_ciface_pe_check", packed)) {
    why = "it does not run: " + llvm::toString(std::move(error));
    return failure();
  }
  return result;
}

LogicalResult checkSignature(func::FuncOp fn, std::string &why) {
  FunctionType type = fn.getFunctionType();
  auto staticTensor = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor && tensor.hasStaticShape() && supportedElement(tensor.getElementType());
  };
  if (!llvm::all_of(type.getInputs(), staticTensor) || type.getNumResults() != 1 ||
      !staticTensor(type.getResult(0)) ||
      !isa<FloatType>(cast<RankedTensorType>(type.getResult(0)).getElementType())) {
    why = "only functions of static tensors returning one float tensor are checked";
    return failure();
  }
  if (fn.walk([](CallOpInterface) { return WalkResult::interrupt(); }).wasInterrupted()) {
    why = "functions that call others are not checked";
    return failure();
  }
  return success();
}

} // namespace

FailureOr<double> pe::compareOnRandomInputs(func::FuncOp reference, func::FuncOp candidate,
                                            uint64_t seed, std::string &why) {
  if (failed(checkSignature(reference, why)))
    return failure();
  if (reference.getFunctionType() != candidate.getFunctionType()) {
    why = "the functions differ in type";
    return failure();
  }
  FailureOr<std::unique_ptr<ExecutionEngine>> want = compile(reference, why);
  if (failed(want))
    return failure();
  FailureOr<std::unique_ptr<ExecutionEngine>> got = compile(candidate, why);
  if (failed(got))
    return failure();

  std::mt19937_64 rng(seed);
  std::vector<Buffer> inputs;
  for (Type t : reference.getFunctionType().getInputs())
    inputs.push_back(makeInput(cast<RankedTensorType>(t), rng));
  auto resultType = cast<RankedTensorType>(reference.getFunctionType().getResult(0));
  FailureOr<std::vector<int64_t>> a = run(**want, inputs, resultType.getRank(), why);
  if (failed(a))
    return failure();
  FailureOr<std::vector<int64_t>> b = run(**got, inputs, resultType.getRank(), why);
  if (failed(b))
    return failure();

  auto element = cast<FloatType>(resultType.getElementType());
  int64_t width = elementBytes(element), n = resultType.getNumElements();
  auto data = [&](const std::vector<int64_t> &d) {
    return reinterpret_cast<const uint8_t *>(intptr_t(d[1])) + d[2] * width;
  };
  double scale = 1.0, worst = 0.0;
  for (int64_t i = 0; i < n; ++i)
    if (double r = std::abs(elementAt(data(*a), element, i)); std::isfinite(r))
      scale = std::max(scale, r);
  for (int64_t i = 0; i < n; ++i) {
    double r = elementAt(data(*a), element, i), c = elementAt(data(*b), element, i);
    if ((std::isnan(r) && std::isnan(c)) || r == c)
      continue;
    double difference = std::isfinite(r) && std::isfinite(c) ? std::abs(c - r) / scale
                                                             : INFINITY;
    worst = std::max(worst, difference);
  }
  // Results the functions allocated (not an input passed through).
  for (const std::vector<int64_t> *d : {&*a, &*b})
    if (llvm::none_of(inputs, [&](const Buffer &in) { return in.descriptor[0] == (*d)[0]; }))
      std::free(reinterpret_cast<void *>(intptr_t((*d)[0])));
  return worst;
}

void pe::registerJitRaisingCheck() {
  setRaisingCheck([](func::FuncOp before, func::FuncOp after, std::string &why) {
    return compareOnRandomInputs(before, after, /*seed=*/0x7065, why);
  });
}
