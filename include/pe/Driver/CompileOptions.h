//===- CompileOptions.h - what one compilation is asked to do ----*- C++ -*-===//
//
// The options of the compiler driver. The pipelines' own option structs are
// members, so a client (pe-compile's command line, a program calling the
// driver) sets a pipeline option in one place; the fields around them are
// what only the driver knows: the input, the outputs, the target machine and
// how the result is written.
//
//===----------------------------------------------------------------------===//
#ifndef PE_DRIVER_COMPILEOPTIONS_H
#define PE_DRIVER_COMPILEOPTIONS_H

#include "pe/Pipelines/Pipelines.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace mlir {
class PassManager;
} // namespace mlir

namespace mlir::pe::driver {

/// What the compilation writes.
enum class Emit {
  Pe,     // the input IR before any pass (with a config: its pe IR)
  Config, // the config as read, as JSON
  Mlir,   // the LLVM dialect (CPU) or the module after pe-gpu-pipeline
  Llvm,   // LLVM IR
  Asm,    // assembly
  Obj,    // an object file
  Shared, // a shared library
  Jit,    // nothing: `main` is JIT-compiled and run
  Ptx,    // the GPU kernels as PTX
  Cubin,  // the GPU kernels as a cubin (ptxas)
  Fatbin  // the GPU kernels as a fatbin (ptxas, fatbinary)
};

/// What the code runs on.
enum class Target { Cpu, Gpu, GpuOnCpu };

/// How a GPU library embeds its kernels.
enum class GpuBinary { Auto, Ptx, Cubin, Fatbin };

/// Where the buffers of a GPU library's functions live.
enum class GpuMemory { Host, Device };

/// Whether a kernel that needs an instruction set is used.
enum class Choice { Auto, On, Off };

/// The model config read instead of an input file.
struct ConfigInput {
  std::string path;
  std::optional<int64_t> batch;   // default 1
  std::optional<int64_t> queries; // default: any
  std::optional<int64_t> keys;    // default: as queries; -1: any
  std::optional<std::string> dtype; // f32 (default), f16, bf16
  /// Latent attention: the functions take the rotated key block all heads
  /// share as its own argument (ModelShapes::sharedKey).
  bool sharedKey = false;
  /// Latent attention in its absorbed form (ModelShapes::absorbed).
  bool absorbed = false;
};

struct CompileOptions {
  CompileOptions();
  CompileOptions(const CompileOptions &) = delete;
  CompileOptions &operator=(const CompileOptions &) = delete;

  // Input and outputs.
  std::string input = "-";
  ConfigInput config;
  /// Unset: a shared library, or PTX with Target::Gpu.
  std::optional<Emit> emit;
  std::string output = "-";
  std::string header;    // C header of the exported entries
  std::string interface; // the same as JSON
  std::string manifest;  // JSON manifest of the GPU kernels
  /// Prefix of exported names; unset: from the output file's name.
  std::optional<std::string> prefix;

  // The machine.
  Target target = Target::Cpu;
  std::string mtriple;
  std::string mcpu = "native";
  std::string mattr;
  int64_t sveVectorBits = 0;
  unsigned optLevel = 3;
  Choice amx = Choice::Auto;
  Choice bf16Dot = Choice::Auto;
  /// Only describe the target CPU (printCpuTarget).
  bool printTarget = false;

  // Linking.
  bool staticRuntime = false;
  std::string linker; // default: clang-22, clang or cc
  /// Objects of earlier compilations (lib/Driver/ObjectCache.h); empty: none.
  std::string objectCache;

  // GPU libraries.
  GpuBinary gpuBinary = GpuBinary::Auto;
  GpuMemory gpuMemory = GpuMemory::Host;
  // Passes.
  bool raise = false;      // pe-raise-positional-encodings first
  bool verifyEach = false; // the verifier between passes
  /// Called on every pass manager the driver runs, e.g. to apply the pass
  /// manager's command-line options (--mlir-print-ir-after-all, timing).
  std::function<LogicalResult(PassManager &)> passManagerSetup;

  /// The pipelines' options (set by assignment, so that a pipeline sees
  /// which were given). `fuse`, `tileAttention` and `tileRope` are the same
  /// knobs in both: the setters below set both.
  CpuPipelineOptions cpu;
  GpuPipelineOptions gpu;
  void setFuse(bool value);
  void setTileAttention(bool value);
  void setTileRope(bool value);

  /// What is written, the default resolved.
  Emit emitKind() const;
  /// PTX, cubin or fatbin: the GPU kernels alone.
  bool emitsGpuKernels() const;
  /// LLVM IR, asm, an object or a shared library: host code.
  bool emitsHostCode() const;
  /// The prefix of exported names: `prefix`, else the output file's name
  /// (`libllama.so` -> `llama_`), else `pe_`.
  std::string exportPrefix() const;
};

/// Option values and combinations that cannot work, said before any input
/// is read.
llvm::Error checkOptions(const CompileOptions &options);

/// `text` as a C identifier: other characters become '_', and `guard` goes
/// in front of a leading digit or nothing.
std::string cIdentifier(llvm::StringRef text, llvm::StringRef guard);

} // namespace mlir::pe::driver

#endif // PE_DRIVER_COMPILEOPTIONS_H
