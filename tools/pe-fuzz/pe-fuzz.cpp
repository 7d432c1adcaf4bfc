//===- pe-fuzz.cpp - libFuzzer target for pe IR ---------------------------===//
//
// Two kinds of input:
//   - text: parsed as IR, verified, and on what verifies the pe passes and
//     the CPU pipeline run;
//   - a first byte of 0xFF: the rest decodes to a valid pe program
//     (ProgramGenerator.h), which runs through the same passes and pipelines
//     (kernels or reference lowering, 1 or 2 threads, ...) and, with
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
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

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

/// The pe passes on `module`, in the configuration the low bits of `hash`
/// pick; one input in 16 (other bits) also runs the whole CPU pipeline down
/// to the LLVM dialect (the upstream passes after the pe lowerings cost far
/// more than the pe code the fuzzer explores).
void compileEveryWay(ModuleOp module, uint32_t hash) {
  const uint32_t variant = hash & 0xFF;
  const int64_t threads = 1 + variant % 2;
  const bool amx = variant & 2, smallTiles = variant & 4, kernels = !(variant & 8);
  const bool bf16Dot = variant & 32;
  runOnCopy(module, [&](OpPassManager &pm) {
    pm.addPass(createCanonicalizerPass());
    pe::PESpecializeRopeScalingOptions specialize;
    specialize.maxSeqLen = variant & 16 ? 4096 : int64_t(1) << 40;
    pm.addPass(pe::createPESpecializeRopeScaling(specialize));
    pm.addPass(pe::createPEFuseAlibiIntoAttention());
    pm.addPass(pe::createPEFuseRopeIntoAttention());
    pm.addPass(pe::createPEShareRopeTables());
    pm.addPass(createCanonicalizerPass());
    if (kernels) {
      pe::PETileAttentionOptions tiles;
      tiles.threads = threads;
      tiles.rows = smallTiles ? 16 : 64;
      tiles.blockKeys = smallTiles ? 48 : 96;
      tiles.amx = amx;
      tiles.bf16Dot = bf16Dot;
      pm.addPass(pe::createPETileAttention(tiles));
      pm.addPass(pe::createPETileRope(pe::PETileRopeOptions{threads}));
      pm.addPass(pe::createPETileAppendKv());
    }
    pm.addPass(pe::createPELowerToLinalg());
    pm.addPass(createCanonicalizerPass());
  });
  // Raising, on the input and on pe's own lowering of it (linalg IR the
  // proofs must accept or leave alone, never break).
  runOnCopy(module, [&](OpPassManager &pm) {
    pm.addPass(pe::createPERaisePositionalEncodings());
    pm.addPass(pe::createPELowerToLinalg());
    pm.addPass(pe::createPERaisePositionalEncodings());
  });
  if ((hash >> 8) % 16 != 0)
    return;
  pe::CpuPipelineOptions options;
  options.threads = threads;
  options.amx = amx;
  options.bf16Dot = bf16Dot;
  options.fuse = options.tileAttention = options.tileRope = kernels;
  if (smallTiles) {
    options.attentionRows = 16;
    options.attentionBlockKeys = 48;
  }
  runOnCopy(module, [&](OpPassManager &pm) { pe::buildCpuPipeline(pm, options); });
}

/// A hash of the input that picks the configuration.
uint32_t hashOf(const uint8_t *data, size_t size) {
  uint32_t hash = 2166136261u; // FNV-1a
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ data[i]) * 16777619u;
  return hash;
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
  if (!pe::fuzz::checkOptLevelVariable())
    std::exit(1);
  pe::registerAllPasses();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  return 0;
}

/// Whether `text` has a `permutation = [` list with anything but integers in
/// it: upstream MLIR 22's linalg.transpose parser then reads a null
/// attribute (a crash in libMLIR found by this fuzzer, not in pe code).
static bool hasMalformedPermutation(llvm::StringRef text) {
  constexpr llvm::StringLiteral kPermutation = "permutation = [";
  for (size_t at = text.find(kPermutation); at != llvm::StringRef::npos;
       at = text.find(kPermutation, at + 1)) {
    llvm::StringRef list = text.drop_front(at + kPermutation.size());
    list = list.take_until([](char c) { return c == ']'; });
    if (list.find_first_not_of("0123456789, -") != llvm::StringRef::npos)
      return true;
  }
  return false;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // One context for a batch of inputs: loading the dialects costs more than
  // the pe code on a small program; a fresh one now and then keeps uniqued
  // attributes from accumulating.
  static std::unique_ptr<MLIRContext> shared;
  static int64_t inputs = 0;
  if (!shared || ++inputs % 1000 == 0) {
    shared = std::make_unique<MLIRContext>(registry(), MLIRContext::Threading::DISABLED);
    shared->getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  }
  MLIRContext &context = *shared;
  const bool generated = size > 1 && data[0] == kGeneratedProgram;
  pe::fuzz::Program program;
  std::string text;
  if (generated) {
    program = pe::fuzz::generateProgram(data + 1, size - 1);
    text = program.ir;
  } else {
    text.assign(reinterpret_cast<const char *>(data), size);
  }
  if (!generated && hasMalformedPermutation(text))
    return 0;
  // PE_FUZZ_PRINT=1 shows the program of a reproducer.
  static const bool print = std::getenv("PE_FUZZ_PRINT") != nullptr;
  if (print)
    llvm::errs() << text << "\n";
  // The lexer relies on the buffer's terminating NUL, as every file-backed
  // MemoryBuffer has: copy the bytes into one.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "input"),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(verify(*module)))
    return 0;
  uint32_t hash = hashOf(data, size);
  compileEveryWay(*module, hash);
  if (generated && executeEnabled())
    pe::fuzz::checkDifferential(program, *module, hash, 1 + (hash >> 12) % 2);
  return 0;
}
