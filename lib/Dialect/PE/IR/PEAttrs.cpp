//===- PEAttrs.cpp - attributes of the pe dialect -------------------------===//
#include "pe/Dialect/PE/IR/PE.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::pe;

#include "pe/Dialect/PE/IR/PEEnums.cpp.inc"

#include "pe/Dialect/PE/IR/PEAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "pe/Dialect/PE/IR/PEAttrs.cpp.inc"

//===----------------------------------------------------------------------===//
// Parameter parsers and printers
//===----------------------------------------------------------------------===//

FailureOr<APFloat> param::parseF64(AsmParser &parser) {
  // Any number: a float (`1.5`, `-2.0`, `0x7FF0000000000000 : f64`) or an
  // integer (`factor = 8` reads as 8.0) that a double holds exactly.
  SMLoc loc = parser.getCurrentLocation();
  Attribute attr;
  if (parser.parseAttribute(attr))
    return failure();
  if (auto floatAttr = dyn_cast<FloatAttr>(attr))
    return APFloat(floatAttr.getValueAsDouble());
  if (auto intAttr = dyn_cast<IntegerAttr>(attr);
      intAttr && !intAttr.getType().isUnsignedInteger()) {
    APFloat value(APFloat::IEEEdouble());
    if (value.convertFromAPInt(intAttr.getValue(), /*IsSigned=*/true,
                               APFloat::rmNearestTiesToEven) != APFloat::opOK)
      return parser.emitError(loc, "the integer ")
             << intAttr << " is not exactly a double: write it as a float";
    return value;
  }
  return parser.emitError(loc, "expected a number, but got ") << attr;
}

/// The shortest decimal digits that round-trip `v`, written as Python's
/// repr writes floats: fixed notation for exponents in [-4, 16), else
/// scientific; always a float literal (8.0, 0.1, 500000.0, 1.0e-05).
static std::string formatF64(double v) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), v,
                                    std::chars_format::scientific);
  (void)error;
  std::string text(buffer, end); // [-]d[.ddd]e(+|-)xx
  std::string sign = text.front() == '-' ? "-" : "";
  size_t e = text.find('e');
  std::string digits = text.substr(sign.size(), e - sign.size());
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  int exponent = std::stoi(text.substr(e + 1));
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0)
      return sign + "0." + std::string(-exponent - 1, '0') + digits;
    size_t whole = size_t(exponent) + 1;
    if (digits.size() < whole)
      digits.append(whole - digits.size(), '0');
    std::string fraction = digits.substr(whole);
    return sign + digits.substr(0, whole) + "." + (fraction.empty() ? "0" : fraction);
  }
  std::string mantissa = digits.substr(0, 1) + "." +
                         (digits.size() > 1 ? digits.substr(1) : std::string("0"));
  char exponentText[8];
  std::snprintf(exponentText, sizeof(exponentText), "e%c%02d",
                exponent < 0 ? '-' : '+', std::abs(exponent));
  return sign + mantissa + exponentText;
}

void param::printF64(AsmPrinter &printer, const APFloat &value) {
  const double v = value.convertToDouble();
  if (!std::isfinite(v)) {
    printer << llvm::format("0x%016" PRIX64, value.bitcastToAPInt().getZExtValue())
            << " : f64";
    return;
  }
  printer << formatF64(v);
}

FailureOr<std::optional<APFloat>> param::parseOptionalF64(AsmParser &parser) {
  FailureOr<APFloat> value = parseF64(parser);
  if (failed(value))
    return failure();
  return std::optional<APFloat>(*value);
}

FailureOr<DenseF64ArrayAttr> param::parseF64List(AsmParser &parser) {
  SmallVector<double> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        FailureOr<APFloat> value = parseF64(parser);
        if (failed(value))
          return failure();
        values.push_back(value->convertToDouble());
        return success();
      }))
    return failure();
  return DenseF64ArrayAttr::get(parser.getContext(), values);
}

