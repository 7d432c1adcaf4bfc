//===- pe-fuzz.cpp - libFuzzer target for pe IR ---------------------------===//
//
// Parses arbitrary bytes as IR, verifies it, and runs the pe passes and the
// CPU pipeline on what verifies. Any crash, sanitizer report or hang is a
// bug: bad input must end in a diagnostic.
//
//===----------------------------------------------------------------------===//
#include "pe/InitPE.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir;

static DialectRegistry &registry() {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerAllDialects(*r);
    registerAllExtensions(*r);
    pe::registerAllDialects(*r);
    return r;
  }();
  return *registry;
}

/// Runs `pipeline` on a copy of `module`; failure is a diagnostic, not a bug.
static void runOnCopy(ModuleOp module, MLIRContext &context,
                      void (*build)(OpPassManager &)) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  PassManager pm(&context);
  build(pm);
  (void)pm.run(*copy);
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  pe::registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input keeps uniqued attributes from accumulating.
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  // The lexer relies on the buffer's terminating NUL, as every file-backed
  // MemoryBuffer has: copy the bytes into one.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          StringRef(reinterpret_cast<const char *>(data), size), "input"),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(verify(*module)))
    return 0;

  // The pe passes and folds.
  runOnCopy(*module, context, [](OpPassManager &pm) {
    pm.addPass(createCanonicalizerPass());
    pe::PESpecializeRopeScalingOptions options;
    options.maxSeqLen = 4096;
    pm.addPass(pe::createPESpecializeRopeScaling(options));
    pm.addPass(createCanonicalizerPass());
  });
  // The whole CPU pipeline, down to the LLVM dialect.
  runOnCopy(*module, context, [](OpPassManager &pm) {
    pe::buildCpuPipeline(pm, pe::CpuPipelineOptions());
  });
  return 0;
}
