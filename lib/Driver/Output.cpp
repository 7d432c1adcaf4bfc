//===- Output.cpp - what the driver writes --------------------------------===//
#include "Steps.h"

#include "LibraryInterface.h"
#include "ObjectCache.h"

#include "pe/Execution/Jit.h"
#include "pe/CInterface/Passes.h"
#include "pe/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::pe::driver;

/// Writes `path` with `write`; a failure to open it or of `write` (which
/// reports its own error) leaves no file.
static LogicalResult writeFile(MLIRContext *context, StringRef path,
                               llvm::function_ref<LogicalResult(llvm::raw_ostream &)> write) {
  std::string error;
  auto output = openOutputFile(path, &error);
  if (!output)
    return fail(context, error);
  if (failed(write(output->os())))
    return failure();
  output->keep();
  return success();
}

LogicalResult pe::driver::writeMlir(ModuleOp module, const CompileOptions &options) {
  return writeFile(module.getContext(), options.output,
                   [&](llvm::raw_ostream &os) {
                     module->print(os);
                     return success();
                   });
}

LogicalResult pe::driver::writeGpuKernels(ModuleOp module, const CompileOptions &options) {
  auto kernels = module.lookupSymbol<gpu::BinaryOp>("pe_kernels");
  if (!kernels)
    return fail(module.getContext(), "the module has no GPU kernels (every op folded away?)");
  auto object = cast<gpu::ObjectAttr>(kernels.getObjects()[0]);
  return writeFile(module.getContext(), options.output, [&](llvm::raw_ostream &os) {
    os << object.getObject().getValue();
    return success();
  });
}

LogicalResult pe::driver::exportEntries(ModuleOp module, const CompileOptions &options) {
  MLIRContext *context = module.getContext();
  std::string prefix = options.exportPrefix();
  PassManager pm(context);
  pm.addPass(pe::createPEExportCInterface(pe::PEExportCInterfaceOptions{prefix}));
  if (failed(pm.run(module)))
    return failure();
  if (!options.header.empty()) {
    std::string guard =
        cIdentifier(llvm::sys::path::stem(options.header).upper() + "_H", "PE_");
    bool deviceBuffers =
        options.target == Target::Gpu && options.gpuMemory == GpuMemory::Device;
    if (failed(writeFile(context, options.header, [&](llvm::raw_ostream &os) {
          return pe::emitCHeader(module, prefix, guard, os, deviceBuffers);
        })))
      return failure();
  }
  if (options.interface.empty())
    return success();
  return writeFile(context, options.interface, [&](llvm::raw_ostream &os) {
    return pe::emitInterfaceJson(module, prefix, os);
  });
}

/// Assembly or an object of `module` for `machine`, in memory (an object
/// writer seeks, which a pipe cannot).
static FailureOr<SmallVector<char, 0>> emitMachineCode(MLIRContext *context,
                                                       llvm::Module &module,
                                                       llvm::TargetMachine &machine,
                                                       llvm::CodeGenFileType type) {
  SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, type))
    return fail(context, "the target cannot emit this file type");
  passes.run(module);
  return buffer;
}

/// Runs LLVM's optimization pipeline of `optLevel` on `module`.
static LogicalResult optimize(MLIRContext *context, llvm::Module &module,
                              llvm::TargetMachine &machine, unsigned optLevel) {
  if (llvm::Error err = makeOptimizingTransformer(optLevel, 0, &machine)(&module))
    return fail(context, "LLVM optimization failed: " + llvm::toString(std::move(err)));
  return success();
}

