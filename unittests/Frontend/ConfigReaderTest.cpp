//===- ConfigReaderTest.cpp - the rooms of the config reader --------------===//
//
// Each layer of the reader on its own: the JSON access (typed fields,
// dotted paths in errors, Python's non-finite words), the family tables
// (typed class defaults, refused types), the layer plan of each family rule
// and the RoPE reader, with the values transformers' config classes and
// modeling code give for the same fields.
//
//===----------------------------------------------------------------------===//
#include "ConfigFields.h"
#include "Families.h"
#include "LayerTypes.h"
#include "RopeReader.h"

#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <functional>

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::frontend;

namespace {

/// A context whose diagnostics are kept as text, and JSON objects read from
/// text with the config reader's parser.
class ConfigReaderTest : public ::testing::Test {
protected:
  ConfigReaderTest() : handler(&context, [this](Diagnostic &diag) {
    messages.push_back(diag.str());
    return success();
  }) {
    context.loadDialect<PEDialect>();
  }

  json::Object parse(StringRef text) {
    llvm::Expected<json::Value> value = parseConfigJson(text);
    EXPECT_TRUE(static_cast<bool>(value)) << text.str();
    if (!value) {
      llvm::consumeError(value.takeError());
      return {};
    }
    return *value->getAsObject();
  }
  /// An error at an unknown location (a function_ref to a member: it
  /// outlives every reader of the test).
  ErrorFn emitter() { return emit; }

  MLIRContext context;
  ScopedDiagnosticHandler handler;
  std::vector<std::string> messages;
  std::function<InFlightDiagnostic()> emit = [this] {
    return mlir::emitError(UnknownLoc::get(&context));
  };
  bool failed = false;
};

TEST_F(ConfigReaderTest, NonFiniteWordsAreStringsOutsideStrings) {
  json::Object object = parse(R"({"a": NaN, "b": -Infinity, "c": [Infinity, 1],
                                  "d": "NaN \" Infinity", "e": 2})");
  EXPECT_EQ(object.getString("a"), StringRef("NaN"));
  EXPECT_EQ(object.getString("b"), StringRef("-Infinity"));
  EXPECT_EQ((*object.getArray("c"))[0].getAsString(), StringRef("Infinity"));
  EXPECT_EQ(object.getString("d"), StringRef("NaN \" Infinity"));
  EXPECT_EQ(object.getInteger("e"), 2);
}

TEST_F(ConfigReaderTest, FieldsNameTheirPathAndShareTheFailure) {
  json::Object object = parse(R"({"rope_scaling": {"factor": "big", "n": null},
                                  "layers": 0, "theta": -1, "list": [1, "x"]})");
  Fields config(object, "", emitter(), failed);
  std::optional<Fields> scaling = config.object_("rope_scaling");
  ASSERT_TRUE(scaling);
  EXPECT_FALSE(scaling->has("n")); // null is absent
  EXPECT_FALSE(failed);
  EXPECT_EQ(scaling->number("factor"), std::nullopt);
  EXPECT_TRUE(failed); // one flag for the whole config
  EXPECT_TRUE(config.hasFailed());
  EXPECT_EQ(config.positive({"missing", "layers"}), std::nullopt);
  EXPECT_EQ(config.positiveNumber("theta"), std::nullopt);
  EXPECT_EQ(config.numbers("list"), std::nullopt);
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0], "config field 'rope_scaling.factor': expected a number");
  EXPECT_EQ(messages[1], "config field 'layers': expected an integer in [1, 1099511627776], got 0");
  EXPECT_EQ(messages[2], "config field 'theta': expected a finite number > 0, got -1.000000e+00");
  EXPECT_EQ(messages[3], "config field 'list': expected a list of numbers");
}

TEST_F(ConfigReaderTest, FamilyDefaultsKeepTheirType) {
  // transformers' classes: Qwen3Config.head_dim = 128 (int),
  // StableLmConfig.partial_rotary_factor = 0.25, MixtralConfig.rope_theta = 1e6.
  json::Object qwen = withFamilyDefaults(parse(R"({"model_type": "qwen3"})"));
  EXPECT_EQ(qwen.get("head_dim")->kind(), json::Value::Number);
  EXPECT_EQ(qwen.get("head_dim")->getAsInteger(), 128);
  EXPECT_EQ(qwen.get("head_dim")->getAsUINT64(), 128u);
  json::Object stable = withFamilyDefaults(parse(R"({"model_type": "stablelm"})"));
  EXPECT_EQ(stable.getNumber("partial_rotary_factor"), 0.25);
  EXPECT_EQ(stable.getInteger("partial_rotary_factor"), std::nullopt);
  // Given fields win; an explicit null stays null.
  json::Object given = withFamilyDefaults(
      parse(R"({"model_type": "mistral", "sliding_window": null})"));
  EXPECT_EQ(given.get("sliding_window")->kind(), json::Value::Null);
  json::Object mixtral =
      withFamilyDefaults(parse(R"({"model_type": "mixtral", "rope_theta": 5})"));
  EXPECT_EQ(mixtral.getNumber("rope_theta"), 5.0);
  EXPECT_EQ(withFamilyDefaults(parse(R"({"model_type": "llama"})")).size(), 1u);
}

