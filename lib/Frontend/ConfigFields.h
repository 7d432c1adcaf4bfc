//===- ConfigFields.h - typed access to a config.json's fields ----*- C++ -*-===//
//
// The JSON layer of the config reader: the fields of one object, read with
// their type checked and their dotted path named in every error.
//
//===----------------------------------------------------------------------===//
#ifndef PE_LIB_FRONTEND_CONFIGFIELDS_H
#define PE_LIB_FRONTEND_CONFIGFIELDS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir::pe::frontend {
namespace json = llvm::json;
using ErrorFn = function_ref<InFlightDiagnostic()>;

/// The fields of one JSON object, read with their dotted path named in every
/// error. Errors are recorded in a flag shared by all objects of one config,
/// so that a reader goes on (and stops at the next check of the flag).
class Fields {
public:
  Fields(const json::Object &object, std::string path, ErrorFn emitError,
         bool &failed)
      : object(&object), path(std::move(path)), emitError(emitError),
        failed(&failed) {}

  /// `name` qualified with the path of this object.
  std::string qualified(StringRef name) const {
    return path.empty() ? name.str() : path + "." + name.str();
  }
  /// An error about field `name`: "config field 'a.b': ...".
  InFlightDiagnostic error(StringRef name) const {
    *failed = true;
    InFlightDiagnostic diag = emitError();
    diag << "config field '" << qualified(name) << "': ";
    return diag;
  }
  InFlightDiagnostic error(StringRef name, const Twine &message) const {
    InFlightDiagnostic diag = error(name);
    diag << message;
    return diag;
  }

  /// The value of `name`; null when absent or JSON null.
  const json::Value *get(StringRef name) const {
    const json::Value *value = object->get(name);
    return value && value->kind() != json::Value::Null ? value : nullptr;
  }
  bool has(StringRef name) const { return get(name) != nullptr; }
  /// The first of `names` that is present (empty if none).
  StringRef firstOf(ArrayRef<StringRef> names) const {
    for (StringRef name : names)
      if (has(name))
        return name;
    return {};
  }

  std::optional<double> number(StringRef name) const {
    return typed(name, &json::Value::getAsNumber, "a number");
  }
  std::optional<int64_t> integer(StringRef name) const {
    return typed(name, &json::Value::getAsInteger, "an integer");
  }
  std::optional<bool> boolean(StringRef name) const {
    return typed(name, &json::Value::getAsBoolean, "true or false");
  }
  std::optional<std::string> string(StringRef name) const {
    std::optional<StringRef> x = typed(name, &json::Value::getAsString, "a string");
    return x ? std::optional<std::string>(x->str()) : std::nullopt;
  }
  std::optional<Fields> object_(StringRef name) const {
    const json::Value *value = get(name);
    if (!value)
      return std::nullopt;
    if (const json::Object *x = value->getAsObject())
      return Fields(*x, qualified(name), emitError, *failed);
    error(name, "expected an object");
    return std::nullopt;
  }
  /// A list of numbers, or nullopt (an error when not one).
  std::optional<SmallVector<double>> numbers(StringRef name) const;
  /// An integer in [1, limit] among `names` (their first present), or nullopt.
  std::optional<int64_t> positive(ArrayRef<StringRef> names,
                                  int64_t limit = int64_t(1) << 40) const;
  /// A finite number > 0, or nullopt.
  std::optional<double> positiveNumber(StringRef name) const;

  const json::Object &raw() const { return *object; }
  bool hasFailed() const { return *failed; }
  bool &failedFlag() const { return *failed; }

private:
  /// The value of `name` as `(value.*as)()`: nullopt when absent, an error
  /// when of another JSON type.
  template <typename T>
  std::optional<T> typed(StringRef name, std::optional<T> (json::Value::*as)() const,
                         StringRef expected) const {
    const json::Value *value = get(name);
    if (!value)
      return std::nullopt;
    if (std::optional<T> x = (value->*as)())
      return x;
    error(name) << "expected " << expected;
    return std::nullopt;
  }

  const json::Object *object;
  std::string path;
  ErrorFn emitError;
  bool *failed;
};

} // namespace mlir::pe::frontend

#endif // PE_LIB_FRONTEND_CONFIGFIELDS_H
