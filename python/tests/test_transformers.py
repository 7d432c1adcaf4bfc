"""Live cross-check against Hugging Face transformers (optional extras).

For every rope_type of transformers' ROPE_INIT_FUNCTIONS, the inverse
frequencies and attention factor of `pe.reference` and of the compiled
`pe.rope_frequencies` are compared with transformers' own initialisation
functions, and the compiled `pe.rope` with `LlamaRotaryEmbedding` +
`apply_rotary_pos_emb` (half-split) and GPT-J's `apply_rotary_pos_emb`
(interleaved, partial rotary).

Tolerances. transformers evaluates in float32: its inverse frequencies carry
a few float32 rounding errors (relative 4e-7; 2e-6 for the YaRN/llama3 blends),
and its angles `p * inv_freq` are rounded in float32, an absolute error of up
to about p * 2^-24 rad (docs/variants.md, "Numerics"). Rotated values are
therefore compared with `1e-6 + 4 * p_max * 2^-24 * max|x|`.

Skipped when torch or transformers is not installed
(`pip install -r python/requirements-extras.txt`).
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from transformers import GPTJConfig, LlamaConfig  # noqa: E402
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402
from transformers.models.gptj import modeling_gptj  # noqa: E402
from transformers.models.llama import modeling_llama  # noqa: E402

from pe import reference, runner  # noqa: E402
from pe.ir import rope_attr  # noqa: E402

HEAD_DIM = 64
R = HEAD_DIM  # LLaMA rotates the whole head
SHORT = [1.0 + 0.05 * i for i in range(R // 2)]
LONG = [1.0 + 0.9 * i for i in range(R // 2)]

# rope_type -> (transformers config fields, pe scaling dict, theta)
CASES = {
    "default": ({}, None, 10000.0),
    "linear": ({"rope_scaling": {"rope_type": "linear", "factor": 4.0}},
               {"type": "linear", "factor": 4.0}, 10000.0),
    "dynamic": ({"rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
                 "max_position_embeddings": 2048},
                {"type": "dynamic_ntk", "factor": 2.0, "max_position_embeddings": 2048}, 10000.0),
    "yarn": ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                               "original_max_position_embeddings": 2048},
              "max_position_embeddings": 8192},
             {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}, 10000.0),
    "yarn-mscale": ({"rope_scaling": {"rope_type": "yarn", "factor": 40.0,
                                      "original_max_position_embeddings": 4096,
                                      "beta_fast": 32, "beta_slow": 1,
                                      "mscale": 0.707, "mscale_all_dim": 0.707},
                     "max_position_embeddings": 163840},
                    {"type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                     "mscale": 0.707, "mscale_all_dim": 0.707}, 10000.0),
    "llama3": ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                 "high_freq_factor": 4.0,
                                 "original_max_position_embeddings": 8192},
                "max_position_embeddings": 131072},
               {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}, 500000.0),
    "longrope": ({"rope_scaling": {"rope_type": "longrope", "short_factor": SHORT,
                                   "long_factor": LONG},
                  "original_max_position_embeddings": 4096,
                  "max_position_embeddings": 131072},
                 {"type": "longrope", "short_factor": SHORT, "long_factor": LONG,
                  "original_max_position_embeddings": 4096, "factor": 32.0}, 10000.0),
    "proportional": ({"rope_scaling": {"rope_type": "proportional", "factor": 2.0,
                                       "partial_rotary_factor": 0.25}},
                     {"type": "proportional", "factor": 2.0, "partial_rotary_factor": 0.25},
                     10000.0),
}


def _config(fields, theta):
    return LlamaConfig(hidden_size=HEAD_DIM * 4, num_attention_heads=4, num_key_value_heads=4,
                       head_dim=HEAD_DIM, rope_theta=theta,
                       **{"max_position_embeddings": 4096, **fields})


def test_every_rope_type_is_covered():
    """Each rope_type transformers has is cross-checked here."""
    base_types = {name.split("-")[0] for name in CASES}
    assert set(ROPE_INIT_FUNCTIONS) | {"default"} <= base_types, \
        sorted(set(ROPE_INIT_FUNCTIONS) - base_types)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seq_len", [None, 100_000])
def test_init_functions(name, seq_len):
    """transformers' inv_freq and attention factor vs pe.reference and the compiled op."""
    fields, scaling, theta = CASES[name]
    config = _config(fields, theta)
    rope_type = fields.get("rope_scaling", {}).get("rope_type", "default")
    # transformers v5 keeps the default in each model's rotary embedding.
    init = (modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters
            if rope_type == "default" else ROPE_INIT_FUNCTIONS[rope_type])
    inv_hf, m_hf = init(config, "cpu", seq_len=seq_len)
    inv_hf = inv_hf.double().numpy()

    inv_ref = reference.rope_inv_freq(theta, R, scaling, seq_len=seq_len)
    np.testing.assert_allclose(inv_ref, inv_hf, rtol=2e-6, atol=0)
    assert reference.rope_attention_factor(scaling) == pytest.approx(m_hf, rel=1e-6)

    attr = rope_attr(theta, R, "half", scaling)
    seq = f" seq_len %n" if seq_len is not None else ""
    ir = (f"func.func @f(%n: index) -> tensor<{R // 2}xf64> {{\n"
          f"  %f = pe.rope_frequencies {attr}{seq} -> tensor<{R // 2}xf64>\n"
          f"  return %f : tensor<{R // 2}xf64>\n}}\n")
    (inv_pe,) = runner.compile(ir).call("f", seq_len or 0)
    np.testing.assert_allclose(inv_pe, inv_hf, rtol=2e-6, atol=0)
    np.testing.assert_allclose(inv_pe, inv_ref, rtol=1e-15, atol=0)


