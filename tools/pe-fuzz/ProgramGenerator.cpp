//===- ProgramGenerator.cpp - valid pe programs from fuzzer bytes ---------===//
#include "ProgramGenerator.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <initializer_list>
#include <sstream>

using namespace mlir::pe::fuzz;

std::string TensorSpec::type() const {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return text + element + ">";
}

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : runShape)
    n *= d;
  return n;
}

namespace {

/// Positions drawn for an op: small (0..), offset, near 2^20, or anywhere
/// in int64 (i64 only).
struct PositionRange {
  int64_t low, high;
};

class Generator {
public:
  explicit Generator(FuzzedDataProvider &in) : in(in) {}

  Program generate() {
    switch (in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0:
      rope();
      break;
    case 1:
      ropeTables();
      break;
    case 2:
      sinusoidal();
      break;
    case 3:
      learned();
      break;
    case 4:
      alibiBias();
      break;
    default:
      attention();
      break;
    }
    std::ostringstream ir;
    ir << "func.func @f(";
    for (size_t i = 0; i < program.arguments.size(); ++i)
      ir << (i ? ", " : "") << "%a" << i << ": " << program.arguments[i].type();
    ir << ") -> " << program.result.type() << " {\n"
       << body << "  return " << resultName << " : " << program.result.type()
       << "\n}\n";
    program.ir = ir.str();
    return program;
  }

private:
  FuzzedDataProvider &in;
  Program program;
  std::string body, resultName;
  int values = 0;

  int64_t pick(std::initializer_list<int64_t> choices) {
    size_t i = in.ConsumeIntegralInRange<size_t>(0, choices.size() - 1);
    return *(choices.begin() + i);
  }
  bool chance(int percent) { return in.ConsumeIntegralInRange<int>(0, 99) < percent; }
  std::string floatElement() {
    int64_t k = pick({0, 0, 0, 1, 2});
    return k == 0 ? "f32" : k == 1 ? "f16" : "bf16";
  }
  /// A size: static, or dynamic (-1) with run-time size `run`.
  std::pair<int64_t, int64_t> size(int64_t low, int64_t high, bool mayBeDynamic = true) {
    int64_t run = in.ConsumeIntegralInRange<int64_t>(low, high);
    return {mayBeDynamic && chance(40) ? -1 : run, run};
  }
  std::string fresh() { return "%v" + std::to_string(values++); }

  std::string argument(TensorSpec spec) {
    program.arguments.push_back(std::move(spec));
    return "%a" + std::to_string(program.arguments.size() - 1);
  }
  std::string floats(std::string element, std::vector<std::pair<int64_t, int64_t>> dims,
                     bool nonFinite = false) {
    TensorSpec spec;
    spec.element = std::move(element);
    for (auto [d, run] : dims) {
      spec.shape.push_back(d);
      spec.runShape.push_back(run);
    }
    spec.nonFinite = nonFinite;
    return argument(spec);
  }
  PositionRange positionRange(bool i64) {
    switch (in.ConsumeIntegralInRange<int>(0, i64 ? 4 : 3)) {
    case 0:
      return {0, 64};
    case 1:
      return {1000, 1100};
    case 2:
      return {(1 << 20) - 200, 1 << 20};
    case 3:
      return {-3000, 3000};
    default: // near the ends of int64
      return chance(50) ? PositionRange{INT64_MAX - 500, INT64_MAX}
                        : PositionRange{INT64_MIN, INT64_MIN + 500};
    }
  }
  /// Positions [S] or [B, S]; with `streams` > 0, one row per position
  /// stream of a multi-stream rope: [A, S] or [B, A, S].
  std::string positions(std::pair<int64_t, int64_t> batch, std::pair<int64_t, int64_t> seq,
                        bool batched, PositionRange *rangeOut = nullptr, int64_t streams = 0) {
    TensorSpec spec;
    bool i64 = chance(50);
    spec.element = i64 ? "i64" : "i32";
    if (batched) {
      spec.shape.push_back(batch.first);
      spec.runShape.push_back(batch.second);
    }
    if (streams > 0) {
      spec.shape.push_back(streams);
      spec.runShape.push_back(streams);
    }
    spec.shape.push_back(seq.first);
    spec.runShape.push_back(seq.second);
    PositionRange range = positionRange(i64);
    spec.values = Values::Positions;
    spec.low = range.low;
    spec.high = range.high;
    if (rangeOut)
      *rangeOut = range;
    return argument(spec);
  }

