//===- Differential.cpp - run a program two ways and compare --------------===//
#include "Differential.h"

#include "pe/Execution/Jit.h"
#include "pe/Pipelines/Pipelines.h"
#include "pe/CInterface/Passes.h"
#include "pe/Codegen/Passes.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <type_traits>
#include <utility>

using namespace mlir;
using namespace mlir::pe::fuzz;

namespace {

/// A tensor's bytes and its strided memref descriptor (MLIR's C interface:
/// allocated, aligned, offset, sizes[rank], strides[rank]).
struct Buffer {
  std::vector<uint8_t> bytes;
  std::vector<int64_t> descriptor;
};

size_t elementBytes(const std::string &element) {
  if (element == "f16" || element == "bf16")
    return 2;
  return element == "i64" ? 8 : 4;
}

const llvm::fltSemantics &semantics(const std::string &element) {
  if (element == "f16")
    return llvm::APFloat::IEEEhalf();
  if (element == "bf16")
    return llvm::APFloat::BFloat();
  return llvm::APFloat::IEEEsingle();
}

void describe(Buffer &buffer, const std::vector<int64_t> &shape) {
  auto address = int64_t(reinterpret_cast<intptr_t>(buffer.bytes.data()));
  buffer.descriptor = {address, address, 0};
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  buffer.descriptor.insert(buffer.descriptor.end(), shape.begin(), shape.end());
  buffer.descriptor.insert(buffer.descriptor.end(), strides.begin(), strides.end());
}

/// The input for `spec`, drawn from `rng`.
Buffer makeInput(const TensorSpec &spec, std::mt19937_64 &rng) {
  Buffer buffer;
  int64_t n = spec.elements();
  size_t width = elementBytes(spec.element);
  buffer.bytes.resize(std::max<int64_t>(n, 1) * width);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t *at = buffer.bytes.data() + i * width;
    if (spec.values != Values::Floats) {
      int64_t low = spec.values == Values::TableRows ? 0 : spec.low;
      std::uniform_int_distribution<int64_t> pick(low, spec.high);
      int64_t p = pick(rng);
      if (width == 8) {
        std::memcpy(at, &p, 8);
      } else {
        auto p32 = int32_t(std::clamp<int64_t>(p, INT32_MIN, INT32_MAX));
        std::memcpy(at, &p32, 4);
      }
      continue;
    }
    double x = std::normal_distribution<double>(0.0, 1.0)(rng);
    if (spec.nonFinite && rng() % 97 == 0) {
      const double special[] = {NAN, INFINITY, -INFINITY};
      x = special[rng() % 3];
    }
    llvm::APFloat value(x);
    bool losesInfo;
    value.convert(semantics(spec.element), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    uint64_t bits = value.bitcastToAPInt().getZExtValue();
    std::memcpy(at, &bits, width);
  }
  describe(buffer, spec.runShape);
  return buffer;
}

/// Element `i` of a result buffer as a double.
double elementAt(const uint8_t *data, const std::string &element, int64_t i) {
  size_t width = elementBytes(element);
  uint64_t bits = 0;
  std::memcpy(&bits, data + i * width, width);
  llvm::APFloat value(semantics(element), llvm::APInt(width * 8, bits));
  bool losesInfo;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToDouble();
}

/// PE_FUZZ_OPT_LEVEL's level (0 where unset), or nullopt where it is set
/// to anything but 0, 1, 2 or 3.
std::optional<unsigned> optLevelVariable() {
  const char *value = std::getenv("PE_FUZZ_OPT_LEVEL");
  if (!value)
    return 0u;
  llvm::StringRef text(value);
  if (text.size() != 1 || text[0] < '0' || text[0] > '3')
    return std::nullopt;
  return unsigned(text[0] - '0');
}

/// LLVM's level for both ways: PE_FUZZ_OPT_LEVEL, default 0. What is
/// compared is pe's lowering, kernels against the reference through the
/// same LLVM; under the sanitizers the fused kernels' optimizing code
/// generation took up to 30 s a program, -O0 about 1 s. What -O0 leaves out
/// (optimizations that exploit poison or reassociate where the kernels allow
/// it, instruction selection of optimized vector code) a run with
/// PE_FUZZ_OPT_LEVEL=2 covers, and the compiled tests at -O3.
unsigned jitOptLevel() {
  static const unsigned level = optLevelVariable().value_or(0);
  return level;
}

/// The JIT-compiled program, or null when it does not compile.
std::unique_ptr<ExecutionEngine> compile(ModuleOp module, bool kernels, int64_t threads) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  PassManager pm(module.getContext());
  pe::CpuPipelineOptions options;
  options.fuse = kernels;
  options.tileAttention = kernels;
  options.tileRope = kernels;
  options.threads = threads;
  pe::buildCpuPipeline(pm, options);
  pm.addPass(pe::createPEExportCInterface(pe::PEExportCInterfaceOptions{"pe_"}));
  if (failed(pm.run(*copy)))
    return nullptr;
  pe::JitOptions jit;
  jit.threads = threads;
  jit.optLevel = jitOptLevel();
  auto engine = pe::createJitEngine(*copy, jit);
  if (!engine) {
    llvm::consumeError(engine.takeError());
    return nullptr;
  }
  return std::move(*engine);
}

