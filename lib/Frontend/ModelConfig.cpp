//===- ModelConfig.cpp - a model's config.json as pe attributes and IR ----===//
//
// The conventions are those of Hugging Face transformers (v5 and the legacy
// fields it still converts): docs/configs.md.
//
//===----------------------------------------------------------------------===//

#include "pe/Frontend/ModelConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pe;
namespace json = llvm::json;

namespace {
using ErrorFn = function_ref<InFlightDiagnostic()>;

/// The fields of one JSON object, read with their dotted path named in every
/// error. Errors are recorded in a flag shared by all objects of one config,
/// so that a reader goes on (and stops at the next check of the flag).
class Fields {
public:
  Fields(const json::Object &object, std::string path, ErrorFn emitError,
         bool &failed)
      : object(&object), path(std::move(path)), emitError(emitError),
        failed(&failed) {}

  /// `name` qualified with the path of this object.
  std::string qualified(StringRef name) const {
    return path.empty() ? name.str() : path + "." + name.str();
  }
  /// An error about field `name`: "config field 'a.b': ...".
  InFlightDiagnostic error(StringRef name) const {
    *failed = true;
    InFlightDiagnostic diag = emitError();
    diag << "config field '" << qualified(name) << "': ";
    return diag;
  }
  InFlightDiagnostic error(StringRef name, const Twine &message) const {
    InFlightDiagnostic diag = error(name);
    diag << message;
    return diag;
  }

  /// The value of `name`; null when absent or JSON null.
  const json::Value *get(StringRef name) const {
    const json::Value *value = object->get(name);
    return value && value->kind() != json::Value::Null ? value : nullptr;
  }
  bool has(StringRef name) const { return get(name) != nullptr; }
  /// The first of `names` that is present (empty if none).
  StringRef firstOf(ArrayRef<StringRef> names) const {
    for (StringRef name : names)
      if (has(name))
        return name;
    return {};
  }

  std::optional<double> number(StringRef name) const {
    return typed(name, &json::Value::getAsNumber, "a number");
  }
  std::optional<int64_t> integer(StringRef name) const {
    return typed(name, &json::Value::getAsInteger, "an integer");
  }
  std::optional<bool> boolean(StringRef name) const {
    return typed(name, &json::Value::getAsBoolean, "true or false");
  }
  std::optional<std::string> string(StringRef name) const {
    std::optional<StringRef> x = typed(name, &json::Value::getAsString, "a string");
    return x ? std::optional<std::string>(x->str()) : std::nullopt;
  }
  std::optional<Fields> object_(StringRef name) const {
    const json::Value *value = get(name);
    if (!value)
      return std::nullopt;
    if (const json::Object *x = value->getAsObject())
      return Fields(*x, qualified(name), emitError, *failed);
    error(name, "expected an object");
    return std::nullopt;
  }
  std::optional<SmallVector<double>> numbers(StringRef name) const {
    const json::Value *value = get(name);
    if (!value)
      return std::nullopt;
    SmallVector<double> result;
    if (const json::Array *array = value->getAsArray())
      for (const json::Value &item : *array)
        if (std::optional<double> x = item.getAsNumber())
          result.push_back(*x);
    if (!value->getAsArray() || result.size() != value->getAsArray()->size()) {
      error(name, "expected a list of numbers");
      return std::nullopt;
    }
    return result;
  }
  /// An integer in [1, limit] among `names` (their first present), or nullopt.
  std::optional<int64_t> positive(ArrayRef<StringRef> names,
                                  int64_t limit = int64_t(1) << 40) const {
    StringRef name = firstOf(names);
    if (name.empty())
      return std::nullopt;
    std::optional<int64_t> x = integer(name);
    if (x && (*x <= 0 || *x > limit)) {
      error(name) << "expected an integer in [1, " << limit << "], got " << *x;
      return std::nullopt;
    }
    return x;
  }
  /// A finite number > 0, or nullopt.
  std::optional<double> positiveNumber(StringRef name) const {
    std::optional<double> x = number(name);
    if (x && !(*x > 0.0 && std::isfinite(*x))) {
      error(name) << "expected a finite number > 0, got " << *x;
      return std::nullopt;
    }
    return x;
  }