/// The object of `module` (not yet optimized) for `machine`: the one in
/// `options.objectCache` when that folder holds it, else optimized, compiled
/// and stored there. A cache that cannot be written costs a warning only.
static FailureOr<SmallVector<char, 0>> objectOf(MLIRContext *context, llvm::Module &module,
                                                llvm::TargetMachine &machine,
                                                const CompileOptions &options) {
  std::optional<ObjectCache> cache;
  if (!options.objectCache.empty()) {
    cache.emplace(options.objectCache, module, machine, options.optLevel);
    if (std::unique_ptr<llvm::MemoryBuffer> cached = cache->lookup())
      return SmallVector<char, 0>(cached->getBuffer().begin(), cached->getBuffer().end());
  }
  if (failed(optimize(context, module, machine, options.optLevel)))
    return failure();
  FailureOr<SmallVector<char, 0>> object =
      emitMachineCode(context, module, machine, llvm::CodeGenFileType::ObjectFile);
  if (succeeded(object) && cache)
    if (llvm::Error err = cache->store(StringRef(object->data(), object->size())))
      emitWarning(UnknownLoc::get(context))
          << "the object is not cached: " << llvm::toString(std::move(err));
  return object;
}

/// Writes `bytes` to `path`.
static LogicalResult writeBytes(MLIRContext *context, StringRef path, ArrayRef<char> bytes) {
  return writeFile(context, path, [&](llvm::raw_ostream &os) {
    os << StringRef(bytes.data(), bytes.size());
    return success();
  });
}

/// Debian's name of the cross toolchain and runtime folder of `triple`
/// (`aarch64-linux-gnu`).
static std::string multiarchName(const llvm::Triple &triple) {
  return (triple.getArchName() + "-linux-gnu").str();
}

/// Whether `triple` is another architecture than this machine's.
static bool isCross(const llvm::Triple &triple) {
  return triple.getArch() != llvm::Triple(llvm::sys::getProcessTriple()).getArch();
}

/// The compiler driver that links for `triple`: --linker, else clang-22,
/// clang or cc for this machine, and for another architecture Debian's
/// cross gcc (`aarch64-linux-gnu-gcc`) or clang-22 --target=TRIPLE.
static FailureOr<SmallVector<std::string>> linkDriver(MLIRContext *context,
                                                      const llvm::Triple &triple,
                                                      StringRef linker) {
  auto find = [](StringRef name) -> std::string {
    auto found = llvm::sys::findProgramByName(name);
    return found ? *found : std::string();
  };
  if (!linker.empty()) {
    std::string driver = find(linker);
    if (driver.empty() && llvm::sys::fs::can_execute(linker))
      driver = linker.str();
    if (!driver.empty())
      return SmallVector<std::string>{driver};
    return fail(context, "--linker '" + linker + "' is not an executable");
  }
  if (!isCross(triple)) {
    for (StringRef candidate : {"clang-22", "clang", "cc"})
      if (std::string driver = find(candidate); !driver.empty())
        return SmallVector<std::string>{driver};
    return fail(context,
                "no compiler driver to link with (looked for clang-22, clang, cc; set --linker)");
  }
  std::string gcc = multiarchName(triple) + "-gcc";
  if (std::string driver = find(gcc); !driver.empty())
    return SmallVector<std::string>{driver};
  if (std::string driver = find("clang-22"); !driver.empty())
    return SmallVector<std::string>{driver, "--target=" + triple.str()};
  return fail(context, "no compiler driver links for " + triple.str() + " (looked for " + gcc +
                           " and clang-22; Debian: apt-get install gcc-" +
                           multiarchName(triple) + "; or set --linker)");
}

/// The folder of the pe runtimes for `triple`: another architecture's live
/// in a folder named for it.
static FailureOr<std::string> runtimeDirectoryFor(MLIRContext *context,
                                                  const llvm::Triple &triple,
                                                  const CompileOptions &options) {
  std::string dir = pe::runtimeDirectory();
  if (!isCross(triple))
    return dir;
  dir += "/" + multiarchName(triple);
  if (!llvm::sys::fs::exists(dir + "/libpe_runtime.so"))
    return fail(context, "no pe runtime for " + triple.str() + " in " + dir +
                             " (pe-mlir builds it where the cross compiler " +
                             multiarchName(triple) +
                             "-gcc was found when it was configured)");
  if (options.cpu.threads > 1)
    return fail(context, "--num-threads > 1 links libomp, which this machine has for "
                         "itself only: cross-compiled libraries are single-threaded");
  return dir;
}