/// fn(args[0], .., args[N - 1]) for a function of N pointers returning its
/// status.
template <size_t... I>
int32_t callWith(void *fn, const std::vector<void *> &args, std::index_sequence<I...>) {
  using Fn = int32_t (*)(std::conditional_t<true, void *, decltype(I)>...);
  return reinterpret_cast<Fn>(fn)(args[I]...);
}

/// The call of `fn` with the result slot and up to 11 inputs (attention with
/// every optional operand: mask, positions, sinks and rope positions has 9);
/// nothing for more.
std::optional<int32_t> call(void *fn, const std::vector<void *> &args) {
  switch (args.size()) {
#define PE_CALL_CASE(N)                                                          \
  case N:                                                                        \
    return callWith(fn, args, std::make_index_sequence<N>());
    PE_CALL_CASE(2) PE_CALL_CASE(3) PE_CALL_CASE(4) PE_CALL_CASE(5) PE_CALL_CASE(6)
    PE_CALL_CASE(7) PE_CALL_CASE(8) PE_CALL_CASE(9) PE_CALL_CASE(10) PE_CALL_CASE(11)
    PE_CALL_CASE(12)
#undef PE_CALL_CASE
  default:
    return std::nullopt;
  }
}

/// Calls the exported `pe_f(result, args...)`; returns the result's
/// descriptor, or nothing when it returns an error status (a run-time check
/// of the generated code failed).
std::vector<int64_t> run(ExecutionEngine &engine, std::vector<Buffer> &inputs, size_t rank) {
  auto symbol = engine.lookup("pe_f");
  if (!symbol) {
    llvm::consumeError(symbol.takeError());
    return {};
  }
  std::vector<int64_t> result(3 + 2 * rank, 0);
  std::vector<void *> args = {result.data()};
  for (Buffer &input : inputs)
    args.push_back(input.descriptor.data());
  std::optional<int32_t> status = call(*symbol, args);
  if (!status || *status != 0)
    return {};
  return result;
}

/// Relative tolerance of a result of `element` against max(1, max |reference|).
double tolerance(const std::string &element) {
  if (element == "f16")
    return 4e-3;
  if (element == "bf16")
    return 3e-2;
  return 1e-4;
}

/// The largest |k - q| the position inputs can form (0 without positions).
double largestDistance(const Program &program, const std::vector<Buffer> &inputs) {
  double low = INFINITY, high = -INFINITY;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = program.arguments[i];
    if (spec.values != Values::Positions)
      continue;
    for (int64_t j = 0, n = spec.elements(); j < n; ++j) {
      int64_t p = 0;
      if (elementBytes(spec.element) == 8) {
        std::memcpy(&p, inputs[i].bytes.data() + 8 * j, 8);
      } else {
        int32_t p32 = 0;
        std::memcpy(&p32, inputs[i].bytes.data() + 4 * j, 4);
        p = p32;
      }
      low = std::min(low, double(p));
      high = std::max(high, double(p));
    }
  }
  return high >= low ? high - low : 0.0;
}

