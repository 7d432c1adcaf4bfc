//===- RunMain.cpp - --emit=jit: run `main` on this machine ---------------===//
#include "Steps.h"

#include "pe/Execution/Jit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::pe::driver;

LogicalResult pe::driver::checkMain(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return fail(module.getContext(), "--emit=jit needs a function @main");
  if (main.getNumArguments() == 0 && main.getNumResults() == 0)
    return success();
  std::string type;
  llvm::raw_string_ostream os(type);
  os << main.getFunctionType();
  return fail(module.getContext(),
              "--emit=jit runs @main without arguments or results, but @main has type " + type);
}

/// Whether code for `target` runs on this machine: the host's architecture
/// and no feature the host lacks.
static LogicalResult checkRunsOnHost(MLIRContext *context, const pe::CpuTarget &target) {
  if (llvm::Triple(target.triple).getArch() !=
      llvm::Triple(llvm::sys::getProcessTriple()).getArch())
    return fail(context, "--emit=jit runs on this machine, but the target is " + target.triple);
  llvm::Expected<pe::CpuTarget> host = pe::describeCpuTarget("", "native", "");
  if (!host)
    return fail(context, llvm::toString(host.takeError()));
  auto machine = pe::createTargetMachine(target);
  auto hostMachine = pe::createTargetMachine(*host);
  if (!machine || !hostMachine) {
    llvm::consumeError(machine.takeError());
    llvm::consumeError(hostMachine.takeError());
    return fail(context, "cannot compare the target's features with the host's");
  }
  const llvm::MCSubtargetInfo &want = *(*machine)->getMCSubtargetInfo();
  const llvm::MCSubtargetInfo &have = *(*hostMachine)->getMCSubtargetInfo();
  SmallVector<StringRef> missing;
  for (const llvm::SubtargetFeatureKV &feature : want.getAllProcessorFeatures())
    if (want.getFeatureBits().test(feature.Value) && !have.getFeatureBits().test(feature.Value))
      missing.push_back(feature.Key);
  if (missing.empty())
    return success();
  return fail(context, "--emit=jit runs on this machine, which lacks features of the target: " +
                           llvm::join(missing, ", "));
}

LogicalResult pe::driver::runMain(ModuleOp module, const CompileOptions &options,
                                  const pe::CpuTarget &cpuTarget) {
  MLIRContext *context = module.getContext();
  if (failed(checkRunsOnHost(context, cpuTarget)))
    return failure();
  pe::JitOptions jit;
  jit.optLevel = options.optLevel;
  jit.threads = options.target == Target::Cpu ? int64_t(options.cpu.threads) : 1;
  jit.runnerUtils = true; // printMemrefF32 and friends
  auto engine = pe::createJitEngine(module, jit);
  if (!engine)
    return fail(context, "JIT compilation failed: " + llvm::toString(engine.takeError()));
  std::string prefix = options.exportPrefix();
  auto entry = (*engine)->lookup(prefix + "main");
  if (!entry)
    return fail(context, "running main failed: " + llvm::toString(entry.takeError()));
  int32_t status = reinterpret_cast<int32_t (*)()>(*entry)();
  if (status == 0)
    return success();
  auto lastError = (*engine)->lookup(prefix + "last_error");
  if (!lastError)
    return fail(context, "main failed with status " + Twine(status));
  auto message = reinterpret_cast<const char *(*)()>(*lastError)();
  return fail(context, "main failed (status " + Twine(status) + "): " + message);
}
