//===- PEInterfaces.td - interfaces of the pe dialect -------*- tablegen -*-===//
#ifndef PE_DIALECT_PE_IR_PEINTERFACES_TD
#define PE_DIALECT_PE_IR_PEINTERFACES_TD

include "mlir/IR/OpBase.td"

def PE_RopeScalingAttrInterface : AttrInterface<"RopeScalingAttrInterface"> {
  let cppNamespace = "::mlir::pe";
  let description = [{
    A context-extension scaling of RoPE (`#pe.linear`, `#pe.ntk`,
    `#pe.dynamic_ntk`, `#pe.yarn`, `#pe.llama3`, `#pe.longrope`,
    `#pe.proportional`). It states its
    parameters into a `pe::formula::RopeConfig`; the frequency and magnitude
    formulas themselves live in `pe/Math/PositionalMath.h`.
  }];
  let methods = [
    InterfaceMethod<"Writes this scaling's kind and parameters into `config`.",
      "void", "populateConfig", (ins "::mlir::pe::formula::RopeConfig &":$config)>,
    InterfaceMethod<[{
        Checks the constraints that involve the rotary dimension (for example
        LongRoPE factor lists of length rotary_dim/2).
      }],
      "::llvm::LogicalResult", "verifyForRotaryDim",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "int64_t":$rotaryDim)>,
  ];
}

#endif // PE_DIALECT_PE_IR_PEINTERFACES_TD