/// Links `object` into a shared library for `cpuTarget` next to the pe
/// runtime (and the CUDA launch runtime for GPU host code).
static LogicalResult linkShared(MLIRContext *context, StringRef object,
                                const CompileOptions &options,
                                const pe::CpuTarget &cpuTarget) {
  llvm::Triple triple(cpuTarget.triple);
  FailureOr<SmallVector<std::string>> driver = linkDriver(context, triple, options.linker);
  FailureOr<std::string> runtimeDir = runtimeDirectoryFor(context, triple, options);
  if (failed(driver) || failed(runtimeDir))
    return failure();
  const bool openmp = options.target == Target::Cpu && options.cpu.threads > 1;
  // Libraries the code does not call are dropped (--as-needed); the
  // runtimes are found next to the library first ($ORIGIN), so that a
  // library and the runtimes copied into one folder travel together.
  SmallVector<std::string> args = *driver;
  args.append({"-shared", "-Wl,--as-needed", "-o", options.output, object.str(),
               "-Wl,-rpath,$ORIGIN", "-lm"});
  if (options.staticRuntime)
    args.push_back(*runtimeDir + "/libpe_runtime.a");
  else
    args.append({"-L" + *runtimeDir, "-lpe_runtime", "-Wl,-rpath," + *runtimeDir});
  const std::string mlirLibs = pe::mlirLibraryDirectory();
  if (openmp) // __kmpc_* of the OpenMP lowering
    args.append({"-L" + mlirLibs, "-Wl,-rpath," + mlirLibs, "-lomp"});
  if (options.target == Target::Gpu) // mgpu* of the gpu-to-llvm lowering
    args.append({"-L" + *runtimeDir, "-lpe_cuda_runtime", "-Wl,-rpath," + *runtimeDir});
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string error;
  int status =
      llvm::sys::ExecuteAndWait(args.front(), argRefs, std::nullopt, {}, 0, 0, &error);
  if (status != 0)
    return fail(context, "linking with '" + args.front() + "' failed" +
                             (error.empty() ? "" : ": " + error));
  return success();
}

/// `object` in a temporary file, linked into the output.
static LogicalResult writeShared(MLIRContext *context, ArrayRef<char> object,
                                 const CompileOptions &options,
                                 const pe::CpuTarget &cpuTarget) {
  SmallString<128> path;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("pe-compile", "o", path))
    return fail(context, "cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeObject(path);
  if (failed(writeBytes(context, path, object)))
    return failure();
  return linkShared(context, path, options, cpuTarget);
}

LogicalResult pe::driver::emitHostCode(ModuleOp module, const CompileOptions &options,
                                       const pe::CpuTarget &cpuTarget) {
  MLIRContext *context = module.getContext();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return fail(context, "translation to LLVM IR failed");
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      pe::createTargetMachine(cpuTarget, options.optLevel);
  if (!machine)
    return fail(context, llvm::toString(machine.takeError()));
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());

  switch (options.emitKind()) {
  case Emit::Llvm:
    if (failed(optimize(context, *llvmModule, **machine, options.optLevel)))
      return failure();
    return writeFile(context, options.output, [&](llvm::raw_ostream &os) {
      llvmModule->print(os, nullptr);
      return success();
    });
  case Emit::Asm: {
    if (failed(optimize(context, *llvmModule, **machine, options.optLevel)))
      return failure();
    FailureOr<SmallVector<char, 0>> assembly = emitMachineCode(
        context, *llvmModule, **machine, llvm::CodeGenFileType::AssemblyFile);
    return failure(failed(assembly) || failed(writeBytes(context, options.output, *assembly)));
  }
  case Emit::Obj: {
    FailureOr<SmallVector<char, 0>> object = objectOf(context, *llvmModule, **machine, options);
    return failure(failed(object) || failed(writeBytes(context, options.output, *object)));
  }
  case Emit::Shared: {
    FailureOr<SmallVector<char, 0>> object = objectOf(context, *llvmModule, **machine, options);
    return failure(failed(object) || failed(writeShared(context, *object, options, cpuTarget)));
  }
  default: // the LLVM dialect, the run and the kernel binaries are not host code
    return success();
  }
}