void param::printF64List(AsmPrinter &printer, DenseF64ArrayAttr values) {
  printer << '[';
  llvm::interleaveComma(values.asArrayRef(), printer,
                        [&](double v) { printF64(printer, APFloat(v)); });
  printer << ']';
}

FailureOr<DenseI64ArrayAttr> param::parseI64List(AsmParser &parser) {
  SmallVector<int64_t> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(values.emplace_back());
      }))
    return failure();
  return DenseI64ArrayAttr::get(parser.getContext(), values);
}

void param::printI64List(AsmPrinter &printer, DenseI64ArrayAttr values) {
  printer << '[';
  llvm::interleaveComma(values.asArrayRef(), printer);
  printer << ']';
}

FailureOr<bool> param::parseBool(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(),
                          "expected 'true' or 'false'");
}

bool param::sameOptionalF64(const std::optional<APFloat> &lhs,
                            const std::optional<APFloat> &rhs) {
  if (!lhs || !rhs)
    return !lhs && !rhs;
  return lhs->bitwiseIsEqual(*rhs);
}

void PEDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "pe/Dialect/PE/IR/PEAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Verification helpers
//===----------------------------------------------------------------------===//

using EmitErrorFn = function_ref<InFlightDiagnostic()>;

static std::optional<double> toDouble(const std::optional<APFloat> &value) {
  if (!value)
    return std::nullopt;
  return value->convertToDouble();
}

static LogicalResult checkPositive(EmitErrorFn emitError, StringRef attr,
                                   StringRef name, APFloat apValue) {
  double value = apValue.convertToDouble();
  if (std::isfinite(value) && value > 0.0)
    return success();
  return emitError() << "'" << attr << "' expects " << name
                     << " to be a finite number > 0, but got " << value;
}

static LogicalResult checkPositive(EmitErrorFn emitError, StringRef attr,
                                   StringRef name, double value) {
  return checkPositive(emitError, attr, name, APFloat(value));
}

static LogicalResult checkPositive(EmitErrorFn emitError, StringRef attr,
                                   StringRef name, int64_t value) {
  if (value > 0)
    return success();
  return emitError() << "'" << attr << "' expects " << name
                     << " > 0, but got " << value;
}

static LogicalResult checkNtkRotaryDim(EmitErrorFn emitError, StringRef attr,
                                       int64_t rotaryDim) {
  // The base change raises to r/(r-2).
  if (rotaryDim > 2)
    return success();
  return emitError() << "'" << attr
                     << "' needs rotary_dim > 2 (its base exponent is "
                        "r/(r-2)), but rotary_dim is "
                     << rotaryDim;
}

//===----------------------------------------------------------------------===//
// Scalings
//===----------------------------------------------------------------------===//

LogicalResult LinearScalingAttr::verify(EmitErrorFn emitError, APFloat factor) {
  return checkPositive(emitError, "#pe.linear", "factor", factor);
}
void LinearScalingAttr::populateConfig(formula::RopeConfig &config) const {
  config.kind = formula::ScalingKind::Linear;
  config.factor = getFactor().convertToDouble();
}
LogicalResult LinearScalingAttr::verifyForRotaryDim(EmitErrorFn, int64_t) const {
  return success();
}

LogicalResult NtkScalingAttr::verify(EmitErrorFn emitError, APFloat factor) {
  return checkPositive(emitError, "#pe.ntk", "factor", factor);
}
void NtkScalingAttr::populateConfig(formula::RopeConfig &config) const {
  config.kind = formula::ScalingKind::Ntk;
  config.factor = getFactor().convertToDouble();
}
LogicalResult NtkScalingAttr::verifyForRotaryDim(EmitErrorFn emitError,
                                                 int64_t rotaryDim) const {
  return checkNtkRotaryDim(emitError, "#pe.ntk", rotaryDim);
}

