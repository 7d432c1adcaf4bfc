//===- PEAttrs.td - attributes of the pe dialect ------------*- tablegen -*-===//
#ifndef PE_DIALECT_PE_IR_PEATTRS_TD
#define PE_DIALECT_PE_IR_PEATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "pe/Dialect/PE/IR/PEDialect.td"
include "pe/Dialect/PE/IR/PEInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def PE_RopeStyle : I32EnumAttr<"RopeStyle", "which channels form a rotated pair", [
    I32EnumAttrCase<"half", 0>, I32EnumAttrCase<"interleaved", 1>]> {
  let cppNamespace = "::mlir::pe";
  let genSpecializedAttr = 0;
  let description = [{
    `half`: pairs `(i, i + r/2)` (NeoX, LLaMA in Hugging Face, `rotate_half`).
    `interleaved`: pairs `(2i, 2i + 1)` (GPT-J, the paper, ggml "normal").
  }];
}

def PE_RopeSections : I32EnumAttr<"RopeSections",
    "how the pairs of a multi-stream RoPE take their positions and frequencies", [
    I32EnumAttrCase<"contiguous", 0>, I32EnumAttrCase<"interleaved", 1>,
    I32EnumAttrCase<"vision", 2>, I32EnumAttrCase<"axes", 3>]> {
  let cppNamespace = "::mlir::pe";
  let genSpecializedAttr = 0;
  let description = [{
    With sections `s_j` (pairs per position stream):
    `contiguous`: M-RoPE (Qwen2-VL, Qwen2.5-VL, GLM-4V; ggml `MROPE`): the
    sections in order, the frequency ladder running on across them.
    `interleaved`: Qwen3-VL (ggml `IMROPE`, vLLM `mrope_interleaved`): pair
    `k` takes stream `j = k mod 3` when `k < 3 s_j`, otherwise the fallback
    stream (the fourth of four sections as ggml, else the first as Hugging
    Face and vLLM).
    `vision`: ggml `VISION` (Qwen2-VL's vision tower): the sections in order,
    each restarting the ladder `theta^(-2k'/(r/2))`.
    `axes`: n-axis RoPE (FLUX): the sections in order, each the RoPE of its
    own `2 s_j` channels, `theta^(-2k'/(2 s_j))`.
  }];
}

def PE_Layout : I32EnumAttr<"Layout", "order of the dimensions of an activation", [
    I32EnumAttrCase<"bhsd", 0>, I32EnumAttrCase<"bshd", 1>]> {
  let cppNamespace = "::mlir::pe";
  
}

def PE_SinusoidalLayout : I32EnumAttr<"SinusoidalLayout",
    "placement of the sin and cos channels of a sinusoidal table", [
    I32EnumAttrCase<"interleaved", 0>, I32EnumAttrCase<"concat", 1>]> {
  let cppNamespace = "::mlir::pe";
  
}

def PE_SinusoidalSpacing : I32EnumAttr<"SinusoidalSpacing",
    "spacing of the frequencies of a sinusoidal table", [
    I32EnumAttrCase<"paper", 0>, I32EnumAttrCase<"fairseq", 1>]> {
  let cppNamespace = "::mlir::pe";
  
}

def PE_SinusoidalOdd : I32EnumAttr<"SinusoidalOdd",
    "the last channel of a sinusoidal table of odd dimension", [
    I32EnumAttrCase<"zero", 0>, I32EnumAttrCase<"sin", 1>]> {
  let cppNamespace = "::mlir::pe";
  
}

def PE_AlibiMode : I32EnumAttr<"AlibiMode", "form of the ALiBi bias", [
    I32EnumAttrCase<"causal", 0>, I32EnumAttrCase<"symmetric", 1>]> {
  let cppNamespace = "::mlir::pe";
  
}

def PE_CacheLayout : I32EnumAttr<"CacheLayout", "layout of a key/value cache", [
    I32EnumAttrCase<"dense", 0>, I32EnumAttrCase<"nhd", 1>,
    I32EnumAttrCase<"hnd", 2>]> {
  let cppNamespace = "::mlir::pe";
  let description = [{
    `dense`: `[B, Hkv, Smax, D]`, one row of `Smax` slots per sequence (Hugging
    Face's static cache). `nhd`: pages `[P, page_size, Hkv, D]` (vLLM's and
    FlashInfer's NHD). `hnd`: pages `[P, Hkv, page_size, D]` (FlashInfer's
    HND). A paged slot `s` is row `s mod page_size` of page
    `floor(s / page_size)`.
  }];
}

def PE_LongRopeSelect : I32EnumAttr<"LongRopeSelect",
    "which LongRoPE factor list is used", [
    I32EnumAttrCase<"dynamic", 0>, I32EnumAttrCase<"short_", 1, "short">,
    I32EnumAttrCase<"long_", 2, "long">]> {
  let cppNamespace = "::mlir::pe";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

// A real number, parsed from a float or integer literal and printed in the
// shortest form that round-trips (held as an IEEE double).
class PE_F64Param<string desc> : APFloatParameter<desc> {
  let parser = [{ ::mlir::pe::param::parseF64($_parser) }];
  let printer = [{ ::mlir::pe::param::printF64($_printer, $_self) }];
}
class PE_DefaultF64Param<string value, string desc> : PE_F64Param<desc> {
  let defaultValue = "::llvm::APFloat(" # value # ")";
}
class PE_OptionalF64Param<string desc>
    : AttrOrTypeParameter<"::std::optional<::llvm::APFloat>", desc> {
  let parser = [{ ::mlir::pe::param::parseOptionalF64($_parser) }];
  let printer = [{ ::mlir::pe::param::printF64($_printer, *$_self) }];
  let comparator = [{ ::mlir::pe::param::sameOptionalF64($_lhs, $_rhs) }];
  let defaultValue = "::std::nullopt";
}
// A list of real numbers, `[1.0, 1.5]`.
class PE_F64ListParam<string desc>
    : AttrOrTypeParameter<"::mlir::DenseF64ArrayAttr", desc> {
  let parser = [{ ::mlir::pe::param::parseF64List($_parser) }];
  let printer = [{ ::mlir::pe::param::printF64List($_printer, $_self) }];
}
// An optional list of real numbers (absent: null).
class PE_OptionalF64ListParam<string desc> : PE_F64ListParam<desc> {
  let defaultValue = "::mlir::DenseF64ArrayAttr()";
}
// An optional list of integers, `[16, 24, 24]` (absent: null).
class PE_OptionalI64ListParam<string desc>
    : AttrOrTypeParameter<"::mlir::DenseI64ArrayAttr", desc> {
  let parser = [{ ::mlir::pe::param::parseI64List($_parser) }];
  let printer = [{ ::mlir::pe::param::printI64List($_printer, $_self) }];
  let defaultValue = "::mlir::DenseI64ArrayAttr()";
}
class PE_BoolParam<string value, string desc>
    : AttrOrTypeParameter<"bool", desc> {
  let parser = [{ ::mlir::pe::param::parseBool($_parser) }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
  let defaultValue = value;
}

//===----------------------------------------------------------------------===//
// RoPE scalings
//===----------------------------------------------------------------------===//

class PE_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<PE_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class PE_ScalingAttr<string name, string attrMnemonic>
    : PE_Attr<name, attrMnemonic, [DeclareAttrInterfaceMethods<
          PE_RopeScalingAttrInterface>]> {
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def PE_LinearScalingAttr : PE_ScalingAttr<"LinearScaling", "linear"> {
  let summary = "position interpolation: positions divided by `factor`";
  let description = [{
    `inv_freq[i] = theta^(-2i/r) / factor` (Hugging Face `linear`, ggml
    `freq_scale = 1/factor`, FlashInfer `rope_scale`).
  }];
  let parameters = (ins PE_F64Param<"scale factor s > 0">:$factor);
}

def PE_NtkScalingAttr : PE_ScalingAttr<"NtkScaling", "ntk"> {
  let summary = "static NTK-aware base change";
  let description = [{
    `theta' = theta * factor^(r/(r-2))`, then `inv_freq[i] = theta'^(-2i/r)`:
    pair 0 is unchanged and the lowest frequency is divided by `factor`.
    (vLLM's `ntk` is a different formula; see docs/variants.md.)
  }];
  let parameters = (ins PE_F64Param<"scale factor s > 0">:$factor);
}

def PE_DynamicNtkScalingAttr : PE_ScalingAttr<"DynamicNtkScaling", "dynamic_ntk"> {
  let summary = "dynamic NTK: base raised with the current sequence length";
  let description = [{
    With `L = max(seq_len, max_position_embeddings)`:
    `theta' = theta * (factor * L / max_position_embeddings - (factor - 1))^(r/(r-2))`.
    `seq_len` is `max(positions) + 1` of the call (Hugging Face `dynamic`);
    where no positions are known the base is unchanged.
  }];
  let parameters = (ins PE_F64Param<"scale factor s > 0">:$factor,
      "int64_t":$max_position_embeddings);
}

def PE_YarnScalingAttr : PE_ScalingAttr<"YarnScaling", "yarn"> {
  let summary = "YaRN: ramp between interpolation and extrapolation, and mscale";
  let description = [{
    As Hugging Face `_compute_yarn_parameters`:
    `corr(n) = r * ln(L0 / (2 pi n)) / (2 ln theta)`,
    `low = corr(beta_fast)`, `high = corr(beta_slow)` (floor/ceil when
    `truncate`), clamped to `[0, r-1]`, `high += 0.001` when equal;
    `ramp[i] = clamp((i - low) / (high - low), 0, 1)`;
    `inv_freq[i] = theta^(-2i/r) * (ramp[i] / factor + (1 - ramp[i]))`.
    Magnitude `m` (multiplies cos and sin): `attention_factor` if given, else
    `get_mscale(s, mscale) / get_mscale(s, mscale_all_dim)` if both are given
    and non-zero, else `get_mscale(s)`, with
    `get_mscale(s, k) = s <= 1 ? 1 : 0.1 k ln s + 1`.
    `extrapolation_factor = e` (ggml `ext_factor`, vLLM
    `extrapolation_factor`) keeps the share `e` of the extrapolation:
    `inv_freq[i] = theta^(-2i/r) * (1 - w[i] + w[i] / factor)` with
    `w[i] = 1 - e (1 - ramp[i])`; `e = 1` (the default) is Hugging Face's.
  }];
  let parameters = (ins PE_F64Param<"scale factor s > 0">:$factor,
      "int64_t":$original_max_position_embeddings,
      PE_DefaultF64Param<"32.0", "beta_fast">:$beta_fast,
      PE_DefaultF64Param<"1.0", "beta_slow">:$beta_slow,
      PE_OptionalF64Param<"mscale">:$mscale,
      PE_OptionalF64Param<"mscale_all_dim">:$mscale_all_dim,
      PE_OptionalF64Param<"explicit magnitude factor">:$attention_factor,
      PE_BoolParam<"true", "floor/ceil the correction range">:$truncate,
      PE_DefaultF64Param<"1.0", "share of the extrapolation kept, in [0, 1]">:$extrapolation_factor);
}

def PE_Llama3ScalingAttr : PE_ScalingAttr<"Llama3Scaling", "llama3"> {
  let summary = "Llama 3.1 frequency-dependent interpolation";
  let description = [{
    With wavelength `w_i = 2 pi / inv_freq[i]`, `w_low = L0 / low_freq_factor`,
    `w_high = L0 / high_freq_factor`: keep `inv_freq[i]` where `w_i < w_high`,
    divide by `factor` where `w_i > w_low`, otherwise blend with
    `smooth = (L0 / w_i - low_freq_factor) / (high_freq_factor - low_freq_factor)`:
    `(1 - smooth) * inv_freq[i] / factor + smooth * inv_freq[i]`. Equal
    factors (Llama 4's) leave no band: `w_i = w_low` itself is kept.
  }];
  let parameters = (ins PE_F64Param<"scale factor s > 0">:$factor,
      PE_DefaultF64Param<"1.0", "low_freq_factor">:$low_freq_factor,
      PE_DefaultF64Param<"4.0", "high_freq_factor">:$high_freq_factor,
      "int64_t":$original_max_position_embeddings);
}

def PE_LongRopeScalingAttr : PE_ScalingAttr<"LongRopeScaling", "longrope"> {
  let summary = "LongRoPE / Phi-3 per-pair rescale factors";
  let description = [{
    `inv_freq[i] = 1 / (ext[i] * theta^(2i/r))`, `ext = long_factor` when the
    sequence is longer than `original_max_position_embeddings`, else
    `short_factor`. `select = dynamic` decides per call from
    `max(positions) + 1` (Hugging Face); `short`/`long` fix the choice (vLLM,
    llama.cpp). Magnitude: `attention_factor` if given, else
    `sqrt(1 + ln s / ln L0)` for `s = factor > 1`, else 1.
  }];
  let parameters = (ins PE_F64ListParam<"r/2 factors">:$short_factor,
      PE_F64ListParam<"r/2 factors">:$long_factor,
      "int64_t":$original_max_position_embeddings,
      PE_DefaultF64Param<"1.0", "context extension factor s">:$factor,
      PE_OptionalF64Param<"explicit magnitude factor">:$attention_factor,
      DefaultValuedParameter<"::mlir::pe::LongRopeSelect",
          "::mlir::pe::LongRopeSelect::dynamic">:$select);
}

def PE_ProportionalScalingAttr
    : PE_ScalingAttr<"ProportionalScaling", "proportional"> {
  let summary = "proportional RoPE: only a leading share of the pairs rotates";
  let description = [{
    Hugging Face `proportional`: with `k = floor(partial_rotary_factor * r / 2)`,
    `inv_freq[i] = theta^(-2i/r) / factor` for `i < k` and `0` for the other
    pairs, which therefore pass unrotated. Unlike partial rotary, the
    exponent's denominator and the pairing span the whole `rotary_dim`.
  }];
  let parameters = (ins PE_DefaultF64Param<"1.0", "divisor s > 0">:$factor,
      PE_DefaultF64Param<"1.0", "share of pairs that rotate, in [0, 1]">:$partial_rotary_factor);
}

//===----------------------------------------------------------------------===//
// #pe.temperature
//===----------------------------------------------------------------------===//

def PE_TemperatureAttr : PE_Attr<"Temperature", "temperature"> {
  let summary = "query temperature tuning by position (Llama 4's NoPE layers)";
  let description = [{
    The query at position `p` is multiplied by
    `t(p) = 1 + attn_scale * ln(1 + max(0, floor((p + 1) / floor_scale)))`
    (Llama 4's `attn_temperature_tuning` with its `floor_scale` and
    `attn_scale`; vLLM's Llama 4 NoPE layers): 1 for the first
    `floor_scale - 1` positions, growing slowly after (a position below -1,
    which no cache has, counts as 0).
  }];
  let parameters = (ins "int64_t":$floor_scale, PE_F64Param<"attn_scale">:$attn_scale);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// #pe.rope
//===----------------------------------------------------------------------===//

def PE_RopeAttr : PE_Attr<"Rope", "rope"> {
  let summary = "a rotary position embedding configuration";
  let description = [{
    `#pe.rope<theta = 10000.0, rotary_dim = 128, style = half, scaling = ...>`.
    For pair `i < rotary_dim/2`, `inv_freq[i] = theta^(-2i/rotary_dim)`, then
    changed by the optional `scaling`. A pair `(x, y)` at position `p` becomes
    `(m (x cos a - y sin a), m (y cos a + x sin a))` with `a = p * inv_freq[i]`
    and `m = magnitude *` the scaling's magnitude factor (1 unless YaRN or
    LongRoPE). `freq_factors` (`rotary_dim/2` numbers > 0; ggml
    `freq_factors`, llama.cpp's `rope_freqs`) divide the base frequencies
    `theta^(-2i/r)` before the scaling. The rotated block is channels
    `rotary_offset .. rotary_offset + rotary_dim - 1` (pair channels are
    counted from `rotary_offset`; ggml `n_offs`, MLA's trailing rope block);
    the other channels pass through (partial rotary).

    Multi-stream RoPE: `sections = [s_0, .., s_(A-1)]` (2 to 4 streams, 2
    to 8 with `section_mode = axes`; `sum s_j = rotary_dim/2`) gives each
    token `A` positions, one per stream (`[A, S]` or `[B, A, S]`), and pair
    `i` the position of its stream as `section_mode` assigns it (see
    `RopeSections`). `vision` and `axes` restart the frequencies per section
    and take no scaling or frequency factors; no multi-stream RoPE takes a
    scaling that depends on the sequence length.
  }];
  let parameters = (ins
      PE_DefaultF64Param<"10000.0", "base theta > 1">:$theta,
      "int64_t":$rotary_dim,
      DefaultValuedParameter<"::mlir::pe::RopeStyle",
          "::mlir::pe::RopeStyle::half">:$style,
      OptionalParameter<"::mlir::pe::RopeScalingAttrInterface">:$scaling,
      PE_OptionalF64ListParam<"r/2 divisors of the base frequencies">:$freq_factors,
      PE_DefaultF64Param<"1.0", "magnitude factor > 0">:$magnitude,
      DefaultValuedParameter<"int64_t", "0">:$rotary_offset,
      PE_OptionalI64ListParam<"pairs per position stream">:$sections,
      DefaultValuedParameter<"::mlir::pe::RopeSections",
          "::mlir::pe::RopeSections::contiguous">:$section_mode);
  let builders = [
    AttrBuilder<(ins "::llvm::APFloat":$theta, "int64_t":$rotary_dim,
                     "::mlir::pe::RopeStyle":$style,
                     "::mlir::pe::RopeScalingAttrInterface":$scaling), [{
      return $_get($_ctxt, theta, rotary_dim, style, scaling,
                   ::mlir::DenseF64ArrayAttr(), ::llvm::APFloat(1.0), 0,
                   ::mlir::DenseI64ArrayAttr(),
                   ::mlir::pe::RopeSections::contiguous);
    }]>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The configuration in the form the positional math takes.
    ::mlir::pe::formula::RopeConfig getConfig() const;
    /// The number of position streams: the sections, 1 without.
    int64_t getNumStreams() const {
      return getSections() ? int64_t(getSections().size()) : 1;
    }
    bool isMultiStream() const { return bool(getSections()); }
    /// The per-token shape of `positions`: without the stream dimension
    /// (`[A, S]` -> `[S]`, `[B, A, S]` -> `[B, S]`) of a multi-stream RoPE.
    /// Its tables have this shape plus `[rotary_dim/2]`.
    ::mlir::RankedTensorType getTokenShape(::mlir::RankedTensorType positions) const;
    /// This configuration with another scaling (and theta).
    RopeAttr withScaling(::llvm::APFloat theta,
                         ::mlir::pe::RopeScalingAttrInterface scaling) const;
    /// The same rotation with its block starting at channel `offset`.
    RopeAttr withRotaryOffset(int64_t offset) const;
  }];
}

#endif // PE_DIALECT_PE_IR_PEATTRS_TD
