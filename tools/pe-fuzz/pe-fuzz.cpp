//===- pe-fuzz.cpp - libFuzzer target for pe IR ---------------------------===//
//
// Two kinds of input:
//   - text: parsed as IR, verified, and on what verifies the pe passes and
//     the CPU pipeline run;
//   - a first byte of 0xFF: the rest decodes to a valid pe program
//     (ProgramGenerator.h), which runs through the same passes and pipelines
//     (kernels and reference lowering, 1 and 2 threads) and, with
//     PE_FUZZ_EXECUTE=1, is JIT-compiled and run both ways on generated
//     inputs, the results compared (Differential.h).
// Any crash, sanitizer report, hang or difference is a bug: bad input must
// end in a diagnostic.
//
//===----------------------------------------------------------------------===//
#include "Differential.h"
#include "ProgramGenerator.h"

#include "pe/InitPE.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir;

namespace {

/// The first byte of a generated-program input.
constexpr uint8_t kGeneratedProgram = 0xFF;

DialectRegistry &registry() {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    registerAllDialects(*r);
    registerAllExtensions(*r);
    registerAllToLLVMIRTranslations(*r);
    pe::registerAllDialects(*r);
    return r;
  }();
  return *registry;
}

/// Runs the pipeline that `build` adds on a copy of `module`; failure is a
/// diagnostic, not a bug.
void runOnCopy(ModuleOp module, function_ref<void(OpPassManager &)> build) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  PassManager pm(module.getContext());
  build(pm);
  (void)pm.run(*copy);
}

/// The pe passes and every pipeline configuration on `module`.
void compileEveryWay(ModuleOp module, uint8_t variant) {
  runOnCopy(module, [](OpPassManager &pm) {
    pm.addPass(createCanonicalizerPass());
    pe::PESpecializeRopeScalingOptions options;
    options.maxSeqLen = 4096;
    pm.addPass(pe::createPESpecializeRopeScaling(options));
    pm.addPass(createCanonicalizerPass());
  });
  pe::CpuPipelineOptions options;
  options.threads = 1 + variant % 2;
  options.amx = variant & 2;
  if (variant & 4) {
    options.attentionRows = 16;
    options.attentionBlockKeys = 48;
  }
  runOnCopy(module, [&](OpPassManager &pm) { pe::buildCpuPipeline(pm, options); });
  pe::CpuPipelineOptions reference;
  reference.fuse = reference.tileAttention = reference.tileRope = false;
  runOnCopy(module, [&](OpPassManager &pm) { pe::buildCpuPipeline(pm, reference); });
}

bool executeEnabled() {
  static bool enabled = [] {
    const char *value = std::getenv("PE_FUZZ_EXECUTE");
    return value && value[0] == '1';
  }();
  return enabled;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  pe::registerAllPasses();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input keeps uniqued attributes from accumulating.
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  const bool generated = size > 1 && data[0] == kGeneratedProgram;
  pe::fuzz::Program program;
  std::string text;
  if (generated) {
    program = pe::fuzz::generateProgram(data + 1, size - 1);
    text = program.ir;
  } else {
    text.assign(reinterpret_cast<const char *>(data), size);
  }
  // The lexer relies on the buffer's terminating NUL, as every file-backed
  // MemoryBuffer has: copy the bytes into one.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "input"),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(verify(*module)))
    return 0;
  uint8_t variant = generated ? data[size - 1] : 0;
  compileEveryWay(*module, variant);
  if (generated && executeEnabled())
    pe::fuzz::checkDifferential(program, *module, variant * 0x9E3779B97F4A7C15ull + size,
                                1 + variant % 2);
  return 0;
}
