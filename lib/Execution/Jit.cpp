//===- Jit.cpp - the JIT with the pe runtime loaded -----------------------===//
#include "pe/Execution/Jit.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>

using namespace mlir;

std::string pe::runtimeDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&pe::runtimeDirectory), &info) && info.dli_fname) {
    SmallString<256> self(info.dli_fname);
    if (!llvm::sys::path::has_parent_path(self)) // an executable found on PATH
      self = llvm::sys::fs::getMainExecutable(
          nullptr, reinterpret_cast<void *>(&pe::runtimeDirectory));
    llvm::sys::fs::make_absolute(self);
    StringRef dir = llvm::sys::path::parent_path(self);
    for (std::string candidate :
         {dir.str(), (llvm::sys::path::parent_path(dir) + "/lib").str()})
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
  engineOptions.sharedLibPaths = libs;
  return ExecutionEngine::create(module, engineOptions);
}
