"""The rotary details beside the scalings: per-pair frequency factors (`freq_factors`, ggml's
`freq_factors` / llama.cpp's `rope_freqs`), a magnitude factor on any scaling (`magnitude`,
ggml's `attn_factor`), partial YaRN ramps (`#pe.yarn<extrapolation_factor = e>`, ggml's
`ext_factor`, vLLM's `extrapolation_factor`) and a rotated block that starts at a channel
offset (`rotary_offset`, ggml's `n_offs`; MLA's trailing rope block).

Checked: folded frequencies and tables against the float64 reference; `pe.rope`, and
attention with the rotation fused, compiled for the CPU (kernels and reference lowering) and
with the GPU schedule on the CPU; the reference against upstream formulas: transformers'
llama3 frequencies equal llama.cpp's `rope_freqs` (the factors its converter writes) applied
as `freq_factors`, and ggml's `rope_yarn` (its ramp and `ext_factor` restated from
`ggml-cpu/ops.cpp`) gives the reference's angles.

Tolerances: folded frequencies within 4 ulp of f64 (they follow the same formula);
`pe.rope` f32 within 1e-6 x max(1, m max|x|), bf16 within 1 ulp plus the f32 allowance
(as test_compiled); attention as `pe.testing.ATTENTION_TOLERANCE`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pe import ir, reference, runner
from pe.testing import ATTENTION_LOWERINGS, ROPE_LOWERINGS, check_attention, \
    compile_rope_module, parse_returned_constants, round_to, run_pe_opt

R = 16  # rotary_dim of the rope cases (8 pairs)
FF = [1.0, 1.0, 1.5, 2.0, 4.0, 8.0, 8.0, 8.0]

CONFIGS = {
    # name: rope keyword arguments (reference.apply_rope / ir.rope_attr)
    "freq-factors": dict(theta=500000.0, freq_factors=FF),
    "freq-factors-yarn-partial": dict(
        theta=10000.0, freq_factors=FF,
        scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64,
                 "extrapolation_factor": 0.5}),
    "yarn-no-extrapolation": dict(
        theta=10000.0, scaling={"type": "yarn", "factor": 8.0,
                                "original_max_position_embeddings": 128,
                                "extrapolation_factor": 0.0}),
    "magnitude-linear": dict(theta=10000.0, magnitude=0.75,
                             scaling={"type": "linear", "factor": 2.0}),
    "magnitude-yarn-mscale": dict(
        theta=10000.0, magnitude=1.25,
        scaling={"type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                 "mscale": 1.0, "mscale_all_dim": 0.707}),
    "freq-factors-longrope": dict(
        theta=10000.0, freq_factors=FF,
        scaling={"type": "longrope", "short_factor": [1.0] * 8, "long_factor": [2.0] * 8,
                 "original_max_position_embeddings": 64, "select": "long"}),
    # MLA's layout: 64 channels without rotation, then the rotated block (whole vectors:
    # the CPU and GPU kernels' vector paths).
    "offset-trailing": dict(theta=10000.0, rotary_dim=32, rotary_offset=64),
    # A block in the middle, interleaved pairs, with YaRN (m != 1 must not touch the others).
    "offset-middle-interleaved": dict(
        theta=10000.0, rotary_offset=16, style="interleaved",
        scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}),
    "offset-odd-half": dict(theta=10000.0, rotary_dim=6, rotary_offset=3),
}


def _attr(config: dict) -> str:
    return ir.rope_attr(**_reference_kwargs(config))


def _reference_kwargs(config: dict) -> dict:
    return {"rotary_dim": R, **config}


def _table_kwargs(config: dict) -> dict:
    """The arguments of the frequencies and tables (not the channel placement)."""
    return {k: v for k, v in _reference_kwargs(config).items()
            if k not in ("style", "rotary_offset", "magnitude")}


# ---------------------------------------------------------------------------
# Folds
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_folded_frequencies_and_tables(name):
    config = CONFIGS[name]
    h = _reference_kwargs(config)["rotary_dim"] // 2
    positions = [0, 1, 7, 100, 4095, 70000]
    text = (f"func.func @f() -> (tensor<{h}xf64>, tensor<6x{h}xf32>) {{\n"
            f"  %p = arith.constant dense<{positions}> : tensor<6xi64>\n"
            f"  %f = pe.rope_frequencies {_attr(config)} -> tensor<{h}xf64>\n"
            f"  %c, %s = pe.rope_tables {_attr(config)} %p : tensor<6xi64> -> "
            f"tensor<6x{h}xf32>\n"
            f"  return %f, %c : tensor<{h}xf64>, tensor<6x{h}xf32>\n}}\n")
    (freqs, _), (cos, _) = parse_returned_constants(run_pe_opt(text))
    kwargs = _table_kwargs(config)
    want = reference.rope_inv_freq(**kwargs)
    np.testing.assert_allclose(freqs, want, rtol=4 * 2.0 ** -52, atol=0)
    want_cos, _ = reference.rope_tables(positions, **kwargs,
                                        magnitude=config.get("magnitude", 1.0))
    np.testing.assert_allclose(cos, want_cos, rtol=0, atol=2e-6)


# ---------------------------------------------------------------------------
# Compiled
# ---------------------------------------------------------------------------

B, H, S, D = 2, 3, 12, 96


def _rope_functions(dtype: str) -> str:
    xt = f"tensor<{B}x{H}x{S}x{D}x{dtype}>"
    funcs = []
    for name, config in CONFIGS.items():
        fname = "rope_" + name.replace("-", "_")
        funcs.append(f"func.func @{fname}(%x: {xt}, %p: tensor<{S}xi64>) -> {xt} {{\n"
                     f"  %y = pe.rope {_attr(config)} %x, %p : {xt}, tensor<{S}xi64>\n"
                     f"  return %y : {xt}\n}}")
    return "\n".join(funcs)


@pytest.fixture(scope="module", params=sorted(ROPE_LOWERINGS))
def rope_module(request):
    return compile_rope_module(_rope_functions, request.param)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_rope_compiled(rope_module, name, dtype):
    config = CONFIGS[name]
    rng = np.random.default_rng(len(name))
    x = round_to(rng.standard_normal((B, H, S, D)), dtype)
    p = np.concatenate([[0, 1, 2 ** 20], rng.integers(0, 5000, S - 3)]).astype(np.int64)
    (y,) = rope_module[dtype].call("rope_" + name.replace("-", "_"), x.astype(np.float32), p)
    want = reference.apply_rope(x, p, **_reference_kwargs(config))
    err = np.abs(np.asarray(y, dtype=np.float64) - want)
    scale = max(1.0, np.abs(want).max())
    if dtype == "f32":
        assert err.max() <= 1e-6 * scale * 4, f"{name}: {err.max():.3g}"
    else:
        expected = round_to(want, "bf16")
        assert np.all(err <= np.abs(expected) * 2.0 ** -7 + 1e-6 * scale), \
            f"{name}: {err.max():.3g}"


# name: (head dim, rope keyword arguments) of the fused attention cases.
ATTENTION_ROPES = {
    "freq-factors-yarn-partial": (32, dict(CONFIGS["freq-factors-yarn-partial"],
                                           freq_factors=FF * 2, rotary_dim=32)),
    "magnitude-yarn-mscale": (32, dict(CONFIGS["magnitude-yarn-mscale"], rotary_dim=32)),
    # MLA: the rope block trails 32 channels without rotation (whole vectors).
    "offset-trailing": (64, dict(theta=10000.0, rotary_dim=32, rotary_offset=32)),
    # A block inside the head, neither end on a vector boundary.
    "offset-middle": (32, dict(theta=10000.0, rotary_dim=12, rotary_offset=6,
                               style="interleaved")),
}


@pytest.mark.parametrize("lowering", sorted(ATTENTION_LOWERINGS))
def test_attention_with_fused_rotation(lowering):
    if lowering == "kernels-avx2" and "avx2" not in runner._cpu_flags():
        pytest.skip("the CPU has no AVX2")
    hq, hkv, sq, skv = 4, 2, 20, 20
    funcs = []
    for name, (d, rope) in ATTENTION_ROPES.items():
        t = lambda h, s: f"tensor<1x{h}x{s}x{d}xf32>"  # noqa: E731
        funcs.append(ir.attention_function("attn_" + name.replace("-", "_"), t(hq, sq),
                                           t(hkv, skv), t(hkv, skv), causal=True,
                                           rope=ir.rope_attr(**rope)))
    module = runner.compile("\n".join(funcs), ATTENTION_LOWERINGS[lowering], timeout=600)
    rng = np.random.default_rng(3)
    for name, (d, rope) in ATTENTION_ROPES.items():
        q = rng.standard_normal((1, hq, sq, d)).astype(np.float32)
        k = rng.standard_normal((1, hkv, skv, d)).astype(np.float32)
        v = rng.standard_normal((1, hkv, skv, d)).astype(np.float32)
        (got,) = module.call("attn_" + name.replace("-", "_"), q, k, v)
        want = reference.attention(q, k, v, causal=True, rope=rope)
        check_attention(got, want, "f32", f"{name} ({lowering})")
        if "rotary_offset" in rope:
            # Rotating from channel 0 instead would be a different attention.
            shifted = dict(rope, rotary_offset=0)
            assert np.abs(reference.attention(q, k, v, causal=True, rope=shifted)
                          - want).max() > 1e-3


# ---------------------------------------------------------------------------
# Upstream formulas
# ---------------------------------------------------------------------------

def _llama_cpp_rope_freqs(theta, dim, factor, low_freq_factor, high_freq_factor, old_len):
    """The per-pair factors llama.cpp's converter writes as `rope_freqs` for a Llama 3.1
    checkpoint (convert_hf_to_gguf.py, LlamaModel.generate_extra_tensors)."""
    freqs = 1.0 / (theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    low_wavelen, high_wavelen = old_len / low_freq_factor, old_len / high_freq_factor
    factors = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            factors.append(1.0)
        elif wavelen > low_wavelen:
            factors.append(factor)
        else:
            smooth = (old_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            factors.append(1.0 / ((1 - smooth) / factor + smooth))
    return factors


def test_llama_cpp_rope_freqs_equal_transformers_llama3():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    config = transformers.LlamaConfig(hidden_size=4096, num_attention_heads=32,
                                      rope_theta=500000.0, rope_scaling=scaling)
    hf, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    ff = _llama_cpp_rope_freqs(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    ours = reference.rope_inv_freq(500000.0, 128, freq_factors=ff)
    # transformers computes in float32.
    np.testing.assert_allclose(ours, hf.double().numpy(), rtol=2e-6, atol=0)
    # And the same frequencies as pe's own llama3 scaling.
    np.testing.assert_allclose(ours, reference.rope_inv_freq(500000.0, 128, {
        "type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}),
        rtol=1e-14, atol=0)
    del torch


def test_transformers_llama3_with_equal_factors():
    """Llama 4's llama3 scaling has low_freq_factor = high_freq_factor (no blend band):
    the frequencies equal transformers' (2e-6: its float32), folded and in the reference."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    scaling = {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
               "high_freq_factor": 1.0, "original_max_position_embeddings": 8192}
    config = transformers.LlamaConfig(hidden_size=5120, num_attention_heads=40, head_dim=128,
                                      rope_theta=500000.0, rope_scaling=scaling)
    hf, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    ours = reference.rope_inv_freq(500000.0, 128, {
        "type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192})
    np.testing.assert_allclose(ours, hf.double().numpy(), rtol=2e-6, atol=0)
    attr = ir.rope_attr(theta=500000.0, rotary_dim=128, scaling={
        "type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192})
    text = (f"func.func @f() -> tensor<64xf64> {{\n"
            f"  %f = pe.rope_frequencies {attr} -> tensor<64xf64>\n"
            f"  return %f : tensor<64xf64>\n}}\n")
    (folded, _), = parse_returned_constants(run_pe_opt(text))
    np.testing.assert_allclose(folded, ours, rtol=4 * 2.0 ** -52, atol=0)


def _ggml_yarn_angles(p, n_dims, freq_base, freq_scale, ext_factor, n_ctx_orig,
                      beta_fast, beta_slow, freq_factors):
    """ggml's rope angles (ggml_rope_yarn_corr_dims, rope_yarn, rope_yarn_ramp), in float64."""
    def corr_dim(n_rot):
        return n_dims * math.log(n_ctx_orig / (n_rot * 2 * math.pi)) / (2 * math.log(freq_base))
    start = max(0.0, math.floor(corr_dim(beta_fast)))
    end = min(float(n_dims - 1), math.ceil(corr_dim(beta_slow)))
    theta_scale = freq_base ** (-2.0 / n_dims)
    angles = []
    for i0 in range(0, n_dims, 2):
        theta_extrap = p * theta_scale ** (i0 // 2) / freq_factors[i0 // 2]
        theta_interp = freq_scale * theta_extrap
        y = (i0 / 2 - start) / max(0.001, end - start)
        ramp_mix = (1 - min(1.0, max(0.0, y))) * ext_factor
        angles.append(theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix)
    return np.array(angles)


@pytest.mark.parametrize("ext_factor", [0.0, 0.25, 1.0])
def test_ggml_yarn_with_freq_factors_and_ext_factor(ext_factor):
    n_dims, base, scale, n_ctx = 16, 10000.0, 0.25, 64
    for p in (1, 37, 1000):
        want = _ggml_yarn_angles(p, n_dims, base, scale, ext_factor, n_ctx, 32.0, 1.0, FF)
        inv = reference.rope_inv_freq(base, n_dims, {
            "type": "yarn", "factor": 1 / scale, "original_max_position_embeddings": n_ctx,
            "extrapolation_factor": ext_factor}, freq_factors=FF)
        np.testing.assert_allclose(p * inv, want, rtol=1e-13, atol=0)


def test_bad_details_are_errors():
    with pytest.raises(ValueError, match="freq_factors"):
        reference.rope_inv_freq(10000.0, 8, freq_factors=[1.0, 2.0])
    with pytest.raises(ValueError, match="freq_factors"):
        reference.rope_inv_freq(10000.0, 8, freq_factors=[1.0, 2.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="magnitude"):
        reference.rope_attention_factor(None, magnitude=0.0)