  std::string number(std::initializer_list<const char *> choices) {
    size_t i = in.ConsumeIntegralInRange<size_t>(0, choices.size() - 1);
    return *(choices.begin() + i);
  }
  /// A #pe.rope for head dim `headDim`; `rotaryOut` receives rotary_dim.
  /// With `streamsOut`, one in four ropes has sections: *streamsOut receives
  /// their count A (0 without), the stream dim its positions need.
  std::string ropeAttr(int64_t headDim, int64_t *rotaryOut = nullptr,
                       int64_t *streamsOut = nullptr) {
    int64_t rotary = 2 * in.ConsumeIntegralInRange<int64_t>(std::min<int64_t>(2, headDim / 2),
                                                            headDim / 2);
    if (chance(50))
      rotary = headDim - headDim % 2;
    if (rotaryOut)
      *rotaryOut = rotary;
    std::string attr = "#pe.rope<theta = " +
                       number({"10000.0", "500000.0", "1000000.0", "1.5", "123456789.0"}) +
                       ", rotary_dim = " + std::to_string(rotary);
    if (chance(40))
      attr += ", style = interleaved";
    // Sections (C7): 2 to 4 streams (3 or 4 interleaved, up to 8 with axes)
    // of pairs summing to r/2; vision and axes restart the frequencies, so
    // no scaling and no freq_factors; nothing that depends on the sequence.
    int mode = -1;
    int64_t streams = 0;
    if (streamsOut && chance(25)) {
      mode = in.ConsumeIntegralInRange<int>(0, 3);
      const int64_t low = mode == 1 ? 3 : 2, high = mode == 3 ? 8 : 4;
      streams = in.ConsumeIntegralInRange<int64_t>(low, high);
    }
    if (streamsOut)
      *streamsOut = streams;
    const bool restarts = mode == 2 || mode == 3;
    int kind = restarts ? 0 : in.ConsumeIntegralInRange<int>(0, 7);
    if (streams && (kind == 3 || kind == 6)) // dynamic NTK, LongRoPE
      kind = 0;
    std::string factor = number({"2.0", "4.0", "8.0", "0.5", "32.0"});
    std::string l0 = number({"16", "64", "4096"});
    switch (kind) {
    case 1:
      attr += ", scaling = #pe.linear<factor = " + factor + ">";
      break;
    case 2:
      if (rotary > 2)
        attr += ", scaling = #pe.ntk<factor = " + factor + ">";
      break;
    case 3:
      if (rotary > 2)
        attr += ", scaling = #pe.dynamic_ntk<factor = " + factor +
                ", max_position_embeddings = " + l0 + ">";
      break;
    case 4:
      attr += ", scaling = #pe.yarn<factor = " + factor +
              ", original_max_position_embeddings = " + l0 +
              (chance(50) ? ", truncate = false" : "") +
              (chance(30) ? ", extrapolation_factor = " + number({"0.0", "0.5"}) : "") + ">";
      break;
    case 5:
      attr += ", scaling = #pe.llama3<factor = " + factor +
              ", original_max_position_embeddings = " + l0 + ">";
      break;
    case 6: {
      std::string shortList, longList;
      for (int64_t i = 0; i < rotary / 2; ++i) {
        shortList += (i ? ", " : "") + number({"1.0", "1.5", "2.0"});
        longList += (i ? ", " : "") + number({"1.0", "4.0", "16.0", "64.0"});
      }
      attr += ", scaling = #pe.longrope<short_factor = [" + shortList + "], long_factor = [" +
              longList + "], original_max_position_embeddings = " + l0 +
              (chance(50) ? ", factor = 8.0" : "") + ">";
      break;
    }
    case 7:
      attr += ", scaling = #pe.proportional<factor = " + factor +
              ", partial_rotary_factor = " + number({"0.25", "0.5", "1.0"}) + ">";
      break;
    default:
      break;
    }
    if (!restarts && chance(20)) {
      attr += ", freq_factors = [";
      for (int64_t i = 0; i < rotary / 2; ++i)
        attr += (i ? ", " : "") + number({"1.0", "1.5", "8.0", "0.25"});
      attr += "]";
    }
    if (chance(20))
      attr += ", magnitude = " + number({"0.5", "1.25"});
    if (streams)
      attr += sections(rotary / 2, streams, mode);
    return attr + ">";
  }

