//===- ModelConfig.h - a model's config.json as pe attributes and IR -----===//
//
// Reads the positional encoding and attention of a model from a Hugging
// Face transformers-style `config.json` (RoPE with every scaling the dialect
// has, partial and interleaved rotary, per-layer sliding windows and RoPE
// parameters, ALiBi, learned absolute positions) and builds the attention
// of each kind of layer as `pe` IR. A field left out takes the default of
// transformers' config class for the model type. Fields unrelated to
// positional encoding or attention are ignored; an unknown model type, rope
// type or rope parameter, a bad value, or contradictory fields are an error
// naming the field. docs/configs.md lists the fields read and the model types.
//
//===----------------------------------------------------------------------===//
#ifndef PE_FRONTEND_MODELCONFIG_H
#define PE_FRONTEND_MODELCONFIG_H

#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir::pe {

/// How a model encodes positions.
enum class PositionEncoding { Rope, Alibi, Learned };

/// The attention of one kind of layer (models with local and global layers
/// have two kinds).
struct AttentionKind {
  /// The function that computes it: `attention`, or `attention_<type>` when
  /// the model has several kinds (`attention_sliding`, `attention_full`).
  std::string function;
  /// The Hugging Face layer type (`full_attention`, `sliding_attention`).
  std::string layerType;
  /// A layer of a RoPE model that does not rotate (NoPE: SmolLM3's
  /// `no_rope_layers`, the global layers of EXAONE 4 and Cohere 2).
  bool withoutRope = false;
  bool causal = true;
  std::optional<int64_t> window;
  /// Chunked attention (Llama 4's attention_chunk_size).
  std::optional<int64_t> chunk;
  /// The scale of the scores where it is not 1/sqrt(head_dim).
  std::optional<double> scale;
  /// RoPE fused into the attention (null without RoPE); `ropeSpec` is the
  /// same configuration as JSON (`theta`, `rotary_dim`, `style`, `scaling`
  /// with the scaling's `type` and parameters).
  RopeAttr rope;
  llvm::json::Object ropeSpec;
  /// ALiBi's max_bias.
  std::optional<double> alibi;
  /// Logit soft-capping (`attn_logit_softcapping`).
  std::optional<double> softcap;
  /// Query temperature tuning (Llama 4's NoPE layers), or null.
  TemperatureAttr temperature;
  /// Learned attention sinks (gpt-oss): the function takes them as an f32
  /// [Hq] argument after the positions.
  bool sinks = false;
  /// The kind's key/value heads where they differ from the model's
  /// (MiMo-V2-Flash's sliding-window layers have twice as many); 0: the
  /// model's numKeyValueHeads.
  int64_t keyValueHeads = 0;
};

/// What pe reads from a config.
struct ModelConfig {
  std::string modelType;
  PositionEncoding encoding = PositionEncoding::Rope;
  int64_t numHeads = 0, numKeyValueHeads = 0, headDim = 0, hiddenSize = 0;
  int64_t numLayers = 0, maxPositionEmbeddings = 0;
  /// The value head dim (multi-head latent attention: v_head_dim, beside the
  /// query/key head dim qk_nope_head_dim + qk_rope_head_dim); headDim else.
  int64_t valueHeadDim = 0;
  /// Multi-head latent attention: the channels of a query/key head before
  /// its rotated block (qk_nope_head_dim); 0 otherwise.
  int64_t rotaryOffset = 0;
  /// Multi-head latent attention: the channels of the compressed latent the
  /// keys and values expand from (kv_lora_rank); 0 otherwise.
  int64_t latentRank = 0;
  /// Learned positions: the table is [maxPositionEmbeddings + positionOffset,
  /// embeddingSize], and position p reads its row p + positionOffset (OPT and
  /// BioGPT keep two rows first: an offset of 2).
  int64_t positionOffset = 0, embeddingSize = 0;
  SmallVector<AttentionKind> kinds;
  /// The kind of each layer (an index into `kinds`).
  SmallVector<unsigned> layerKinds;
};

/// Parses the text of a config.json as transformers writes it: Python's json
/// module writes the non-finite floats as the bare words `NaN`, `Infinity`
/// and `-Infinity`, which are not JSON. They are read as the strings "NaN",
/// "Infinity" and "-Infinity", so that a field pe reads as a number reports
/// them and one it ignores does not matter.
llvm::Expected<llvm::json::Value> parseConfigJson(llvm::StringRef text);

/// Reads `root` (a parsed config.json); errors are reported through
/// `emitError` and name the field.
FailureOr<ModelConfig>
readModelConfig(const llvm::json::Value &root, MLIRContext *context,
                function_ref<InFlightDiagnostic()> emitError);

/// The sizes of the IR built for a config (ShapedType::kDynamic for `?`).
struct ModelShapes {
  int64_t batch = 1;
  int64_t queries = ShapedType::kDynamic;
  int64_t keys = ShapedType::kDynamic;
  /// f32, f16 or bf16.
  Type element;
  /// Latent attention only: k holds each head's qk_nope_head_dim channels and
  /// the functions take the rotated block all key heads share, k_pe
  /// [B, 1, Skv, qk_rope_head_dim], as their last argument (pe.attention's
  /// shared_key), instead of keys with the block copied into every head.
  bool sharedKey = false;
  /// Latent attention only: the absorbed form that decodes over the
  /// compressed cache, one KV head of kv_lora_rank latent channels and the
  /// block k_pe (rotated by the function), the values being its latent
  /// channels:
  ///   q [B, H, Sq, R + rope] (W_UK absorbed into the query's first R
  ///   channels), cache [B, 1, Skv, R + rope] -> [B, H, Sq, R]
  /// (W_UV applies to the result), with the expanded form's scale.
  bool absorbed = false;
};

/// A module with one public function per attention kind,
///   @attention(q: [B, Hq, Sq, D], k: [B, Hkv, Skv, D], v: [B, Hkv, Skv, D],
///              q_positions: [B, Sq] i64, k_positions: [B, Skv] i64)
///       -> [B, Hq, Sq, D]
/// (one `pe.attention` with the kind's RoPE or ALiBi fused), and for learned
/// positions also
///   @position_embeddings(table: [max_positions, hidden], positions: [B, Sq] i64)
///       -> [B, Sq, hidden]
/// `shapes.sharedKey` and `shapes.absorbed` (not both) need a latent
/// attention (`config.rotaryOffset > 0`), `shapes.absorbed` its
/// `config.latentRank > 0`.
OwningOpRef<ModuleOp> buildModelModule(const ModelConfig &config,
                                       const ModelShapes &shapes,
                                       Location location);

/// `config` as JSON (`pe-compile --config=FILE --emit=config`), the form the
/// Python API reads.
llvm::json::Value describeModelConfig(const ModelConfig &config);

} // namespace mlir::pe

#endif // PE_FRONTEND_MODELCONFIG_H