LogicalResult DynamicNtkScalingAttr::verify(EmitErrorFn emitError,
                                            APFloat factor,
                                            int64_t maxPositionEmbeddings) {
  if (failed(checkPositive(emitError, "#pe.dynamic_ntk", "factor", factor)))
    return failure();
  return checkPositive(emitError, "#pe.dynamic_ntk", "max_position_embeddings",
                       maxPositionEmbeddings);
}
void DynamicNtkScalingAttr::populateConfig(formula::RopeConfig &config) const {
  config.kind = formula::ScalingKind::DynamicNtk;
  config.factor = getFactor().convertToDouble();
  config.originalMaxPositions = getMaxPositionEmbeddings();
}
LogicalResult DynamicNtkScalingAttr::verifyForRotaryDim(EmitErrorFn emitError,
                                                        int64_t rotaryDim) const {
  return checkNtkRotaryDim(emitError, "#pe.dynamic_ntk", rotaryDim);
}

LogicalResult YarnScalingAttr::verify(
    EmitErrorFn emitError, APFloat apFactor, int64_t originalMaxPositionEmbeddings,
    APFloat apBetaFast, APFloat apBetaSlow, std::optional<APFloat> apMscale,
    std::optional<APFloat> apMscaleAllDim,
    std::optional<APFloat> apAttentionFactor, bool truncate,
    APFloat apExtrapolationFactor) {
  double factor = apFactor.convertToDouble();
  double betaFast = apBetaFast.convertToDouble();
  double betaSlow = apBetaSlow.convertToDouble();
  std::optional<double> mscale = toDouble(apMscale),
                        mscaleAllDim = toDouble(apMscaleAllDim),
                        attentionFactor = toDouble(apAttentionFactor);
  StringRef attr = "#pe.yarn";
  if (failed(checkPositive(emitError, attr, "factor", factor)) ||
      failed(checkPositive(emitError, attr, "original_max_position_embeddings",
                           originalMaxPositionEmbeddings)) ||
      failed(checkPositive(emitError, attr, "beta_slow", betaSlow)))
    return failure();
  if (!(betaFast > betaSlow) || !std::isfinite(betaFast))
    return emitError() << "'#pe.yarn' expects beta_fast > beta_slow (the ramp "
                          "runs from the beta_fast to the beta_slow correction "
                          "dimension), but got beta_fast = "
                       << betaFast << ", beta_slow = " << betaSlow;
  for (auto [name, value] : {std::pair{"mscale", mscale},
                             std::pair{"mscale_all_dim", mscaleAllDim}})
    if (value && !(std::isfinite(*value) && *value >= 0.0))
      return emitError() << "'#pe.yarn' expects " << name
                         << " to be a finite number >= 0, but got " << *value;
  if (attentionFactor &&
      failed(checkPositive(emitError, attr, "attention_factor", *attentionFactor)))
    return failure();
  const double extrapolation = apExtrapolationFactor.convertToDouble();
  if (!(extrapolation >= 0.0 && extrapolation <= 1.0))
    return emitError() << "'#pe.yarn' expects extrapolation_factor in [0, 1] (the share "
                          "of the extrapolation kept), but got "
                       << extrapolation;
  return success();
}
void YarnScalingAttr::populateConfig(formula::RopeConfig &config) const {
  config.kind = formula::ScalingKind::Yarn;
  config.factor = getFactor().convertToDouble();
  config.originalMaxPositions = getOriginalMaxPositionEmbeddings();
  config.betaFast = getBetaFast().convertToDouble();
  config.betaSlow = getBetaSlow().convertToDouble();
  config.mscale = toDouble(getMscale());
  config.mscaleAllDim = toDouble(getMscaleAllDim());
  config.attentionFactor = toDouble(getAttentionFactor());
  config.truncate = getTruncate();
  config.extrapolationFactor = getExtrapolationFactor().convertToDouble();
}
LogicalResult YarnScalingAttr::verifyForRotaryDim(EmitErrorFn, int64_t) const {
  return success();
}

