//===- ConfigFields.cpp - typed access to a config.json's fields ---------===//
#include "ConfigFields.h"

#include "pe/Frontend/ModelConfig.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pe::frontend;

std::optional<SmallVector<double>> Fields::numbers(StringRef name) const {
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

std::optional<int64_t> Fields::positive(ArrayRef<StringRef> names, int64_t limit) const {
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

std::optional<double> Fields::positiveNumber(StringRef name) const {
  std::optional<double> x = number(name);
  if (x && !(*x > 0.0 && std::isfinite(*x))) {
    error(name) << "expected a finite number > 0, got " << *x;
    return std::nullopt;
  }
  return x;
}

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
