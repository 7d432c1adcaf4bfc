//===- LayerTypes.cpp - the layer type of every layer ---------------------===//
#include "LayerTypes.h"

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::frontend;

LogicalResult LayerTypeReader::read(const ModelConfig &model,
                                    SmallVector<std::string> &types) const {
  const int64_t n = model.numLayers;
  StringRef modelType = model.modelType;
  auto every = [&](auto sliding) {
    for (int64_t i = 0; i < n; ++i)
      types.push_back(sliding(i) ? "sliding_attention" : "full_attention");
  };
  bool qwen = modelType.starts_with("qwen");
  // SmolLM3, as the Qwen families, has no window without use_sliding_window.
  bool windowNeedsFlag = qwen || modelType == "smollm3";
  if (family.layerTypes && config.has("layer_types")) {
    if (failed(readLayerTypeList(n, types)))
      return failure();
  } else if (modelType == "llama4_text") {
    // Chunked attention where the layer rotates, full attention where not.
    SmallVector<bool> withoutRope;
    if (failed(readNoRopeLayers(n, withoutRope)))
      return failure();
    for (bool nope : withoutRope)
      types.push_back(nope ? "full_attention" : "chunked_attention");
  } else if (modelType == "gemma3_text") {
    // Every pattern-th layer is global.
    int64_t pattern = config.positive({"sliding_window_pattern"}).value_or(6);
    every([&](int64_t i) { return (i + 1) % pattern != 0; });
  } else if (modelType == "mimo_v2_flash") {
    // Full attention in layer 0 and every sixth layer, sliding elsewhere.
    every([](int64_t i) { return i != 0 && (i + 1) % 6 != 0; });
  } else if (modelType == "gemma2") {
    every([](int64_t i) { return i % 2 == 0; });
  } else if (modelType == "gpt_neo") {
    if (failed(readGptNeoAttentionTypes(n, types)))
      return failure();
  } else if (family.layerTypes && !qwen && config.has("sliding_window")) {
    // Ministral and OLMo 3 derive a pattern pe does not repeat.
    config.error("layer_types", "required with a sliding_window for model type '" +
                                    modelType.str() + "'");
    return failure();
  } else if (qwen && !family.windowEverywhere) {
    // Local from max_window_layers on.
    int64_t first = config.integer("max_window_layers").value_or(28);
    every([&](int64_t i) { return i >= first; });
  } else {
    // The other families ignore `sliding_window` (LLaMA) or apply it to
    // every layer (Mistral, Phi-3).
    bool sliding = family.windowEverywhere && config.has("sliding_window");
    every([&](int64_t) { return sliding; });
  }
  // Qwen2/3 and SmolLM3 have no window at all without use_sliding_window.
  if (windowNeedsFlag && !config.boolean("use_sliding_window").value_or(false))
    for (std::string &type : types)
      type = "full_attention";
  if (config.hasFailed())
    return failure();
  StringRef window = windowField(modelType);
  if (!config.has(window) && llvm::is_contained(types, "sliding_attention")) {
    config.error(window, "required by the sliding-window layers");
    return failure();
  }
  if (llvm::is_contained(types, "chunked_attention") &&
      !config.positive({"attention_chunk_size"})) {
    if (!config.hasFailed())
      config.error("attention_chunk_size", "required by the chunked-attention layers");
    return failure();
  }
  return success();
}

LogicalResult LayerTypeReader::readNoRope(const ModelConfig &model,
                                          ArrayRef<std::string> types,
                                          SmallVector<bool> &withoutRope) const {
  const int64_t n = model.numLayers;
  StringRef modelType = model.modelType;
  withoutRope.assign(n, false);
  bool windowed = config.has("sliding_window");
  if (modelType == "exaone4" || modelType == "cohere2") {
    for (int64_t i = 0; i < n; ++i) {
      bool sliding = types[i] == "sliding_attention";
      // EXAONE 4 rotates every layer of a model without a window; Cohere 2
      // only its sliding-window layers (none without a window).
      withoutRope[i] = modelType == "exaone4" ? windowed && !sliding : !(windowed && sliding);
    }
    return success();
  }
  if (modelType != "smollm3" && modelType != "llama4_text")
    return success();
  return readNoRopeLayers(n, withoutRope);
}

