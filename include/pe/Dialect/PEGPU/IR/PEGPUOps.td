//===- PEGPUOps.td - kernel-level ops of the GPU code generation -*- tablegen -*-===//
#ifndef PE_DIALECT_PEGPU_IR_PEGPUOPS_TD
#define PE_DIALECT_PEGPU_IR_PEGPUOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "pe/Dialect/PE/IR/PEAttrs.td"

def PEGPU_Dialect : Dialect {
  let name = "pe_gpu";
  let cppNamespace = "::mlir::pe_gpu";
  let summary = "Kernel-level ops of pe's GPU code generation";
  let description = [{
    What the GPU code generation leaves between its passes: ops on buffers
    that stand for one GPU kernel, with the model-level semantics of the `pe`
    op they come from. The `pe` dialect states a model's positional encoding
    and attention; this dialect belongs to the GPU lowering and is never an
    input to the pipelines.
  }];
  let dependentDialects = ["::mlir::pe::PEDialect", "::mlir::memref::MemRefDialect"];
}

def PEGPU_MmaAttentionOp : Op<PEGPU_Dialect, "mma_attention", [AttrSizedOperandSegments]> {
  let summary = "pe.attention on buffers, for the tensor-core GPU kernel";
  let description = [{
    What `pe-gpu-tile-attention{tensor-cores}` leaves of a `pe.attention`
    that the tensor-core kernel computes: the operands as buffers, the
    positions (defaults made explicit), the f32 cos/sin tables of a fused
    `rope` (`[S, r/2]` or `[B, S, r/2]`), the ALiBi slopes of the query
    heads and the attention sinks (`[Hq]`), written into `out` (`[B, Hq, Sq,
    Dv]`). The semantics are those of
    `pe.attention` with the same attributes. With `splits(n)` (decode), the
    keys are cut into n ranges of ceil(Skv / n) and the state of each range
    is written instead of `out`: the unnormalized output into `partial_out`
    (`[B, Hq, Sq, n, Dv]`) and the row's running max and sum into
    `partial_stats` (`[B, Hq, Sq, n, 2]`), for a merge to combine. With
    `rotated_keys`, `key` holds rope(k) already (rotated once, before the
    kernel) and the rope rotates the queries only. With `default_positions`,
    the positions are pe.attention's defaults (query i at Skv - Sq + i, key j
    at j, every batch row), which the kernel computes instead of reading.
    `pe-gpu-mma-attention`
    builds the kernel (`gpu.launch`, `mma.sync`) after bufferization: the nvgpu ops
    it uses declare no memory effects, which buffer deallocation rejects.
  }];
  let arguments = (ins
      Arg<MemRefRankOf<[F16, BF16], [4]>, "", [MemRead]>:$query,
      Arg<MemRefRankOf<[F16, BF16], [4]>, "", [MemRead]>:$key,
      Arg<MemRefRankOf<[F16, BF16], [4]>, "", [MemRead]>:$value,
      Arg<Optional<MemRefRankOf<[F32, F16, BF16], [4]>>, "", [MemRead]>:$mask,
      Arg<MemRefOf<[I32, I64]>, "", [MemRead]>:$q_positions,
      Arg<MemRefOf<[I32, I64]>, "", [MemRead]>:$k_positions,
      Arg<Optional<MemRefOf<[F32]>>, "", [MemRead]>:$q_cos,
      Arg<Optional<MemRefOf<[F32]>>, "", [MemRead]>:$q_sin,
      Arg<Optional<MemRefOf<[F32]>>, "", [MemRead]>:$k_cos,
      Arg<Optional<MemRefOf<[F32]>>, "", [MemRead]>:$k_sin,
      Arg<Optional<MemRefRankOf<[F32], [1]>>, "", [MemRead]>:$slopes,
      Arg<Optional<MemRefRankOf<[F32, F16, BF16], [1]>>, "", [MemRead]>:$sinks,
      Arg<MemRefRankOf<[F16, BF16], [4]>, "", [MemWrite]>:$out,
      Optional<Index>:$splits,
      Arg<Optional<MemRefRankOf<[F32], [5]>>, "", [MemWrite]>:$partial_out,
      Arg<Optional<MemRefRankOf<[F32], [5]>>, "", [MemWrite]>:$partial_stats,
      F64Attr:$scale, UnitAttr:$causal, OptionalAttr<I64Attr>:$window,
      OptionalAttr<I64Attr>:$chunk,
      OptionalAttr<PE_RopeAttr>:$rope, OptionalAttr<F64Attr>:$softcap,
      OptionalAttr<PE_TemperatureAttr>:$temperature, UnitAttr:$rotated_keys,
      UnitAttr:$default_positions);
  let assemblyFormat = [{
    $query `,` $key `,` $value `into` $out
    `positions` `(` $q_positions `,` $k_positions `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`tables` `(` $q_cos^ `,` $q_sin `,` $k_cos `,` $k_sin `:`
       type($q_cos) `,` type($q_sin) `,` type($k_cos) `,` type($k_sin) `)`)?
    (`slopes` `(` $slopes^ `:` type($slopes) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`splits` `(` $splits^ `)`)?
    (`partials` `(` $partial_out^ `,` $partial_stats `:` type($partial_out) `,`
       type($partial_stats) `)`)?
    `scale` `(` $scale `)` (`causal` $causal^)? (`window` `(` $window^ `)`)?
    (`chunk` `(` $chunk^ `)`)? (`rope` `(` qualified($rope)^ `)`)? (`softcap` `(` $softcap^ `)`)?
    (`temperature` `(` qualified($temperature)^ `)`)? (`rotated_keys` $rotated_keys^)?
    (`default_positions` $default_positions^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($q_positions)
    `,` type($k_positions) `->` type($out)
  }];
  let hasVerifier = 1;
}

#endif // PE_DIALECT_PEGPU_IR_PEGPUOPS_TD
