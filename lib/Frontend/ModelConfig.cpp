//===- ModelConfig.cpp - a model's config.json as pe attributes -----------===//
//
// The reader of a config: the family, the sizes, the features pe.attention
// does not have, the layer types (LayerTypes.cpp) and each kind's scale and
// RoPE (RopeReader.cpp) or ALiBi. The conventions are those of Hugging Face
// transformers (v5 and the legacy fields it still converts): docs/configs.md.
//
//===----------------------------------------------------------------------===//

#include "pe/Frontend/ModelConfig.h"
#include "pe/Math/PositionalMath.h"

#include "ConfigFields.h"
#include "Families.h"
#include "LayerTypes.h"
#include "RopeReader.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::frontend;

namespace {
class ConfigReader {
public:
  ConfigReader(const Fields &config, MLIRContext *context, ErrorFn emitError)
      : config(config), context(context), emitError(emitError) {}

  FailureOr<ModelConfig> read() {
    ModelConfig model;
    if (failed(readFamily(model)) || failed(readSizes(model)) ||
        failed(readUnsupported(model)) || failed(readLayers(model)))
      return failure();
    for (AttentionKind &kind : model.kinds)
      if (failed(readKind(model, kind)))
        return failure();
    return model;
  }

private:
  LogicalResult readFamily(ModelConfig &model) {
    std::optional<std::string> type = config.string("model_type");
    if (!type) {
      if (!config.hasFailed())
        config.error("model_type", "required (one of " + familyNames() + ")");
      return failure();
    }
    family = findFamily(*type);
    if (!family) {
      if (std::optional<StringRef> feature = refusedFeature(*type)) {
        config.error("model_type") << "'" << *type << "' models need " << *feature
                                   << ", which pe does not read from a config";
        return failure();
      }
      config.error("model_type")
          << "'" << *type << "' is not a model type pe reads: its family "
          << "decides what a config does not state (the RoPE pairing, which "
             "layers a window applies to), and pe does not know it "
             "(docs/configs.md lists the model types)";
      return failure();
    }
    model.modelType = *type;
    model.encoding = family->encoding;
    if (*type == "falcon" && config.boolean("alibi").value_or(false))
      // (Q K^T + bias) / sqrt(D): the bias is scaled with the scores.
      config.error("alibi", "Falcon scales its ALiBi bias with the scores, "
                            "pe.attention adds it after the scale");
    if (*type == "mpt") {
      attnConfig = config.object_("attn_config");
      if (attnConfig && !attnConfig->boolean("alibi").value_or(true))
        config.error("attn_config.alibi",
                     "pe reads MPT models with ALiBi (attn_config.alibi = true)");
      // transformers' MPT always uses the bias maximum 8.
      if (attnConfig && attnConfig->number("alibi_bias_max").value_or(8.0) != 8.0)
        attnConfig->error("alibi_bias_max",
                          "transformers' MPT uses 8 whatever this field says");
    }
    if (std::optional<std::string> embedding =
            config.string("position_embedding_type")) {
      bool learned = model.encoding == PositionEncoding::Learned;
      if (*embedding != (learned ? "absolute" : "rotary"))
        config.error("position_embedding_type")
            << "'" << *embedding << "' is not read for model type '" << *type
            << "' (pe reads '" << (learned ? "absolute" : "rotary") << "')";
    }
    return failure(config.hasFailed());
  }

