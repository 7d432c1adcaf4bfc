//===- RopeReader.h - a layer type's RoPE from its rope parameters -*- C++ -*-===//
//
// Hugging Face's rope parameters (`rope_type` and its parameters, the base,
// the rotary share of the head) as the dialect's RoPE attribute.
//
//===----------------------------------------------------------------------===//
#ifndef PE_LIB_FRONTEND_ROPEREADER_H
#define PE_LIB_FRONTEND_ROPEREADER_H

#include "ConfigFields.h"
#include "Families.h"

namespace mlir::pe::frontend {

struct MropeFamily;

/// Reads RoPE from the rope parameters of one layer type (`params`: the v5
/// `rope_parameters`, or the legacy fields gathered in the same form) into
/// an attention kind. `config` is the whole config: a few fields there win
/// over the rope parameters' (GPT-J's rotary_dim, GPT-NeoX's rotary_pct,
/// Phi-3's original_max_position_embeddings).
class RopeReader {
public:
  /// `headDim`: the channels RoPE may rotate, from `rotaryOffset` on
  /// (latent attention's rotated block); `interleaved` overrides the
  /// family's pairing (a `rope_interleave` field).
  RopeReader(const Fields &config, const Family &family, int64_t headDim,
             int64_t maxPositions, int64_t rotaryOffset = 0,
             std::optional<bool> interleaved = std::nullopt)
      : config(config), family(family), headDim(headDim),
        maxPositions(maxPositions), rotaryOffset(rotaryOffset),
        interleaved(interleaved.value_or(family.interleaved)) {}

  /// `kind.rope` and `kind.ropeSpec`; `defaultTheta` where the parameters
  /// give no base (else 10000).
  LogicalResult read(const Fields &params, std::optional<double> defaultTheta,
                     AttentionKind &kind, MLIRContext *context,
                     ErrorFn emitError) const;

private:
  /// `rotary_dim` (GPT-J) or `head_dim * partial_rotary_factor` rounded down
  /// (`rotary_pct` in GPT-NeoX configs). Proportional RoPE spans the head
  /// and keeps its factor in the scaling.
  std::optional<int64_t> readRotaryDim(const Fields &params, StringRef type) const;
  /// The dialect's scaling (`scaling`, empty for none) for Hugging Face
  /// rope type `type`.
  LogicalResult readScaling(StringRef type, const Fields &params,
                            json::Object &scaling) const;
  void readLongRope(const Fields &params, json::Object &scaling,
                    std::optional<int64_t> l0) const;
  /// M-RoPE's `mrope_section` (pairs per temporal, height and width
  /// stream), else the family's default.
  LogicalResult readSections(const Fields &params, const MropeFamily &mrope,
                             MLIRContext *context, DenseI64ArrayAttr &sections) const;

  const Fields &config;
  const Family &family;
  int64_t headDim, maxPositions, rotaryOffset;
  bool interleaved;
};

} // namespace mlir::pe::frontend

#endif // PE_LIB_FRONTEND_ROPEREADER_H
