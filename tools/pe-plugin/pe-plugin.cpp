//===- pe-plugin.cpp - the pe dialect and passes as an mlir-opt plugin ----===//
#include "pe/InitPE.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "PE", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            pe::registerAllDialects(*registry);
            pe::registerAllPasses();
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "PEPasses", LLVM_VERSION_STRING,
          []() { pe::registerAllPasses(); }};
}
