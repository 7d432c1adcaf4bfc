//===- Jit.h - the JIT with the pe runtime loaded ----------------*- C++ -*-===//
//
// One place that knows where the pe runtime lives and how a module in the
// LLVM dialect is JIT-compiled: pe-compile --emit=jit, the differential check
// of the raising and the fuzzer all run code through it.
//
//===----------------------------------------------------------------------===//
#ifndef PE_EXECUTION_JIT_H
#define PE_EXECUTION_JIT_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mlir::pe {

/// The folder of libpe_runtime.so: the folder of the library or executable
/// that holds this code, or `../lib` from it (the build tree's and an
/// install's layout, wherever it was moved), else the install prefix the
/// project was configured with.
std::string runtimeDirectory();

/// The folder of MLIR's own shared libraries (libomp, the runner utilities).
std::string mlirLibraryDirectory();

struct JitOptions {
  /// LLVM optimization level of the JIT-compiled code: its IR passes and
  /// its code generation (0-3).
  unsigned optLevel = 2;
  /// Threads the code was lowered for: more than one loads libomp.
  int64_t threads = 1;
  /// Also load MLIR's runner utilities (printMemrefF32, ...).
  bool runnerUtils = false;
};

/// `module`, in the LLVM dialect, JIT-compiled for this machine with the pe
/// runtime (and what `options` asks for) loaded. The native target must be
/// initialized.
llvm::Expected<std::unique_ptr<ExecutionEngine>>
createJitEngine(ModuleOp module, const JitOptions &options);

} // namespace mlir::pe

#endif // PE_EXECUTION_JIT_H