def _tolerance(p_max, x):
    return 1e-6 + 4 * p_max * 2.0 ** -24 * float(np.abs(x).max())


@pytest.mark.parametrize("name", sorted(CASES))
def test_llama_apply_rotary_pos_emb(name):
    """Compiled pe.rope vs LlamaRotaryEmbedding + apply_rotary_pos_emb."""
    fields, scaling, theta = CASES[name]
    config = _config(fields, theta)
    rng = np.random.default_rng(1)
    B, H, S = 2, 4, 33
    q = rng.standard_normal((B, H, S, HEAD_DIM)).astype(np.float32)
    k = rng.standard_normal((B, H, S, HEAD_DIM)).astype(np.float32)
    pos = np.stack([np.arange(S) + 7, np.sort(rng.integers(0, 8000, S))]).astype(np.int64)

    rotary = modeling_llama.LlamaRotaryEmbedding(config=config)
    cos, sin = rotary(torch.from_numpy(q), torch.from_numpy(pos))
    q_hf, k_hf = modeling_llama.apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k),
                                                     cos, sin)

    attr = rope_attr(theta, R, "half", scaling)
    ir = (f"func.func @rope(%x: tensor<{B}x{H}x{S}x{HEAD_DIM}xf32>, %p: tensor<{B}x{S}xi64>)"
          f" -> tensor<{B}x{H}x{S}x{HEAD_DIM}xf32> {{\n"
          f"  %y = pe.rope {attr} %x, %p : tensor<{B}x{H}x{S}x{HEAD_DIM}xf32>, tensor<{B}x{S}xi64>\n"
          f"  return %y : tensor<{B}x{H}x{S}x{HEAD_DIM}xf32>\n}}\n")
    module = runner.compile(ir)
    (q_pe,) = module.call("rope", q, pos)
    (k_pe,) = module.call("rope", k, pos)
    # The dynamic scalings see max(positions) + 1 of the whole call in both.
    tol = _tolerance(pos.max(), q)
    np.testing.assert_allclose(q_pe, q_hf.numpy(), rtol=0, atol=tol)
    np.testing.assert_allclose(k_pe, k_hf.numpy(), rtol=0, atol=tol)
    # And pe.reference agrees with the compiled code to float32 precision.
    q_ref = reference.apply_rope(q, pos, theta, R, scaling)
    np.testing.assert_allclose(q_pe, q_ref, rtol=0, atol=1e-6 * max(1.0, np.abs(q).max()))