  LogicalResult readSizes(ModelConfig &model) {
    const int64_t maxCount = 1 << 20;
    std::optional<int64_t> hidden =
        config.positive({"hidden_size", "n_embd", "n_embed", "d_model", "dim"}, maxCount);
    std::optional<int64_t> heads =
        config.positive({"num_attention_heads", "n_head", "n_heads", "num_heads"}, maxCount);
    std::optional<int64_t> layers = config.positive(
        {"num_hidden_layers", "n_layer", "n_layers", "num_layers"}, maxCount);
    if (config.hasFailed())
      return failure();
    if (!hidden)
      config.error("hidden_size", "required");
    if (!heads)
      config.error("num_attention_heads", "required");
    if (!layers)
      config.error("num_hidden_layers", "required");
    if (config.hasFailed())
      return failure();
    model.hiddenSize = *hidden;
    model.numHeads = *heads;
    model.numLayers = *layers;
    model.maxPositionEmbeddings =
        config
            .positive({"max_position_embeddings", "n_positions", "max_seq_len",
                       "seq_length"})
            .value_or(0);

    if (std::optional<int64_t> dim = config.positive({"head_dim"}, maxCount)) {
      model.headDim = *dim;
    } else if (!config.hasFailed()) {
      if (*hidden % *heads) {
        config.error(config.firstOf({"num_attention_heads", "n_head", "n_heads", "num_heads"}))
            << *heads << " heads do not divide hidden size " << *hidden
            << " (and no head_dim is given)";
        return failure();
      }
      model.headDim = *hidden / *heads;
    }
    model.numKeyValueHeads = readKeyValueHeads(model.numHeads);
    if (config.hasFailed() || (family->latent && failed(readLatentSizes(model))))
      return failure();
    if (family->readsValueHeadDim)
      model.valueHeadDim = config.positive({"v_head_dim"}, maxCount).value_or(model.headDim);
    if (!model.valueHeadDim)
      model.valueHeadDim = model.headDim;
    if (model.numHeads % model.numKeyValueHeads) {
      config.error(keyValueField) << model.numKeyValueHeads
                                  << " key/value heads do not divide "
                                  << model.numHeads << " query heads";
      return failure();
    }
    if (model.encoding == PositionEncoding::Learned) {
      // A table of more rows than this is a typo, not a model (and keeps
      // rows + offset and rows * width far from overflow).
      const int64_t maxRows = int64_t(1) << 24;
      if (!model.maxPositionEmbeddings)
        config.error("max_position_embeddings",
                     "required: the rows of the learned position table");
      else if (model.maxPositionEmbeddings > maxRows)
        config.error(config.firstOf({"max_position_embeddings", "n_positions", "max_seq_len",
                                     "seq_length"}))
            << model.maxPositionEmbeddings << " rows of a learned position table: at most "
            << maxRows;
      // ELECTRA and ALBERT embed tokens and positions in `embedding_size`
      // and project to the hidden size after.
      model.embeddingSize =
          config.positive({"embedding_size"}, maxCount).value_or(model.hiddenSize);
      model.positionOffset = positionOffset(model.modelType);
    }
    return failure(config.hasFailed());
  }

  /// Multi-head latent attention: a query/key head is qk_nope_head_dim plain
  /// channels and the rotated block of qk_rope_head_dim (`head_dim` in these
  /// configs is the rotated block's size, which transformers' RoPE reads), a
  /// value head v_head_dim; the latent expands to a key and a value per query
  /// head.
  LogicalResult readLatentSizes(ModelConfig &model) {
    const int64_t maxCount = 1 << 20;
    std::optional<int64_t> nope = config.positive({"qk_nope_head_dim"}, maxCount);
    std::optional<int64_t> rope = config.positive({"qk_rope_head_dim"}, maxCount);
    std::optional<int64_t> value = config.positive({"v_head_dim"}, maxCount);
    for (auto [field, size] : {std::pair{"qk_nope_head_dim", nope},
                               std::pair{"qk_rope_head_dim", rope},
                               std::pair{"v_head_dim", value}})
      if (!size && !config.hasFailed())
        config.error(field, "required (multi-head latent attention)");
    if (config.hasFailed())
      return failure();
    model.headDim = *nope + *rope;
    model.rotaryOffset = *nope;
    model.valueHeadDim = *value;
    model.latentRank = config.positive({"kv_lora_rank"}, maxCount).value_or(0);
    if (config.hasFailed())
      return failure();
    model.numKeyValueHeads = model.numHeads;
    return success();
  }

  int64_t readKeyValueHeads(int64_t heads) {
    if (attnConfig && attnConfig->has("kv_n_heads")) {
      keyValueField = "attn_config.kv_n_heads";
      return attnConfig->positive({"kv_n_heads"}).value_or(heads);
    }
    // GPT-BigCode: one shared head unless multi_query is false.
    if (family->modelType == "gpt_bigcode") {
      keyValueField = "multi_query";
      return config.boolean("multi_query").value_or(true) ? 1 : heads;
    }
    // Falcon: one shared head for multi_query without the new architecture.
    if (family->modelType == "falcon" &&
        !config.boolean("new_decoder_architecture").value_or(false) &&
        config.boolean("multi_query").value_or(true)) {
      keyValueField = "multi_query";
      return 1;
    }
    keyValueField = config.firstOf({"num_key_value_heads", "num_kv_heads", "n_head_kv"});
    if (keyValueField.empty()) {
      keyValueField = "num_key_value_heads";
      return heads;
    }
    return config.positive({keyValueField}).value_or(heads);
  }