LogicalResult LayerTypeReader::readNoRopeLayers(int64_t n,
                                                SmallVector<bool> &withoutRope) const {
  withoutRope.assign(n, false);
  if (const json::Value *list = config.get("no_rope_layers");
      list && list->kind() != json::Value::Null) {
    const json::Array *array = list->getAsArray();
    if (!array || static_cast<int64_t>(array->size()) != n) {
      config.error("no_rope_layers") << "expected a list of " << n
                                     << " entries, 1 (RoPE) or 0 (none)";
      return failure();
    }
    for (int64_t i = 0; i < n; ++i) {
      std::optional<int64_t> rotates = (*array)[i].getAsInteger();
      if (!rotates || (*rotates != 0 && *rotates != 1)) {
        config.error("no_rope_layers", "expected entries 1 (RoPE) or 0 (none)");
        return failure();
      }
      withoutRope[i] = *rotates == 0;
    }
    return success();
  }
  int64_t interval = config.positive({"no_rope_layer_interval"}).value_or(4);
  for (int64_t i = 0; i < n; ++i)
    withoutRope[i] = (i + 1) % interval == 0;
  return failure(config.hasFailed());
}

StringRef LayerTypeReader::windowField(StringRef modelType) {
  return modelType == "gpt_neo" ? "window_size" : "sliding_window";
}

LogicalResult LayerTypeReader::readGptNeoAttentionTypes(int64_t n,
                                                        SmallVector<std::string> &types) const {
  auto typeOf = [](const json::Value &item) -> std::optional<std::string> {
    std::optional<StringRef> type = item.getAsString();
    if (!type || (*type != "global" && *type != "local"))
      return std::nullopt;
    return std::string(*type == "local" ? "sliding_attention" : "full_attention");
  };
  if (const json::Value *layers = config.get("attention_layers")) {
    const json::Array *array = layers->getAsArray();
    if (!array || static_cast<int64_t>(array->size()) != n) {
      config.error("attention_layers")
          << "expected a list of " << n << " \"global\" or \"local\" (num_layers)";
      return failure();
    }
    for (const json::Value &item : *array) {
      std::optional<std::string> type = typeOf(item);
      if (!type) {
        config.error("attention_layers", "expected \"global\" or \"local\" entries");
        return failure();
      }
      types.push_back(*type);
    }
    return success();
  }
  const json::Value *value = config.get("attention_types");
  if (!value) {
    config.error("attention_types", "required for model type 'gpt_neo'");
    return failure();
  }
  auto bad = [&] {
    config.error("attention_types")
        << "expected a list of [[\"global\" | \"local\", ...], count] entries";
    return failure();
  };
  const json::Array *entries = value->getAsArray();
  if (!entries)
    return bad();
  // The layers described, counted before expanding: a large count past
  // num_layers is reported, not expanded into memory. (Each count is at
  // most num_layers <= 2^20 and the patterns hold fewer than 2^40 items in
  // all, so the sum stays far below 2^63.)
  int64_t described = 0;
  for (const json::Value &entry : *entries) {
    const json::Array *pair = entry.getAsArray();
    if (!pair || pair->size() != 2 || !(*pair)[0].getAsArray())
      return bad();
    const json::Array &pattern = *(*pair)[0].getAsArray();
    std::optional<int64_t> count = (*pair)[1].getAsInteger();
    if (!count || *count < 0 || *count > n)
      return bad();
    SmallVector<std::string> once;
    for (const json::Value &item : pattern) {
      std::optional<std::string> type = typeOf(item);
      if (!type)
        return bad();
      once.push_back(*type);
    }
    described += *count * static_cast<int64_t>(once.size());
    for (int64_t repeat = 0; repeat < *count && described <= n; ++repeat)
      types.append(once.begin(), once.end());
  }
  if (described != n) {
    config.error("attention_types")
        << "describes " << described << " layers, but num_layers is " << n;
    return failure();
  }
  return success();
}

LogicalResult LayerTypeReader::readLayerTypeList(int64_t n,
                                                 SmallVector<std::string> &types) const {
  const json::Array *array = config.get("layer_types")->getAsArray();
  if (!array || static_cast<int64_t>(array->size()) != n) {
    config.error("layer_types") << "expected a list of " << n
                                << " layer types (num_hidden_layers)";
    return failure();
  }
  for (const json::Value &item : *array) {
    std::optional<StringRef> type = item.getAsString();
    // Chunked layers in the families whose modeling code has them.
    const bool chunks = family.modelType == "llama4_text";
    if (!type || (*type != "full_attention" && *type != "sliding_attention" &&
                  !(chunks && *type == "chunked_attention"))) {
      std::string text;
      llvm::raw_string_ostream(text) << item;
      config.error("layer_types") << (chunks ? "expected 'full_attention', "
                                               "'sliding_attention' or 'chunked_attention', got "
                                             : "expected 'full_attention' or "
                                               "'sliding_attention', got ")
                                  << text;
      return failure();
    }
    types.push_back(type->str());
  }
  return success();
}
