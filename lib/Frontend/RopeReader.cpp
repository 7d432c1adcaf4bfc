//===- RopeReader.cpp - a layer type's RoPE from its rope parameters ------===//
#include "RopeReader.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::pe;
using namespace mlir::pe::frontend;

namespace mlir::pe::frontend {
/// The multimodal families whose text attention rotates by M-RoPE: the mode
/// their modeling code applies and the sections it takes when the rope
/// parameters give no `mrope_section` (none: required).
struct MropeFamily {
  StringRef modelType;
  RopeSections mode;
  std::array<int64_t, 3> defaultSections;
};
const MropeFamily kMropeFamilies[] = {
    {"qwen2_vl_text", RopeSections::contiguous, {0, 0, 0}},
    {"qwen2_5_vl_text", RopeSections::contiguous, {0, 0, 0}},
    // Qwen3-VL interleaves whatever mrope_interleaved says.
    {"qwen3_vl_text", RopeSections::interleaved, {24, 20, 20}},
    {"glm4v_text", RopeSections::contiguous, {8, 12, 12}},
};

const MropeFamily *mropeFamily(StringRef modelType) {
  for (const MropeFamily &family : kMropeFamilies)
    if (family.modelType == modelType)
      return &family;
  return nullptr;
}

} // namespace mlir::pe::frontend

namespace {
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
        optional("attention_factor"), spec.getBoolean("truncate").value_or(true),
        APFloat(1.0));
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
} // namespace

LogicalResult RopeReader::read(const Fields &params, std::optional<double> defaultTheta,
                               AttentionKind &kind, MLIRContext *context,
                               ErrorFn emitError) const {
  StringRef typeField = params.has("rope_type") ? "rope_type" : "type";
  std::string type = params.string(typeField).value_or("default");
  if (params.hasFailed())
    return failure();
  // `su` is the legacy Phi-3 name of LongRoPE; Phi-3 reads `yarn` as
  // LongRoPE too.
  if (type == "su" || (type == "yarn" && family.modelType == "phi3"))
    type = "longrope";
  // Qwen2-VL's legacy `mrope` type is the default RoPE with sections.
  const MropeFamily *mrope = mropeFamily(family.modelType);
  if (type == "mrope" && mrope)
    type = "default";
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
  if (mrope)
    for (StringRef name : {"mrope_section", "mrope_interleaved"})
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
      {"style", interleaved ? "interleaved" : "half"}};
  if (rotaryOffset)
    kind.ropeSpec["rotary_offset"] = rotaryOffset;
  DenseI64ArrayAttr sections;
  RopeSections sectionMode = RopeSections::contiguous;
  if (mrope) {
    if (failed(readSections(params, *mrope, context, sections)))
      return failure();
    sectionMode = mrope->mode;
    kind.ropeSpec["sections"] = json::Array(sections.asArrayRef());
    kind.ropeSpec["section_mode"] = stringifyRopeSections(sectionMode);
  }
  RopeScalingAttrInterface scalingAttr;
  if (!scaling.empty()) {
    scalingAttr = buildScaling(context, scaling, emitError);
    if (!scalingAttr)
      return failure();
    kind.ropeSpec["scaling"] = std::move(scaling);
  }
  kind.rope = RopeAttr::getChecked(
      emitError, context, APFloat(theta), *rotaryDim,
      interleaved ? RopeStyle::interleaved : RopeStyle::half, scalingAttr,
      DenseF64ArrayAttr(), APFloat(1.0), rotaryOffset, sections, sectionMode);
  return success(static_cast<bool>(kind.rope));
}

LogicalResult RopeReader::readSections(const Fields &params, const MropeFamily &mrope,
                                       MLIRContext *context,
                                       DenseI64ArrayAttr &sections) const {
  SmallVector<int64_t> values(mrope.defaultSections.begin(), mrope.defaultSections.end());
  if (std::optional<SmallVector<double>> given = params.numbers("mrope_section")) {
    values.clear();
    for (double x : *given) {
      if (x != std::floor(x) || x < 0 || x > double(int64_t(1) << 40)) {
        params.error("mrope_section") << "expected integers >= 0, got " << x;
        return failure();
      }
      values.push_back(int64_t(x));
    }
  } else if (params.hasFailed()) {
    return failure();
  } else if (values[0] == 0) {
    params.error("mrope_section", "required by the M-RoPE of model type '" +
                                      mrope.modelType.str() + "'");
    return failure();
  }
  sections = DenseI64ArrayAttr::get(context, values);
  return success();
}

std::optional<int64_t> RopeReader::readRotaryDim(const Fields &params,
                                                 StringRef type) const {
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

LogicalResult RopeReader::readScaling(StringRef type, const Fields &params,
                                      json::Object &scaling) const {
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

void RopeReader::readLongRope(const Fields &params, json::Object &scaling,
                              std::optional<int64_t> l0) const {
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
