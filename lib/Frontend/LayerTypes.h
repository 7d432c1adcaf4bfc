//===- LayerTypes.h - the layer type of every layer -------------*- C++ -*-===//
//
// Which layers attend globally and which through a sliding window:
// Hugging Face's `layer_types` where the family reads it, else the family's
// own rule (Gemma's patterns, Qwen's max_window_layers, GPT-Neo's
// attention_types, a window on every layer or none).
//
//===----------------------------------------------------------------------===//
#ifndef PE_LIB_FRONTEND_LAYERTYPES_H
#define PE_LIB_FRONTEND_LAYERTYPES_H

#include "ConfigFields.h"
#include "Families.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::pe::frontend {

class LayerTypeReader {
public:
  LayerTypeReader(const Fields &config, const Family &family)
      : config(config), family(family) {}

  /// `full_attention`, `sliding_attention` or `chunked_attention` for each
  /// of the model's `numLayers` layers (Llama 4 without `layer_types`:
  /// chunked where the layer rotates).
  LogicalResult read(const ModelConfig &model, SmallVector<std::string> &types) const;

  /// Whether each layer of `types` skips RoPE (NoPE): SmolLM3's and Llama
  /// 4's `no_rope_layers` (1: RoPE; absent: every
  /// `no_rope_layer_interval`-th layer without), EXAONE 4's global layers
  /// when it has a window, Cohere 2's layers other than its sliding-window
  /// ones; none elsewhere.
  LogicalResult readNoRope(const ModelConfig &model, ArrayRef<std::string> types,
                           SmallVector<bool> &withoutRope) const;

  /// The field holding the window of the sliding-window layers.
  static StringRef windowField(StringRef modelType);

private:
  /// GPT-Neo's layers: `attention_layers` (["global", "local", ...], which
  /// transformers' config keeps over the list it derives), else
  /// `attention_types` ([[["global", "local"], 12], ...], each pattern
  /// repeated its count of times). "local" layers see `window_size` keys
  /// (i - j < window_size, as pe's window).
  LogicalResult readGptNeoAttentionTypes(int64_t n, SmallVector<std::string> &types) const;
  /// `layer_types`: n entries, each `full_attention`, `sliding_attention`
  /// or `chunked_attention`.
  LogicalResult readLayerTypeList(int64_t n, SmallVector<std::string> &types) const;
  /// `no_rope_layers` (n entries, 1: RoPE, 0: none), else every
  /// `no_rope_layer_interval`-th layer (4 by default) without RoPE.
  LogicalResult readNoRopeLayers(int64_t n, SmallVector<bool> &withoutRope) const;

  const Fields &config;
  const Family &family;
};

} // namespace mlir::pe::frontend

#endif // PE_LIB_FRONTEND_LAYERTYPES_H
