//===- CpuTarget.cpp - what a CPU offers the kernels ----------------------===//
//
// Everything here is asked of LLVM: the subtarget's features (the ones the
// CPU name implies, plus and minus the explicit ones) and the target
// transform info's vector registers, for a probe function with the target's
// CPU and features. Only the host's cache sizes come from the operating
// system (sysfs), as LLVM knows them for few CPUs.
//
//===----------------------------------------------------------------------===//
#include "pe/Target/CpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Transforms/TargetUtils.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <mutex>

using namespace mlir;
using namespace mlir::pe;

namespace {

/// The host's features as `+a,-b,...` (sorted, so equal hosts give equal
/// strings).
std::string hostFeatures() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  SmallVector<std::string> list;
  for (const auto &feature : features)
    list.push_back((feature.second ? "+" : "-") + feature.first().str());
  llvm::sort(list);
  return llvm::join(list, ",");
}

/// `extra` appended to the feature list `base`.
std::string joinFeatures(StringRef base, StringRef extra) {
  if (base.empty())
    return extra.str();
  if (extra.empty())
    return base.str();
  return (base + "," + extra).str();
}

/// Size in bytes of the host's data (or unified) cache of `level`, from
/// /sys/devices/system/cpu/cpu0/cache (0 where it does not say).
int64_t hostCacheBytes(int level) {
  for (int index = 0; index < 8; ++index) {
    std::string dir = llvm::formatv("/sys/devices/system/cpu/cpu0/cache/index{0}/", index);
    auto read = [&](StringRef name) -> std::string {
      auto buffer = llvm::MemoryBuffer::getFileAsStream(dir + name.str());
      return buffer ? (*buffer)->getBuffer().trim().str() : std::string();
    };
    std::string levelText = read("level");
    if (levelText.empty())
      break;
    if (levelText != std::to_string(level) || read("type") == "Instruction")
      continue;
    std::string sizeText = read("size");
    StringRef size(sizeText);
    int64_t scale = 1;
    if (size.consume_back("K"))
      scale = 1024;
    else if (size.consume_back("M"))
      scale = 1024 * 1024;
    int64_t value = 0;
    if (!size.getAsInteger(10, value))
      return value * scale;
  }
  return 0;
}

/// The vector registers LLVM's cost model reports for `machine`, asked for
/// a probe function that prefers the widest vectors (LLVM prefers 256 bits
/// on some AVX-512 CPUs for auto-vectorized loops; the hand-scheduled
/// kernels use the ISA's full width).
void queryVectorRegisters(llvm::TargetMachine &machine, CpuTarget &target) {
  llvm::LLVMContext context;
  llvm::Module module("pe-target-probe", context);
  module.setTargetTriple(machine.getTargetTriple());
  module.setDataLayout(machine.createDataLayout());
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
      llvm::GlobalValue::ExternalLinkage, "probe", module);
  fn->addFnAttr("target-cpu", machine.getTargetCPU());
  fn->addFnAttr("target-features", machine.getTargetFeatureString());
  fn->addFnAttr("prefer-vector-width", "512");
  if (target.sveVectorBits)
    fn->addFnAttr(llvm::Attribute::getWithVScaleRangeArgs(
        context, target.sveVectorBits / 128, target.sveVectorBits / 128));
  llvm::TargetTransformInfo tti = machine.getTargetTransformInfo(*fn);
  target.vectorRegisters = tti.getNumberOfRegisters(tti.getRegisterClassForType(true));
  target.vectorBits = tti.getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
                          .getFixedValue();
  if (target.l1dBytes == 0)
    target.l1dBytes = tti.getCacheSize(llvm::TargetTransformInfo::CacheLevel::L1D).value_or(0);
  if (target.l2Bytes == 0)
    target.l2Bytes = tti.getCacheSize(llvm::TargetTransformInfo::CacheLevel::L2D).value_or(0);
}

