"""The cases of the GPU check: one pe function each, its inputs, its float64 reference.

Shared by both steps: `prepare.py` compiles each case's IR (static shapes, so that its
manifest is replayable) and `check.py` runs it, on the GPU through the manifest or, for a dry
run, on the CPU through the GPU schedule (`pe-compile --target=gpu-on-cpu`). `size` is "full"
(the shapes of the issue's targets, for a GPU) or "small" (seconds on a CPU).

Inputs are float64 arrays holding values already representable in the case's element type;
the references are the independent numpy implementation in python/pe/reference.py.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from pe import ir as pe_ir  # noqa: E402
from pe import reference as ref  # noqa: E402
from pe.testing import round_to  # noqa: E402

LLAMA3 = {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}
LLAMA3_IR = ("#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, "
             "original_max_position_embeddings = 8192>>")
YARN = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
NTK = {"type": "dynamic_ntk", "factor": 2.0, "max_position_embeddings": 2048}


@dataclass
class Case:
    """One function `name(args) -> results`, checked against `reference`.

    `metric` per result: "ulp" (bf16/f16: ulps from the correctly rounded reference) or
    "scaled" (f32: max |got - ref| / max(1, max |ref|)); `limit` is the bound. `sample`
    picks the sequence rows that the reference is computed for (all when None): the big
    RoPE case checks a sample, since the exact reduction of every angle (in big-integer
    arithmetic) takes about a second per million.
    """
    name: str
    ir: str
    inputs: List[object]  # np.ndarray or Random (drawn when `args` is first read)
    arg_types: List[str]
    result_types: List[str]
    reference: Callable[[Sequence[np.ndarray], Optional[np.ndarray]], List[np.ndarray]]
    metric: str
    limit: float
    bytes_moved: int = 0
    timed: bool = False
    sample_axis: Optional[int] = None
    torch_rope: Optional[dict] = None  # HF-style RoPE in PyTorch, for a side-by-side
    torch_attention: Optional[dict] = None  # HF RoPE + SDPA in PyTorch, for a side-by-side
    notes: str = ""
    sample: Optional[np.ndarray] = field(default=None, repr=False)
    flags: List[str] = field(default_factory=list)  # more pe-compile options
    flops: int = 0  # floating-point operations of the unmasked work, for timed cases
    # Arguments the function updates in place (pe.in_place): their values after the call
    # follow the returned results, in this order, in `result_types` and the reference.
    in_place: List[int] = field(default_factory=list)
    # A case whose run must fail: the C interface's message contains `error`, the replay
    # stops at the check that reports `error_report`; the in-place arguments stay as given.
    error: str = ""
    error_report: str = ""

    @property
    def args(self) -> List[np.ndarray]:
        """The inputs as arrays; random ones are drawn on first use and kept."""
        self.inputs = [a.draw() if isinstance(a, Random) else a for a in self.inputs]
        return self.inputs

    @property
    def gpu_only(self) -> bool:
        """Tensor-core kernels (warp-collective) have no run on the CPU schedule."""
        return "--tensor-cores" in self.flags


def _ttype(shape, elem: str) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + elem + ">"


@dataclass
class Random:
    """Normal values of `shape` rounded to `dtype`, drawn from their own seed when first
    needed: building the case list draws nothing, so a run of one case costs its inputs
    only (the full-size list holds about 2 GB of float64 inputs)."""
    seed: int
    shape: tuple
    dtype: str
    scale: float = 1.0

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def draw(self) -> np.ndarray:
        """Drawn in f32 and rounded there (bf16: to nearest even on the bits), then widened:
        a [1, 8, 131072, 128] input takes seconds, not a minute."""
        rng = np.random.default_rng(self.seed)
        x = rng.standard_normal(self.shape, dtype=np.float32) * np.float32(self.scale)
        if self.dtype == "bf16":
            bits = x.view(np.uint32)
            bits += np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))
            bits &= np.uint32(0xFFFF0000)
        elif self.dtype == "f16":
            x = x.astype(np.float16)
        return x.astype(np.float64)


def _quantized(rng, shape, dtype: str, scale: float = 1.0) -> Random:
    return Random(int(rng.integers(1 << 62)), tuple(shape), dtype, scale)


def _rope_case(name, rng, shape, dtype, rope_ir, rope_ref, positions, layout="bhsd",
               timed=False, sample=None, torch_rope=None, qk=False) -> Case:
    """RoPE of x (and, with `qk`, of k of the same shape sharing the tables)."""
    x = _quantized(rng, shape, dtype)
    pos_elem = "i32" if positions.dtype == np.int32 else "i64"
    pos_t = _ttype(positions.shape, pos_elem)
    xt = _ttype(shape, dtype)
    lay = " layout(bshd)" if layout == "bshd" else ""
    if qk:
        k = _quantized(rng, shape, dtype)
        ir = (f"func.func @{name}(%q: {xt}, %k: {xt}, %pos: {pos_t}) -> ({xt}, {xt}) {{\n"
              f"  %rq = pe.rope {rope_ir} %q, %pos{lay} : {xt}, {pos_t}\n"
              f"  %rk = pe.rope {rope_ir} %k, %pos{lay} : {xt}, {pos_t}\n"
              f"  return %rq, %rk : {xt}, {xt}\n}}\n")
        args, arg_types, results = [x, k, positions], [dtype, dtype, pos_elem], [dtype, dtype]
    else:
        ir = (f"func.func @{name}(%x: {xt}, %pos: {pos_t}) -> {xt} {{\n"
              f"  %r = pe.rope {rope_ir} %x, %pos{lay} : {xt}, {pos_t}\n"
              f"  return %r : {xt}\n}}\n")
        args, arg_types, results = [x, positions], [dtype, pos_elem], [dtype]
    seq_axis = 2 if layout == "bhsd" else 1
    seq_len = int(positions.max()) + 1

    def reference(a, rows):
        tensors = a[:-1]
        pos = a[-1]
        if rows is not None:
            tensors = [np.take(t, rows, axis=seq_axis) for t in tensors]
            pos = np.take(pos, rows, axis=-1)
        return [ref.apply_rope(t, pos, layout=layout, seq_len=seq_len, **rope_ref)
                for t in tensors]

    elem_bytes = {"f32": 4, "f16": 2, "bf16": 2}[dtype]
    moved = 2 * x.size * elem_bytes * (2 if qk else 1)  # read once, written once
    metric, limit = ("scaled", 1e-6) if dtype == "f32" else ("ulp", 1.0)
    return Case(name, ir, args, arg_types, results, reference, metric, limit, moved, timed,
                seq_axis if sample is not None else None, torch_rope, sample=sample)


def cases(size: str = "full", seed: int = 0) -> List[Case]:
    rng = np.random.default_rng(seed)
    full = size == "full"
    out: List[Case] = []

    # The bandwidth target: RoPE of q and k [1, 32, 16384, 128] bf16, LLaMA 3 (shared tables).
    s = 16384 if full else 64
    heads = 32 if full else 4
    pos = np.arange(s, dtype=np.int32)
    rows = np.unique(np.concatenate([np.arange(8), rng.choice(s, 248, replace=False) if full
                                     else np.arange(s), [s - 1]]))
    out.append(_rope_case(
        "rope_llama3_qk_bf16", rng, (1, heads, s, 128), "bf16", LLAMA3_IR,
        {"theta": 500000.0, "rotary_dim": 128, "scaling": LLAMA3}, pos, timed=True,
        sample=rows, qk=True,
        torch_rope={"theta": 500000.0, "rotary_dim": 128, "scaling": LLAMA3}))

    # f32 at positions up to 2^20: the exact angle reduction on the GPU.
    s = 1024 if full else 32
    far = np.sort(rng.choice(1 << 20, s - 1, replace=False)).astype(np.int64)
    far = np.concatenate([far, [1 << 20]])
    out.append(_rope_case("rope_far_f32", rng, (1, 4, s, 128), "f32",
                          "#pe.rope<rotary_dim = 128>", {"rotary_dim": 128}, far))

    # GPT-J style: f16, interleaved pairs, partial rotary (64 of 256), bshd, per-batch positions.
    s = 512 if full else 16
    pb = np.stack([np.arange(s), 7 + 3 * np.arange(s)]).astype(np.int64)
    out.append(_rope_case("rope_gptj_f16", rng, (2, s, 16, 256), "f16",
                          "#pe.rope<rotary_dim = 64, style = interleaved>",
                          {"rotary_dim": 64, "style": "interleaved"}, pb, layout="bshd"))

    # YaRN and dynamic NTK (frequencies computed at run time, f64 exp on the GPU), f32.
    s = 4096 if full else 40
    p = np.arange(s, dtype=np.int32) * (3 if full else 100)
    out.append(_rope_case(
        "rope_yarn_f32", rng, (1, 8, s, 64), "f32",
        "#pe.rope<rotary_dim = 64, scaling = #pe.yarn<factor = 4.0, "
        "original_max_position_embeddings = 4096>>",
        {"rotary_dim": 64, "scaling": YARN}, p))
    out.append(_rope_case(
        "rope_dynamic_ntk_f32", rng, (1, 8, s, 64), "f32",
        "#pe.rope<rotary_dim = 64, scaling = #pe.dynamic_ntk<factor = 2.0, "
        "max_position_embeddings = 2048>>",
        {"rotary_dim": 64, "scaling": NTK}, p))

    out += _absolute_cases(rng, full)
    out += _attention_cases(rng, full)
    return out


def _absolute_cases(rng, full: bool) -> List[Case]:
    out = []
    n = 4096 if full else 48
    pos = np.arange(n, dtype=np.int32) * 5
    t2 = _ttype((n, 64), "f32")
    ir = (f"func.func @rope_tables_f32(%pos: {_ttype((n,), 'i32')}) -> ({t2}, {t2}) {{\n"
          f"  %c, %s = pe.rope_tables #pe.rope<rotary_dim = 128> %pos : "
          f"{_ttype((n,), 'i32')} -> {t2}\n  return %c, %s : {t2}, {t2}\n}}\n")
    out.append(Case("rope_tables_f32", ir, [pos], ["i32"], ["f32", "f32"],
                    lambda a, _: list(ref.rope_tables(a[0], rotary_dim=128)), "scaled", 1e-6))

    b, s, d = (2, 1024, 512) if full else (2, 24, 64)
    pos = np.stack([np.arange(s), 100 + np.arange(s)]).astype(np.int64)
    pt, rt = _ttype((b, s), "i64"), _ttype((b, s, d), "f32")
    ir = (f"func.func @sinusoidal_f32(%pos: {pt}) -> {rt} {{\n"
          f"  %e = pe.sinusoidal %pos layout(concat) spacing(fairseq) : {pt} -> {rt}\n"
          f"  return %e : {rt}\n}}\n")
    out.append(Case("sinusoidal_f32", ir, [pos], ["i64"], ["f32"],
                    lambda a, _: [ref.sinusoidal(a[0], d, layout="concat", spacing="fairseq")],
                    "scaled", 1e-6, bytes_moved=b * s * d * 4, timed=True))

    rows, width = (1024, 768) if full else (64, 32)
    table = _quantized(rng, (rows, width), "bf16")
    pos = rng.integers(0, rows, size=(b, s)).astype(np.int64)
    tt, rt = _ttype((rows, width), "bf16"), _ttype((b, s, width), "bf16")
    ir = (f"func.func @learned_bf16(%w: {tt}, %pos: {pt}) -> {rt} {{\n"
          f"  %e = pe.learned %w[%pos] : {tt}, {pt} -> {rt}\n  return %e : {rt}\n}}\n")
    out.append(Case("learned_bf16", ir, [table, pos], ["bf16", "i64"], ["bf16"],
                    lambda a, _: [ref.learned(a[0], a[1])], "ulp", 0.0,
                    bytes_moved=2 * b * s * width * 2, timed=True))

    h, sq = (12, 1024) if full else (12, 20)
    slopes = ref.alibi_slopes(h)
    q = np.arange(sq, dtype=np.int32)
    st, qt, bt = _ttype((h,), "f32"), _ttype((sq,), "i32"), _ttype((h, sq, sq), "f32")
    ir = (f"func.func @alibi_bias_f32(%q: {qt}, %k: {qt}) -> {bt} {{\n"
          f"  %s = pe.alibi_slopes : {st}\n"
          f"  %b = pe.alibi_bias causal %s, %q, %k : {st}, {qt}, {qt} -> {bt}\n"
          f"  return %b : {bt}\n}}\n")
    out.append(Case("alibi_bias_f32", ir, [q, q], ["i32", "i32"], ["f32"],
                    lambda a, _: [ref.alibi_bias(round_to(slopes, "f32"), a[0], a[1])],
                    "scaled", 1e-6, bytes_moved=h * sq * sq * 4, timed=True))
    return out


def _attention_case(name, rng, dtype, shape, *, causal=False, window=None, alibi=None,
                    rope_ir=None, rope_ref=None, qpos=None, kpos=None, timed=False,
                    rows=None, torch_attention=None, notes="", flags=(),
                    separate_rope=False, sinks=False, dv=None) -> Case:
    """pe.attention of q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] (`shape` =
    (B, Hq, Hkv, Sq, Skv, D); Dv = `dv`, default D) with the given attributes and
    positions; `rows` samples the query rows that
    the reference is computed for (all when None). `separate_rope` (Sq = Skv, default
    positions) states the RoPE as pe.rope of q and k at positions 0 .. S - 1 (an argument)
    before the attention, as an importer would, which --fuse=false leaves unfused."""
    b, hq, hkv, sq, skv, d = shape
    dv = dv or d
    q = _quantized(rng, (b, hq, sq, d), dtype)
    k = _quantized(rng, (b, hkv, skv, d), dtype)
    v = _quantized(rng, (b, hkv, skv, dv), dtype)
    qt, kt, vt = _ttype(q.shape, dtype), _ttype(k.shape, dtype), _ttype(v.shape, dtype)
    args, arg_types = [q, k, v], [dtype] * 3
    positions, rotate = None, None
    if separate_rope:
        assert sq == skv and qpos is None and kpos is None and rope_ir
        positions, rotate = _ttype((skv,), "i64"), rope_ir
        args.append(np.arange(skv, dtype=np.int64))
        arg_types.append("i64")
    elif qpos is not None or kpos is not None:
        assert qpos is not None and kpos is not None, "both positions or neither"
        positions = (_ttype(qpos.shape, "i64"), _ttype(kpos.shape, "i64"))
        args += [qpos, kpos]
        arg_types += ["i64", "i64"]
    sinks_type = None
    if sinks:  # gpt-oss: one learned logit per query head, some far above the scores
        args.append(round_to(rng.standard_normal(hq) * 2.0, "f32"))
        arg_types.append("f32")
        sinks_type = _ttype((hq,), "f32")
    ir = pe_ir.attention_function(
        name, qt, kt, vt, out=_ttype((b, hq, sq, dv), dtype), positions=positions,
        rotate=rotate, attend_positions=False,
        causal=causal, window=window or None, alibi=alibi or None,
        rope=None if separate_rope else rope_ir, sinks=sinks_type)

    def reference(a, sample):
        picked = np.arange(sq) if sample is None else sample
        qp = np.arange(sq) + (skv - sq) if qpos is None else qpos
        return [ref.attention(a[0][:, :, picked], a[1], a[2], q_positions=qp[..., picked],
                              k_positions=kpos, causal=causal, window=window, alibi=alibi,
                              rope=rope_ref, sinks=a[-1] if sinks else None)]

    metric, limit = "scaled", 1e-5 if dtype == "f32" else 1.6e-2
    elem_bytes = {"f32": 4, "f16": 2, "bf16": 2}[dtype]
    # Q K^T and P V: 2 B Hq Sq Skv (D + Dv), half of it under a causal mask (Sq = Skv).
    flops = 2 * b * hq * sq * skv * (d + dv) // (2 if causal and sq == skv else 1)
    return Case(name, ir, args, arg_types, [dtype], reference, metric, limit,
                bytes_moved=(k.size + v.size) * elem_bytes, timed=timed,
                sample_axis=2 if rows is not None else None, sample=rows,
                torch_attention=torch_attention, flags=list(flags), flops=flops,
                notes=notes or "within 1e-5 (f32) and 1.6e-2 (bf16/f16) of the largest output")


def _sampled_rows(rng, s: int, full: bool) -> np.ndarray:
    """The query rows a long prefill's reference is computed for: the first four, the last,
    and 60 (4 small) drawn at random."""
    drawn = rng.choice(s, 60 if full else 4, replace=False)
    return np.unique(np.concatenate([np.arange(4), drawn, [s - 1]]))


def _attention_cases(rng, full: bool) -> List[Case]:
    """Fused attention (pe-gpu-tile-attention, D = 64) over the variants, decode with its key
    splits, and a D = 128 case (the channels stepped, not held), all with
    --tensor-cores=false: the SIMT kernel, which the CPU schedule runs too."""
    out = []
    simt = ["--tensor-cores=false"]
    llama3_64 = ("#pe.rope<theta = 500000.0, rotary_dim = 64, scaling = #pe.llama3<"
                 "factor = 8.0, original_max_position_embeddings = 8192>>")
    llama3_ref = {"theta": 500000.0, "rotary_dim": 64, "scaling": LLAMA3}
    s = 512 if full else 12
    hq, hkv = (32, 8) if full else (4, 2)
    out.append(_attention_case(
        "attention_gqa_llama3_bf16", rng, "bf16", (1, hq, hkv, s, s, 64), causal=True,
        rope_ir=llama3_64, rope_ref=llama3_ref,
        flags=simt,
        torch_attention={"rope": llama3_ref, "causal": True},
        notes="GQA 32/8 (4/2 small), causal, llama3 RoPE fused; PyTorch: HF RoPE + SDPA"))
    pos = np.sort(rng.choice(1 << 16, s, replace=False)).astype(np.int64)
    out.append(_attention_case(
        "attention_mha_window_yarn_f16", rng, "f16", (1, 8 if full else 2, 8 if full else 2,
                                                      s, s, 64),
        window=4096, rope_ir="#pe.rope<rotary_dim = 32, style = interleaved, scaling = "
                             "#pe.yarn<factor = 4.0, original_max_position_embeddings = 4096>>",
        rope_ref={"rotary_dim": 32, "style": "interleaved", "scaling": YARN}, qpos=pos,
        kpos=pos, flags=simt, notes="MHA, window 4096 both ways, YaRN interleaved partial (32 of 64) "
                        "RoPE, arbitrary positions"))
    out.append(_attention_case(
        "attention_alibi_f32", rng, "f32", (2, 16 if full else 4, 16 if full else 4, s, s, 64),
        causal=True, alibi=8.0, notes="ALiBi (max_bias 8), causal, batch 2"))
    out.append(_attention_case(
        "attention_d128_bf16", rng, "bf16", (1, hq, hkv, 256 if full else 8, 256 if full else 8,
                                             128),
        causal=True, rope_ir=LLAMA3_IR, rope_ref={"theta": 500000.0, "rotary_dim": 128,
                                                  "scaling": LLAMA3},
        flags=simt,
        notes="D = 128: the SIMT kernel stepping through the channels (a D = 128 row "
              "exceeds a thread's registers)"))
    skv = 32768 if full else 40
    out.append(_attention_case(
        "decode_gqa_llama3_bf16", rng, "bf16", (1, hq, hkv, 1, skv, 64), causal=True,
        rope_ir=llama3_64, rope_ref=llama3_ref, timed=True,
        torch_attention={"rope": llama3_ref, "causal": True},
        flags=simt,
        notes="1 query x Skv = 32768 (40 small): keys split across threads, then merged; "
              "GB/s of the K/V read"))
    s = 2048 if full else 16
    rows = _sampled_rows(rng, s, full)
    out.append(_attention_case(
        "prefill_gqa_llama3_bf16", rng, "bf16", (1, hq, hkv, s, s, 64), causal=True,
        rope_ir=llama3_64, rope_ref=llama3_ref, timed=True, rows=rows,
        torch_attention={"rope": llama3_ref, "causal": True},
        flags=simt,
        notes="S = 2048 (16 small), timed against HF RoPE + SDPA; reference on sampled rows"))
    out.append(_mla_absorbed_case(rng, full, "mla_absorbed_decode_bf16", simt,
                                  "the SIMT kernel"))
    return out + _paged_cases(rng, full) + _serving_cases(rng, full) + \
        _tensor_core_cases(rng, full)


def _mla_absorbed_case(rng, full: bool, name: str, flags: List[str], kernel: str,
                       sizes=((4, 128, 4096), (1, 4, 40))) -> Case:
    """Absorbed latent attention (DeepSeek-V3's decode over the compressed cache): H query
    heads of 512 + 64 channels against one KV head (the latent, then the rotated k_pe) whose
    first 512 channels are the values, a slice of the keys in the IR (no copy), compiled
    with `flags` (`kernel`: which kernel that gives); (B, H, Skv) full and small."""
    b, h, skv = sizes[0] if full else sizes[1]
    latent, d = 512, 576
    q = _quantized(rng, (b, h, 1, d), "bf16")
    c = _quantized(rng, (b, 1, skv, d), "bf16")
    rope_ir = ("#pe.rope<theta = 10000.0, rotary_dim = 64, rotary_offset = 512, "
               "style = interleaved>")
    rope_ref = {"theta": 10000.0, "rotary_dim": 64, "rotary_offset": latent,
                "style": "interleaved"}
    qt, ct = _ttype(q.shape, "bf16"), _ttype(c.shape, "bf16")
    vt, ot = _ttype((b, 1, skv, latent), "bf16"), _ttype((b, h, 1, latent), "bf16")
    ir = (f"func.func @{name}(%q: {qt}, %c: {ct}) -> {ot} {{\n"
          f"  %v = tensor.extract_slice %c[0, 0, 0, 0] [{b}, 1, {skv}, {latent}] [1, 1, 1, 1]"
          f" : {ct} to {vt}\n"
          f"  %o = pe.attention %q, %c, %v causal rope({rope_ir}) : {qt}, {ct}, {vt} -> {ot}\n"
          f"  return %o : {ot}\n}}\n")

    def reference(a, sample):
        return [ref.attention(a[0], a[1], a[1][..., :latent], q_positions=np.array([skv - 1]),
                              causal=True, rope=rope_ref)]

    return Case(name, ir, [q, c], ["bf16", "bf16"], ["bf16"], reference, "scaled", 1.6e-2,
                bytes_moved=2 * c.size, timed=True, flops=2 * b * h * skv * (d + latent),
                flags=flags,
                notes=f"absorbed MLA decode, (B, H, Skv) = {sizes[0]} ({sizes[1]} small): "
                      f"{kernel}; GB/s of the latent read; within 1.6e-2 of the largest "
                      f"output")


def _paged_cases(rng, full: bool) -> List[Case]:
    """pe.paged_attention (the SIMT paged kernel, its splits over the block table's
    capacity): a decode batch of 8 requests of 1k..32k keys (small: 1..90), page 16, GQA
    32/8 (4/2 small), D = 128, llama3 on the queries, bf16, nhd pages in a random order;
    and a ragged batch of prefill chunks and decode rows in f32, hnd, with a window."""
    llama3_ref = {"theta": 500000.0, "rotary_dim": 128, "scaling": LLAMA3}
    hq, hkv = (32, 8) if full else (4, 2)
    out = [_paged_case(
        "paged_decode_gqa_llama3_d128_bf16", rng, "bf16", "nhd", hq, hkv,
        [(1, n) for n in ([1024, 2048, 4096, 8192, 16384, 32768, 3000, 12000] if full
                          else [1, 17, 40, 33, 64, 5, 90, 24])],
        "causal rope(" + LLAMA3_IR + ")", dict(causal=True, rope=llama3_ref), timed=True,
        notes="decode of 8 requests, KV 1k..32k, page 16: GB/s of the K/V read")]
    out.append(_paged_case(
        "paged_ragged_window_f32", rng, "f32", "hnd", hq, hkv,
        [(64, 700), (1, 513), (0, 40), (200, 200), (1, 1)] if full
        else [(5, 40), (1, 33), (0, 4), (9, 9), (1, 1)],
        "causal window(256) rope(" + LLAMA3_IR + ")",
        dict(causal=True, window=256, rope=llama3_ref),
        notes="ragged: prefill chunks against their caches, decode rows, an empty sequence; "
              "window 256"))
    return out


def _serving_cases(rng, full: bool) -> List[Case]:
    """pe.append_kv on the GPU (pe-gpu-tile-append-kv), the caches updated in place: a
    prefill chunk's append with llama3 RoPE (slots in shuffled pages, some -1, some named
    twice so that the later token must win), a decode step of a serving engine (each
    sequence's new token appended, then attention over the pages, in one function), and a
    slot out of range (the run fails with the op's message and writes nothing)."""
    llama3_ref = {"theta": 500000.0, "rotary_dim": 128, "scaling": LLAMA3}
    page, hkv, d = 16, 8 if full else 2, 128
    tokens, pages = (4096, 512) if full else (40, 8)
    slots = rng.permutation(pages * page)[:tokens]
    slots[::64 if full else 9] = -1
    repeated = rng.choice(np.flatnonzero(slots >= 0), 8 if full else 2, replace=False)
    later = np.flatnonzero(slots >= 0)[-1]
    slots[repeated[repeated < later]] = slots[later]
    positions = rng.integers(0, 131072, size=tokens)
    written = int(np.unique(slots[slots >= 0]).size)
    out = [_append_case("append_kv_llama3_bf16", rng, "bf16", "nhd", hkv, (pages, page),
                        slots, positions, LLAMA3_IR, llama3_ref, timed=True,
                        bytes_moved=4 * written * hkv * d * 2,
                        notes=f"{tokens} tokens into {pages} pages of {page} (nhd), some "
                              "slots -1, some repeated; GB/s of the rows read and written")]
    out.append(_decode_step_case(rng, full, llama3_ref))
    small = 6
    bad = rng.permutation(4 * page)[:small]
    bad[3] = 4 * page  # the capacity: one past the last slot
    out.append(_append_case(
        "append_kv_bad_slot_f32", rng, "f32", "hnd", 2, (4, page), bad,
        None, None, None, error=f"slot {4 * page} (entry 3) is out of range",
        error_report="pe_runtime_slot_out_of_range",
        notes="slot = capacity: the call fails, the caches are unchanged"))
    return out


def _append_case(name, rng, dtype, layout, hkv, pages, slots, positions, rope_ir, rope_ref,
                 timed=False, bytes_moved=0, notes="", error="", error_report="") -> Case:
    """pe.append_kv of len(slots) new rows (D = 128) into caches of `pages` = (count,
    page size) in `layout`, updated in place; keys rotated when `rope_ir` is given."""
    d, tokens = 128, len(slots)
    count, page = pages
    cache = (count, page, hkv, d) if layout == "nhd" else (count, hkv, page, d)
    k, v = _quantized(rng, (tokens, hkv, d), dtype), _quantized(rng, (tokens, hkv, d), dtype)
    kc, vc = _quantized(rng, cache, dtype), _quantized(rng, cache, dtype)
    rt, ct, st = _ttype((tokens, hkv, d), dtype), _ttype(cache, dtype), _ttype((tokens,), "i64")
    args, arg_types = [k, v, kc, vc, slots.astype(np.int64)], [dtype] * 4 + ["i64"]
    positioned, rotate, pos_arg = "", "", ""
    if rope_ir:
        args.append(positions.astype(np.int64))
        arg_types.append("i64")
        positioned, rotate, pos_arg = f" positions(%pos : {st})", f" rope({rope_ir})", \
            f", %pos: {st}"
    ir = (f"func.func @{name}(%k: {rt}, %v: {rt}, %kc: {ct} {{pe.in_place}}, "
          f"%vc: {ct} {{pe.in_place}}, %slots: {st}{pos_arg}) -> ({ct}, {ct}) {{\n"
          f"  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : {st}){positioned} "
          f"layout({layout}){rotate}\n       : {rt}, {rt} -> {ct}, {ct}\n"
          f"  return %a, %b : {ct}, {ct}\n}}\n")

    def reference(a, sample):
        if error:  # nothing is written
            return [a[2], a[3]]
        return list(ref.append_kv(a[0], a[1], a[2], a[3], a[4], layout,
                                  a[5] if rope_ir else None, rope_ref))

    metric, limit = ("ulp", 1.0) if dtype != "f32" else ("scaled", 1e-6)
    return Case(name, ir, args, arg_types, [dtype, dtype], reference, metric, limit,
                bytes_moved=bytes_moved, timed=timed, in_place=[2, 3], error=error,
                error_report=error_report,
                notes=notes + ("" if error else f"; rotated keys within {limit:g} "
                               f"{'ulp' if metric == 'ulp' else 'of the largest'}"))


def _decode_step_case(rng, full: bool, llama3_ref) -> Case:
    """A serving engine's decode step in one function: each sequence's new token (its
    key rotated by llama3 RoPE) appended at its last position of a paged bf16 cache in
    place, then paged attention of the batch over the pages (GQA 32/8, D = 128, RoPE on
    the queries)."""
    name, dtype, page, d = "decode_step_append_paged_bf16", "bf16", 16, 128
    hq, hkv = (32, 8) if full else (4, 2)
    lens = np.array([1024, 2048, 4096, 8192, 16384, 32768, 3000, 12000] if full
                    else [1, 17, 40, 33, 64, 5, 90, 24], dtype=np.int32)
    counts = -(-lens // page)
    order = rng.permutation(int(counts.sum()))
    table = np.full((len(lens), int(counts.max())), -1, dtype=np.int32)
    start = 0
    for b, n in enumerate(counts):
        table[b, :n] = order[start:start + n]
        start += n
    last = lens - 1  # the new token is each sequence's last key
    slots = (table[np.arange(len(lens)), last // page].astype(np.int64) * page + last % page)
    cu = np.arange(len(lens) + 1, dtype=np.int32)
    cache = (int(counts.sum()), page, hkv, d)
    q = _quantized(rng, (len(lens), hq, d), dtype)
    k, v = _quantized(rng, (len(lens), hkv, d), dtype), _quantized(rng, (len(lens), hkv, d), dtype)
    kc, vc = _quantized(rng, cache, dtype), _quantized(rng, cache, dtype)
    qt, rt, ct = (_ttype((len(lens), hq, d), dtype), _ttype((len(lens), hkv, d), dtype),
                  _ttype(cache, dtype))
    st, bt = _ttype((len(lens),), "i64"), _ttype(table.shape, "i32")
    lt, cut = _ttype(lens.shape, "i32"), _ttype(cu.shape, "i32")
    rope = f"rope({LLAMA3_IR})"
    ir = (f"func.func @{name}(%q: {qt}, %k: {rt}, %v: {rt}, %kc: {ct} {{pe.in_place}}, "
          f"%vc: {ct} {{pe.in_place}}, %slots: {st}, %pos: {st}, %bt: {bt}, %lens: {lt}, "
          f"%cu: {cut}) -> ({qt}, {ct}, {ct}) {{\n"
          f"  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : {st}) "
          f"positions(%pos : {st}) layout(nhd) {rope}\n       : {rt}, {rt} -> {ct}, {ct}\n"
          f"  %o = pe.paged_attention %q, %a, %b block_table(%bt : {bt}) kv_lens(%lens : {lt}) "
          f"cu_seqlens(%cu : {cut}) causal {rope}\n       : {qt}, {ct}, {ct} -> {qt}\n"
          f"  return %o, %a, %b : {qt}, {ct}, {ct}\n}}\n")

    def reference(a, sample):
        new_k, new_v = ref.append_kv(a[1], a[2], a[3], a[4], a[5], "nhd", a[6], llama3_ref)
        o = ref.paged_attention(a[0], new_k, new_v, a[7], a[8], a[9], "nhd", causal=True,
                                rope=llama3_ref)
        return [o, new_k, new_v]

    keys = int(lens.sum())
    return Case(name, ir, [q, k, v, kc, vc, slots, last.astype(np.int64), table, lens, cu],
                [dtype] * 5 + ["i64", "i64", "i32", "i32", "i32"], [dtype] * 3, reference,
                "scaled", 1.6e-2, bytes_moved=2 * keys * hkv * d * 2, timed=True,
                flops=4 * hq * d * keys, in_place=[3, 4],
                notes="decode of 8 requests, KV 1k..32k (small: 1..90), page 16: the new "
                      "tokens appended (K rotated), then attention over the pages; GB/s of "
                      "the K/V read; within 1.6e-2 of the largest output")


def _paged_case(name, rng, dtype, layout, hq, hkv, sequences, attrs_ir, attrs_ref,
                timed=False, notes="") -> Case:
    """pe.paged_attention of `sequences` [(queries, keys)] over pages of 16 keys (D = 128),
    the pages of all sequences shuffled in one cache; block-table columns past a sequence's
    pages hold -1 (never read)."""
    page, d = 16, 128
    counts = [-(-keys // page) for _, keys in sequences]
    columns = max(counts)
    order = rng.permutation(sum(counts))
    table = np.full((len(sequences), columns), -1, dtype=np.int32)
    start = 0
    for b, n in enumerate(counts):
        table[b, :n] = order[start:start + n]
        start += n
    lens = np.array([keys for _, keys in sequences], dtype=np.int32)
    cu = np.concatenate([[0], np.cumsum([q for q, _ in sequences])]).astype(np.int32)
    tokens = int(cu[-1])
    cache = (sum(counts), page, hkv, d) if layout == "nhd" else (sum(counts), hkv, page, d)
    q = _quantized(rng, (tokens, hq, d), dtype)
    kc, vc = _quantized(rng, cache, dtype), _quantized(rng, cache, dtype)
    qt, ct, rt = _ttype(q.shape, dtype), _ttype(cache, dtype), _ttype((tokens, hq, d), dtype)
    bt, lt, cut = _ttype(table.shape, "i32"), _ttype(lens.shape, "i32"), _ttype(cu.shape, "i32")
    ir = (f"func.func @{name}(%q: {qt}, %kc: {ct}, %vc: {ct}, %bt: {bt}, %lens: {lt}, "
          f"%cu: {cut}) -> {rt} {{\n"
          f"  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : {bt}) "
          f"kv_lens(%lens : {lt}) cu_seqlens(%cu : {cut}) layout({layout}) {attrs_ir}\n"
          f"       : {qt}, {ct}, {ct} -> {rt}\n"
          f"  return %o : {rt}\n}}\n")

    def reference(a, sample):
        return [ref.paged_attention(a[0], a[1], a[2], a[3], a[4], a[5], layout, **attrs_ref)]

    elem_bytes = {"f32": 4, "f16": 2, "bf16": 2}[dtype]
    keys = int(lens.sum())
    return Case(name, ir, [q, kc, vc, table, lens, cu], [dtype] * 3 + ["i32"] * 3, [dtype],
                reference, "scaled", 1e-5 if dtype == "f32" else 1.6e-2,
                bytes_moved=2 * keys * hkv * d * elem_bytes, timed=timed,
                flops=4 * hq * d * sum(q * k for q, k in sequences),
                notes=notes + "; within 1e-5 (f32) and 1.6e-2 (bf16) of the largest output")


def _tensor_core_cases(rng, full: bool) -> List[Case]:
    """The tensor-core kernel (--tensor-cores: pe-gpu-mma-attention; warpgroup MMA on
    sm_90a, mma.sync on the other chips) over the variants, D = 64 and 128, the decode
    target and the prefill target (S = 8192, D = 128) timed against HF RoPE + SDPA; the
    mma.sync kernel on the same chip (--warpgroup-mma=false) and the warpgroup-MMA kernel
    without warp specialization (--warp-specialize=false) and the warp-specialized one
    loading K and V by TMA (--tma), so that one sm_90a run checks and times all four; and the prefill target with RoPE as separate pe.rope ops left unfused
    (--fuse=false): the project's unfused GPU path beside the fused kernels. GPU only:
    their warp-collective steps have no CPU schedule."""
    tc = ["--tensor-cores"]
    llama3_ref = {"theta": 500000.0, "rotary_dim": 128, "scaling": LLAMA3}
    hq, hkv = (32, 8) if full else (4, 2)
    out = _kernel_cases(rng, full, "tc_", tc, "tensor cores")
    s = 8192 if full else 64
    arange = np.arange(s, dtype=np.int64)[None, :]
    out.append(_attention_case(
        "tc_prefill_positions_gqa_llama3_d128_bf16", rng, "bf16", (1, hq, hkv, s, s, 128),
        causal=True, rope_ir=LLAMA3_IR, rope_ref=llama3_ref, qpos=arange, kpos=arange,
        timed=True, rows=_sampled_rows(rng, s, full), flags=tc,
        notes="tensor cores: the prefill target with explicit positions 0 .. S - 1 (as the "
              "config front end's functions pass them): warp-specialized, the causal range "
              "not cut (each tile's key positions loaded, hidden tiles skipped), beside the "
              "kernel of the default positions"))
    s = 512 if full else 40
    out.append(_attention_case(
        "tc_attention_mqa_alibi_bf16", rng, "bf16", (1, 8, 1, s - 3, s, 64), causal=True,
        alibi=8.0, flags=tc,
        notes="tensor cores: MQA 8/1, ALiBi, causal, Sq < Skv (row and key tails)"))
    out.append(_attention_case(
        "tc_attention_sinks_window_bf16", rng, "bf16", (2, 16, 2, s, s, 64), causal=True,
        window=128, sinks=True, rope_ir="#pe.rope<theta = 150000.0, rotary_dim = 64>",
        rope_ref={"theta": 150000.0, "rotary_dim": 64}, flags=tc,
        notes="tensor cores: gpt-oss's attention (GQA 16/2, sliding window 128, learned "
              "sinks, RoPE), batch 2"))
    out.append(_attention_case(
        "tc_decode_sinks_bf16", rng, "bf16", (1, 16, 2, 1, 2048 if full else 600, 64),
        causal=True,
        sinks=True, flags=tc,
        notes="tensor cores: decode with sinks (key splits: the sink counts once, in the "
              "first range)"))
    deepseek_rope = {"rotary_dim": 64, "style": "interleaved", "rotary_offset": 128,
                     "scaling": {"type": "yarn", "factor": 40.0,
                                 "original_max_position_embeddings": 4096, "mscale": 1.0,
                                 "mscale_all_dim": 1.0}}
    out.append(_attention_case(
        "tc_attention_mla_heads_bf16", rng, "bf16", (1, 16, 16, s, s, 192), dv=128,
        causal=True, rope_ir=pe_ir.rope_attr(**deepseek_rope), rope_ref=deepseek_rope, flags=tc,
        notes="tensor cores: latent attention's full-width heads (DeepSeek-V3: D = 192, "
              "the last 64 channels rotated with its YaRN, Dv = 128; 32-key tiles in 53 "
              "KiB of dynamic shared memory)"))
    out.append(_attention_case(
        "tc_attention_gemma_d256_bf16", rng, "bf16", (1, 8, 4, s, s, 256), causal=True,
        window=s // 2, rope_ir="#pe.rope<rotary_dim = 256>", rope_ref={"rotary_dim": 256},
        flags=tc, notes="tensor cores: Gemma's heads (D = 256: mma.sync on every chip, "
                        "16-key tiles in 58 KiB of dynamic shared memory), GQA 8/4, "
                        "causal, sliding window"))
    out.append(_attention_case(
        "tc_decode_mla_heads_f16", rng, "f16", (2, 16, 16, 1, 2048 if full else 600, 192),
        dv=128, causal=True, rope_ir=pe_ir.rope_attr(**deepseek_rope), rope_ref=deepseek_rope,
        flags=tc, notes="tensor cores: decode with D = 192, Dv = 128 (key splits)"))
    out.append(_mla_absorbed_case(
        rng, full, "tc_decode_mla_absorbed_bf16", tc,
        "tensor cores: two channel groups of 4 warps (mma.sync on every chip), 132 KiB of "
        "dynamic shared memory (sm_80, sm_87, sm_90, sm_100; the SIMT kernel elsewhere)",
        sizes=((4, 128, 4096), (1, 64, 600))))
    skv = 131072 if full else 600
    out.append(_attention_case(
        "tc_decode_gqa_llama3_d128_bf16", rng, "bf16", (1, hq, hkv, 1, skv, 128), causal=True,
        rope_ir=LLAMA3_IR, rope_ref=llama3_ref, timed=True, flags=tc,
        torch_attention={"rope": llama3_ref, "causal": True},
        notes="tensor cores: decode target, 1 query x Skv = 131072 (600 small), GQA 32/8, "
              "D = 128: keys split across blocks, then merged; GB/s of the K/V read"))
    out += _kernel_cases(rng, full, "tc_sync_", tc + ["--warpgroup-mma=false"], "mma.sync")
    out += _kernel_cases(rng, full, "tc_one_", tc + ["--warp-specialize=false"],
                         "one warpgroup a block (sm_90a without warp specialization)")
    out += _kernel_cases(rng, full, "tc_tma_", tc + ["--tma"],
                         "warp-specialized with K and V loaded by TMA (128-byte swizzle)")
    s = 8192 if full else 64
    out.append(_attention_case(
        "tc_unfused_prefill_gqa_llama3_d128_bf16", rng, "bf16", (1, hq, hkv, s, s, 128),
        causal=True, rope_ir=LLAMA3_IR, rope_ref=llama3_ref, timed=True,
        rows=_sampled_rows(rng, s, full), flags=tc + ["--fuse=false"], separate_rope=True,
        notes="the prefill target unfused: pe.rope kernels write rotated Q/K, then the "
              "tensor-core kernel without RoPE (the default chip's products)"))
    return out


def _kernel_cases(rng, full: bool, prefix: str, flags: List[str], label: str) -> List[Case]:
    """One tensor-core kernel (`flags`) on GQA 32/8 D = 128 with llama3 RoPE, MHA f16 with
    a window, YaRN interleaved partial RoPE and arbitrary batched positions, and the
    prefill target S = 8192 timed against HF RoPE + SDPA (reference on sampled rows)."""
    llama3_ref = {"theta": 500000.0, "rotary_dim": 128, "scaling": LLAMA3}
    s = 512 if full else 40
    hq, hkv = (32, 8) if full else (4, 2)
    out = [_attention_case(
        prefix + "attention_gqa_llama3_d128_bf16", rng, "bf16", (1, hq, hkv, s, s, 128),
        causal=True, rope_ir=LLAMA3_IR, rope_ref=llama3_ref, flags=flags,
        torch_attention={"rope": llama3_ref, "causal": True},
        notes=f"{label}: GQA 32/8, D = 128, causal, llama3 RoPE fused")]
    pos = np.sort(rng.choice(1 << 16, s, replace=False)).astype(np.int64)
    out.append(_attention_case(
        prefix + "attention_mha_window_yarn_f16", rng, "f16", (2, 4, 4, s, s, 64), window=300,
        rope_ir="#pe.rope<rotary_dim = 32, style = interleaved, scaling = "
                "#pe.yarn<factor = 4.0, original_max_position_embeddings = 4096>>",
        rope_ref={"rotary_dim": 32, "style": "interleaved", "scaling": YARN},
        qpos=np.stack([pos, pos + 7]), kpos=np.stack([pos, pos + 7]), flags=flags,
        notes=f"{label}: MHA f16, batch 2, window 300 both ways, YaRN interleaved partial "
              "RoPE, arbitrary batched positions (tiles skipped)"))
    s = 8192 if full else 64
    out.append(_attention_case(
        prefix + "prefill_gqa_llama3_d128_bf16", rng, "bf16", (1, hq, hkv, s, s, 128),
        causal=True, rope_ir=LLAMA3_IR, rope_ref=llama3_ref, timed=True,
        rows=_sampled_rows(rng, s, full), flags=flags,
        torch_attention={"rope": llama3_ref, "causal": True},
        notes=f"{label}: the prefill target, S = 8192, B = 1, GQA 32/8, D = 128, causal, "
              "llama3; timed against HF RoPE + SDPA; reference on sampled rows"))
    return out
