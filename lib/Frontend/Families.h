//===- Families.h - what a model type implies -------------------*- C++ -*-===//
//
// The model types the config reader knows, what each implies where its
// config does not say (the RoPE pairing, which layers a window applies to,
// the defaults of its transformers config class), and the types refused
// with the feature they need.
//
//===----------------------------------------------------------------------===//
#ifndef PE_LIB_FRONTEND_FAMILIES_H
#define PE_LIB_FRONTEND_FAMILIES_H

#include "pe/Frontend/ModelConfig.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir::pe::frontend {

/// What a `model_type` implies where its config does not say.
struct Family {
  StringRef modelType;
  PositionEncoding encoding;
  bool interleaved = false;      // RoPE pairs (2i, 2i+1) (GPT-J, Cohere, GLM)
  bool encoder = false;          // bidirectional unless `is_decoder`
  bool windowEverywhere = false; // `sliding_window` applies to every layer
  bool layerTypes = false;       // its transformers code reads `layer_types`
  /// Multi-head latent attention (DeepSeek-V2's): heads of qk_nope_head_dim
  /// plain channels and a rotated block of qk_rope_head_dim, values of
  /// v_head_dim; the pairing of `interleaved`, or of `rope_interleave` where
  /// the family reads it.
  bool latent = false;
  bool readsRopeInterleave = false;
  /// Learned attention sinks in every layer (gpt-oss).
  bool sinks = false;
  /// Learned sinks in the sliding-window layers only, whose key/value heads
  /// are `slidingKeyValueHeads` times the config's (MiMo-V2-Flash: 2).
  bool slidingSinks = false;
  int64_t slidingKeyValueHeads = 1;
  /// Value heads of `v_head_dim` channels beside query/key heads of
  /// `head_dim` (MiMo-V2-Flash), without latent attention.
  bool readsValueHeadDim = false;
};

/// The family of `modelType`, or null when pe does not read that type.
const Family *findFamily(StringRef modelType);

/// The feature `modelType` needs that pe.attention does not have, or
/// nullopt when it is not a refused type.
std::optional<StringRef> refusedFeature(StringRef modelType);

/// The model types pe reads, comma-separated.
std::string familyNames();

/// The rows a learned table keeps before position 0 (OPT's and BioGPT's
/// embeddings add 2 to every position).
int64_t positionOffset(StringRef modelType);

/// `object` with the defaults of its model type's config class where a
/// field is absent (an explicit null stays null). Integer defaults are JSON
/// integers and the others JSON numbers, as the class declares them.
llvm::json::Object withFamilyDefaults(const llvm::json::Object &object);

} // namespace mlir::pe::frontend

#endif // PE_LIB_FRONTEND_FAMILIES_H