  /// Attention features pe.attention does not have, and fields transformers
  /// ignores for the family: an error rather than a kernel that computes
  /// something else.
  LogicalResult readUnsupported(const ModelConfig &model) {
    if (config.boolean("scale_attn_by_inverse_layer_idx").value_or(false))
      config.error("scale_attn_by_inverse_layer_idx",
                   "a per-layer score scale is not read");
    if (config.boolean("use_bidirectional_attention").value_or(false))
      config.error("use_bidirectional_attention",
                   model.modelType == "gemma3_text"
                       ? "bidirectional Gemma 3 layers (halved windows) are not read"
                       : "bidirectional attention (a prefix that attends both ways, "
                         "as in PaliGemma) is not read");
    if (model.modelType == "gptj")
      for (StringRef field : {"rope_theta", "rope_scaling", "rope_parameters"})
        if (config.has(field))
          config.error(field, "transformers' GPT-J rotates with base 10000 and "
                              "no scaling, whatever this field says");
    return failure(config.hasFailed());
  }

  /// The layer type of every layer and the kinds they make.
  LogicalResult readLayers(ModelConfig &model) {
    SmallVector<std::string> types;
    SmallVector<bool> withoutRope;
    LayerTypeReader layers(config, *family);
    if (failed(layers.read(model, types)) ||
        failed(layers.readNoRope(model, types, withoutRope)))
      return failure();
    for (auto [layerType, layerWithoutRope] : llvm::zip_equal(types, withoutRope)) {
      // Named again: a lambda captures no structured binding before C++20.
      const std::string &type = layerType;
      bool nope = layerWithoutRope;
      auto it = llvm::find_if(model.kinds, [&](const AttentionKind &kind) {
        return kind.layerType == type && kind.withoutRope == nope;
      });
      if (it == model.kinds.end()) {
        model.kinds.push_back(AttentionKind());
        model.kinds.back().layerType = type;
        model.kinds.back().withoutRope = nope;
        it = std::prev(model.kinds.end());
      }
      model.layerKinds.push_back(it - model.kinds.begin());
    }
    // `attention`, else `attention_<type>`, `_nope` for a kind without RoPE
    // beside one of the same type with it.
    for (AttentionKind &kind : model.kinds) {
      if (model.kinds.size() == 1) {
        kind.function = "attention";
        continue;
      }
      kind.function =
          "attention_" + StringRef(kind.layerType).drop_back(strlen("_attention")).str();
      bool twin = llvm::any_of(model.kinds, [&](const AttentionKind &other) {
        return &other != &kind && other.layerType == kind.layerType;
      });
      if (twin && kind.withoutRope)
        kind.function += "_nope";
    }
    return success();
  }