  const json::Object &raw() const { return *object; }
  bool hasFailed() const { return *failed; }
  bool &failedFlag() const { return *failed; }

private:
  /// The value of `name` as `(value.*as)()`: nullopt when absent, an error
  /// when of another JSON type.
  template <typename T>
  std::optional<T> typed(StringRef name, std::optional<T> (json::Value::*as)() const,
                         StringRef expected) const {
    const json::Value *value = get(name);
    if (!value)
      return std::nullopt;
    if (std::optional<T> x = (value->*as)())
      return x;
    error(name) << "expected " << expected;
    return std::nullopt;
  }

  const json::Object *object;
  std::string path;
  ErrorFn emitError;
  bool *failed;
};

//===----------------------------------------------------------------------===//
// Model families
//===----------------------------------------------------------------------===//

/// What a `model_type` implies where its config does not say.
struct Family {
  StringRef modelType;
  PositionEncoding encoding;
  bool interleaved = false;      // RoPE pairs (2i, 2i+1) (GPT-J, Cohere, GLM)
  bool encoder = false;          // bidirectional unless `is_decoder`
  bool windowEverywhere = false; // `sliding_window` applies to every layer
  bool layerTypes = false;       // its transformers code reads `layer_types`
};

constexpr bool kInterleaved = true, kEncoder = true, kWindowEverywhere = true,
               kLayerTypes = true;
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

/// Learned tables that keep rows before position 0 (OPT's and BioGPT's
/// embeddings add 2 to every position).
int64_t positionOffset(StringRef modelType) {
  return modelType == "opt" || modelType == "biogpt" ? 2 : 0;
}

/// Model types whose attention needs a feature pe.attention does not have.
struct RefusedFamily {
  StringRef modelType, feature;
};
constexpr StringLiteral kLatentAttention =
    "multi-head latent attention (RoPE on a trailing part of each head)";
const RefusedFamily kRefusedFamilies[] = {
    {"deepseek_v2", kLatentAttention},
    {"deepseek_v3", kLatentAttention},
    {"deepseek_v32", kLatentAttention},
    {"minicpm3", kLatentAttention},
    {"glm4_moe_lite", kLatentAttention},
    {"longcat_flash", kLatentAttention},
    {"gpt_oss", "attention sinks"},
    {"mimo_v2_flash", "attention sinks"},
    {"smollm3", "layers without RoPE (no_rope_layers)"},
    {"exaone4", "full-attention layers without RoPE"},
    {"cohere2", "full-attention layers without RoPE"},
    {"llama4_text", "chunked attention and layers without RoPE"},
    {"hunyuan_v1_dense", "q and k normalized after RoPE"},
    {"hunyuan_v1_moe", "q and k normalized after RoPE"},
    {"qwen2_vl_text", "multi-axis M-RoPE"},
    {"qwen2_5_vl_text", "multi-axis M-RoPE"},
    {"qwen3_vl_text", "multi-axis M-RoPE"},
};

const Family *findFamily(StringRef modelType) {
  for (const Family &family : kFamilies)
    if (family.modelType == modelType)
      return &family;
  return nullptr;
}

std::string familyNames() {
  std::string names;
  for (const Family &family : kFamilies)
    names += (names.empty() ? "" : ", ") + family.modelType.str();
  return names;
}

/// The defaults of transformers' config classes for the fields pe reads:
/// a config.json that leaves a field out means the class's value (an
/// explicit null stays null).
struct FieldDefault {
  StringRef modelType, field;
  double value;
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

/// `object` with the class defaults of its model type where a field is absent.
json::Object withFamilyDefaults(const json::Object &object) {
  json::Object merged = object;
  std::optional<StringRef> type = object.getString("model_type");
  for (const FieldDefault &d : kFieldDefaults) {
    if (!type || d.modelType != *type || object.get(d.field))
      continue;
    if (d.value == std::floor(d.value))
      merged[d.field] = static_cast<int64_t>(d.value);
    else
      merged[d.field] = d.value;
  }
  return merged;
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

/// The parameters each Hugging Face `rope_type` takes besides `rope_type`
/// (or `type`), `rope_theta` and `partial_rotary_factor`.
const llvm::StringMap<SmallVector<StringRef>> &ropeTypeParameters() {
  static const llvm::StringMap<SmallVector<StringRef>> parameters = {
      {"default", {}},
      {"linear", {"factor"}},
      {"dynamic", {"factor", "original_max_position_embeddings"}},
      {"yarn",
       {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow",
        "mscale", "mscale_all_dim", "attention_factor", "truncate"}},
      {"llama3",
       {"factor", "low_freq_factor", "high_freq_factor",
        "original_max_position_embeddings"}},
      {"longrope",
       {"short_factor", "long_factor", "factor", "attention_factor",
        "original_max_position_embeddings"}},
      {"proportional", {"factor"}},
  };
  return parameters;
}

/// Converts the JSON scaling (`type` + the attribute's parameter names) into
/// the dialect's attribute; the attribute's verifier reports bad values.
RopeScalingAttrInterface buildScaling(MLIRContext *context,
                                      const json::Object &spec,
                                      ErrorFn emitError) {
  StringRef type = *spec.getString("type");
  auto f64 = [&](StringRef name) { return APFloat(*spec.getNumber(name)); };
  auto f64Or = [&](StringRef name, double fallback) {
    return APFloat(spec.getNumber(name).value_or(fallback));
  };
  auto optional = [&](StringRef name) -> std::optional<APFloat> {
    if (std::optional<double> x = spec.getNumber(name))
      return APFloat(*x);
    return std::nullopt;
  };
  auto i64 = [&](StringRef name) { return *spec.getInteger(name); };
  auto list = [&](StringRef name) {
    SmallVector<double> values;
    for (const json::Value &x : *spec.getArray(name))
      values.push_back(*x.getAsNumber());
    return DenseF64ArrayAttr::get(context, values);
  };
  if (type == "linear")
    return LinearScalingAttr::getChecked(emitError, context, f64("factor"));
  if (type == "dynamic_ntk")
    return DynamicNtkScalingAttr::getChecked(emitError, context, f64("factor"),
                                             i64("max_position_embeddings"));
  if (type == "yarn")
    return YarnScalingAttr::getChecked(
        emitError, context, f64("factor"),
        i64("original_max_position_embeddings"), f64Or("beta_fast", 32.0),
        f64Or("beta_slow", 1.0), optional("mscale"), optional("mscale_all_dim"),
        optional("attention_factor"), spec.getBoolean("truncate").value_or(true));
  if (type == "llama3")
    return Llama3ScalingAttr::getChecked(
        emitError, context, f64("factor"), f64("low_freq_factor"),
        f64("high_freq_factor"), i64("original_max_position_embeddings"));
  if (type == "longrope")
    return LongRopeScalingAttr::getChecked(
        emitError, context, list("short_factor"), list("long_factor"),
        i64("original_max_position_embeddings"), f64("factor"),
        optional("attention_factor"), LongRopeSelect::dynamic);
  assert(type == "proportional" && "a scaling the reader produces");
  return ProportionalScalingAttr::getChecked(emitError, context,
                                             f64Or("factor", 1.0),
                                             f64Or("partial_rotary_factor", 1.0));
}

/// Reads RoPE from the rope parameters of one layer type (`params`: the v5
/// `rope_parameters`, or the legacy fields gathered in the same form) into
/// `kind`.
class RopeReader {
public:
  RopeReader(const Fields &config, const Family &family, int64_t headDim,
             int64_t maxPositions)
      : config(config), family(family), headDim(headDim),
        maxPositions(maxPositions) {}

  LogicalResult read(const Fields &params, std::optional<double> defaultTheta,
                     AttentionKind &kind, MLIRContext *context,
                     ErrorFn emitError) {
    StringRef typeField = params.has("rope_type") ? "rope_type" : "type";
    std::string type = params.string(typeField).value_or("default");
    if (params.hasFailed())
      return failure();
    // `su` is the legacy Phi-3 name of LongRoPE; Phi-3 reads `yarn` as
    // LongRoPE too.
    if (type == "su" || (type == "yarn" && family.modelType == "phi3"))
      type = "longrope";
    auto known = ropeTypeParameters().find(type);
    if (known == ropeTypeParameters().end()) {
      params.error(typeField) << "'" << type
                              << "' is not a RoPE type pe reads (default, "
                                 "linear, dynamic, yarn, llama3, longrope, "
                                 "proportional)";
      return failure();
    }
    llvm::StringSet<> allowed = {"rope_type", "type", "rope_theta",
                                 "partial_rotary_factor"};
    for (StringRef name : known->second)
      allowed.insert(name);
    for (const auto &[name, value] : params.raw())
      if (!allowed.contains(name) && value.kind() != json::Value::Null)
        params.error(name) << "not a parameter of rope_type '" << type << "'";

    double theta = params.number("rope_theta").value_or(defaultTheta.value_or(10000.0));
    json::Object scaling;
    if (failed(readScaling(type, params, scaling)))
      return failure();
    std::optional<int64_t> rotaryDim = readRotaryDim(params, type);
    if (!rotaryDim || params.hasFailed())
      return failure();

    kind.ropeSpec = json::Object{
        {"theta", theta},
        {"rotary_dim", *rotaryDim},
        {"style", family.interleaved ? "interleaved" : "half"}};
    RopeScalingAttrInterface scalingAttr;
    if (!scaling.empty()) {
      scalingAttr = buildScaling(context, scaling, emitError);
      if (!scalingAttr)
        return failure();
      kind.ropeSpec["scaling"] = std::move(scaling);
    }
    kind.rope = RopeAttr::getChecked(
        emitError, context, APFloat(theta), *rotaryDim,
        family.interleaved ? RopeStyle::interleaved : RopeStyle::half,
        scalingAttr);
    return success(static_cast<bool>(kind.rope));
  }

private:
  /// `rotary_dim` (GPT-J) or `head_dim * partial_rotary_factor` rounded down
  /// (`rotary_pct` in GPT-NeoX configs). Proportional RoPE spans the head
  /// and keeps its factor in the scaling.
  std::optional<int64_t> readRotaryDim(const Fields &params, StringRef type) {
    if (family.modelType == "gptj" && type != "proportional") {
      std::optional<int64_t> dim = config.integer("rotary_dim");
      if (!dim && !config.hasFailed())
        config.error("rotary_dim", "required (null given)");
      if (dim && (*dim <= 0 || *dim > headDim || *dim % 2)) {
        config.error("rotary_dim") << "expected an even number in [2, head_dim = "
                                   << headDim << "], got " << *dim;
        return std::nullopt;
      }
      return dim;
    }
    if (type == "proportional")
      return headDim;
    // A top-level factor wins over the rope parameters' (GPT-NeoX: rotary_pct).
    bool neox = family.modelType == "gpt_neox";
    const Fields *owner = &config;
    StringRef name = config.firstOf({neox ? "rotary_pct" : "partial_rotary_factor"});
    if (name.empty() && params.has("partial_rotary_factor")) {
      owner = &params;
      name = "partial_rotary_factor";
    }
    double factor = name.empty() ? 1.0 : owner->number(name).value_or(1.0);
    if (!(factor > 0.0 && factor <= 1.0)) {
      owner->error(name) << "expected a value in (0, 1], got " << factor;
      return std::nullopt;
    }
    int64_t dim = static_cast<int64_t>(std::floor(headDim * factor));
    if (dim < 2 || dim % 2) {
      (name.empty() ? config : *owner).error(name.empty() ? "head_dim" : name)
          << "head_dim " << headDim << " x " << factor << " gives " << dim
          << " rotary channels, not an even number >= 2";
      return std::nullopt;
    }
    return dim;
  }

  /// The dialect's scaling (`scaling`, empty for none) for Hugging Face
  /// rope type `type`.
  LogicalResult readScaling(StringRef type, const Fields &params,
                            json::Object &scaling) {
    auto required = [&](StringRef name) -> std::optional<double> {
      std::optional<double> x = params.number(name);
      if (!x && !params.has(name))
        params.error(name) << "required by rope_type '" << type << "'";
      return x;
    };
    auto copy = [&](StringRef name) {
      if (std::optional<double> x = params.number(name))
        scaling[name] = *x;
    };
    // The pre-extension context L0: a top-level field wins over the rope
    // parameters' (Phi-3), and max_position_embeddings stands in for both.
    auto original = [&]() -> std::optional<int64_t> {
      for (const Fields *owner : {&config, &params})
        if (owner->has("original_max_position_embeddings"))
          return owner->positive({"original_max_position_embeddings"});
      if (maxPositions)
        return maxPositions;
      params.error("original_max_position_embeddings")
          << "required by rope_type '" << type << "'";
      return std::nullopt;
    };
    if (type == "default")
      return success();
    // A json::Value made from a StringRef borrows it: keep a copy.
    scaling["type"] = type == "dynamic" ? std::string("dynamic_ntk") : type.str();
    if (type == "linear") {
      if (auto factor = required("factor"))
        scaling["factor"] = *factor;
    } else if (type == "dynamic") {
      // Hugging Face divides by max_position_embeddings, not the original.
      if (auto factor = required("factor"))
        scaling["factor"] = *factor;
      if (!maxPositions)
        config.error("max_position_embeddings", "required by rope_type 'dynamic'");
      scaling["max_position_embeddings"] = maxPositions;
    } else if (type == "yarn") {
      std::optional<int64_t> l0 = original();
      std::optional<double> factor = params.number("factor");
      if (!factor && l0 && maxPositions)
        factor = static_cast<double>(maxPositions) / *l0;
      if (!factor)
        required("factor");
      if (!l0 || !factor)
        return failure();
      scaling["factor"] = *factor;
      scaling["original_max_position_embeddings"] = *l0;
      for (StringRef name : {"beta_fast", "beta_slow", "mscale",
                             "mscale_all_dim", "attention_factor"})
        copy(name);
      if (std::optional<bool> truncate = params.boolean("truncate"))
        scaling["truncate"] = *truncate;
    } else if (type == "llama3") {
      for (StringRef name : {"factor", "low_freq_factor", "high_freq_factor"})
        if (auto x = required(name))
          scaling[name] = *x;
      if (std::optional<int64_t> l0 = original())
        scaling["original_max_position_embeddings"] = *l0;
    } else if (type == "longrope") {
      readLongRope(params, scaling, original());
    } else if (type == "proportional") {
      copy("factor");
      copy("partial_rotary_factor");
    }
    return failure(params.hasFailed());
  }

  void readLongRope(const Fields &params, json::Object &scaling,
                    std::optional<int64_t> l0) {
    for (StringRef name : {"short_factor", "long_factor"}) {
      std::optional<SmallVector<double>> list = params.numbers(name);
      if (!list) {
        if (!params.has(name))
          params.error(name, "required by rope_type 'longrope'");
        continue;
      }
      json::Array array;
      for (double x : *list)
        array.push_back(x);
      scaling[name] = std::move(array);
    }
    if (!l0)
      return;
    scaling["original_max_position_embeddings"] = *l0;
    // s: the explicit factor, else the extension max_position / L0.
    std::optional<double> factor = params.number("factor");
    if (!factor && maxPositions)
      factor = static_cast<double>(maxPositions) / *l0;
    scaling["factor"] = factor.value_or(1.0);
    if (std::optional<double> m = params.number("attention_factor"))
      scaling["attention_factor"] = *m;
  }

  const Fields &config;
  const Family &family;
  int64_t headDim, maxPositions;
};

//===----------------------------------------------------------------------===//
// The config
//===----------------------------------------------------------------------===//

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
      for (const RefusedFamily &refused : kRefusedFamilies)
        if (refused.modelType == *type) {
          config.error("model_type") << "'" << *type << "' models need "
                                     << refused.feature
                                     << ", which pe.attention does not have";
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
    if (config.hasFailed())
      return failure();
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
    if (std::optional<double> cap = config.number("attn_logit_softcapping"))
      if (*cap != 0.0)
        config.error("attn_logit_softcapping")
            << "soft-capped attention scores (" << *cap
            << ") are not a feature of pe.attention";
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
    if (failed(readLayerTypes(model, types)))
      return failure();
    for (const std::string &type : types) {
      auto it = llvm::find_if(model.kinds, [&](const AttentionKind &kind) {
        return kind.layerType == type;
      });
      if (it == model.kinds.end()) {
        model.kinds.push_back(AttentionKind());
        model.kinds.back().layerType = type;
        it = std::prev(model.kinds.end());
      }
      model.layerKinds.push_back(it - model.kinds.begin());
    }
    for (AttentionKind &kind : model.kinds)
      kind.function = model.kinds.size() == 1
                          ? std::string("attention")
                          : "attention_" + StringRef(kind.layerType)
                                               .drop_back(strlen("_attention"))
                                               .str();
    return success();
  }

  /// Hugging Face's layer types: `layer_types` (in the families that read
  /// it), else the family's rule.
  LogicalResult readLayerTypes(const ModelConfig &model,
                               SmallVector<std::string> &types) {
    const int64_t n = model.numLayers;
    StringRef modelType = model.modelType;
    auto every = [&](auto sliding) {
      for (int64_t i = 0; i < n; ++i)
        types.push_back(sliding(i) ? "sliding_attention" : "full_attention");
    };
    bool qwen = modelType.starts_with("qwen");
    if (family->layerTypes && config.has("layer_types")) {
      if (failed(readLayerTypeList(n, types)))
        return failure();
    } else if (modelType == "gemma3_text") {
      // Every pattern-th layer is global.
      int64_t pattern = config.positive({"sliding_window_pattern"}).value_or(6);
      every([&](int64_t i) { return (i + 1) % pattern != 0; });
    } else if (modelType == "gemma2") {
      every([](int64_t i) { return i % 2 == 0; });
    } else if (modelType == "gpt_neo") {
      if (failed(readGptNeoAttentionTypes(n, types)))
        return failure();
    } else if (family->layerTypes && !qwen && config.has("sliding_window")) {
      // Ministral and OLMo 3 derive a pattern pe does not repeat.
      config.error("layer_types", "required with a sliding_window for model type '" +
                                      modelType.str() + "'");
      return failure();
    } else if (qwen && !family->windowEverywhere) {
      // Local from max_window_layers on.
      int64_t first = config.integer("max_window_layers").value_or(28);
      every([&](int64_t i) { return i >= first; });
    } else {
      // The other families ignore `sliding_window` (LLaMA) or apply it to
      // every layer (Mistral, Phi-3).
      bool sliding = family->windowEverywhere && config.has("sliding_window");
      every([&](int64_t) { return sliding; });
    }
    // Qwen2/3 have no window at all without use_sliding_window.
    if (qwen && !config.boolean("use_sliding_window").value_or(false))
      for (std::string &type : types)
        type = "full_attention";
    if (config.hasFailed())
      return failure();
    StringRef windowField = windowFieldOf(modelType);
    if (!config.has(windowField) && llvm::is_contained(types, "sliding_attention")) {
      config.error(windowField, "required by the sliding-window layers");
      return failure();
    }
    return success();
  }

  /// The field holding the window of the sliding-window layers.
  static StringRef windowFieldOf(StringRef modelType) {
    return modelType == "gpt_neo" ? "window_size" : "sliding_window";
  }

  /// GPT-Neo's layers: `attention_layers` (["global", "local", ...], which
  /// transformers' config keeps over the list it derives), else
  /// `attention_types` ([[["global", "local"], 12], ...], each pattern
  /// repeated its count of times). "local" layers see `window_size` keys
  /// (i - j < window_size, as pe's window).
  LogicalResult readGptNeoAttentionTypes(int64_t n, SmallVector<std::string> &types) {
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

  LogicalResult readLayerTypeList(int64_t n, SmallVector<std::string> &types) {
    const json::Array *array = config.get("layer_types")->getAsArray();
    if (!array || static_cast<int64_t>(array->size()) != n) {
      config.error("layer_types") << "expected a list of " << n
                                  << " layer types (num_hidden_layers)";
      return failure();
    }
    for (const json::Value &item : *array) {
      std::optional<StringRef> type = item.getAsString();
      if (!type || (*type != "full_attention" && *type != "sliding_attention")) {
        std::string text;
        llvm::raw_string_ostream(text) << item;
        config.error("layer_types") << "expected 'full_attention' or "
                                       "'sliding_attention', got "
                                    << text;
        return failure();
      }
      types.push_back(type->str());
    }
    return success();
  }

  LogicalResult readKind(const ModelConfig &model, AttentionKind &kind) {
    kind.causal = !(family->encoder && !config.boolean("is_decoder").value_or(false));
    if (kind.layerType == "sliding_attention")
      kind.window = config.positive({windowFieldOf(model.modelType)});
    readScale(model, kind);
    if (model.encoding == PositionEncoding::Alibi) {
      kind.alibi = 8.0; // BLOOM and transformers' MPT
    } else if (model.encoding == PositionEncoding::Rope) {
      std::optional<Fields> params = ropeParameters(kind.layerType);
      if (!params)
        return failure();
      RopeReader rope(config, *family, model.headDim, model.maxPositionEmbeddings);
      if (failed(rope.read(*params, defaultTheta(kind.layerType), kind, context,
                           emitError)))
        return failure();
    }
    return failure(config.hasFailed());
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

llvm::Expected<json::Value> mlir::pe::parseConfigJson(StringRef text) {
  std::string quoted;
  quoted.reserve(text.size());
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      quoted += c;
      if (c == '\\' && i + 1 < text.size())
        quoted += text[++i];
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    StringRef word;
    for (StringRef candidate : {"-Infinity", "Infinity", "NaN"})
      if (text.drop_front(i).starts_with(candidate)) {
        word = candidate;
        break;
      }
    if (word.empty()) {
      quoted += c;
      continue;
    }
    quoted += ("\"" + word + "\"").str();
    i += word.size() - 1;
  }
  return json::parse(quoted);
}

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
//===----------------------------------------------------------------------===//
// IR
//===----------------------------------------------------------------------===//

static void buildAttention(OpBuilder &builder, Location loc,
                           const ModelConfig &config, const AttentionKind &kind,
                           const ModelShapes &shapes) {
  Type i64 = builder.getI64Type();
  int64_t b = shapes.batch, d = config.headDim;
  auto activation = [&](int64_t heads, int64_t length) {
    return RankedTensorType::get({b, heads, length, d}, shapes.element);
  };
  Type query = activation(config.numHeads, shapes.queries);
  Type keys = activation(config.numKeyValueHeads, shapes.keys);
  Type qPositions = RankedTensorType::get({b, shapes.queries}, i64);
  Type kPositions = RankedTensorType::get({b, shapes.keys}, i64);
  auto type = builder.getFunctionType({query, keys, keys, qPositions, kPositions},
                                      {query});
  auto function = func::FuncOp::create(builder, loc, kind.function, type);
  Block *body = function.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  auto args = body->getArguments();
  auto attention = AttentionOp::create(
      builder, loc, query, args[0], args[1], args[2], /*mask=*/Value(), args[3],
      args[4], kind.scale ? builder.getF64FloatAttr(*kind.scale) : FloatAttr(),
      kind.causal ? builder.getUnitAttr() : UnitAttr(),
      kind.window ? builder.getI64IntegerAttr(*kind.window) : IntegerAttr(),
      kind.rope, kind.alibi ? builder.getF64FloatAttr(*kind.alibi) : FloatAttr());
  func::ReturnOp::create(builder, loc, attention.getResult());
}

/// `positions + offset`, elementwise.
static Value addOffset(OpBuilder &builder, Location loc, Value positions, int64_t offset) {
  auto type = cast<RankedTensorType>(positions.getType());
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(tensor::DimOp::create(builder, loc, positions, i));
  Value init = tensor::EmptyOp::create(builder, loc, type, dynamic);
  auto map = linalg::MapOp::create(
      builder, loc, ValueRange{positions}, init,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value c = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(offset));
        linalg::YieldOp::create(b, l, ValueRange{arith::AddIOp::create(b, l, args[0], c)});
      });
  return map.getResult()[0];
}

/// `@position_embeddings(table, positions)`: the rows of the learned table
/// at the positions (plus the family's offset).
static void buildPositionEmbeddings(OpBuilder &builder, Location loc,
                                    const ModelConfig &config,
                                    const ModelShapes &shapes) {
  Type table = RankedTensorType::get(
      {config.maxPositionEmbeddings + config.positionOffset, config.embeddingSize},
      shapes.element);
  Type positions =
      RankedTensorType::get({shapes.batch, shapes.queries}, builder.getI64Type());
  Type result = RankedTensorType::get(
      {shapes.batch, shapes.queries, config.embeddingSize}, shapes.element);
  auto function = func::FuncOp::create(
      builder, loc, "position_embeddings",
      builder.getFunctionType({table, positions}, {result}));
  Block *body = function.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  Value rowsAt = body->getArgument(1);
  if (config.positionOffset)
    rowsAt = addOffset(builder, loc, rowsAt, config.positionOffset);
  auto rows = LearnedOp::create(builder, loc, result, body->getArgument(0), rowsAt);
  func::ReturnOp::create(builder, loc, rows.getResult());
}

OwningOpRef<ModuleOp> mlir::pe::buildModelModule(const ModelConfig &config,
                                                 const ModelShapes &shapes,
                                                 Location location) {
  location.getContext()
      ->loadDialect<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                    tensor::TensorDialect, PEDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(location);
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  for (const AttentionKind &kind : config.kinds)
    buildAttention(builder, location, config, kind, shapes);
  if (config.encoding == PositionEncoding::Learned)
    buildPositionEmbeddings(builder, location, config, shapes);
  return module;
}

json::Value mlir::pe::describeModelConfig(const ModelConfig &config) {
  auto optional = [](auto value) -> json::Value {
    return value ? json::Value(*value) : json::Value(nullptr);
  };
  json::Array kinds;
  for (const AttentionKind &kind : config.kinds) {
    json::Value rope = nullptr;
    if (kind.rope) {
      json::Object spec = kind.ropeSpec;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << Attribute(kind.rope);
      spec["attr"] = text;
      rope = std::move(spec);
    }
    kinds.push_back(json::Object{{"function", kind.function},
                                 {"layer_type", kind.layerType},
                                 {"causal", kind.causal},
                                 {"window", optional(kind.window)},
                                 {"scale", optional(kind.scale)},
                                 {"rope", std::move(rope)},
                                 {"alibi", optional(kind.alibi)}});
  }
  json::Array layers;
  for (unsigned index : config.layerKinds)
    layers.push_back(config.kinds[index].function);
  StringRef encoding = config.encoding == PositionEncoding::Rope    ? "rope"
                       : config.encoding == PositionEncoding::Alibi ? "alibi"
                                                                    : "learned";
  return json::Object{{"model_type", config.modelType},
                      {"position_encoding", encoding},
                      {"num_attention_heads", config.numHeads},
                      {"num_key_value_heads", config.numKeyValueHeads},
                      {"head_dim", config.headDim},
                      {"hidden_size", config.hiddenSize},
                      {"num_hidden_layers", config.numLayers},
                      {"max_position_embeddings", config.maxPositionEmbeddings},
                      {"position_offset", config.positionOffset},
                      {"embedding_size", config.embeddingSize},
                      {"kinds", std::move(kinds)},
                      {"layers", std::move(layers)}};
}
