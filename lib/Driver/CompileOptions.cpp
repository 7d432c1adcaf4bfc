//===- CompileOptions.cpp - the driver's options and their checks ---------===//
#include "pe/Driver/CompileOptions.h"

#include "pe/Execution/Jit.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <limits>

using namespace mlir;
using namespace mlir::pe::driver;

CompileOptions::CompileOptions() {
  // A library's callers may write results into their own buffers.
  cpu.destinationEntries = true;
}

void CompileOptions::setFuse(bool value) {
  cpu.fuse = value;
  gpu.fuse = value;
}

void CompileOptions::setTileAttention(bool value) {
  cpu.tileAttention = value;
  gpu.tileAttention = value;
}

void CompileOptions::setTileRope(bool value) {
  cpu.tileRope = value;
  gpu.tileRope = value;
}

Emit CompileOptions::emitKind() const {
  if (emit)
    return *emit;
  return target == Target::Gpu ? Emit::Ptx : Emit::Shared;
}

bool CompileOptions::emitsGpuKernels() const {
  Emit kind = emitKind();
  return kind == Emit::Ptx || kind == Emit::Cubin || kind == Emit::Fatbin;
}

bool CompileOptions::emitsHostCode() const {
  Emit kind = emitKind();
  return kind == Emit::Llvm || kind == Emit::Asm || kind == Emit::Obj || kind == Emit::Shared;
}

std::string pe::driver::cIdentifier(StringRef text, StringRef guard) {
  std::string id = text.str();
  for (char &c : id)
    if (!llvm::isAlnum(c))
      c = '_';
  if (id.empty() || llvm::isDigit(id.front()))
    id = (guard + id).str();
  return id;
}

std::string CompileOptions::exportPrefix() const {
  if (prefix)
    return *prefix;
  StringRef stem = llvm::sys::path::stem(output);
  if (output == "-" || emitKind() == Emit::Jit || stem.empty())
    return "pe_";
  stem.consume_front("lib");
  return cIdentifier(stem, "pe_") + "_";
}

static llvm::Error error(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The values of the machine, the config input and the pipelines.
static llvm::Error checkValues(const CompileOptions &options) {
  if (options.optLevel > 3)
    return error("-O must be 0, 1, 2 or 3, but got " + Twine(options.optLevel));
  // The CPU pipeline's options are checked for every target (as values a
  // command line may hold); the GPU pipeline's where a GPU schedule is built
  // (--target=gpu-on-cpu schedules for --chip too).
  if (llvm::Error invalid = checkCpuPipelineOptions(options.cpu))
    return error("pe-cpu-pipeline: " + llvm::toString(std::move(invalid)));
  if (options.target != Target::Cpu)
    if (llvm::Error invalid = checkGpuPipelineOptions(options.gpu))
      return error("pe-gpu-pipeline: " + llvm::toString(std::move(invalid)));
  const ConfigInput &config = options.config;
  if (config.path.empty() && (config.batch || config.queries || config.keys || config.dtype ||
                              config.sharedKey || config.absorbed ||
                              options.emitKind() == Emit::Config))
    return error("--batch, --seq-len, --kv-len, --dtype, --shared-key, --absorbed and "
                 "--emit=config need --config");
  if (config.sharedKey && config.absorbed)
    return error("--shared-key and --absorbed are two forms of latent attention: give one");
  if (!config.path.empty() && options.input != "-")
    return error("--config builds the input: give it or an input file, not both");
  if (config.batch.value_or(1) < 1 || config.queries.value_or(-1) < -1 ||
      config.keys.value_or(-1) < -1)
    return error("--batch must be >= 1 and --seq-len, --kv-len >= 0 (-1: any)");
  return llvm::Error::success();
}

/// What is written, for the target it is written for.
static llvm::Error checkOutputs(const CompileOptions &options) {
  const Emit emit = options.emitKind();
  const bool gpu = options.target == Target::Gpu;
  if (gpu && !options.mtriple.empty())
    return error("--mtriple names the CPU of CPU code: --target=gpu compiles host code "
                 "for this machine");
  if (!gpu && options.emitsGpuKernels())
    return error("--emit=ptx, cubin and fatbin need --target=gpu");
  if (gpu && emit == Emit::Jit)
    return error("--emit=jit runs on the CPU: it needs --target=cpu");
  if (gpu && emit == Emit::Shared &&
      !llvm::sys::fs::exists(pe::runtimeDirectory() + "/libpe_cuda_runtime.so"))
    return error("--target=gpu --emit=shared links libpe_cuda_runtime, which this "
                 "pe-mlir was built without (no CUDA headers were found when it was "
                 "configured); --emit=ptx, cubin, fatbin and obj need no runtime");
  if (!gpu && !options.manifest.empty())
    return error("--manifest describes GPU kernels: it needs --target=gpu");
  if (options.staticRuntime && (emit != Emit::Shared || gpu))
    return error("--static-runtime links a CPU library: it needs --emit=shared and "
                 "--target=cpu or gpu-on-cpu");
  if (options.emitsGpuKernels() && (!options.header.empty() || !options.interface.empty()))
    return error("--header and --interface describe a library: they need "
                 "--emit=shared, obj, asm, llvm or mlir");
  if (emit == Emit::Shared && options.output == "-")
    return error("--emit=shared needs an output file (-o)");
  return llvm::Error::success();
}

llvm::Error pe::driver::checkOptions(const CompileOptions &options) {
  if (llvm::Error invalid = checkValues(options))
    return invalid;
  return checkOutputs(options);
}
