//===- Families.cpp - what a model type implies ---------------------------===//
#include "Families.h"

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::frontend;
namespace json = llvm::json;

namespace {
constexpr bool kInterleaved = true, kEncoder = true, kWindowEverywhere = true,
               kLayerTypes = true, kLatent = true, kRopeInterleaveField = true,
               kSinks = true, kSlidingSinks = true, kValueHeadDim = true;
constexpr PositionEncoding kRope = PositionEncoding::Rope;

// Falcon reads `alibi` and MPT `attn_config.alibi`; both are checked below.
// Each RoPE family's pairing, windows and layer types are those of its
// transformers modeling code (python/pe/hf_models.py checks every one
// against the model transformers builds from the same config).
const Family kFamilies[] = {
    {"llama", kRope},
    {"mistral", kRope, false, false, kWindowEverywhere},
    {"mixtral", kRope, false, false, kWindowEverywhere},
    {"ministral", kRope, false, false, false, kLayerTypes},
    {"qwen2", kRope, false, false, false, kLayerTypes},
    {"qwen2_moe", kRope, false, false, false, kLayerTypes},
    {"qwen3", kRope, false, false, false, kLayerTypes},
    {"qwen3_moe", kRope, false, false, kWindowEverywhere},
    {"phi", kRope},
    {"phi3", kRope, false, false, kWindowEverywhere},
    {"phimoe", kRope, false, false, kWindowEverywhere},
    {"gemma", kRope},
    {"gemma2", kRope, false, false, false, kLayerTypes},
    {"gemma3_text", kRope, false, false, false, kLayerTypes},
    {"granite", kRope},
    {"granitemoe", kRope},
    {"granitemoeshared", kRope},
    {"olmo", kRope},
    {"olmo2", kRope},
    {"olmo3", kRope, false, false, false, kLayerTypes},
    {"olmoe", kRope},
    {"starcoder2", kRope, false, false, kWindowEverywhere},
    {"stablelm", kRope},
    {"persimmon", kRope},
    {"nemotron", kRope},
    {"seed_oss", kRope},
    {"apertus", kRope},
    {"arcee", kRope},
    {"minimax_m2", kRope},
    {"glm4_moe", kRope},
    {"bitnet", kRope},
    {"solar_open", kRope},
    {"gpt_neox", kRope},
    {"gptj", kRope, kInterleaved},
    {"cohere", kRope, kInterleaved},
    {"glm", kRope, kInterleaved},
    {"glm4", kRope, kInterleaved},
    {"ernie4_5", kRope, kInterleaved},
    {"ernie4_5_moe", kRope, kInterleaved},
    {"helium", kRope, kInterleaved},
    // Multi-head latent attention. DeepSeek-V2 rotates complex pairs
    // (2i, 2i+1); V3 and GLM-4-MoE-Lite de-interleave first when
    // rope_interleave (their default), which is the same pairing up to a
    // permutation that q and k share; V3.2 and LongCat-Flash always do;
    // MiniCPM3 rotates halves.
    {"deepseek_v2", kRope, kInterleaved, false, false, false, kLatent},
    {"deepseek_v3", kRope, kInterleaved, false, false, false, kLatent, kRopeInterleaveField},
    {"deepseek_v32", kRope, kInterleaved, false, false, false, kLatent},
    {"glm4_moe_lite", kRope, kInterleaved, false, false, false, kLatent,
     kRopeInterleaveField},
    {"longcat_flash", kRope, kInterleaved, false, false, false, kLatent},
    {"minicpm3", kRope, false, false, false, false, kLatent},
    // Layers without RoPE (LayerTypes.cpp: readNoRope).
    {"smollm3", kRope, false, false, false, kLayerTypes},
    {"exaone4", kRope, false, false, false, kLayerTypes},
    {"cohere2", kRope, kInterleaved, false, false, kLayerTypes},
    // Chunked attention in its RoPE layers, none in its NoPE layers
    // (LayerTypes.cpp); complex-number (interleaved) pairs.
    {"llama4_text", kRope, kInterleaved, false, false, kLayerTypes},
    // M-RoPE text attention (the sections and their mode: RopeReader.cpp);
    // the generated functions take the position streams.
    {"qwen2_vl_text", kRope, false, false, false, kLayerTypes},
    {"qwen2_5_vl_text", kRope, false, false, false, kLayerTypes},
    {"qwen3_vl_text", kRope, false, false, false, kLayerTypes},
    {"glm4v_text", kRope, kInterleaved, false, false, kLayerTypes},
    // Learned sinks in every layer, alternating sliding and full layers.
    {"gpt_oss", kRope, false, false, false, kLayerTypes, false, false, kSinks},
    // Full and sliding layers (one full layer, then a full one every sixth),
    // each with its own rope_parameters (partial rotary); the sliding layers
    // have twice the key/value heads and learned sinks; values of v_head_dim.
    {"mimo_v2_flash", kRope, false, false, false, kLayerTypes, false, false, false,
     kSlidingSinks, 2, kValueHeadDim},
    {"falcon", kRope},
    {"bloom", PositionEncoding::Alibi},
    {"mpt", PositionEncoding::Alibi},
    {"gpt2", PositionEncoding::Learned},
    {"gpt_neo", PositionEncoding::Learned},
    {"gpt_bigcode", PositionEncoding::Learned},
    {"opt", PositionEncoding::Learned},
    {"biogpt", PositionEncoding::Learned},
    {"bert", PositionEncoding::Learned, false, kEncoder},
    {"roberta", PositionEncoding::Learned, false, kEncoder},
    // RoBERTa's embeddings and attention under other names.
    {"xlm-roberta", PositionEncoding::Learned, false, kEncoder},
    {"xlm-roberta-xl", PositionEncoding::Learned, false, kEncoder},
    {"camembert", PositionEncoding::Learned, false, kEncoder},
    {"roberta-prelayernorm", PositionEncoding::Learned, false, kEncoder},
    {"data2vec-text", PositionEncoding::Learned, false, kEncoder},
    {"electra", PositionEncoding::Learned, false, kEncoder},
    {"albert", PositionEncoding::Learned, false, kEncoder},
    {"distilbert", PositionEncoding::Learned, false, kEncoder},
};

/// Model types whose attention needs a feature pe.attention does not have.
struct RefusedFamily {
  StringRef modelType, feature;
};
const RefusedFamily kRefusedFamilies[] = {
    {"hunyuan_v1_dense", "q and k normalized by a weighted norm after RoPE"},
    {"hunyuan_v1_moe", "q and k normalized by a weighted norm after RoPE"},
};

/// The defaults of transformers' config classes for the fields pe reads:
/// a config.json that leaves a field out means the class's value (an
/// explicit null stays null).
struct FieldDefault {
  constexpr FieldDefault(StringRef modelType, StringRef field, int value)
      : modelType(modelType), field(field), integer(value), isInteger(true) {}
  constexpr FieldDefault(StringRef modelType, StringRef field, double value)
      : modelType(modelType), field(field), number(value), isInteger(false) {}
  json::Value value() const { return isInteger ? json::Value(integer) : json::Value(number); }

