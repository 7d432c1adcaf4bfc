//===- ModelModule.cpp - a read config as pe IR and as JSON ---------------===//
#include "pe/Frontend/ModelConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pe;
namespace json = llvm::json;

/// `@<kind.function>(q, k, v, q_positions, k_positions[, q_rope_positions,
/// k_rope_positions][, sinks][, k_pe])`: one pe.attention with the kind's
/// rules and its RoPE or ALiBi fused (the rope positions: M-RoPE's streams,
/// [B, A, S]; sinks: the layer's learned f32 logits, one per query head;
/// k_pe: latent attention's rotated key block shared by all heads, with
/// `shapes.sharedKey`, the keys then holding the channels before it).
static void buildAttention(OpBuilder &builder, Location loc,
                           const ModelConfig &config, const AttentionKind &kind,
                           const ModelShapes &shapes) {
  Type i64 = builder.getI64Type();
  int64_t b = shapes.batch;
  auto activation = [&](int64_t heads, int64_t length, int64_t dim) {
    return RankedTensorType::get({b, heads, length, dim}, shapes.element);
  };
  Type query = activation(config.numHeads, shapes.queries, config.headDim);
  const int64_t kvHeads = kind.keyValueHeads ? kind.keyValueHeads : config.numKeyValueHeads;
  assert((!shapes.sharedKey || config.rotaryOffset > 0) && "a shared block needs MLA");
  const int64_t ownKeyDim = shapes.sharedKey ? config.rotaryOffset : config.headDim;
  Type keys = activation(kvHeads, shapes.keys, ownKeyDim);
  Type values = activation(kvHeads, shapes.keys, config.valueHeadDim);
  Type out = activation(config.numHeads, shapes.queries, config.valueHeadDim);
  Type qPositions = RankedTensorType::get({b, shapes.queries}, i64);
  Type kPositions = RankedTensorType::get({b, shapes.keys}, i64);
  SmallVector<Type> inputs = {query, keys, values, qPositions, kPositions};
  const bool multiStream = kind.rope && kind.rope.isMultiStream();
  if (multiStream) {
    int64_t streams = kind.rope.getNumStreams();
    inputs.push_back(RankedTensorType::get({b, streams, shapes.queries}, i64));
    inputs.push_back(RankedTensorType::get({b, streams, shapes.keys}, i64));
  }
  // The positions of the optional arguments, where present.
  const size_t sinksAt = inputs.size();
  if (kind.sinks)
    inputs.push_back(RankedTensorType::get({config.numHeads}, builder.getF32Type()));
  const size_t sharedKeyAt = inputs.size();
  if (shapes.sharedKey)
    inputs.push_back(activation(1, shapes.keys, config.headDim - ownKeyDim));
  auto type = builder.getFunctionType(inputs, {out});
  auto function = func::FuncOp::create(builder, loc, kind.function, type);
  Block *body = function.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  auto args = body->getArguments();
  Value qRope = multiStream ? args[5] : Value(), kRope = multiStream ? args[6] : Value();
  Value sinks = kind.sinks ? args[sinksAt] : Value();
  Value sharedKey = shapes.sharedKey ? args[sharedKeyAt] : Value();
  auto attention = AttentionOp::create(
      builder, loc, out, args[0], args[1], args[2], /*mask=*/Value(), args[3],
      args[4], sinks, qRope, kRope, sharedKey,
      kind.scale ? builder.getF64FloatAttr(*kind.scale) : FloatAttr(),
      kind.causal ? builder.getUnitAttr() : UnitAttr(),
      kind.window ? builder.getI64IntegerAttr(*kind.window) : IntegerAttr(),
      kind.chunk ? builder.getI64IntegerAttr(*kind.chunk) : IntegerAttr(),
      kind.rope, kind.alibi ? builder.getF64FloatAttr(*kind.alibi) : FloatAttr(),
      kind.softcap ? builder.getF64FloatAttr(*kind.softcap) : FloatAttr(),
      kind.temperature);
  func::ReturnOp::create(builder, loc, attention.getResult());
}