  LogicalResult readKind(const ModelConfig &model, AttentionKind &kind) {
    kind.causal = !(family->encoder && !config.boolean("is_decoder").value_or(false));
    if (kind.layerType == "sliding_attention")
      kind.window = config.positive({LayerTypeReader::windowField(model.modelType)});
    if (kind.layerType == "chunked_attention")
      kind.chunk = config.positive({"attention_chunk_size"});
    kind.sinks = family->sinks;
    if (kind.layerType == "sliding_attention" && family->slidingSinks) {
      kind.sinks = true;
      kind.keyValueHeads = model.numKeyValueHeads * family->slidingKeyValueHeads;
      if (model.numHeads % kind.keyValueHeads)
        config.error(keyValueField)
            << kind.keyValueHeads << " key/value heads of the sliding-window layers ("
            << family->slidingKeyValueHeads << " x " << model.numKeyValueHeads
            << ") do not divide " << model.numHeads << " query heads";
    }
    // Llama 4 tunes the queries of its NoPE layers by position (by default,
    // as its config class).
    if (model.modelType == "llama4_text" && kind.withoutRope &&
        config.boolean("attn_temperature_tuning").value_or(true)) {
      std::optional<int64_t> floorScale = config.positive({"floor_scale"});
      std::optional<double> attnScale = config.number("attn_scale");
      if (floorScale && attnScale)
        kind.temperature = TemperatureAttr::getChecked(emitError, context, *floorScale,
                                                       APFloat(*attnScale));
      if (!kind.temperature && !config.hasFailed())
        config.error("attn_scale", "a floor_scale >= 1 and a finite attn_scale are "
                                   "required with attn_temperature_tuning");
    }
    readScale(model, kind);
    // Gemma 2: c tanh(s / c) of the scaled scores (null or absent: none).
    if (config.has("attn_logit_softcapping"))
      kind.softcap = config.positiveNumber("attn_logit_softcapping");
    if (model.encoding == PositionEncoding::Alibi) {
      kind.alibi = 8.0; // BLOOM and transformers' MPT
    } else if (model.encoding == PositionEncoding::Rope && !kind.withoutRope) {
      std::optional<Fields> params = ropeParameters(kind.layerType);
      if (!params)
        return failure();
      RopeReader rope(config, *family, model.headDim - model.rotaryOffset,
                      model.maxPositionEmbeddings, model.rotaryOffset, ropeInterleave());
      if (failed(rope.read(*params, defaultTheta(kind.layerType), kind, context,
                           emitError)))
        return failure();
      if (family->latent)
        readLatentScale(model, *params, kind);
    }
    return failure(config.hasFailed());
  }

  /// The pairing where the family reads `rope_interleave` (DeepSeek-V3,
  /// GLM-4-MoE-Lite; true by default), else the family's.
  std::optional<bool> ropeInterleave() {
    if (!family->readsRopeInterleave)
      return std::nullopt;
    return config.boolean("rope_interleave").value_or(true);
  }

  /// Latent attention scales its scores by get_mscale(factor, mscale_all_dim)^2
  /// beside 1/sqrt(qk head dim) when the rope is scaled and mscale_all_dim is
  /// given and non-zero (transformers' yarn_apply_mscale, DeepSeek's softmax
  /// scale).
  void readLatentScale(const ModelConfig &model, const Fields &params, AttentionKind &kind) {
    std::optional<std::string> type = params.string("rope_type");
    if (!type)
      type = params.string("type");
    std::optional<double> mscaleAllDim = params.number("mscale_all_dim");
    if (!type || *type == "default" || !mscaleAllDim || *mscaleAllDim == 0.0)
      return;
    const double m = formula::yarnGetMscale(params.number("factor").value_or(1.0), *mscaleAllDim);
    kind.scale = kind.scale.value_or(1.0 / std::sqrt(double(model.headDim))) * m * m;
  }

  void readScale(const ModelConfig &model, AttentionKind &kind) {
    double standard = 1.0 / std::sqrt(static_cast<double>(model.headDim));
    std::optional<double> scale;
    if (std::optional<double> scalar = config.positiveNumber("query_pre_attn_scalar"))
      scale = 1.0 / std::sqrt(*scalar); // Gemma
    else if (auto multiplier = config.positiveNumber("attention_multiplier"))
      scale = *multiplier; // Granite
    else if (attnConfig && attnConfig->has("softmax_scale"))
      scale = attnConfig->positiveNumber("softmax_scale"); // MPT
    else if ((model.modelType == "gpt2" || model.modelType == "gpt_bigcode") &&
             !config.boolean("scale_attn_weights").value_or(true))
      scale = 1.0;
    else if (model.modelType == "gpt_neo")
      scale = 1.0; // GPT-Neo does not scale its scores
    if (scale && *scale != standard)
      kind.scale = scale;
  }