TEST_F(ConfigReaderTest, FamiliesAndRefusals) {
  ASSERT_TRUE(findFamily("gptj"));
  EXPECT_TRUE(findFamily("gptj")->interleaved);
  EXPECT_FALSE(findFamily("llama")->interleaved);
  EXPECT_TRUE(findFamily("bert")->encoder);
  EXPECT_EQ(findFamily("bloom")->encoding, PositionEncoding::Alibi);
  EXPECT_TRUE(findFamily("gpt_oss")->sinks);
  EXPECT_FALSE(findFamily("llama")->sinks);
  EXPECT_TRUE(findFamily("llama4_text")->interleaved);
  ASSERT_TRUE(findFamily("mimo_v2_flash"));
  EXPECT_TRUE(findFamily("mimo_v2_flash")->slidingSinks);
  EXPECT_FALSE(findFamily("mimo_v2_flash")->sinks);
  EXPECT_EQ(findFamily("mimo_v2_flash")->slidingKeyValueHeads, 2);
  EXPECT_EQ(findFamily("hunyuan_v1_dense"), nullptr);
  EXPECT_EQ(refusedFeature("hunyuan_v1_dense"),
            StringRef("q and k normalized by a weighted norm after RoPE"));
  EXPECT_EQ(refusedFeature("llama"), std::nullopt);
  EXPECT_EQ(positionOffset("opt"), 2);
  EXPECT_EQ(positionOffset("gpt2"), 0);
  EXPECT_NE(familyNames().find("gpt_neox"), std::string::npos);
}

/// The layer types `config` gives a model of `layers` layers.
std::vector<std::string> layerTypes(Fields &config, int64_t layers) {
  ModelConfig model;
  model.modelType = *config.raw().getString("model_type");
  model.numLayers = layers;
  SmallVector<std::string> types;
  if (failed(LayerTypeReader(config, *findFamily(model.modelType)).read(model, types)))
    return {"failed"};
  return {types.begin(), types.end()};
}

TEST_F(ConfigReaderTest, LayerTypesOfEachFamilyRule) {
  const std::string F = "full_attention", S = "sliding_attention";
  // Gemma 3: every sliding_window_pattern-th layer is global.
  json::Object gemma = withFamilyDefaults(
      parse(R"({"model_type": "gemma3_text", "sliding_window_pattern": 3})"));
  Fields gemmaFields(gemma, "", emitter(), failed);
  EXPECT_EQ(layerTypes(gemmaFields, 4), (std::vector<std::string>{S, S, F, S}));
  // Qwen2: local from max_window_layers on, only with use_sliding_window.
  json::Object qwen = parse(R"({"model_type": "qwen2", "max_window_layers": 1,
                                "use_sliding_window": true, "sliding_window": 64})");
  Fields qwenFields(qwen, "", emitter(), failed);
  EXPECT_EQ(layerTypes(qwenFields, 3), (std::vector<std::string>{F, S, S}));
  qwen["use_sliding_window"] = false;
  EXPECT_EQ(layerTypes(qwenFields, 2), (std::vector<std::string>{F, F}));
  // MiMo-V2-Flash: full attention in layer 0 and every sixth layer; its
  // per-layer-type rope parameters by default.
  json::Object mimo = withFamilyDefaults(parse(R"({"model_type": "mimo_v2_flash"})"));
  Fields mimoFields(mimo, "", emitter(), failed);
  EXPECT_EQ(layerTypes(mimoFields, 7), (std::vector<std::string>{F, S, S, S, S, F, S}));
  ASSERT_TRUE(mimo.getObject("rope_parameters"));
  EXPECT_EQ(mimo.getObject("rope_parameters")
                ->getObject("full_attention")
                ->getNumber("rope_theta"),
            5000000.0);
  // GPT-Neo: patterns repeated their count of times.
  json::Object neo = parse(R"({"model_type": "gpt_neo", "window_size": 4,
                               "attention_types": [[["global", "local"], 2], [["local"], 1]]})");
  Fields neoFields(neo, "", emitter(), failed);
  EXPECT_EQ(layerTypes(neoFields, 5), (std::vector<std::string>{F, S, F, S, S}));
  EXPECT_FALSE(failed);
  EXPECT_EQ(layerTypes(neoFields, 4), std::vector<std::string>{"failed"});
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0],
            "config field 'attention_types': describes 5 layers, but num_layers is 4");
  EXPECT_EQ(LayerTypeReader::windowField("gpt_neo"), "window_size");
  EXPECT_EQ(LayerTypeReader::windowField("mistral"), "sliding_window");
}

TEST_F(ConfigReaderTest, RopeReaderBuildsTheAttribute) {
  // Llama 3.1's rope parameters; half of each head of 128 rotated.
  json::Object root = parse(R"({"model_type": "llama", "partial_rotary_factor": 0.5})");
  json::Object params = parse(R"({"rope_type": "llama3", "rope_theta": 500000.0,
      "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 8192})");
  Fields config(root, "", emitter(), failed);
  Fields paramFields(params, "rope_parameters", emitter(), failed);
  AttentionKind kind;
  RopeReader reader(config, *findFamily("llama"), 128, 131072);
  ASSERT_TRUE(succeeded(reader.read(paramFields, std::nullopt, kind, &context, emitter())));
  ASSERT_TRUE(kind.rope);
  EXPECT_EQ(kind.rope.getRotaryDim(), 64);
  EXPECT_EQ(kind.rope.getTheta().convertToDouble(), 500000.0);
  auto scaling = dyn_cast_or_null<Llama3ScalingAttr>(kind.rope.getScaling());
  ASSERT_TRUE(scaling);
  EXPECT_EQ(scaling.getOriginalMaxPositionEmbeddings(), 8192);
  EXPECT_EQ(kind.ropeSpec.getString("style"), StringRef("half"));

  // A parameter of another rope type is an error naming it.
  params["beta_fast"] = 32.0;
  AttentionKind refused;
  EXPECT_TRUE(mlir::failed(reader.read(paramFields, std::nullopt, refused, &context, emitter())));
  EXPECT_EQ(messages.back(),
            "config field 'rope_parameters.beta_fast': not a parameter of rope_type 'llama3'");
}

} // namespace
