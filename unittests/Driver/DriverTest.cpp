//===- DriverTest.cpp - the compiler driver as a library ------------------===//
//
// What a program that links PEDriver does: fill CompileOptions, check them,
// load a module and compile it; errors arrive as diagnostics it handles.
//
//===----------------------------------------------------------------------===//
#include "pe/Driver/Driver.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace mlir;
namespace driver = mlir::pe::driver;

namespace {

constexpr char kRope[] = R"mlir(
func.func @rope(%x: tensor<1x2x8x16xf32>, %pos: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %y = pe.rope #pe.rope<theta = 10000.0, rotary_dim = 16> %x, %pos : tensor<1x2x8x16xf32>, tensor<8xi64>
  return %y : tensor<1x2x8x16xf32>
}
)mlir";

class DriverTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() { driver::initializeLLVMTargets(); }

  DriverTest() : context(registry()), handler(&context, [this](Diagnostic &diagnostic) {
    errors.push_back(diagnostic.str());
    return success();
  }) {
    context.loadAllAvailableDialects();
  }

  static DialectRegistry registry() {
    DialectRegistry registry;
    driver::registerCompilerDialects(registry);
    return registry;
  }

  /// A path in a fresh temporary folder.
  std::string temporary(StringRef name) {
    if (folder.empty()) {
      EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("pe-driver-test", folder));
    }
    SmallString<128> path(folder);
    llvm::sys::path::append(path, name);
    return std::string(path);
  }

  std::string read(StringRef path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    return buffer ? (*buffer)->getBuffer().str() : std::string();
  }

  MLIRContext context;
  ScopedDiagnosticHandler handler;
  std::vector<std::string> errors;
  SmallString<128> folder;
};

TEST_F(DriverTest, CompilesToTheLLVMDialectWithAHeader) {
  driver::CompileOptions options;
  options.emit = driver::Emit::Mlir;
  options.output = temporary("rope.mlir");
  options.header = temporary("rope.h");
  options.prefix = "k_";
  ASSERT_FALSE(bool(driver::checkOptions(options)));
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kRope, &context);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(driver::compile(*module, options)))
      << (errors.empty() ? std::string("no diagnostic") : errors.front());
  std::string lowered = read(options.output);
  EXPECT_NE(lowered.find("llvm.func @k_rope("), std::string::npos);
  EXPECT_NE(lowered.find("llvm.func @k_rope_into("), std::string::npos);
  std::string header = read(options.header);
  EXPECT_NE(header.find("int32_t k_rope("), std::string::npos);
  EXPECT_NE(header.find("const char *k_last_error(void);"), std::string::npos);
}

TEST_F(DriverTest, PipelineOptionsAreTheDriversOwn) {
  driver::CompileOptions options;
  options.emit = driver::Emit::Mlir;
  options.output = temporary("rope-plain.mlir");
  options.cpu.destinationEntries = false;
  options.setFuse(false);
  EXPECT_FALSE(options.gpu.fuse);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kRope, &context);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(driver::compile(*module, options)));
  EXPECT_EQ(read(options.output).find("_into("), std::string::npos);
}

TEST_F(DriverTest, InvalidOptionsAreErrorsBeforeAnyInput) {
  driver::CompileOptions options;
  options.cpu.threads = 0;
  llvm::Error error = driver::checkOptions(options);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "pe-cpu-pipeline: threads must be >= 1, but got 0");
  driver::CompileOptions gpu;
  gpu.target = driver::Target::Gpu;
  gpu.gpu.chip = "sm_75";
  EXPECT_EQ(gpu.emitKind(), driver::Emit::Ptx);
  error = driver::checkOptions(gpu);
  ASSERT_TRUE(bool(error));
  EXPECT_NE(llvm::toString(std::move(error)).find("unsupported GPU chip 'sm_75'"),
            std::string::npos);
  driver::CompileOptions shared;
  EXPECT_EQ(llvm::toString(driver::checkOptions(shared)),
            "--emit=shared needs an output file (-o)");
}

TEST_F(DriverTest, CompileChecksTheOptionsItself) {
  driver::CompileOptions options;
  options.emit = driver::Emit::Ptx; // GPU kernels of a CPU compilation
  options.output = temporary("never.ptx");
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kRope, &context);
  ASSERT_TRUE(module);
  EXPECT_TRUE(failed(driver::compile(*module, options)));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors.front(), "--emit=ptx, cubin and fatbin need --target=gpu");
  EXPECT_FALSE(llvm::sys::fs::exists(options.output));
}

TEST_F(DriverTest, FailuresReachTheCallerAsDiagnostics) {
  driver::CompileOptions options;
  options.emit = driver::Emit::Jit;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kRope, &context);
  ASSERT_TRUE(module);
  EXPECT_TRUE(failed(driver::compile(*module, options)));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors.front(), "--emit=jit needs a function @main");
}

TEST_F(DriverTest, ExportPrefixFollowsTheOutputName) {
  driver::CompileOptions options;
  options.output = "out/libllama-3.so";
  EXPECT_EQ(options.exportPrefix(), "llama_3_");
  options.output = "-";
  EXPECT_EQ(options.exportPrefix(), "pe_");
  options.prefix = "mine_";
  EXPECT_EQ(options.exportPrefix(), "mine_");
}

} // namespace