  /// `, sections = [..], section_mode = ..`: `streams` counts of pairs (some
  /// possibly 0) summing to `pairs`.
  std::string sections(int64_t pairs, int64_t streams, int mode) {
    std::string list;
    int64_t left = pairs;
    for (int64_t j = 0; j < streams; ++j) {
      int64_t s = j + 1 == streams ? left : in.ConsumeIntegralInRange<int64_t>(0, left);
      left -= s;
      list += (j ? ", " : "") + std::to_string(s);
    }
    static const char *const modes[] = {"contiguous", "interleaved", "vision", "axes"};
    return ", sections = [" + list + "]" +
           (mode > 0 || chance(50) ? std::string(", section_mode = ") + modes[mode] : "");
  }

  void rope() {
    std::string element = floatElement();
    auto batch = size(1, 2), seq = size(0, 24);
    int64_t heads = pick({1, 2, 3, 4});
    int64_t headDim = pick({2, 4, 8, 16, 32, 48, 64, 96, 128});
    bool bshd = chance(40);
    std::vector<std::pair<int64_t, int64_t>> dims =
        bshd ? std::vector<std::pair<int64_t, int64_t>>{batch, seq, {heads, heads}, {headDim, headDim}}
             : std::vector<std::pair<int64_t, int64_t>>{batch, {heads, heads}, seq, {headDim, headDim}};
    std::string x = floats(element, dims);
    int64_t streams = 0;
    std::string attr = ropeAttr(headDim, nullptr, &streams);
    std::string p = positions(batch, seq, chance(30), nullptr, streams);
    const TensorSpec &xs = program.arguments[0], &ps = program.arguments[1];
    int chain = pick({1, 1, 2, 3});
    std::string value = x;
    for (int i = 0; i < chain; ++i) {
      std::string next = fresh();
      body += "  " + next + " = pe.rope " + attr + " " + value + ", " + p +
              (bshd ? " layout(bshd)" : "") + " : " + xs.type() + ", " + ps.type() + "\n";
      value = next;
    }
    program.result = xs;
    resultName = value;
  }

  void ropeTables() {
    auto batch = size(1, 2), seq = size(0, 24);
    std::string p = positions(batch, seq, chance(30));
    const TensorSpec &ps = program.arguments[0];
    int64_t rotary = 0;
    std::string attr = ropeAttr(pick({4, 8, 16, 64, 128}), &rotary);
    TensorSpec result = ps;
    result.element = floatElement();
    result.shape.push_back(rotary / 2);
    result.runShape.push_back(rotary / 2);
    result.values = Values::Floats;
    resultName = fresh();
    body += "  " + resultName + ", " + fresh() + " = pe.rope_tables " + attr + " " + p +
            " : " + ps.type() + " -> " + result.type() + "\n";
    program.result = result;
  }

