//===- PEDialect.td - the positional-encoding dialect -------*- tablegen -*-===//
#ifndef PE_DIALECT_PE_IR_PEDIALECT_TD
#define PE_DIALECT_PE_IR_PEDIALECT_TD

include "mlir/IR/OpBase.td"

def PE_Dialect : Dialect {
  let name = "pe";
  let cppNamespace = "::mlir::pe";
  let summary = "Positional encodings of transformer attention";
  let description = [{
    The `pe` dialect states *what* positional encoding a model uses, at the
    tensor level with value semantics: rotary embeddings (RoPE) with every
    context-extension scaling, sinusoidal and learned absolute embeddings,
    ALiBi, and attention itself. Element types are f32, f16 and bf16; f16 and
    bf16 compute in f32. Positions are integer tensors (i32/i64) and may be
    arbitrary (decode steps, packed batches, speculative tokens).

    Every rotating op carries one `#pe.rope` attribute; the frequency math of
    all scalings lives in one place (`pe/Math/PositionalMath.h`) and is
    evaluated in double precision and rounded once.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let extraClassDeclaration = [{
  private:
    void registerAttributes();
  public:
  }];
}

#endif // PE_DIALECT_PE_IR_PEDIALECT_TD
