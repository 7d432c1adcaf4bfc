"""Constants folded by `pe-opt -canonicalize` against the float64 reference (pe.reference).

Each test renders a small MLIR function (pe.ir), folds it with pe-opt (path: $PE_OPT, default
build/bin/pe-opt), parses the `arith.constant dense<...>` values it returns, and
compares them with pe.reference.

Tolerance (the contract: "computed in double and rounded once to the element type"):
  * f32: each value equals the float64 reference rounded to float32 within 1 ulp
    (at most one representable float32 value apart);
  * f16 / bf16: within 1 ulp of their own type (same rule);
  * f64 (rope_frequencies, alibi_slopes only): within 4 float64 ulps, since two independent
    double evaluations of pow/exp/log formulas may differ by a few ulps;
  * tables (rope_tables, sinusoidal) at large positions: additionally an absolute allowance
    m*|p|*f*eps_f with eps_f = (16 + 4|ln f|)*2^-53, the uncertainty of the angle p*f caused by
    the float64 evaluation of the frequency f itself (both sides use a double f; only the
    angle reduction is exact). It is below one float32 ulp of values >= 0.015 for every position
    up to 2^20, so it only matters for entries close to 0 or positions beyond 2^20.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from pe import ir
from pe import reference as ref
from pe.testing import PE_OPT, assert_within_ulp, parse_returned_constants, run_pe_opt

pytestmark = pytest.mark.skipif(not os.access(PE_OPT, os.X_OK),
                                reason=f"pe-opt not found at {PE_OPT} (set PE_OPT)")

F64_ULPS = 4


def fold(fb: ir.FunctionBuilder):
    """Fold the function with pe-opt -canonicalize; returns [(values, dtype), ...]."""
    return parse_returned_constants(run_pe_opt(fb.render()))


def angle_allowance(positions, freqs, m):
    """m*|p|*f*eps_f for each table entry (see the module docstring)."""
    p = np.abs(np.asarray(positions, dtype=np.float64))[..., None]
    f = np.asarray(freqs, dtype=np.float64)
    eps_f = (16.0 + 4.0 * np.abs(np.log(f))) * 2.0 ** -53
    return abs(m) * p * f * eps_f


# ---------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------

def longrope(short, long_, L0=4096, **kw):
    d = {"type": "longrope", "short_factor": list(short), "long_factor": list(long_),
         "original_max_position_embeddings": L0}
    d.update(kw)
    return d


LR8_SHORT = [1.0, 1.1, 1.25, 1.5]
LR8_LONG = [1.0, 2.0, 4.0, 8.0]
# Phi-3-like lists for r = 96 (48 pairs): deterministic, increasing with the pair index.
LR96_SHORT = [round(1.0 + 0.02 * k + 0.001 * (k % 5), 6) for k in range(48)]
LR96_LONG = [round(1.0 + 0.9 * k ** 1.25, 6) for k in range(48)]

# (id, theta, rotary_dim, scaling, seq_len)
FREQ_CASES = [
    # default
    ("default-r2", 10000.0, 2, None, None),
    ("default-r8", 10000.0, 8, None, None),
    ("default-r16", 10000.0, 16, None, None),
    ("default-r20-partial", 10000.0, 20, None, None),
    ("default-r24-partial", 10000.0, 24, None, None),
    ("default-r32-partial", 10000.0, 32, None, None),
    ("default-r48-theta10000.5", 10000.5, 48, None, None),
    ("default-r64", 10000.0, 64, None, None),
    ("default-r96", 10000.0, 96, None, None),
    ("default-r128-theta5e5", 500000.0, 128, None, None),
    ("default-r128-theta1e6", 1000000.0, 128, None, None),
    ("default-r256-theta1.5e8", 1.5e8, 256, None, None),
    ("default-r10-theta2", 2.0, 10, None, None),
    # linear
    ("linear-2-r64", 10000.0, 64, {"type": "linear", "factor": 2.0}, None),
    ("linear-4-r128", 500000.0, 128, {"type": "linear", "factor": 4.0}, None),
    ("linear-0.5-r24", 10000.0, 24, {"type": "linear", "factor": 0.5}, None),
    ("linear-3.7-r96", 10000.0, 96, {"type": "linear", "factor": 3.7}, None),
    # static NTK
    ("ntk-2-r64", 10000.0, 64, {"type": "ntk", "factor": 2.0}, None),
    ("ntk-4-r128", 1000000.0, 128, {"type": "ntk", "factor": 4.0}, None),
    ("ntk-8-r4", 10000.0, 4, {"type": "ntk", "factor": 8.0}, None),
    ("ntk-1.5-r24", 10000.0, 24, {"type": "ntk", "factor": 1.5}, None),
    ("ntk-0.5-r32", 10000.0, 32, {"type": "ntk", "factor": 0.5}, None),
    # dynamic NTK: seq_len unknown, below, at, just above and far above max_position_embeddings
    *[(f"dynamic-2-r64-seq{sl}", 10000.0, 64,
       {"type": "dynamic_ntk", "factor": 2.0, "max_position_embeddings": 4096}, sl)
      for sl in (None, 1, 100, 4096, 4097, 8192, 32768)],
    ("dynamic-4-r24-seq100000", 10000.0, 24,
     {"type": "dynamic_ntk", "factor": 4.0, "max_position_embeddings": 2048}, 100000),
    ("dynamic-0.5-r32-seq4096", 10000.0, 32,
     {"type": "dynamic_ntk", "factor": 0.5, "max_position_embeddings": 1024}, 4096),
    ("dynamic-8-r128-theta5e5-seq131072", 500000.0, 128,
     {"type": "dynamic_ntk", "factor": 8.0, "max_position_embeddings": 8192}, 131072),
    # YaRN
    ("yarn-4-r16", 10000.0, 16,
     {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}, None),
    ("yarn-4-r128", 10000.0, 128,
     {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}, None),
    ("yarn-qwen-4-r128-theta1e6", 1000000.0, 128,
     {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, None),
    ("yarn-gptoss-32-r64-notrunc", 150000.0, 64,
     {"type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
      "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False}, None),
    ("yarn-notrunc-r16", 10000.0, 16,
     {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096,
      "truncate": False}, None),
    ("yarn-deepseek-40-r64-mscale", 10000.0, 64,
     {"type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
      "mscale": 0.707, "mscale_all_dim": 0.707}, None),
    ("yarn-16-r64-mscale1-alldim0.5", 10000.0, 64,
     {"type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096,
      "mscale": 1.0, "mscale_all_dim": 0.5}, None),
    ("yarn-8-r64-attnfactor1.5", 10000.0, 64,
     {"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048,
      "attention_factor": 1.5}, None),
    ("yarn-8-r24-partial", 10000.0, 24,
     {"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048}, None),
    ("yarn-betas16-2-notrunc-r32", 10000.0, 32,
     {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096,
      "beta_fast": 16.0, "beta_slow": 2.0, "truncate": False}, None),
    ("yarn-0.5-r128", 10000.0, 128,
     {"type": "yarn", "factor": 0.5, "original_max_position_embeddings": 4096}, None),
    ("yarn-low-above-high-after-clamp", 10.0, 16,
     {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1000000}, None),
    # Llama 3.1
    ("llama3-meta-r128", 500000.0, 128,
     {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 8192}, None),
    ("llama3-meta-r16", 500000.0, 16,
     {"type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}, None),
    ("llama3.2-32-r64", 500000.0, 64,
     {"type": "llama3", "factor": 32.0, "original_max_position_embeddings": 8192}, None),
    ("llama3-lf2-hf8-r64", 10000.0, 64,
     {"type": "llama3", "factor": 4.0, "low_freq_factor": 2.0, "high_freq_factor": 8.0,
      "original_max_position_embeddings": 4096}, None),
    ("llama3-r24-partial", 10000.0, 24,
     {"type": "llama3", "factor": 4.0, "original_max_position_embeddings": 2048}, None),
    # LongRoPE
    *[(f"longrope-r8-{sel}-seq{sl}", 10000.0, 8,
       longrope(LR8_SHORT, LR8_LONG, factor=32.0, select=sel), sl)
      for sel in ("dynamic", "short", "long") for sl in (None, 4096, 4097)],
    ("longrope-phi3-r96-dynamic-seq131072", 10000.0, 96,
     longrope(LR96_SHORT, LR96_LONG, factor=32.0), 131072),
    ("longrope-phi3-r96-dynamic-seq2000", 10000.0, 96,
     longrope(LR96_SHORT, LR96_LONG, factor=32.0), 2000),
    ("longrope-r8-attnfactor", 10000.0, 8,
     longrope(LR8_SHORT, LR8_LONG, factor=16.0, attention_factor=1.25, select="long"), None),
    # seq_len given to configurations that do not depend on it, and seq_len = 0
    ("default-r16-seq100000", 10000.0, 16, None, 100000),
    ("yarn-4-r16-seq100000", 10000.0, 16,
     {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}, 100000),
    ("dynamic-2-r64-seq0", 10000.0, 64,
     {"type": "dynamic_ntk", "factor": 2.0, "max_position_embeddings": 4096}, 0),
]


@pytest.mark.parametrize("case_id,theta,r,scaling,seq_len",
                         FREQ_CASES, ids=[c[0] for c in FREQ_CASES])
def test_rope_frequencies(case_id, theta, r, scaling, seq_len):
    fb = ir.FunctionBuilder()
    sl = fb.index(seq_len) if seq_len is not None else None
    rope = ir.rope_attr(theta, r, "half", scaling)
    fb.returns(fb.rope_frequencies(rope, r // 2, "f32", sl),
               fb.rope_frequencies(rope, r // 2, "f64", sl))
    (got32, _), (got64, _) = fold(fb)
    expected = ref.rope_inv_freq(theta, r, scaling, seq_len)
    assert_within_ulp(got32, expected, "f32", what=f"{case_id} f32")
    assert_within_ulp(got64, expected, "f64", ulps=F64_ULPS, what=f"{case_id} f64")


# ---------------------------------------------------------------------------
# rope_tables
# ---------------------------------------------------------------------------

P_SMALL = [0, 1, 2, 3, 7, 31, 100, 511]
P_LARGE = [0, 1, 4095, 4096, 8191, 65535, 65536 * 7, 1048575]
P_HUGE = [1048576, 16777217, 123456789, 1234567891, 2 ** 31 - 1]
P_BATCHED = [[0, 1, 2, 3, 5], [4096, 4097, 70000, 65536 * 7, 1048575]]
P_CROSS_8192 = [0, 100, 4095, 8000, 8191]  # max + 1 = 8192
P_NEGATIVE = [-1048575, -65536 * 7, -4096, -1, 0, 3]
P_BEYOND_I32 = [2 ** 32 + 5, 2 ** 40 + 12345]


# (id, theta, r, scaling, positions, elem type of positions)
TABLE_CASES = [
    ("default-r128-theta5e5-large", 500000.0, 128, None, P_LARGE, "i64"),
    ("default-r16-small", 10000.0, 16, None, P_SMALL, "i32"),
    ("default-r24-partial-large", 10000.0, 24, None, P_LARGE, "i32"),
    ("default-r64-huge", 10000.0, 64, None, P_HUGE, "i64"),
    ("default-r64-batched", 10000.0, 64, None, P_BATCHED, "i64"),
    ("default-r32-negative", 10000.0, 32, None, P_NEGATIVE, "i32"),
    ("default-r8-beyond-i32", 10000.0, 8, None, P_BEYOND_I32, "i64"),
    ("default-r256-theta1e6-large", 1000000.0, 256, None, P_LARGE, "i64"),
    ("linear-4-r64-large", 10000.0, 64, {"type": "linear", "factor": 4.0}, P_LARGE, "i64"),
    ("ntk-2-r32-large", 10000.0, 32, {"type": "ntk", "factor": 2.0}, P_LARGE, "i64"),
    ("dynamic-2-r64-below-max", 10000.0, 64,
     {"type": "dynamic_ntk", "factor": 2.0, "max_position_embeddings": 8192}, P_CROSS_8192, "i64"),
    ("dynamic-2-r64-above-max", 10000.0, 64,
     {"type": "dynamic_ntk", "factor": 2.0, "max_position_embeddings": 4096}, P_LARGE, "i64"),
    ("yarn-4-r16-large", 10000.0, 16,
     {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}, P_LARGE, "i64"),
    ("yarn-gptoss-r64-notrunc", 150000.0, 64,
     {"type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
      "truncate": False}, P_LARGE, "i64"),
    ("yarn-mscale-alldim-r32", 10000.0, 32,
     {"type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096,
      "mscale": 1.0, "mscale_all_dim": 0.5}, P_LARGE, "i64"),
    ("yarn-attnfactor-r32", 10000.0, 32,
     {"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048,
      "attention_factor": 1.5}, P_SMALL, "i32"),
    ("yarn-mscale-only-r32", 10000.0, 32,
     {"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048,
      "mscale": 0.707}, P_SMALL, "i32"),
    ("llama3-meta-r128-large", 500000.0, 128,
     {"type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}, P_LARGE, "i64"),
    ("longrope-r8-dynamic-short", 10000.0, 8,
     longrope(LR8_SHORT, LR8_LONG, L0=8192, factor=32.0), P_CROSS_8192, "i64"),
    ("longrope-r8-dynamic-long", 10000.0, 8,
     longrope(LR8_SHORT, LR8_LONG, L0=8191, factor=32.0), P_CROSS_8192, "i64"),
    ("longrope-r96-dynamic-large", 10000.0, 96,
     longrope(LR96_SHORT, LR96_LONG, factor=32.0), P_LARGE, "i64"),
    ("longrope-r8-short-fixed-large", 10000.0, 8,
     longrope(LR8_SHORT, LR8_LONG, factor=32.0, select="short"), P_LARGE, "i64"),
    ("longrope-r8-attnfactor", 10000.0, 8,
     longrope(LR8_SHORT, LR8_LONG, factor=32.0, attention_factor=1.25), P_SMALL, "i64"),
    # seq_len = max over the whole [B, S] tensor: only the second row is past the limit
    ("dynamic-2-r32-batched", 10000.0, 32,
     {"type": "dynamic_ntk", "factor": 2.0, "max_position_embeddings": 4096}, P_BATCHED, "i64"),
    ("longrope-r8-batched", 10000.0, 8,
     longrope(LR8_SHORT, LR8_LONG, factor=32.0), P_BATCHED, "i32"),
    # seq_len = 2^31 from i32 positions (no int32 overflow)
    ("dynamic-4-r16-huge-i32", 10000.0, 16,
     {"type": "dynamic_ntk", "factor": 4.0, "max_position_embeddings": 4096}, P_HUGE, "i32"),
    ("longrope-r8-huge-i32", 10000.0, 8,
     longrope(LR8_SHORT, LR8_LONG, factor=32.0), P_HUGE, "i32"),
]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("case_id,theta,r,scaling,positions,pos_elem",
                         TABLE_CASES, ids=[c[0] for c in TABLE_CASES])
def test_rope_tables(case_id, theta, r, scaling, positions, pos_elem, dtype):
    fb = ir.FunctionBuilder()
    pos = fb.positions(positions, pos_elem)
    shape = list(np.shape(positions)) + [r // 2]
    cos, sin = fb.rope_tables(ir.rope_attr(theta, r, "half", scaling), pos, shape, dtype)
    fb.returns(cos, sin)
    (got_cos, _), (got_sin, _) = fold(fb)
    exp_cos, exp_sin = ref.rope_tables(positions, theta, r, scaling)
    seq_len = int(np.max(positions)) + 1
    allowance = angle_allowance(positions, ref.rope_inv_freq(theta, r, scaling, seq_len),
                                ref.rope_attention_factor(scaling))
    assert_within_ulp(got_cos, exp_cos, dtype, extra_abs=allowance, what=f"{case_id} cos")
    assert_within_ulp(got_sin, exp_sin, dtype, extra_abs=allowance, what=f"{case_id} sin")


def test_rope_tables_style_does_not_matter():
    """Tables are per pair; `style` only changes which channels form a pair."""
    outs = []
    for style in ("half", "interleaved"):
        fb = ir.FunctionBuilder()
        pos = fb.positions(P_LARGE)
        fb.returns(*fb.rope_tables(ir.rope_attr(10000.0, 32, style), pos, [len(P_LARGE), 16]))
        outs.append(fold(fb))
    for (a, _), (b, _) in zip(*outs):
        np.testing.assert_array_equal(a, b)


MAGNITUDE_CASES = [
    # (id, scaling, m written out independently of pe.reference)
    ("none", None, 1.0),
    ("linear", {"type": "linear", "factor": 4.0}, 1.0),
    ("llama3", {"type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}, 1.0),
    ("yarn-4", {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
     0.1 * math.log(4.0) + 1.0),
    ("yarn-0.5", {"type": "yarn", "factor": 0.5, "original_max_position_embeddings": 4096}, 1.0),
    ("yarn-mscale-alldim", {"type": "yarn", "factor": 16.0,
                            "original_max_position_embeddings": 4096,
                            "mscale": 1.0, "mscale_all_dim": 0.5},
     (0.1 * math.log(16.0) + 1.0) / (0.05 * math.log(16.0) + 1.0)),
    ("yarn-deepseek-equal", {"type": "yarn", "factor": 40.0,
                             "original_max_position_embeddings": 4096,
                             "mscale": 0.707, "mscale_all_dim": 0.707}, 1.0),
    ("yarn-mscale-only", {"type": "yarn", "factor": 16.0,
                          "original_max_position_embeddings": 4096, "mscale": 0.707},
     0.1 * math.log(16.0) + 1.0),
    ("yarn-alldim-only", {"type": "yarn", "factor": 16.0,
                          "original_max_position_embeddings": 4096, "mscale_all_dim": 0.707},
     0.1 * math.log(16.0) + 1.0),
    ("yarn-mscale-zero", {"type": "yarn", "factor": 16.0,
                          "original_max_position_embeddings": 4096,
                          "mscale": 0.0, "mscale_all_dim": 1.0},
     0.1 * math.log(16.0) + 1.0),
    ("yarn-attention-factor-wins", {"type": "yarn", "factor": 16.0,
                                    "original_max_position_embeddings": 4096,
                                    "mscale": 1.0, "mscale_all_dim": 0.5,
                                    "attention_factor": 0.75}, 0.75),
    ("longrope-32", longrope(LR8_SHORT, LR8_LONG, factor=32.0), math.sqrt(17.0 / 12.0)),
    ("longrope-1", longrope(LR8_SHORT, LR8_LONG), 1.0),
    ("longrope-0.5", longrope(LR8_SHORT, LR8_LONG, factor=0.5), 1.0),
    ("longrope-attention-factor", longrope(LR8_SHORT, LR8_LONG, factor=32.0,
                                           attention_factor=1.5), 1.5),
]


@pytest.mark.parametrize("case_id,scaling,m", MAGNITUDE_CASES,
                         ids=[c[0] for c in MAGNITUDE_CASES])
def test_rope_tables_magnitude_at_position_zero(case_id, scaling, m):
    """cos(0) = m (within 1 f32 ulp of m) and sin(0) = 0 exactly; also m of the reference."""
    assert ref.rope_attention_factor(scaling) == pytest.approx(m, rel=1e-15, abs=0)
    fb = ir.FunctionBuilder()
    pos = fb.positions([0, 0])
    fb.returns(*fb.rope_tables(ir.rope_attr(10000.0, 8, "half", scaling), pos, [2, 4]))
    (cos, _), (sin, _) = fold(fb)
    assert_within_ulp(cos, np.full(cos.shape, m), "f32", what=f"{case_id} m")
    assert np.all(sin == 0.0), (case_id, sin.tolist())


# ---------------------------------------------------------------------------
# sinusoidal
# ---------------------------------------------------------------------------

SIN_CASES = [
    # (id, dim, base, positions, pos elem)
    ("dim4", 4, 10000.0, P_SMALL, "i32"),
    ("dim6", 6, 10000.0, P_SMALL, "i64"),
    ("dim16", 16, 10000.0, P_LARGE, "i64"),
    ("dim64-base500", 64, 500.0, P_LARGE, "i64"),
    ("dim512", 512, 10000.0, P_LARGE, "i64"),
    ("dim32-huge", 32, 10000.0, P_HUGE, "i64"),
    ("dim16-batched", 16, 10000.0, P_BATCHED, "i64"),
]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("layout", ["interleaved", "concat"])
@pytest.mark.parametrize("spacing", ["paper", "fairseq"])
@pytest.mark.parametrize("case_id,dim,base,positions,pos_elem", SIN_CASES,
                         ids=[c[0] for c in SIN_CASES])
def test_sinusoidal(case_id, dim, base, positions, pos_elem, spacing, layout, dtype):
    fb = ir.FunctionBuilder()
    pos = fb.positions(positions, pos_elem)
    shape = list(np.shape(positions)) + [dim]
    fb.returns(fb.sinusoidal(pos, shape, dtype, base=base, layout=layout, spacing=spacing))
    ((got, _),) = fold(fb)
    expected = ref.sinusoidal(positions, dim, base, layout, spacing)
    w = ref.sinusoidal_frequencies(dim, base, spacing)
    allow_pairs = angle_allowance(positions, w, 1.0)
    allowance = np.repeat(allow_pairs, 2, axis=-1) if layout == "interleaved" \
        else np.concatenate([allow_pairs, allow_pairs], axis=-1)
    assert_within_ulp(got, expected, dtype, extra_abs=allowance,
                      what=f"sinusoidal {case_id} {spacing} {layout}")


SIN_VARIANTS = {
    # id: (dim, attributes)
    "marian-odd": (7, dict(layout="concat", odd="sin")),
    "distilbert-odd": (9, dict(odd="sin")),
    "fairseq-odd-pad": (9, dict(layout="concat", spacing="fairseq", odd="zero", padding_idx=3)),
    "cos-first-interleaved-odd": (11, dict(cos_first=True, odd="sin")),
    "cos-first-concat": (16, dict(layout="concat", cos_first=True)),
    "shift-scale": (16, dict(layout="concat", freq_shift=0.0, scale=3.0, base=500.0)),
}


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("variant", sorted(SIN_VARIANTS))
def test_sinusoidal_variants(variant, dtype):
    dim, attrs = SIN_VARIANTS[variant]
    fb = ir.FunctionBuilder()
    pos = fb.positions(P_LARGE + [3])
    fb.returns(fb.sinusoidal(pos, [len(P_LARGE) + 1, dim], dtype, **attrs))
    ((got, _),) = fold(fb)
    positions = np.array(P_LARGE + [3])
    expected = ref.sinusoidal(positions, dim, **attrs)
    w = ref.sinusoidal_frequencies(dim, **{k: v for k, v in attrs.items()
                                           if k in ("base", "spacing", "freq_shift", "scale",
                                                    "odd")})
    sin_ch, cos_ch = ref.sinusoidal_channels(dim, attrs.get("layout", "interleaved"),
                                             attrs.get("cos_first", False), attrs.get("odd"))
    allow_pairs = angle_allowance(positions, w, 1.0)
    allowance = np.zeros(expected.shape)
    allowance[:, sin_ch] = allow_pairs
    allowance[:, cos_ch] = allow_pairs[:, :cos_ch.size]
    assert_within_ulp(got, expected, dtype, extra_abs=allowance, what=f"sinusoidal {variant}")
    if "padding_idx" in attrs:
        assert np.all(got[-1] == 0.0)


def test_sinusoidal_defaults_are_paper_interleaved():
    fb = ir.FunctionBuilder()
    pos = fb.positions([0, 1, 2, 3])
    fb.returns(fb.sinusoidal(pos, [4, 16]))
    ((got, _),) = fold(fb)
    assert_within_ulp(got, ref.sinusoidal([0, 1, 2, 3], 16), "f32", what="defaults")
    # Row 3, channel 2 (sin of w_1 in the interleaved layout) = sin(3 * 10000^(-1/8)).
    assert abs(got[3, 2] - 0.8126489) < 1e-6


# ---------------------------------------------------------------------------
# ALiBi slopes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("heads", range(1, 65))
def test_alibi_slopes_default(heads):
    fb = ir.FunctionBuilder()
    fb.returns(fb.alibi_slopes(heads, "f32"), fb.alibi_slopes(heads, "f64"))
    (got32, _), (got64, _) = fold(fb)
    expected = ref.alibi_slopes(heads)
    assert_within_ulp(got32, expected, "f32", what=f"alibi H={heads} f32")
    assert_within_ulp(got64, expected, "f64", ulps=F64_ULPS, what=f"alibi H={heads} f64")


@pytest.mark.parametrize("max_bias", [0.5, 1.0, 4.0, 12.5, 16.0, 150.0])
@pytest.mark.parametrize("heads", [1, 2, 3, 5, 6, 7, 8, 12, 13, 24, 33, 40, 64])
def test_alibi_slopes_max_bias(heads, max_bias):
    fb = ir.FunctionBuilder()
    fb.returns(fb.alibi_slopes(heads, "f32", max_bias=max_bias),
               fb.alibi_slopes(heads, "f64", max_bias=max_bias))
    (got32, _), (got64, _) = fold(fb)
    expected = ref.alibi_slopes(heads, max_bias)
    assert_within_ulp(got32, expected, "f32", what=f"alibi H={heads} max_bias={max_bias} f32")
    assert_within_ulp(got64, expected, "f64", ulps=F64_ULPS,
                      what=f"alibi H={heads} max_bias={max_bias} f64")


def test_alibi_slopes_h6_exact():
    fb = ir.FunctionBuilder()
    fb.returns(fb.alibi_slopes(6, "f32"))
    ((got, _),) = fold(fb)
    assert got.tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]


# ---------------------------------------------------------------------------
# The parser and comparison themselves (so a broken harness cannot pass silently)
# ---------------------------------------------------------------------------

def test_harness_detects_a_one_ulp_and_two_ulp_difference():
    x = np.array([0.1, 1.0, -3.0])
    x32 = x.astype(np.float32).astype(np.float64)
    one_up = np.nextafter(x.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    assert_within_ulp(one_up, x, "f32")
    two_up = np.nextafter(one_up.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    with pytest.raises(AssertionError):
        assert_within_ulp(two_up, x, "f32")
    assert_within_ulp(x32, x, "f32")


def test_harness_parses_hex_and_splat():
    text = """
    func.func @f() -> (tensor<2xf32>, tensor<3xbf16>, tensor<2xf16>, tensor<2xbf16>) {
      %a = arith.constant dense<"0x0000803F000000BF"> : tensor<2xf32>
      %b = arith.constant dense<1.000000e+00> : tensor<3xbf16>
      %c = arith.constant dense<[0x7C00, -2.000000e+00]> : tensor<2xf16>
      %d = arith.constant dense<[9.882810e-01, -6.591800e-02]> : tensor<2xbf16>
      return %a, %b, %c, %d : tensor<2xf32>, tensor<3xbf16>, tensor<2xf16>, tensor<2xbf16>
    }"""
    (a, _), (b, _), (c, _), (d, _) = parse_returned_constants(text)
    assert a.tolist() == [1.0, -0.5]
    assert b.tolist() == [1.0, 1.0, 1.0]
    assert c.tolist() == [math.inf, -2.0]
    assert d.tolist() == [0.98828125, -0.06591796875]


# ---------------------------------------------------------------------------
# Seeded random sweep over every scaling, style, rotary_dim, theta, seq_len and position set
# ---------------------------------------------------------------------------

def _random_case(rng):
    r = int(rng.choice([2, 4, 6, 8, 16, 24, 32, 64, 96, 128, 256]))
    theta = float(rng.choice([1.5, 10.0, 100.0, 1e4, 10000.5, 5e5, 1e6, 1e9]))
    kind = str(rng.choice(["none", "linear", "ntk", "dynamic_ntk", "yarn", "llama3",
                           "longrope"]))
    f = float(np.round(rng.choice([0.25, 0.5, 1.0, 1.5, 2, 4, 8, 16, 32, 40, 64])
                       * rng.choice([1.0, 1.1]), 3))
    L0 = int(rng.choice([2, 16, 128, 2048, 4096, 8192, 32768, 131072, 10 ** 6]))
    if kind in ("ntk", "dynamic_ntk") and r == 2:
        kind = "linear"
    if kind == "none":
        sc = None
    elif kind in ("linear", "ntk"):
        sc = {"type": kind, "factor": f}
    elif kind == "dynamic_ntk":
        sc = {"type": kind, "factor": f, "max_position_embeddings": L0}
    elif kind == "yarn":
        bs = float(rng.choice([0.5, 1.0, 2.0]))
        sc = {"type": kind, "factor": f, "original_max_position_embeddings": L0,
              "beta_fast": bs + float(rng.choice([0.5, 8.0, 31.0, 100.0])), "beta_slow": bs,
              "truncate": bool(rng.integers(2))}
        extra = int(rng.integers(3))
        if extra == 1:
            sc["mscale"] = float(rng.choice([0.0, 0.707, 1.0]))
            sc["mscale_all_dim"] = float(rng.choice([0.0, 0.5, 1.0]))
        elif extra == 2:
            sc["attention_factor"] = float(np.round(rng.uniform(0.5, 2.0), 4))
    elif kind == "llama3":
        lf = float(rng.choice([0.5, 1.0, 2.0]))
        sc = {"type": kind, "factor": f, "low_freq_factor": lf,
              "high_freq_factor": lf + float(rng.choice([0.5, 3.0, 8.0])),
              "original_max_position_embeddings": L0}
    else:
        h = r // 2
        sc = {"type": kind, "short_factor": np.round(rng.uniform(0.5, 3, h), 4).tolist(),
              "long_factor": np.round(rng.uniform(1, 60, h), 4).tolist(),
              "original_max_position_embeddings": L0, "factor": f,
              "select": str(rng.choice(["dynamic", "short", "long"]))}
    style = str(rng.choice(["half", "interleaved"]))
    positions = [int(p) for p in rng.choice(
        [0, 1, 2, 7, 100, 4095, 4096, 8191, 8192, 32768, 65535, 131072, 458752, 1048575, -3,
         2 ** 31 - 1], size=5)]
    seq_len = None if rng.integers(2) else int(rng.integers(-1, 300000))
    return theta, r, style, sc, positions, seq_len


_SWEEP_RNG = np.random.default_rng(20260829)
SWEEP_CASES = [_random_case(_SWEEP_RNG) for _ in range(120)]


@pytest.mark.parametrize("case", SWEEP_CASES,
                         ids=[f"{i}-{(c[3] or {'type': 'none'})['type']}-r{c[1]}"
                              for i, c in enumerate(SWEEP_CASES)])
def test_random_sweep(case):
    theta, r, style, sc, positions, seq_len = case
    fb = ir.FunctionBuilder()
    rope = ir.rope_attr(theta, r, style, sc)
    sl = fb.index(seq_len) if seq_len is not None else None
    freq = fb.rope_frequencies(rope, r // 2, "f32", sl)
    cos, sin = fb.rope_tables(rope, fb.positions(positions), [len(positions), r // 2])
    fb.returns(freq, cos, sin)
    (got_f, _), (got_c, _), (got_s, _) = fold(fb)
    what = f"{rope} seq_len={seq_len} positions={positions}"
    assert_within_ulp(got_f, ref.rope_inv_freq(theta, r, sc, seq_len), "f32",
                      what="frequencies " + what)
    exp_c, exp_s = ref.rope_tables(positions, theta, r, sc)
    allowance = angle_allowance(positions, ref.rope_inv_freq(theta, r, sc, max(positions) + 1),
                                ref.rope_attention_factor(sc))
    assert_within_ulp(got_c, exp_c, "f32", extra_abs=allowance, what="cos " + what)
    assert_within_ulp(got_s, exp_s, "f32", extra_abs=allowance, what="sin " + what)