LogicalResult Llama3ScalingAttr::verify(EmitErrorFn emitError, APFloat apFactor,
                                        APFloat apLowFreqFactor,
                                        APFloat apHighFreqFactor,
                                        int64_t originalMaxPositionEmbeddings) {
  double factor = apFactor.convertToDouble();
  double lowFreqFactor = apLowFreqFactor.convertToDouble();
  double highFreqFactor = apHighFreqFactor.convertToDouble();
  StringRef attr = "#pe.llama3";
  if (failed(checkPositive(emitError, attr, "factor", factor)) ||
      failed(checkPositive(emitError, attr, "low_freq_factor", lowFreqFactor)) ||
      failed(checkPositive(emitError, attr, "original_max_position_embeddings",
                           originalMaxPositionEmbeddings)))
    return failure();
  // Equal factors (Llama 4's) leave no band to blend.
  if (!(highFreqFactor >= lowFreqFactor) || !std::isfinite(highFreqFactor))
    return emitError() << "'#pe.llama3' expects high_freq_factor >= "
                          "low_freq_factor (the blend band lies between their "
                          "wavelengths), but got high_freq_factor = "
                       << highFreqFactor << ", low_freq_factor = "
                       << lowFreqFactor;
  return success();
}
void Llama3ScalingAttr::populateConfig(formula::RopeConfig &config) const {
  config.kind = formula::ScalingKind::Llama3;
  config.factor = getFactor().convertToDouble();
  config.lowFreqFactor = getLowFreqFactor().convertToDouble();
  config.highFreqFactor = getHighFreqFactor().convertToDouble();
  config.originalMaxPositions = getOriginalMaxPositionEmbeddings();
}
LogicalResult Llama3ScalingAttr::verifyForRotaryDim(EmitErrorFn, int64_t) const {
  return success();
}

LogicalResult LongRopeScalingAttr::verify(
    EmitErrorFn emitError, DenseF64ArrayAttr shortFactor,
    DenseF64ArrayAttr longFactor, int64_t originalMaxPositionEmbeddings,
    APFloat apFactor, std::optional<APFloat> apAttentionFactor,
    LongRopeSelect) {
  double factor = apFactor.convertToDouble();
  std::optional<double> attentionFactor = toDouble(apAttentionFactor);
  StringRef attr = "#pe.longrope";
  for (auto [name, list] : {std::pair{"short_factor", shortFactor.asArrayRef()},
                            std::pair{"long_factor", longFactor.asArrayRef()}})
    for (auto [i, value] : llvm::enumerate(list))
      if (!(std::isfinite(value) && value > 0.0))
        return emitError() << "'#pe.longrope' expects every " << name
                           << " entry to be a finite number > 0, but entry "
                           << i << " is " << value;
  if (failed(checkPositive(emitError, attr, "original_max_position_embeddings",
                           originalMaxPositionEmbeddings)) ||
      failed(checkPositive(emitError, attr, "factor", factor)))
    return failure();
  if (originalMaxPositionEmbeddings < 2 && factor > 1.0)
    return emitError() << "'#pe.longrope' derives its magnitude from "
                          "ln(original_max_position_embeddings), which needs "
                          "original_max_position_embeddings >= 2";
  if (attentionFactor &&
      failed(checkPositive(emitError, attr, "attention_factor", *attentionFactor)))
    return failure();
  return success();
}
void LongRopeScalingAttr::populateConfig(formula::RopeConfig &config) const {
  config.kind = formula::ScalingKind::LongRope;
  ArrayRef<double> shortFactor = getShortFactor().asArrayRef();
  ArrayRef<double> longFactor = getLongFactor().asArrayRef();
  config.shortFactor.assign(shortFactor.begin(), shortFactor.end());
  config.longFactor.assign(longFactor.begin(), longFactor.end());
  config.originalMaxPositions = getOriginalMaxPositionEmbeddings();
  config.factor = getFactor().convertToDouble();
  config.attentionFactor = toDouble(getAttentionFactor());
  switch (getSelect()) {
  case LongRopeSelect::dynamic:
    config.longRopeChoice = formula::LongRopeChoice::Dynamic;
    break;
  case LongRopeSelect::short_:
    config.longRopeChoice = formula::LongRopeChoice::Short;
    break;
  case LongRopeSelect::long_:
    config.longRopeChoice = formula::LongRopeChoice::Long;
    break;
  }
}
LogicalResult LongRopeScalingAttr::verifyForRotaryDim(EmitErrorFn emitError,
                                                      int64_t rotaryDim) const {
  for (auto [name, list] :
       {std::pair{"short_factor", getShortFactor().asArrayRef()},
        std::pair{"long_factor", getLongFactor().asArrayRef()}})
    if (int64_t(list.size()) != rotaryDim / 2)
      return emitError() << "'#pe.longrope' expects " << name
                         << " to have rotary_dim/2 = " << rotaryDim / 2
                         << " entries, but it has " << list.size();
  return success();
}