/// Absolute tolerance added where ALiBi adds slope x distance to the logits:
/// both ways compute in f32 and add the bias as an absolute value, so a
/// logit of magnitude M = slope x |k - q| (slopes <= 1) carries a rounding
/// error of about M x 2^-24 per operation, which the softmax weights and
/// the values (|v| of a few units) turn into output errors of a few times
/// that. Programs without ALiBi, or with distances of a few thousand, keep
/// the plain tolerance.
double alibiTolerance(const Program &program, const std::vector<Buffer> &inputs) {
  if (program.ir.find("alibi") == std::string::npos)
    return 0.0;
  return 4.0 * largestDistance(program, inputs) * std::ldexp(1.0, -24);
}

[[noreturn]] void report(const Program &program, const std::string &what) {
  llvm::errs() << "pe-fuzz: the pe kernels and the reference lowering differ: " << what
               << "\n" << program.ir;
  std::abort();
}

} // namespace

void mlir::pe::fuzz::checkDifferential(const Program &program, ModuleOp module, uint64_t seed,
                                 int64_t threads) {
  static const bool verbose = std::getenv("PE_FUZZ_VERBOSE") != nullptr;
  std::unique_ptr<ExecutionEngine> kernels = compile(module, true, threads);
  std::unique_ptr<ExecutionEngine> reference = compile(module, false, 1);
  if (!kernels || !reference) {
    if (verbose)
      llvm::errs() << "pe-fuzz: not compiled\n" << program.ir;
    return;
  }
  std::mt19937_64 rng(seed);
  std::vector<Buffer> inputs;
  for (const TensorSpec &spec : program.arguments)
    inputs.push_back(makeInput(spec, rng));
  const TensorSpec &spec = program.result;
  std::vector<int64_t> got = run(*kernels, inputs, spec.shape.size());
  std::vector<int64_t> want = run(*reference, inputs, spec.shape.size());
  if (got.empty() || want.empty()) {
    if (verbose)
      llvm::errs() << "pe-fuzz: not called\n" << program.ir;
    return;
  }
  // aligned + offset elements.
  size_t width = elementBytes(spec.element);
  auto data = [&](const std::vector<int64_t> &d) {
    return reinterpret_cast<const uint8_t *>(intptr_t(d[1])) + d[2] * width;
  };
  const uint8_t *a = data(got), *b = data(want);
  int64_t n = spec.elements();
  double scale = 1.0;
  for (int64_t i = 0; i < n; ++i)
    if (double w = std::abs(elementAt(b, spec.element, i)); std::isfinite(w))
      scale = std::max(scale, w);
  const double allowed = tolerance(spec.element) * scale + alibiTolerance(program, inputs);
  for (int64_t i = 0; i < n; ++i) {
    double x = elementAt(a, spec.element, i), y = elementAt(b, spec.element, i);
    bool same = (std::isnan(x) && std::isnan(y)) || x == y ||
                (std::isfinite(x) && std::isfinite(y) && std::abs(x - y) <= allowed);
    if (!same)
      report(program, "element " + std::to_string(i) + ": " + std::to_string(x) +
                          " (kernels) vs " + std::to_string(y) + " (reference)");
  }
  if (verbose)
    llvm::errs() << "pe-fuzz: " << n << " elements agree\n" << program.ir;
  std::free(reinterpret_cast<void *>(intptr_t(got[0])));
  std::free(reinterpret_cast<void *>(intptr_t(want[0])));
}

bool mlir::pe::fuzz::checkOptLevelVariable() {
  if (optLevelVariable())
    return true;
  llvm::errs() << "pe-fuzz: PE_FUZZ_OPT_LEVEL must be 0, 1, 2 or 3, not '"
               << std::getenv("PE_FUZZ_OPT_LEVEL") << "'\n";
  return false;
}
