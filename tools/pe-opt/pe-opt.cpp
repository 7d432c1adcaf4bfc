//===- pe-opt.cpp - the pe-mlir optimizer driver --------------------------===//
//
// mlir-opt with every upstream dialect, pass and extension, plus pe's, and
// the LLVM IR translations that serializing GPU modules needs.
//
//===----------------------------------------------------------------------===//
#include "pe/InitPE.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "pe-mlir version " PE_VERSION "\n"; });
  mlir::registerAllPasses();
  mlir::pe::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::pe::registerAllDialects(registry);
  // gpu-module-to-binary (pe-gpu-pipeline) translates GPU modules to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "pe-mlir optimizer driver\n", registry));
}