  StringRef modelType, field;
  int64_t integer = 0;
  double number = 0.0;
  bool isInteger;
};
const FieldDefault kFieldDefaults[] = {
    {"mistral", "sliding_window", 4096},
    {"mixtral", "rope_theta", 1e6},
    {"qwen2", "max_window_layers", 28},
    {"qwen3", "max_window_layers", 28},
    {"qwen3", "head_dim", 128},
    {"qwen2_moe", "max_window_layers", 28},
    {"phimoe", "rope_theta", 1e6},
    {"ministral", "sliding_window", 4096},
    {"olmo3", "sliding_window", 4096},
    {"olmo3", "rope_theta", 5e5},
    {"llama4_text", "rope_theta", 5e5},
    {"gpt_oss", "rope_theta", 150000.0},
    {"gpt_oss", "sliding_window", 128},
    {"mimo_v2_flash", "num_key_value_heads", 4},
    {"mimo_v2_flash", "head_dim", 192},
    {"mimo_v2_flash", "v_head_dim", 128},
    {"mimo_v2_flash", "sliding_window", 128},
    {"llama4_text", "attention_chunk_size", 8192},
    {"llama4_text", "floor_scale", 8192},
    {"llama4_text", "attn_scale", 0.1},
    {"stablelm", "partial_rotary_factor", 0.25},
    {"persimmon", "partial_rotary_factor", 0.5},
    {"nemotron", "partial_rotary_factor", 0.5},
    {"glm4_moe", "partial_rotary_factor", 0.5},
    {"minimax_m2", "rope_theta", 5e6},
    {"minimax_m2", "head_dim", 128},
    {"seed_oss", "head_dim", 128},
    {"bitnet", "rope_theta", 5e5},
    {"solar_open", "rope_theta", 1e6},
    {"solar_open", "head_dim", 128},
    {"cohere", "rope_theta", 5e5},
    {"glm", "partial_rotary_factor", 0.5},
    {"glm", "head_dim", 128},
    {"glm4", "partial_rotary_factor", 0.5},
    {"glm4", "head_dim", 128},
    {"ernie4_5", "rope_theta", 5e5},
    {"ernie4_5", "head_dim", 128},
    {"ernie4_5_moe", "rope_theta", 5e5},
    {"helium", "rope_theta", 1e5},
    // The latent-attention head sizes of each config class.
    {"deepseek_v2", "qk_nope_head_dim", 128},
    {"deepseek_v2", "qk_rope_head_dim", 64},
    {"deepseek_v2", "v_head_dim", 128},
    {"deepseek_v2", "kv_lora_rank", 512},
    {"deepseek_v3", "qk_nope_head_dim", 128},
    {"deepseek_v3", "qk_rope_head_dim", 64},
    {"deepseek_v3", "v_head_dim", 128},
    {"deepseek_v3", "kv_lora_rank", 512},
    {"deepseek_v32", "qk_nope_head_dim", 128},
    {"deepseek_v32", "qk_rope_head_dim", 64},
    {"deepseek_v32", "v_head_dim", 128},
    {"deepseek_v32", "kv_lora_rank", 512},
    {"glm4_moe_lite", "qk_nope_head_dim", 192},
    {"glm4_moe_lite", "qk_rope_head_dim", 64},
    {"glm4_moe_lite", "v_head_dim", 256},
    {"glm4_moe_lite", "kv_lora_rank", 512},
    {"longcat_flash", "qk_nope_head_dim", 128},
    {"longcat_flash", "qk_rope_head_dim", 64},
    {"longcat_flash", "v_head_dim", 128},
    {"longcat_flash", "kv_lora_rank", 512},
    {"longcat_flash", "rope_theta", 1e7},
    {"minicpm3", "qk_nope_head_dim", 64},
    {"minicpm3", "qk_rope_head_dim", 32},
    {"minicpm3", "v_head_dim", 64},
    {"minicpm3", "kv_lora_rank", 256},
    {"smollm3", "rope_theta", 2e6},
    {"exaone4", "sliding_window", 4096},
    {"cohere2", "sliding_window", 4096},
    {"helium", "head_dim", 128},
    {"granitemoe", "attention_multiplier", 1.0},
    {"granitemoeshared", "attention_multiplier", 1.0},
    {"phi", "partial_rotary_factor", 0.5},
    {"phi3", "original_max_position_embeddings", 4096},
    {"gemma", "head_dim", 256},
    {"gemma2", "head_dim", 256},
    {"gemma2", "query_pre_attn_scalar", 256},
    {"gemma2", "attn_logit_softcapping", 50},
    {"gemma3_text", "head_dim", 256},
    {"gemma3_text", "query_pre_attn_scalar", 256},
    {"gemma3_text", "sliding_window", 4096},
    {"gemma3_text", "sliding_window_pattern", 6},
    {"gemma3_text", "rope_theta", 1e6},
    {"gemma3_text", "rope_local_base_freq", 1e4},
    {"granite", "attention_multiplier", 1.0},
    {"gptj", "rotary_dim", 64},
    {"gpt_neox", "rotary_pct", 0.25},
    {"gpt_neox", "rotary_emb_base", 10000},
    {"gpt_neo", "window_size", 256},
    {"electra", "embedding_size", 128},
    {"albert", "embedding_size", 128},
};

} // namespace