def test_gptj_interleaved_partial():
    """Compiled interleaved, partial pe.rope vs GPT-J's apply_rotary_pos_emb."""
    rotary_dim, head_dim, S = 16, 32, 40
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, S, 2, head_dim)).astype(np.float32)  # [B, S, H, D]
    pos = (np.arange(S) * 97 + 3).astype(np.int64)

    table = modeling_gptj.create_sinusoidal_positions(4096, rotary_dim)
    sincos = table[torch.from_numpy(pos)][None]  # [1, S, rotary_dim]
    sin, cos = torch.split(sincos, rotary_dim // 2, dim=-1)
    xt = torch.from_numpy(x)
    rot = modeling_gptj.apply_rotary_pos_emb(xt[..., :rotary_dim], sin, cos)
    want = torch.cat([rot, xt[..., rotary_dim:]], dim=-1).numpy()

    attr = rope_attr(10000.0, rotary_dim, "interleaved", None)
    t = f"tensor<1x{S}x2x{head_dim}xf32>"
    ir = (f"func.func @rope(%x: {t}, %p: tensor<{S}xi64>) -> {t} {{\n"
          f"  %y = pe.rope {attr} %x, %p layout(bshd) : {t}, tensor<{S}xi64>\n"
          f"  return %y : {t}\n}}\n")
    (got,) = runner.compile(ir).call("rope", x, pos)
    np.testing.assert_allclose(got, want, rtol=0, atol=_tolerance(pos.max(), x))
    np.testing.assert_array_equal(got[..., rotary_dim:], x[..., rotary_dim:])


def test_gemma2_softcap_attention():
    """transformers' Gemma 2 eager attention (soft-capping at 2, GQA, a causal
    mask; float64 inputs, but its softmax runs in float32: 1e-6) against
    `pe.reference.attention(softcap=2)` and the compiled `pe.attention ...
    softcap(2.0)` (f32, 1e-5)."""
    from types import SimpleNamespace

    from transformers.models.gemma2 import modeling_gemma2

    from pe.ir import attention_function

    rng = np.random.default_rng(11)
    q = 3 * rng.standard_normal((1, 4, 9, 16))
    k = 3 * rng.standard_normal((1, 2, 9, 16))
    v = rng.standard_normal((1, 2, 9, 16))
    causal = np.triu(np.full((9, 9), -np.inf), 1)[None, None]
    module = SimpleNamespace(head_dim=16, num_key_value_groups=2, training=False)
    out, _ = modeling_gemma2.eager_attention_forward(
        module, *(torch.from_numpy(x) for x in (q, k, v)), torch.from_numpy(causal),
        scaling=0.25, softcap=2.0)
    golden = out.transpose(1, 2).numpy()
    want = reference.attention(q, k, v, causal=True, scale=0.25, softcap=2.0)
    np.testing.assert_allclose(want, golden, rtol=0, atol=1e-6)
    plain = reference.attention(q, k, v, causal=True, scale=0.25)
    assert np.abs(plain - golden).max() > 1e-2  # the cap matters here
    t = lambda h: f"tensor<1x{h}x9x16xf32>"  # noqa: E731
    ir = attention_function("attn", t(4), t(2), t(2), causal=True, scale=0.25, softcap=2.0)
    mod = runner.compile(ir)
    (got,) = mod.call("attn", *(x.astype(np.float32) for x in (q, k, v)))
    np.testing.assert_allclose(got, golden, rtol=0, atol=1e-5 * max(1.0, np.abs(golden).max()))
