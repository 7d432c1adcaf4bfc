//===- Input.cpp - the module a compilation starts from -------------------===//
#include "pe/Driver/Driver.h"

#include "Steps.h"

#include "pe/Frontend/ModelConfig.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::pe::driver;

/// The config file read: the reader's errors (which name the field, a JSON
/// file having no line to show) reported as "FILE: config field ...".
static FailureOr<pe::ModelConfig> readConfig(MLIRContext &context, const ConfigInput &input) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(input.path);
  if (!buffer)
    return fail(&context, "cannot read " + input.path + ": " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> root = pe::parseConfigJson((*buffer)->getBuffer());
  if (!root)
    return fail(&context, input.path + " is not JSON: " + llvm::toString(root.takeError()));
  Location location = FileLineColLoc::get(&context, input.path, 1, 1);
  SmallVector<std::string> errors;
  FailureOr<pe::ModelConfig> config;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
      if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
        errors.push_back(diagnostic.str());
      return success();
    });
    config = pe::readModelConfig(*root, &context, [&] { return emitError(location); });
  }
  for (const std::string &error : errors)
    (void)fail(&context, input.path + ": " + error);
  return config;
}

/// The shapes of the functions built from a config.
static FailureOr<pe::ModelShapes> configShapes(MLIRContext &context, const ConfigInput &input) {
  pe::ModelShapes shapes;
  shapes.batch = input.batch.value_or(1);
  int64_t queries = input.queries.value_or(-1);
  int64_t keys = input.keys.value_or(queries);
  shapes.queries = queries < 0 ? ShapedType::kDynamic : queries;
  shapes.keys = keys < 0 ? ShapedType::kDynamic : keys;
  Builder builder(&context);
  std::string dtype = input.dtype.value_or("f32");
  shapes.element = llvm::StringSwitch<Type>(dtype)
                       .Case("f32", builder.getF32Type())
                       .Case("f16", builder.getF16Type())
                       .Case("bf16", builder.getBF16Type())
                       .Default(Type());
  if (!shapes.element)
    return fail(&context, "--dtype must be f32, f16 or bf16, but got '" + dtype + "'");
  shapes.sharedKey = input.sharedKey;
  shapes.absorbed = input.absorbed;
  return shapes;
}

/// The module of a config: the model's attention per kind of layer; with
/// Emit::Config the config as read, written as JSON.
static OwningOpRef<ModuleOp> buildFromConfig(MLIRContext &context,
                                             const CompileOptions &options, bool &written) {
  FailureOr<pe::ModelConfig> config = readConfig(context, options.config);
  if (failed(config))
    return nullptr;
  const ConfigInput &input = options.config;
  if ((input.sharedKey || input.absorbed) && !config->rotaryOffset) {
    (void)fail(&context, std::string(input.sharedKey ? "--shared-key" : "--absorbed") +
                             " needs multi-head latent attention (a config with "
                             "qk_nope_head_dim and qk_rope_head_dim), but " +
                             input.path + " is '" + config->modelType + "'");
    return nullptr;
  }
  if (input.absorbed && !config->latentRank) {
    (void)fail(&context, "--absorbed needs the latent's width: " + input.path +
                             " has no kv_lora_rank");
    return nullptr;
  }
  if (input.absorbed)
    for (const pe::AttentionKind &kind : config->kinds)
      if (kind.sinks || kind.keyValueHeads || (kind.rope && kind.rope.isMultiStream())) {
        (void)fail(&context, "--absorbed: " + kind.function +
                                 " has learned sinks, its own key/value heads or rope "
                                 "streams, which the absorbed form does not take");
        return nullptr;
      }
  if (options.emitKind() == Emit::Config) {
    std::string error;
    auto output = openOutputFile(options.output, &error);
    if (!output) {
      (void)fail(&context, error);
      return nullptr;
    }
    output->os() << llvm::formatv("{0:2}", pe::describeModelConfig(*config)) << "\n";
    output->keep();
    written = true;
    return nullptr;
  }
  FailureOr<pe::ModelShapes> shapes = configShapes(context, options.config);
  if (failed(shapes))
    return nullptr;
  Location location = FileLineColLoc::get(&context, options.config.path, 1, 1);
  OwningOpRef<ModuleOp> module = pe::buildModelModule(*config, *shapes, location);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> pe::driver::loadInput(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                            const CompileOptions &options, bool &written) {
  if (!options.config.path.empty())
    return buildFromConfig(context, options, written);
  std::string error;
  auto input = openInputFile(options.input, &error);
  if (!input) {
    (void)fail(&context, error);
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}
