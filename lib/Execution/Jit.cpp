//===- Jit.cpp - the JIT with the pe runtime loaded -----------------------===//
#include "pe/Execution/Jit.h"

#include "pe/Target/CpuTarget.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>

using namespace mlir;

/// The folder `file` is in, dots and links resolved; empty if unknown.
static std::string realFolder(StringRef file) {
  SmallString<256> real;
  if (file.empty() || llvm::sys::fs::real_path(file, real))
    return std::string();
  return llvm::sys::path::parent_path(real).str();
}

std::string pe::runtimeDirectory() {
  void *self = reinterpret_cast<void *>(&pe::runtimeDirectory);
  // The library holding this code (a plugin, a shared build), then the
  // executable (dladdr names it as typed: a bare name, `./`, a link).
  SmallVector<std::string, 2> folders;
  Dl_info info;
  if (dladdr(self, &info) && info.dli_fname && llvm::sys::path::has_parent_path(info.dli_fname))
    folders.push_back(realFolder(info.dli_fname));
  folders.push_back(realFolder(llvm::sys::fs::getMainExecutable(nullptr, self)));
  for (const std::string &dir : folders) {
    if (dir.empty())
      continue;
    for (std::string candidate :
         {dir, (llvm::sys::path::parent_path(dir) + "/lib").str()})
      if (llvm::sys::fs::exists(candidate + "/libpe_runtime.so"))
        return candidate;
  }
  return PE_RUNTIME_INSTALL_DIR;
}

std::string pe::mlirLibraryDirectory() { return PE_MLIR_LIB_DIR; }

llvm::Expected<std::unique_ptr<ExecutionEngine>>
pe::createJitEngine(ModuleOp module, const JitOptions &options) {
  const std::string mlirLibs = mlirLibraryDirectory();
  SmallVector<std::string> paths = {runtimeDirectory() + "/libpe_runtime.so"};
  if (options.runnerUtils)
    paths.append({mlirLibs + "/libmlir_c_runner_utils.so", mlirLibs + "/libmlir_runner_utils.so"});
  if (options.threads > 1) // __kmpc_* of the OpenMP lowering
    paths.push_back(mlirLibs + "/libomp.so");
  SmallVector<StringRef> libs(paths.begin(), paths.end());
  ExecutionEngineOptions engineOptions;
  auto transformer = makeOptimizingTransformer(options.optLevel, 0, nullptr);
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = codeGenOptLevel(options.optLevel);
  engineOptions.sharedLibPaths = libs;
  return ExecutionEngine::create(module, engineOptions);
}
