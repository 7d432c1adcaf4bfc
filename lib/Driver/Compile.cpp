//===- Compile.cpp - the driver's compilation for the CPU -----------------===//
#include "pe/Driver/Driver.h"

#include "Steps.h"

#include "pe/Conversion/Passes.h"
#include "pe/InitPE.h"
#include "pe/Pipelines/Pipelines.h"
#include "pe/Target/CpuSchedule.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;
using namespace mlir::pe::driver;

void pe::driver::initializeLLVMTargets() {
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  llvm::InitializeAllAsmPrinters();
}

void pe::driver::registerCompilerDialects(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  pe::registerAllDialects(registry);
}

llvm::Error pe::driver::printCpuTarget(const CompileOptions &options, llvm::raw_ostream &os) {
  llvm::Expected<pe::CpuTarget> described = pe::describeCpuTarget(
      options.mtriple, options.mcpu, options.mattr, options.sveVectorBits);
  if (!described)
    return described.takeError();
  os << llvm::formatv("{0:2}", pe::toJson(*described)) << "\n";
  return llvm::Error::success();
}

LogicalResult pe::driver::fail(MLIRContext *context, const Twine &message) {
  return emitError(UnknownLoc::get(context)) << message;
}

FailureOr<pe::CpuTarget> pe::driver::describeTarget(MLIRContext *context,
                                                   const CompileOptions &options,
                                                   StringRef extraFeatures) {
  std::string features = options.mattr;
  if (!extraFeatures.empty())
    features = features.empty() ? extraFeatures.str() : features + "," + extraFeatures.str();
  llvm::Expected<pe::CpuTarget> target =
      pe::describeCpuTarget(options.mtriple, options.mcpu, features, options.sveVectorBits);
  if (!target)
    return fail(context, llvm::toString(target.takeError()));
  return *target;
}

LogicalResult pe::driver::configure(PassManager &pm, const CompileOptions &options,
                                    bool always) {
  // NVVM's verifier refuses an instruction the chip lacks before LLVM's
  // NVPTX backend would abort on it: the GPU pipelines always verify.
  pm.enableVerifier(options.verifyEach || always);
  return options.passManagerSetup ? options.passManagerSetup(pm) : success();
}

LogicalResult pe::driver::runPasses(PassManager &pm, ModuleOp module,
                                    const CompileOptions &options) {
  if (failed(pm.run(module)))
    return failure();
  // A pass that produced invalid IR is reported here rather than crashing
  // the translation.
  return options.verifyEach ? success() : verify(module);
}

/// The CPU the module is scheduled and compiled for (llvm.target), with
/// the instructions of the bf16 kernels chosen on it (`amx`, `bf16Dot`):
/// kernels asked for with --amx=on or --bf16-dot=on compile for their
/// instructions whatever the CPU is.
static FailureOr<pe::CpuTarget> chooseCpuTarget(MLIRContext *context,
                                               const CompileOptions &options, bool &amx,
                                               bool &bf16Dot) {
  FailureOr<pe::CpuTarget> cpuTarget = describeTarget(context, options);
  if (failed(cpuTarget))
    return failure();
  // The GPU schedule on the CPU runs neither bf16 kernel.
  if (options.target == Target::GpuOnCpu)
    return cpuTarget;
  const bool x86 = cpuTarget->isa == pe::CpuIsa::X86;
  // bf16 dot products: vdpbf16ps (x86), BFDOT on NEON's 4-lane vectors.
  const bool dotIsa =
      x86 || (cpuTarget->isa == pe::CpuIsa::AArch64 && cpuTarget->sveVectorBits == 0);
  if (options.amx == Choice::On && !x86)
    return fail(context, "--amx=on is an x86 kernel, but the target is " + cpuTarget->triple);
  if (options.bf16Dot == Choice::On && !dotIsa)
    return fail(context, "--bf16-dot=on computes with vdpbf16ps (x86) or BFDOT (AArch64 "
                         "NEON), but the target is " +
                             cpuTarget->summary());
  // Both x86 kernels compute beside 16-lane f32 vectors: an AVX2 target
  // would silently take the FMA kernel instead.
  if (x86 && cpuTarget->f32Lanes() != 16) {
    if (options.amx == Choice::On)
      return fail(context, "--amx=on: the AMX kernel works beside 512-bit vectors (AVX-512), "
                           "but the target is " +
                               cpuTarget->summary() + "; name such a CPU (e.g. " +
                               "--mcpu=sapphirerapids)");
    if (options.bf16Dot == Choice::On)
      return fail(context, "--bf16-dot=on: the kernel's vdpbf16ps works on 512-bit vectors "
                           "(AVX-512), but the target is " +
                               cpuTarget->summary() + "; name such a CPU (e.g. " +
                               "--mcpu=znver4)");
  }
  // Auto: AMX tiles wherever the target has them (the fastest bf16 prefill
  // on every such CPU); dot products where they beat f32 FMAs on it.
  amx = options.amx == Choice::On || (options.amx == Choice::Auto && cpuTarget->amx);
  bf16Dot = options.bf16Dot == Choice::On ||
            (options.bf16Dot == Choice::Auto && dotIsa && pe::preferBf16Dot(*cpuTarget));
  if ((amx && !cpuTarget->amx) || (bf16Dot && !cpuTarget->bf16Dot))
    return describeTarget(context, options,
                          amx   ? "+amx-tile,+amx-bf16"
                          : x86 ? "+avx512bf16"
                                : "+bf16");
  return cpuTarget;
}