/// The instructions the kernels use, from the subtarget's features.
void readFeatures(const llvm::MCSubtargetInfo &sti, CpuTarget &target) {
  auto has = [&](StringRef features) { return sti.checkFeatures(features); };
  switch (target.isa) {
  case CpuIsa::X86:
    target.fma = has("+fma");
    target.bf16Dot = has("+avx512bf16");
    target.bf16Convert = target.bf16Dot || has("+avxneconvert");
    target.f16Convert = has("+f16c");
    target.amx = has("+amx-tile,+amx-bf16");
    break;
  case CpuIsa::AArch64:
    target.fma = has("+neon");
    target.bf16Dot = has("+bf16");
    target.bf16Convert = target.bf16Dot;
    target.f16Convert = has("+fp-armv8");
    target.sve = has("+sve");
    target.sve2 = has("+sve2");
    target.bf16MatMul = target.bf16Dot;
    target.i8mm = has("+i8mm");
    break;
  case CpuIsa::Other:
    break;
  }
}

} // namespace

std::string CpuTarget::summary() const {
  std::string text = llvm::formatv("{0} {1}: {2}-bit x {3} vectors",
                                   isa == CpuIsa::X86       ? "x86"
                                   : isa == CpuIsa::AArch64 ? "aarch64"
                                                            : "cpu",
                                   cpu, vectorBits, vectorRegisters);
  auto add = [&](bool present, StringRef name) {
    if (present)
      text += (", " + name).str();
  };
  add(fma, "fma");
  add(f16Convert, isa == CpuIsa::X86 ? "f16c" : "fp16 conversions");
  add(bf16Dot, isa == CpuIsa::X86 ? "avx512bf16" : "bf16");
  add(bf16Convert && !bf16Dot, "bf16 conversions");
  add(amx, "amx");
  add(sve && sveVectorBits == 0, "sve");
  if (sve && sveVectorBits)
    text += llvm::formatv(", sve ({0}-bit)", sveVectorBits).str();
  add(sve2, "sve2");
  add(i8mm, "i8mm");
  return text;
}

