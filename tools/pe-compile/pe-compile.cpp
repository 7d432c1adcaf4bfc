//===- pe-compile.cpp - ahead-of-time compiler for pe IR ------------------===//
//
// The command line of the compiler driver (lib/Driver), in the spirit of
// Toy's `-emit=`: reads pe IR (or a model's config.json) and writes it
// lowered to the LLVM dialect, LLVM IR, assembly, an object or a shared
// library with its C header and interface description; with --target=gpu
// the kernels as PTX, cubin or fatbin with their manifest, or the host
// library that launches them; with --emit=jit it runs `main`. `pe-compile
// --help` lists the options; docs/compiling.md and docs/gpu.md describe them.
//
//===----------------------------------------------------------------------===//
#include "pe/Driver/CommandLine.h"
#include "pe/Driver/Driver.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace driver = mlir::pe::driver;

static int fail(const llvm::Twine &message) {
  llvm::errs() << "pe-compile: error: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  driver::initializeLLVMTargets();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  driver::CompileOptions &options = driver::registerCompileCLOptions();
  driver::hideUnrelatedCLOptions();
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "pe-mlir version " PE_VERSION "\n"; });
  llvm::cl::ParseCommandLineOptions(argc, argv, "pe-mlir ahead-of-time compiler\n");
  if (driver::givenLLVMOptions())
    options.objectCache.clear();
  if (options.printTarget) {
    llvm::Error error = driver::printCpuTarget(options, llvm::outs());
    return error ? fail(llvm::toString(std::move(error))) : 0;
  }
  options.passManagerSetup = applyPassManagerCLOptions;
  if (llvm::Error error = driver::checkOptions(options))
    return fail(llvm::toString(std::move(error)));

  DialectRegistry registry;
  driver::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // The driver's own errors have no place in the IR (and no notes; an error
  // with notes goes to the source manager's handler, which prints them).
  ScopedDiagnosticHandler driverErrors(&context, [](Diagnostic &diagnostic) {
    if (!isa<UnknownLoc>(diagnostic.getLocation()) ||
        diagnostic.getSeverity() != DiagnosticSeverity::Error ||
        !diagnostic.getNotes().empty())
      return failure();
    fail(diagnostic.str());
    return success();
  });
  bool written = false;
  OwningOpRef<ModuleOp> module = driver::loadInput(context, sourceMgr, options, written);
  if (written)
    return 0;
  return module && succeeded(driver::compile(*module, options)) ? 0 : 1;
}
