//===- ProgramGenerator.h - valid pe programs from fuzzer bytes -*- C++ -*-===//
//
// The structure-aware half of pe-fuzz: every byte string decodes to a pe
// program that verifies (an op with its shapes, attributes and operands
// chosen by the bytes), so the fuzzer's mutations reach the passes and the
// lowerings rather than stopping in the parser. The program is one public
// function @f of tensor arguments and one tensor result; the description of
// its arguments lets the differential check call it.
//
//===----------------------------------------------------------------------===//
#ifndef PE_TOOLS_PE_FUZZ_PROGRAMGENERATOR_H
#define PE_TOOLS_PE_FUZZ_PROGRAMGENERATOR_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::pe::fuzz {

/// How the values of an argument are drawn.
enum class Values {
  Floats,      // standard normal-ish floats
  Positions,   // integers in [low, high]
  TableRows,   // integers in [0, rows) (pe.learned positions)
};

/// One tensor argument or the result: element type and shape (-1 where
/// dynamic; the run-time sizes are `runShape`).
struct TensorSpec {
  std::string element; // f32, f16, bf16, i32, i64
  std::vector<int64_t> shape;
  std::vector<int64_t> runShape;
  Values values = Values::Floats;
  int64_t low = 0, high = 0;
  /// Floats: some entries NaN or inf.
  bool nonFinite = false;

  std::string type() const;
  int64_t elements() const;
};

struct Program {
  std::string ir;
  std::vector<TensorSpec> arguments;
  TensorSpec result;
};

/// Decodes `size` bytes into a program; the same bytes give the same program.
Program generateProgram(const uint8_t *data, size_t size);

} // namespace mlir::pe::fuzz

#endif // PE_TOOLS_PE_FUZZ_PROGRAMGENERATOR_H