  void sinusoidal() {
    auto batch = size(1, 2), seq = size(0, 24);
    std::string p = positions(batch, seq, chance(30));
    TensorSpec result = program.arguments[0];
    int64_t dim = pick({1, 4, 7, 8, 16, 33, 64, 128});
    result.element = floatElement();
    result.shape.push_back(dim);
    result.runShape.push_back(dim);
    result.values = Values::Floats;
    resultName = fresh();
    // The attributes in the op's syntax order.
    // fairseq spacing and freq_shift divide by dim/2 - shift, which must stay > 0.
    const bool fairseq = dim >= 4 && chance(30);
    std::string attributes =
        (chance(30) ? " base(" + number({"100.0", "10000.0", "1.0e6"}) + ")" : "") +
        std::string(chance(50) ? " layout(concat)" : "") + (fairseq ? " spacing(fairseq)" : "") +
        (!fairseq && dim >= 4 && chance(20) ? " freq_shift(" + number({"0.0", "1.0", "0.5"}) + ")"
                                             : "") +
        (chance(20) ? " scale(" + number({"1000.0", "0.5", "-2.0"}) + ")" : "") +
        (chance(30) ? " cos_first" : "") +
        (dim % 2 ? std::string(" odd(") + (chance(50) ? "sin" : "zero") + ")" : "") +
        (chance(20) ? " padding_idx(" + number({"0", "1", "-1"}) + ")" : "");
    body += "  " + resultName + " = pe.sinusoidal " + p + attributes + " : " +
            program.arguments[0].type() + " -> " + result.type() + "\n";
    program.result = result;
  }

  void learned() {
    std::string element = floatElement();
    auto rows = size(1, 50), cols = std::pair<int64_t, int64_t>{pick({1, 8, 16, 64}), 0};
    cols.second = cols.first;
    std::string table = floats(element, {rows, cols});
    auto batch = size(1, 2), seq = size(0, 24);
    TensorSpec p;
    p.element = chance(50) ? "i64" : "i32";
    bool batched = chance(30);
    if (batched) {
      p.shape.push_back(batch.first);
      p.runShape.push_back(batch.second);
    }
    p.shape.push_back(seq.first);
    p.runShape.push_back(seq.second);
    p.values = Values::TableRows;
    p.high = rows.second - 1;
    std::string positionsName = argument(p);
    TensorSpec result = p;
    result.element = element;
    result.shape.push_back(cols.first);
    result.runShape.push_back(cols.second);
    result.values = Values::Floats;
    resultName = fresh();
    body += "  " + resultName + " = pe.learned " + table + "[" + positionsName + "] : " +
            program.arguments[0].type() + ", " + p.type() + " -> " + result.type() + "\n";
    program.result = result;
  }

  void alibiBias() {
    int64_t heads = pick({1, 2, 3, 5, 8, 12});
    auto seqQ = size(0, 16), seqK = size(0, 24);
    // The slopes are f32 (the op's type); the bias f32 or f16.
    std::string element = chance(70) ? "f32" : "f16";
    std::string slopes = fresh();
    body += "  " + slopes + " = pe.alibi_slopes" +
            (chance(30) ? " max_bias(" + number({"4.0", "16.0"}) + ")" : "") + " : tensor<" +
            std::to_string(heads) + "xf32>\n";
    auto batch = size(1, 2);
    bool batched = chance(30);
    std::string qp = positions(batch, seqQ, batched);
    std::string kp = positions(batch, seqK, false);
    TensorSpec result;
    result.element = element;
    if (batched) {
      result.shape.push_back(batch.first);
      result.runShape.push_back(batch.second);
    }
    for (auto [d, run] : {std::pair<int64_t, int64_t>{heads, heads}, seqQ, seqK}) {
      result.shape.push_back(d);
      result.runShape.push_back(run);
    }
    resultName = fresh();
    body += "  " + resultName + " = pe.alibi_bias " + (chance(50) ? "causal" : "symmetric") +
            " " + slopes + ", " + qp + ", " + kp + " : tensor<" + std::to_string(heads) +
            "xf32>, " + program.arguments[0].type() + ", " + program.arguments[1].type() +
            " -> " + result.type() + "\n";
    program.result = result;
  }