llvm::CodeGenOptLevel pe::codeGenOptLevel(unsigned optLevel) {
  return *llvm::CodeGenOpt::getLevel(static_cast<int>(std::min(optLevel, 3u)));
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
pe::createTargetMachine(const CpuTarget &target, unsigned optLevel) {
  LLVM::detail::initializeBackendsOnce();
  llvm::Triple triple(target.triple);
  std::string error;
  const llvm::Target *backend = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!backend)
    return llvm::createStringError("no LLVM backend for the triple '" + target.triple +
                                   "': " + error);
  llvm::CodeGenOptLevel level = codeGenOptLevel(optLevel);
  llvm::TargetOptions options;
  // Assembly names spills and reloads (`# 64-byte Spill`), which the tests
  // count in the kernels.
  options.MCOptions.AsmVerbose = true;
  std::unique_ptr<llvm::TargetMachine> machine(backend->createTargetMachine(
      triple, target.cpu, target.features, options, llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    return llvm::createStringError("LLVM cannot create a target machine for " +
                                   target.triple + " " + target.cpu);
  return machine;
}

llvm::Expected<CpuTarget> pe::describeCpuTarget(StringRef triple, StringRef cpu,
                                                StringRef features, int64_t sveVectorBits) {
  CpuTarget target;
  target.sveVectorBits = sveVectorBits;
  const bool hostCpu = cpu.empty() || cpu == "native";
  target.triple = triple.empty() ? llvm::sys::getProcessTriple()
                                 : llvm::Triple::normalize(triple);
  if (hostCpu && llvm::Triple(target.triple).getArch() !=
                     llvm::Triple(llvm::sys::getProcessTriple()).getArch())
    return llvm::createStringError("the host CPU ('native') is not a CPU of " +
                                   target.triple + ": name one with --mcpu");
  target.cpu = hostCpu ? llvm::sys::getHostCPUName().str() : cpu.str();
  target.features = hostCpu ? joinFeatures(hostFeatures(), features) : features.str();
  llvm::Triple parsed(target.triple);
  // The host's CPU, asked for as "native", or by the name LLVM gives it
  // with the host's features (as a module's llvm.target names it once the
  // driver resolved "native"; the driver may add features after them). A
  // bare name is the CPU model, so that its schedule does not depend on
  // which machine compiles.
  auto startsWithHostFeatures = [&] {
    const std::string host = hostFeatures();
    return target.features == host || StringRef(target.features).starts_with(host + ",");
  };
  target.host = hostCpu ||
                (parsed.getArch() == llvm::Triple(llvm::sys::getProcessTriple()).getArch() &&
                 target.cpu == llvm::sys::getHostCPUName() && startsWithHostFeatures());
  target.isa = parsed.isX86()       ? CpuIsa::X86
               : parsed.isAArch64() ? CpuIsa::AArch64
                                    : CpuIsa::Other;

  auto machine = createTargetMachine(target);
  if (!machine)
    return machine.takeError();
  const llvm::MCSubtargetInfo &sti = *(*machine)->getMCSubtargetInfo();
  if (!sti.isCPUStringValid(target.cpu))
    return llvm::createStringError("unknown CPU '" + target.cpu + "' for " + target.triple);
  readFeatures(sti, target);
  if (sveVectorBits &&
      (!target.sve || sveVectorBits < 128 || sveVectorBits > 2048 ||
       (sveVectorBits & (sveVectorBits - 1))))
    return llvm::createStringError(llvm::formatv(
        "an SVE vector length of {0} bits needs an SVE target and a power of two from 128 "
        "to 2048",
        sveVectorBits));
  // The host's caches from the OS: LLVM's cost model answers fixed sizes
  // (256 KiB of L2 on x86) whatever the CPU.
  if (target.host) {
    target.l1dBytes = hostCacheBytes(1);
    target.l2Bytes = hostCacheBytes(2);
    target.l3Bytes = hostCacheBytes(3);
  }
  queryVectorRegisters(**machine, target);
  if (target.vectorBits < 128 || target.vectorRegisters < 8)
    return llvm::createStringError(llvm::formatv(
        "{0} {1} has no usable vector registers ({2} of {3} bits): the CPU kernels need "
        "at least 8 vectors of 128 bits",
        target.triple, target.cpu, target.vectorRegisters, target.vectorBits));
  return target;
}

LLVM::TargetAttr pe::getTargetAttr(MLIRContext *context, const CpuTarget &target) {
  LLVM::TargetFeaturesAttr features;
  if (!target.features.empty())
    features = LLVM::TargetFeaturesAttr::get(context, target.features);
  return LLVM::TargetAttr::get(context, StringAttr::get(context, target.triple),
                               StringAttr::get(context, target.cpu), features);
}

FailureOr<CpuTarget> pe::getCpuTarget(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  auto attr = module ? module->getAttrOfType<LLVM::TargetAttrInterface>(kTargetAttrName)
                     : LLVM::TargetAttrInterface();
  StringRef triple, cpu = "native";
  std::string features;
  int64_t sveBits = 0;
  if (module)
    if (auto bits = module->getAttrOfType<IntegerAttr>(kSveVectorBitsAttrName))
      sveBits = bits.getInt();
  if (attr) {
    triple = attr.getTriple().getValue();
    cpu = attr.getChip().getValue();
    if (auto list = dyn_cast_or_null<LLVM::TargetFeaturesAttr>(attr.getFeatures()))
      features = list.getFeaturesString();
  }
  // Descriptions are cached: passes ask for each op they schedule.
  static std::mutex mutex;
  static llvm::StringMap<CpuTarget> cache;
  std::string key = (triple + "\n" + cpu + "\n" + features + "\n" + llvm::Twine(sveBits)).str();
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = cache.find(key);
    if (found != cache.end())
      return found->second;
  }
  llvm::Expected<CpuTarget> target = describeCpuTarget(triple, cpu, features, sveBits);
  if (!target) {
    InFlightDiagnostic diag = (module ? module.getOperation() : op)->emitError();
    diag << (attr ? "the module's target (llvm.target): " : "the host CPU: ")
         << llvm::toString(target.takeError());
    return diag;
  }
  std::lock_guard<std::mutex> lock(mutex);
  return cache.try_emplace(key, *target).first->second;
}