LogicalResult ProportionalScalingAttr::verify(EmitErrorFn emitError,
                                              APFloat factor,
                                              APFloat apPartialRotaryFactor) {
  if (failed(checkPositive(emitError, "#pe.proportional", "factor", factor)))
    return failure();
  double prf = apPartialRotaryFactor.convertToDouble();
  if (!(prf >= 0.0 && prf <= 1.0))
    return emitError() << "'#pe.proportional' expects partial_rotary_factor in "
                          "[0, 1], but got "
                       << prf;
  return success();
}
void ProportionalScalingAttr::populateConfig(formula::RopeConfig &config) const {
  config.kind = formula::ScalingKind::Proportional;
  config.factor = getFactor().convertToDouble();
  config.partialRotaryFactor = getPartialRotaryFactor().convertToDouble();
}
LogicalResult ProportionalScalingAttr::verifyForRotaryDim(EmitErrorFn,
                                                          int64_t) const {
  return success();
}

//===----------------------------------------------------------------------===//
// #pe.rope
//===----------------------------------------------------------------------===//

/// The constants a rotation derives from its parameters: every inverse
/// frequency finite (for LongRoPE, of both factor lists; positions multiply
/// them, and inf * 0 is NaN) and the attention factor a finite f32 > 0.
/// Checked where the frequencies are built at compile time (rotary_dim up to
/// 2^21; larger rotations are not lowered).
/// The largest inverse frequency a rotation may have (in radians per
/// position; unscaled frequencies are at most 1).
constexpr double kMaxInverseFrequency = 1e30;

static LogicalResult verifyDerivedConstants(EmitErrorFn emitError,
                                            const formula::RopeConfig &config,
                                            RopeScalingAttrInterface scaling) {
  const double theta = config.theta;
  if (config.rotaryDim > (int64_t(1) << 21))
    return success();
  SmallVector<formula::RopeConfig, 2> choices = {config};
  if (config.kind == formula::ScalingKind::LongRope) {
    choices[0].longRopeChoice = formula::LongRopeChoice::Short;
    choices.push_back(config);
    choices[1].longRopeChoice = formula::LongRopeChoice::Long;
  }
  for (const formula::RopeConfig &choice : choices)
    for (auto [i, f] : llvm::enumerate(formula::inverseFrequencies(choice))) {
      if (!std::isfinite(f) || f < 0.0)
        return emitError() << "'#pe.rope' derives inverse frequency " << i
                           << " = " << (std::isnan(f) ? "nan" : f < 0 ? "-" : "")
                           << (std::isinf(f) ? "inf" : std::isnan(f) ? "" : std::to_string(std::abs(f)))
                           << " from its parameters, which is not a finite "
                              "number >= 0";
      // Angles p * f of every i64 position stay finite (|p f| < 2^63 1e30).
      if (f > kMaxInverseFrequency) {
        InFlightDiagnostic diag = emitError();
        diag << "'#pe.rope' derives inverse frequency " << i << " = " << f
             << " from theta = " << theta;
        if (scaling && config.kind != formula::ScalingKind::None)
          diag << " and its scaling's factor = " << config.factor;
        return diag << ", above " << kMaxInverseFrequency
                    << " (angles of large positions would overflow)";
      }
    }
  double m = formula::attentionFactor(config);
  if (!(m > 0.0 && m <= double(std::numeric_limits<float>::max())))
    return emitError() << "'#pe.rope' derives the attention factor " << m
                       << ", which is not a finite f32 > 0";
  return success();
}