  /// An ALiBi bias as the mask operand of pe.attention (the form
  /// pe-fuse-alibi-into-attention fuses): pe.alibi_bias of the query heads at
  /// the given positions (arguments 3 and 4), expanded to [1, Hq, Sq, Skv].
  std::string alibiBiasMask(int64_t hq, int64_t seqQ, int64_t seqK, const std::string &qp,
                            const std::string &kp) {
    std::string slopes = fresh(), bias = fresh(), mask = fresh();
    std::string hqText = std::to_string(hq);
    TensorSpec biasSpec;
    biasSpec.element = "f32";
    biasSpec.shape = {hq, seqQ, seqK};
    TensorSpec maskSpec = biasSpec;
    maskSpec.shape.insert(maskSpec.shape.begin(), 1);
    body += "  " + slopes + " = pe.alibi_slopes : tensor<" + hqText + "xf32>\n";
    body += "  " + bias + " = pe.alibi_bias causal " + slopes + ", " + qp + ", " + kp +
            " : tensor<" + hqText + "xf32>, " + program.arguments[3].type() + ", " +
            program.arguments[4].type() + " -> " + biasSpec.type() + "\n";
    std::string sizes[2];
    for (int i = 0; i < 2; ++i) {
      int64_t d = biasSpec.shape[1 + i];
      if (d >= 0) {
        sizes[i] = std::to_string(d);
        continue;
      }
      std::string index = fresh();
      sizes[i] = fresh();
      body += "  " + index + " = arith.constant " + std::to_string(1 + i) + " : index\n";
      body += "  " + sizes[i] + " = tensor.dim " + bias + ", " + index + " : " +
              biasSpec.type() + "\n";
    }
    body += "  " + mask + " = tensor.expand_shape " + bias +
            " [[0, 1], [2], [3]] output_shape [1, " + hqText + ", " + sizes[0] + ", " +
            sizes[1] + "] : " + biasSpec.type() + " into " + maskSpec.type() + "\n";
    return " mask(" + mask + " : " + maskSpec.type() + ")";
  }