  /// The rope parameters of `layerType`: v5 `rope_parameters` (one object,
  /// or one per layer type), else the legacy fields gathered into one object
  /// of the same form.
  std::optional<Fields> ropeParameters(StringRef layerType) {
    if (std::optional<Fields> params = config.object_("rope_parameters")) {
      bool perLayerType = !params->raw().empty() &&
                          llvm::all_of(params->raw(), [](const auto &entry) {
                            return entry.first == "full_attention" ||
                                   entry.first == "sliding_attention";
                          });
      std::optional<Fields> own = params;
      if (perLayerType) {
        own = params->object_(layerType);
        if (!own && !config.hasFailed())
          params->error(layerType, "no rope parameters for this layer type");
      }
      // transformers takes a legacy rope_scaling over rope_parameters (Gemma 3:
      // over its full-attention entry): both must say the same.
      if (own && config.has("rope_scaling") &&
          (!perLayerType || layerType == "full_attention") &&
          failed(checkSameScaling(*own)))
        return std::nullopt;
      return own;
    }
    if (config.hasFailed())
      return std::nullopt;
    json::Object &object = legacy[layerType.str()];
    object = json::Object();
    if (const json::Value *scaling = config.get("rope_scaling")) {
      const json::Object *fields = scaling->getAsObject();
      if (!fields) {
        config.error("rope_scaling", "expected an object or null");
        return std::nullopt;
      }
      // Gemma 3's local layers rotate without the scaling.
      if (!(family->modelType == "gemma3_text" && layerType == "sliding_attention"))
        object = *fields;
    }
    if (family->modelType == "gpt_neox")
      // transformers' GPT-NeoX reads rotary_emb_base and rotary_pct only.
      for (StringRef ignored : {"rope_theta", "partial_rotary_factor"})
        if (config.has(ignored))
          config.error(ignored) << "GPT-NeoX configs give rotary_emb_base and "
                                   "rotary_pct; transformers ignores "
                                << ignored;
    if (config.hasFailed())
      return std::nullopt;
    return Fields(object, "rope_scaling", emitError, config.failedFlag());
  }

  /// The RoPE base where the rope parameters give none.
  std::optional<double> defaultTheta(StringRef layerType) {
    StringRef modelType = family->modelType;
    if (modelType == "gptj")
      return 10000.0;
    if (modelType == "gpt_neox")
      return config.positiveNumber("rotary_emb_base");
    if (modelType == "gemma3_text" && layerType == "sliding_attention")
      return config.positiveNumber("rope_local_base_freq");
    return config.number("rope_theta");
  }

  /// rope_scaling and the rope parameters it would override must agree:
  /// the same type and the same value for every field it gives.
  LogicalResult checkSameScaling(const Fields &params) {
    std::optional<Fields> scaling = config.object_("rope_scaling");
    if (!scaling)
      return failure(config.hasFailed());
    auto typeOf = [](const json::Object &fields) {
      std::optional<StringRef> type = fields.getString("rope_type");
      if (!type)
        type = fields.getString("type");
      std::string name = type ? type->str() : "default";
      return name == "su" ? std::string("longrope") : name;
    };
    if (typeOf(scaling->raw()) != typeOf(params.raw())) {
      config.error("rope_scaling") << "rope type '" << typeOf(scaling->raw())
                                   << "' contradicts rope_parameters' '"
                                   << typeOf(params.raw()) << "'";
      return failure();
    }
    for (const auto &[name, value] : scaling->raw()) {
      if (name == "type" || name == "rope_type")
        continue;
      const json::Value *other = params.raw().get(name);
      if (!other || *other != value) {
        scaling->error(name, "contradicts rope_parameters");
        return failure();
      }
    }
    return success();
  }

  const Fields &config;
  MLIRContext *context;
  ErrorFn emitError;
  const Family *family = nullptr;
  std::optional<Fields> attnConfig;
  StringRef keyValueField;
  /// The legacy rope fields of each layer type, gathered as v5 objects.
  std::map<std::string, json::Object> legacy;
};
} // namespace

FailureOr<ModelConfig>
mlir::pe::readModelConfig(const json::Value &root, MLIRContext *context,
                          ErrorFn emitError) {
  const json::Object *object = root.getAsObject();
  if (!object) {
    emitError() << "a model config is a JSON object";
    return failure();
  }
  // Multimodal configs keep the language model's fields in text_config.
  std::string path;
  if (const json::Value *text = object->get("text_config");
      text && text->kind() != json::Value::Null) {
    if (!text->getAsObject()) {
      emitError() << "config field 'text_config': expected an object";
      return failure();
    }
    object = text->getAsObject();
    path = "text_config";
  }
  json::Object fields = withFamilyDefaults(*object);
  bool failed = false;
  Fields config(fields, path, emitError, failed);
  return ConfigReader(config, context, emitError).read();
}