int64_t frontend::positionOffset(StringRef modelType) {
  return modelType == "opt" || modelType == "biogpt" ? 2 : 0;
}

const Family *frontend::findFamily(StringRef modelType) {
  for (const Family &family : kFamilies)
    if (family.modelType == modelType)
      return &family;
  return nullptr;
}

std::optional<StringRef> frontend::refusedFeature(StringRef modelType) {
  for (const RefusedFamily &refused : kRefusedFamilies)
    if (refused.modelType == modelType)
      return refused.feature;
  return std::nullopt;
}

std::string frontend::familyNames() {
  std::string names;
  for (const Family &family : kFamilies)
    names += (names.empty() ? "" : ", ") + family.modelType.str();
  return names;
}

/// MiMo-V2-Flash's rope_parameters when its config leaves them out: one
/// entry per layer type, as its config class sets them.
static json::Object mimoRopeParameters() {
  auto entry = [](double theta) {
    return json::Object{{"rope_type", "default"},
                        {"rope_theta", theta},
                        {"partial_rotary_factor", 0.334}};
  };
  return json::Object{{"full_attention", entry(5000000.0)},
                      {"sliding_attention", entry(10000.0)}};
}

json::Object frontend::withFamilyDefaults(const json::Object &object) {
  json::Object merged = object;
  std::optional<StringRef> type = object.getString("model_type");
  for (const FieldDefault &d : kFieldDefaults)
    if (type && d.modelType == *type && !object.get(d.field))
      merged[d.field] = d.value();
  if (type == "mimo_v2_flash" && !object.get("rope_parameters"))
    merged["rope_parameters"] = mimoRopeParameters();
  return merged;
}