  void attention() {
    std::string element = floatElement();
    int64_t kvHeads = pick({1, 2, 4}), group = pick({1, 2, 3, 4});
    int64_t headDim = pick({16, 32, 48, 64}), valueDim = chance(70) ? headDim : pick({16, 32});
    auto batch = size(1, 2);
    bool decode = chance(30);
    auto seqQ = decode ? std::pair<int64_t, int64_t>{pick({1, 2}), 0} : size(0, 40);
    if (decode)
      seqQ.second = seqQ.first;
    auto seqK = size(0, 120);
    std::pair<int64_t, int64_t> hq{kvHeads * group, kvHeads * group}, hkv{kvHeads, kvHeads};
    bool poison = chance(20);
    // Multi-head latent attention: the last `shared` channels of every key
    // head are one block per token that the heads share (shared_key).
    const int64_t shared = chance(15) ? std::min<int64_t>(pick({8, 16, 32}), headDim - 8) : 0;
    const int64_t ownDim = headDim - shared;
    std::string q = floats(element, {batch, hq, seqQ, {headDim, headDim}}, poison);
    std::string k = floats(element, {batch, hkv, seqK, {ownDim, ownDim}}, poison);
    std::string v = floats(element, {batch, hkv, seqK, {valueDim, valueDim}});
    const TensorSpec qs = program.arguments[0], ks = program.arguments[1],
                     vs = program.arguments[2];
    // The optional operands in the op's order (mask, positions, sinks,
    // shared key), then the attributes.
    std::string maskPart, positionsPart, sinksPart, attrs, operands = q + ", " + k + ", " + v;
    // Positions: given (needed by unfused RoPE/ALiBi) or the defaults. A
    // rotation of keys with a shared block is the attention's own.
    bool rope = chance(50), fuseByPass = !shared && chance(50), alibi = chance(25);
    bool givenPositions = chance(50) || (rope && fuseByPass) || (alibi && fuseByPass);
    std::string qp, kp;
    if (givenPositions) {
      qp = positions(batch, seqQ, false);
      kp = positions(batch, seqK, false);
      positionsPart += " q_positions(" + qp + " : " + program.arguments.end()[-2].type() + ")";
      positionsPart += " k_positions(" + kp + " : " + program.arguments.end()[-1].type() + ")";
    }
    if (chance(20)) {
      // Attention sinks, one logit per query head (non-finite ones included).
      std::string sinks = floats(chance(50) ? "f32" : element, {hq}, chance(20));
      sinksPart = " sinks(" + sinks + " : " + program.arguments.back().type() + ")";
    }
    if (shared) {
      std::string block = floats(element, {batch, {1, 1}, seqK, {shared, shared}}, poison);
      sinksPart += " shared_key(" + block + " : " + program.arguments.back().type() + ")";
    }
    bool causal = chance(60);
    if (chance(40))
      attrs += " scale(" + number({"0.125", "1.0", "0.01"}) + ")";
    if (causal || (alibi && fuseByPass))
      attrs += " causal";
    if (chance(30))
      attrs += " window(" + std::to_string(pick({1, 3, 17, 64, 1 << 20})) + ")";
    if (chance(20)) // Llama 4's chunked attention
      attrs += " chunk(" + std::to_string(pick({1, 5, 16, 64, 1 << 20})) + ")";
    if (alibi && fuseByPass) {
      maskPart = alibiBiasMask(hq.first, seqQ.first, seqK.first, qp, kp);
    } else if (chance(20)) {
      TensorSpec mask;
      mask.element = chance(70) ? "f32" : element;
      for (auto d : {batch, hq}) {
        bool broadcast = chance(50);
        mask.shape.push_back(broadcast ? 1 : d.first);
        mask.runShape.push_back(broadcast ? 1 : d.second);
      }
      for (auto d : {seqQ, seqK}) {
        mask.shape.push_back(d.first);
        mask.runShape.push_back(d.second);
      }
      mask.nonFinite = true;
      std::string m = argument(mask);
      maskPart = " mask(" + m + " : " + mask.type() + ")";
    }
    if (rope) {
      int64_t streams = 0;
      std::string attr = ropeAttr(headDim, nullptr, fuseByPass ? nullptr : &streams);
      if (fuseByPass) {
        // rope ops for pe-fuse-rope-into-attention.
        std::string qr = fresh(), kr = fresh();
        body += "  " + qr + " = pe.rope " + attr + " " + q + ", " + qp + " : " + qs.type() +
                ", " + program.arguments[3].type() + "\n";
        body += "  " + kr + " = pe.rope " + attr + " " + k + ", " + kp + " : " + ks.type() +
                ", " + program.arguments[4].type() + "\n";
        operands = qr + ", " + kr + ", " + v;
      } else {
        attrs += " rope(" + attr + ")";
        if (streams) {
          // The rotation's own positions, one row per stream (M-RoPE).
          bool batched = chance(40);
          std::string qr = positions(batch, seqQ, batched, nullptr, streams);
          std::string kr = positions(batch, seqK, batched, nullptr, streams);
          attrs += " rope_positions(" + qr + ", " + kr + " : " +
                   program.arguments.end()[-2].type() + ", " +
                   program.arguments.end()[-1].type() + ")";
        }
      }
    }
    if (alibi && !fuseByPass)
      attrs += " alibi(" + number({"8.0", "4.0"}) + ")";
    if (chance(15))
      attrs += " softcap(" + number({"5.0", "50.0"}) + ")";
    if (chance(15)) // Llama 4's query temperature tuning
      attrs += " temperature(#pe.temperature<floor_scale = " + number({"1", "8", "8192"}) +
               ", attn_scale = " + number({"0.1", "0.5"}) + ">)";
    attrs = maskPart + positionsPart + sinksPart + attrs;
    resultName = fresh();
    body += "  " + resultName + " = pe.attention " + operands + attrs + " : " + qs.type() +
            ", " + ks.type() + ", " + vs.type() + " -> ";
    TensorSpec result = qs;
    result.shape[3] = result.runShape[3] = valueDim;
    result.nonFinite = false;
    body += result.type() + "\n";
    program.result = result;
  }
};

} // namespace

Program mlir::pe::fuzz::generateProgram(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  return Generator(in).generate();
}
