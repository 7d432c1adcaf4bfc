//===- CpuTarget.h - what a CPU offers the kernels --------------*- C++ -*-===//
//
// The one description of a CPU target that schedules are chosen from: its
// instruction set family, vector registers (width and count), the FMA,
// dot-product, matrix and conversion instructions the kernels use, and its
// cache sizes. It is built from an LLVM target (triple, CPU, features), the
// same one code generation uses, by asking LLVM: the subtarget's features
// and the target transform info's register counts and widths. A module
// names its target with the upstream attribute `llvm.target`
// (`#llvm.target<triple = ..., chip = ..., features = ...>`); without one,
// the host is the target.
//
//===----------------------------------------------------------------------===//
#ifndef PE_TARGET_CPUTARGET_H
#define PE_TARGET_CPUTARGET_H

#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Support/LLVM.h"

#include "llvm/Support/CodeGen.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace llvm {
class TargetMachine;
namespace json {
class Value;
} // namespace json
} // namespace llvm

namespace mlir {
class ModuleOp;
class Operation;
namespace pe {

/// The instruction set families the CPU kernels are scheduled for.
enum class CpuIsa { X86, AArch64, Other };

/// Most elements per vector a schedule may ask for: wider vectors than any
/// CPU has only unroll into huge code.
constexpr int64_t kMaxVectorWidth = 64;

struct CpuTarget {
  /// LLVM's names: the triple, the CPU and the features (`+a,-b,...`).
  std::string triple, cpu, features;
  CpuIsa isa = CpuIsa::Other;
  /// Bits of the widest fixed-width vector register the kernels use (128
  /// NEON and SVE's minimum, 256 AVX2, 512 AVX-512).
  int64_t vectorBits = 128;
  /// Architectural vector registers (16 with AVX2, 32 with AVX-512 and on
  /// AArch64).
  int64_t vectorRegisters = 16;
  /// Fused multiply-add on vectors (x86 FMA3; always on AArch64).
  bool fma = false;
  /// bf16 pair dot products into f32 lanes: vdpbf16ps (AVX512-BF16) or
  /// BFDOT (AArch64 BF16).
  bool bf16Dot = false;
  /// f32 -> bf16 rounding in one instruction (AVX512-BF16, AVX-NE-CONVERT,
  /// AArch64 BF16); without it the rounding is emitted as integer IR.
  bool bf16Convert = false;
  /// f16 <-> f32 conversions in hardware (F16C; AArch64 always).
  bool f16Convert = false;
  /// AMX bf16 tiles (amx-tile, amx-bf16).
  bool amx = false;
  /// AArch64 scalable vectors (SVE, SVE2) and the BF16 matrix product
  /// (BFMMLA) and int8 matrix (I8MM) extensions.
  bool sve = false, sve2 = false, bf16MatMul = false, i8mm = false;
  /// The SVE vector length the code is built for (vector-length specific,
  /// as clang's -msve-vector-bits; LLVM then computes fixed-width vectors
  /// of that length with SVE instructions); 0: any length, and the kernels
  /// use NEON's 128-bit vectors, which run on every SVE implementation.
  int64_t sveVectorBits = 0;
  /// The CPU is the host's (`cpu` empty, "native", or the host CPU's own
  /// name on the host's architecture with the host's features first, as a
  /// module's llvm.target names it once the driver resolved "native"): its
  /// caches are read from the OS, and what the host measures about itself
  /// (HostThroughput.h) applies. A CPU named without them is that model as
  /// LLVM describes it, whatever machine compiles.
  bool host = false;
  /// Data cache sizes in bytes (0: unknown).
  int64_t l1dBytes = 0, l2Bytes = 0, l3Bytes = 0;

  /// f32 lanes of one vector register.
  int64_t f32Lanes() const { return vectorBits / 32; }
  /// A one-line summary: `x86 znver2: 256-bit x 16 vectors, fma, f16c`.
  std::string summary() const;
};

/// The target of `triple`, `cpu` and `features` as LLVM knows it. An empty
/// triple means the host's; `cpu` empty or "native" means the host CPU with
/// the host's features (then `features` adds to them). Fails with a message
/// for a triple LLVM has no backend for or a CPU it does not know.
/// `sveVectorBits` (0 or a power of two from 128 to 2048, with SVE) fixes
/// the SVE vector length.
llvm::Expected<CpuTarget> describeCpuTarget(llvm::StringRef triple, llvm::StringRef cpu,
                                            llvm::StringRef features,
                                            int64_t sveVectorBits = 0);

/// `target` as JSON (`pe-compile --print-target`): its fields, and the
/// schedule the cost model chooses on it (CpuSchedule.h) for a prefill
/// attention of 64 rows at head dim 128.
llvm::json::Value toJson(const CpuTarget &target);

/// The `llvm.target` attribute naming `target`.
LLVM::TargetAttr getTargetAttr(MLIRContext *context, const CpuTarget &target);

/// The name of the module attribute that holds a module's target.
inline constexpr llvm::StringLiteral kTargetAttrName = "llvm.target";
/// The module attribute (i64) with the target's fixed SVE vector length,
/// where one is set.
inline constexpr llvm::StringLiteral kSveVectorBitsAttrName = "pe.sve_vector_bits";

/// The target of the module holding `op`: its `llvm.target` attribute, else
/// the host (`describeCpuTarget("", "native", "")`). An attribute LLVM
/// cannot build a target from is an error (emitted on the module).
/// Descriptions are cached per attribute.
FailureOr<CpuTarget> getCpuTarget(Operation *op);

/// LLVM's code generation level for an optimization level 0-3 (-O0 None,
/// -O1 Less, -O2 Default, -O3 and above Aggressive), as clang maps them.
llvm::CodeGenOptLevel codeGenOptLevel(unsigned optLevel);

/// An LLVM target machine for `target` (position-independent code, the
/// given optimization level 0-3).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CpuTarget &target, unsigned optLevel = 3);

} // namespace pe
} // namespace mlir

#endif // PE_TARGET_CPUTARGET_H
