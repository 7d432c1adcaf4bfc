//===- pe-opt.cpp - the pe-mlir optimizer driver --------------------------===//
//
// mlir-opt with every upstream dialect, pass and extension, plus pe's.
//
//===----------------------------------------------------------------------===//
#include "pe/InitPE.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::pe::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::pe::registerAllDialects(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "pe-mlir optimizer driver\n", registry));
}