/// `@<kind.function>(q, cache, q_positions, k_positions)`: latent
/// attention's absorbed form (ModelShapes::absorbed). One pe.attention of
/// the H query heads over the cache's one KV head of R + rope channels,
/// the values its first R, the kind's rules and scale (explicit: the
/// expanded head's, not 1/sqrt(R + rope)), and its rope moved to the
/// cache's block, which starts at channel R.
static void buildAbsorbedAttention(OpBuilder &builder, Location loc,
                                   const ModelConfig &config, const AttentionKind &kind,
                                   const ModelShapes &shapes) {
  assert(config.rotaryOffset > 0 && config.latentRank > 0 && !shapes.sharedKey &&
         "the absorbed form needs latent attention's widths");
  assert(!kind.sinks && !kind.keyValueHeads && !(kind.rope && kind.rope.isMultiStream()) &&
         "the absorbed form takes no sinks, own key/value heads or rope streams");
  const int64_t b = shapes.batch, latent = config.latentRank;
  const int64_t width = latent + config.headDim - config.rotaryOffset;
  auto activation = [&](int64_t heads, int64_t length, int64_t dim) {
    return RankedTensorType::get({b, heads, length, dim}, shapes.element);
  };
  Type i64 = builder.getI64Type();
  auto query = activation(config.numHeads, shapes.queries, width);
  auto cache = activation(1, shapes.keys, width);
  auto values = activation(1, shapes.keys, latent);
  auto out = activation(config.numHeads, shapes.queries, latent);
  SmallVector<Type> inputs = {query, cache, RankedTensorType::get({b, shapes.queries}, i64),
                              RankedTensorType::get({b, shapes.keys}, i64)};
  auto function = func::FuncOp::create(builder, loc, kind.function,
                                       builder.getFunctionType(inputs, {out}));
  Block *body = function.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  auto args = body->getArguments();
  // v = cache[..., :R]
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, args[1]);
  sizes[3] = builder.getIndexAttr(latent);
  SmallVector<OpFoldResult> zeros(4, builder.getIndexAttr(0)), ones(4, builder.getIndexAttr(1));
  Value v = tensor::ExtractSliceOp::create(builder, loc, values, args[1], zeros, sizes, ones);
  const double scale = kind.scale ? *kind.scale : 1.0 / std::sqrt(double(config.headDim));
  RopeAttr rope = kind.rope ? kind.rope.withRotaryOffset(latent) : RopeAttr();
  auto attention = AttentionOp::create(
      builder, loc, out, args[0], args[1], v, /*mask=*/Value(), args[2], args[3],
      /*sinks=*/Value(), /*q_rope_positions=*/Value(), /*k_rope_positions=*/Value(),
      /*shared_key=*/Value(), builder.getF64FloatAttr(scale),
      kind.causal ? builder.getUnitAttr() : UnitAttr(),
      kind.window ? builder.getI64IntegerAttr(*kind.window) : IntegerAttr(),
      kind.chunk ? builder.getI64IntegerAttr(*kind.chunk) : IntegerAttr(), rope,
      kind.alibi ? builder.getF64FloatAttr(*kind.alibi) : FloatAttr(),
      kind.softcap ? builder.getF64FloatAttr(*kind.softcap) : FloatAttr(), kind.temperature);
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
  for (const AttentionKind &kind : config.kinds) {
    if (shapes.absorbed)
      buildAbsorbedAttention(builder, location, config, kind, shapes);
    else
      buildAttention(builder, location, config, kind, shapes);
  }
  if (config.encoding == PositionEncoding::Learned)
    buildPositionEmbeddings(builder, location, config, shapes);
  return module;
}

json::Value mlir::pe::describeModelConfig(const ModelConfig &config) {
  auto optional = [](auto value) -> json::Value {
    return value ? json::Value(*value) : json::Value(nullptr);
  };
  auto temperature = [](TemperatureAttr t) -> json::Value {
    if (!t)
      return nullptr;
    return json::Object{{"floor_scale", t.getFloorScale()},
                        {"attn_scale", t.getAttnScale().convertToDouble()}};
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
                                 {"chunk", optional(kind.chunk)},
                                 {"sinks", kind.sinks},
                                 {"num_key_value_heads",
                                  kind.keyValueHeads ? kind.keyValueHeads
                                                     : config.numKeyValueHeads},
                                 {"scale", optional(kind.scale)},
                                 {"rope", std::move(rope)},
                                 {"alibi", optional(kind.alibi)},
                                 {"softcap", optional(kind.softcap)},
                                 {"temperature", temperature(kind.temperature)}});
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
                      {"value_head_dim", config.valueHeadDim},
                      {"shared_key_dim",
                       config.rotaryOffset ? config.headDim - config.rotaryOffset : 0},
                      {"kv_lora_rank", config.latentRank},
                      {"hidden_size", config.hiddenSize},
                      {"num_hidden_layers", config.numLayers},
                      {"max_position_embeddings", config.maxPositionEmbeddings},
                      {"position_offset", config.positionOffset},
                      {"embedding_size", config.embeddingSize},
                      {"kinds", std::move(kinds)},
                      {"layers", std::move(layers)}};
}