/// The pipeline of --target=cpu or gpu-on-cpu: the options' own, with the
/// bf16 kernels chosen for the target.
static void buildPipeline(PassManager &pm, const CompileOptions &options, bool amx,
                          bool bf16Dot) {
  if (options.target == Target::GpuOnCpu) {
    pe::buildGpuOnCpuPipeline(pm, options.gpu);
    return;
  }
  pe::CpuPipelineOptions cpu;
  cpu.copyOptionValuesFrom(options.cpu);
  cpu.amx = amx;
  cpu.bf16Dot = bf16Dot;
  pe::buildCpuPipeline(pm, cpu);
}

/// --target=cpu or gpu-on-cpu: the pipeline, then the output (or the run of
/// `main`).
static LogicalResult compileForCpu(ModuleOp module, const CompileOptions &options) {
  MLIRContext *context = module.getContext();
  bool amx = false, bf16Dot = false;
  FailureOr<pe::CpuTarget> cpuTarget = chooseCpuTarget(context, options, amx, bf16Dot);
  if (failed(cpuTarget))
    return failure();
  module->setAttr(pe::kTargetAttrName, pe::getTargetAttr(context, *cpuTarget));
  if (options.sveVectorBits)
    module->setAttr(pe::kSveVectorBitsAttrName,
                    IntegerAttr::get(IntegerType::get(context, 64), options.sveVectorBits));

  PassManager pm(context);
  if (failed(configure(pm, options)))
    return failure();
  buildPipeline(pm, options, amx, bf16Dot);
  if (failed(runPasses(pm, module, options)) || failed(exportEntries(module, options)))
    return failure();
  switch (options.emitKind()) {
  case Emit::Mlir:
    return writeMlir(module, options);
  case Emit::Jit:
    return runMain(module, options, *cpuTarget);
  default:
    return emitHostCode(module, options, *cpuTarget);
  }
}

/// pe-raise-positional-encodings before everything else.
static LogicalResult raisePositionalEncodings(ModuleOp module, const CompileOptions &options) {
  PassManager raising(module.getContext());
  if (failed(configure(raising, options)))
    return failure();
  raising.addPass(pe::createPERaisePositionalEncodings());
  return runPasses(raising, module, options);
}

LogicalResult pe::driver::compile(ModuleOp module, const CompileOptions &options) {
  if (llvm::Error invalid = checkOptions(options))
    return fail(module.getContext(), llvm::toString(std::move(invalid)));
  if (options.raise && failed(raisePositionalEncodings(module, options)))
    return failure();
  switch (options.emitKind()) {
  case Emit::Pe:
    return writeMlir(module, options);
  case Emit::Jit:
    if (failed(checkMain(module)))
      return failure();
    break;
  default:
    break;
  }
  return options.target == Target::Gpu ? compileForGpu(module, options)
                                       : compileForCpu(module, options);
}