/// The configuration of a #pe.rope's parameters.
static formula::SectionMode sectionMode(RopeSections mode) {
  switch (mode) {
  case RopeSections::contiguous:
    return formula::SectionMode::Contiguous;
  case RopeSections::interleaved:
    return formula::SectionMode::Interleaved;
  case RopeSections::vision:
    return formula::SectionMode::Vision;
  case RopeSections::axes:
    return formula::SectionMode::Axes;
  }
  llvm_unreachable("unknown section mode");
}

static formula::RopeConfig ropeConfig(double theta, int64_t rotaryDim,
                                      RopeScalingAttrInterface scaling,
                                      DenseF64ArrayAttr freqFactors, double magnitude,
                                      DenseI64ArrayAttr sections, RopeSections mode) {
  formula::RopeConfig config;
  config.theta = theta;
  config.rotaryDim = rotaryDim;
  if (scaling)
    scaling.populateConfig(config);
  if (freqFactors)
    config.freqFactors.assign(freqFactors.asArrayRef().begin(),
                              freqFactors.asArrayRef().end());
  config.magnitude = magnitude;
  if (sections)
    config.sections.assign(sections.asArrayRef().begin(), sections.asArrayRef().end());
  config.sectionMode = sectionMode(mode);
  return config;
}

/// The sections of a multi-stream RoPE: their count, signs and sum, and the
/// parameters their mode admits.
static LogicalResult verifySections(function_ref<InFlightDiagnostic()> emitError,
                                    int64_t rotaryDim, RopeScalingAttrInterface scaling,
                                    DenseF64ArrayAttr freqFactors,
                                    DenseI64ArrayAttr sections, RopeSections mode) {
  if (!sections) {
    if (mode != RopeSections::contiguous)
      return emitError() << "'#pe.rope' expects section_mode only with sections";
    return success();
  }
  const int64_t maxStreams = mode == RopeSections::axes ? 8 : 4;
  const int64_t minStreams = mode == RopeSections::interleaved ? 3 : 2;
  if (int64_t(sections.size()) < minStreams || int64_t(sections.size()) > maxStreams)
    return emitError() << "'#pe.rope' expects " << minStreams << " to " << maxStreams
                       << " sections with section_mode = " << stringifyRopeSections(mode)
                       << ", but got " << sections.size();
  // Each section and every partial sum stays <= r/2: no overflow.
  int64_t sum = 0;
  for (auto [j, s] : llvm::enumerate(sections.asArrayRef())) {
    if (s < 0 || s > rotaryDim / 2)
      return emitError() << "'#pe.rope' expects sections in [0, rotary_dim/2] "
                            "(pairs per position stream), but section "
                         << j << " is " << s;
    sum += s;
    if (sum > rotaryDim / 2)
      break;
  }
  if (sum != rotaryDim / 2)
    return emitError() << "'#pe.rope' expects the sections to sum to rotary_dim/2 = "
                       << rotaryDim / 2 << " (every pair in one stream), but they "
                       << (sum > rotaryDim / 2 ? "exceed it" : "sum to " + std::to_string(sum));
  if (mode == RopeSections::vision || mode == RopeSections::axes) {
    if (scaling || freqFactors)
      return emitError() << "'#pe.rope' expects no scaling and no freq_factors with "
                            "section_mode = "
                         << stringifyRopeSections(mode)
                         << " (its frequencies restart in every section)";
  }
  formula::RopeConfig config;
  if (scaling)
    scaling.populateConfig(config);
  if (formula::dependsOnSequenceLength(config))
    return emitError() << "'#pe.rope' expects no sequence-length dependent scaling "
                          "with sections (which stream's length would count is "
                          "not defined)";
  return success();
}

LogicalResult RopeAttr::verify(EmitErrorFn emitError, APFloat apTheta,
                               int64_t rotaryDim, RopeStyle,
                               RopeScalingAttrInterface scaling,
                               DenseF64ArrayAttr freqFactors, APFloat apMagnitude,
                               int64_t rotaryOffset, DenseI64ArrayAttr sections,
                               RopeSections sectionMode) {
  double theta = apTheta.convertToDouble();
  if (!(std::isfinite(theta) && theta > 1.0))
    return emitError() << "'#pe.rope' expects theta > 1 (frequencies are "
                          "theta^(-2i/r)), but got "
                       << theta;
  if (rotaryDim < 2 || rotaryDim % 2 != 0)
    return emitError() << "'#pe.rope' expects rotary_dim to be even and >= 2 "
                          "(channels are rotated in pairs), but got "
                       << rotaryDim;
  if (scaling && failed(scaling.verifyForRotaryDim(emitError, rotaryDim)))
    return failure();
  if (freqFactors) {
    if (int64_t(freqFactors.size()) != rotaryDim / 2)
      return emitError() << "'#pe.rope' expects rotary_dim/2 = " << rotaryDim / 2
                         << " freq_factors (one per pair), but got " << freqFactors.size();
    for (auto [i, f] : llvm::enumerate(freqFactors.asArrayRef()))
      if (!(std::isfinite(f) && f > 0.0))
        return emitError() << "'#pe.rope' expects freq_factors to be finite numbers > 0 "
                              "(they divide the frequencies), but entry "
                           << i << " is " << f;
  }
  if (rotaryOffset < 0 || rotaryOffset > (int64_t(1) << 40))
    return emitError() << "'#pe.rope' expects rotary_offset in [0, 2^40] (the first "
                          "rotated channel), but got "
                       << rotaryOffset;
  const double magnitude = apMagnitude.convertToDouble();
  if (!(std::isfinite(magnitude) && magnitude > 0.0))
    return emitError() << "'#pe.rope' expects magnitude to be a finite number > 0, but got "
                       << magnitude;
  if (failed(verifySections(emitError, rotaryDim, scaling, freqFactors, sections,
                            sectionMode)))
    return failure();
  return verifyDerivedConstants(
      emitError,
      ropeConfig(theta, rotaryDim, scaling, freqFactors, magnitude, sections, sectionMode),
      scaling);
}

formula::RopeConfig RopeAttr::getConfig() const {
  return ropeConfig(getTheta().convertToDouble(), getRotaryDim(), getScaling(),
                    getFreqFactors(), getMagnitude().convertToDouble(), getSections(),
                    getSectionMode());
}

LogicalResult TemperatureAttr::verify(EmitErrorFn emitError, int64_t floorScale,
                                      APFloat attnScale) {
  if (floorScale < 1)
    return emitError() << "'#pe.temperature' expects floor_scale >= 1, but got " << floorScale;
  double a = attnScale.convertToDouble();
  if (!std::isfinite(a) || std::abs(a) > 1e6)
    return emitError() << "'#pe.temperature' expects a finite attn_scale of at most 1e6 "
                          "in magnitude, but got "
                       << a;
  return success();
}

RankedTensorType RopeAttr::getTokenShape(RankedTensorType positions) const {
  if (!isMultiStream() || positions.getRank() < 2)
    return positions;
  SmallVector<int64_t> shape(positions.getShape());
  shape.erase(shape.end() - 2);
  return positions.clone(shape);
}

RopeAttr RopeAttr::withRotaryOffset(int64_t offset) const {
  return RopeAttr::get(getContext(), getTheta(), getRotaryDim(), getStyle(), getScaling(),
                       getFreqFactors(), getMagnitude(), offset, getSections(),
                       getSectionMode());
}

RopeAttr RopeAttr::withScaling(APFloat theta, RopeScalingAttrInterface scaling) const {
  return RopeAttr::get(getContext(), theta, getRotaryDim(), getStyle(), scaling,
                       getFreqFactors(), getMagnitude(), getRotaryOffset(),
                       getSections(), getSectionMode());
}
