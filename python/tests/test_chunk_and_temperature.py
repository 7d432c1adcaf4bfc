"""Llama 4's attention features: chunked attention (`pe.attention ... chunk(C)`: key j is
hidden from query i when floor(k_pos[j] / C) != floor(q_pos[i] / C); Llama 4's
`attention_chunk_size`, vLLM's chunked local attention) and query temperature tuning
(`temperature(#pe.temperature<floor_scale = F, attn_scale = A>)`: the scores of the query at
p times 1 + A ln(1 + floor((p + 1) / F)); its NoPE layers), compiled every way they run,
against the float64 reference: the CPU kernels
(prefill tiles and decode, f32 FMAs, bf16 on f32 FMAs, on dot products and on AMX tiles where
the CPU has them; the AVX2 kernels), the reference lowering, and the GPU SIMT kernel's
schedule run on the CPU. Chunks cut through query blocks and key tiles (chunks of 16 and 24
against the kernels' tiles of 16 rows and 24 keys), alone and with causal, window, ALiBi,
RoPE and GQA, positions given explicitly (negative ones floor to the chunk below) or the
defaults, and a decode step; temperatures stepping every few positions (and far ones:
2^40), alone, with RoPE and chunks, in decode. (`pe.paged_attention ... chunk(C)`:
test_kv_cache.py; Llama 4 end to end: test_hf_models_fused.py.)

Transformers' own chunked mask (`masking_utils.chunked_causal_mask_function`, under the
extras) hides the same keys as the reference; Llama 4's modeling code scales its queries as
`reference.query_temperature`.

Tolerances: f32 1e-5 and bf16 1.6e-2, relative to max(1, max |out|), as `pe.attention`.
"""

from __future__ import annotations

import numpy as np
import pytest

from pe import reference, runner
from pe.ir import attention_function, rope_attr
from pe.testing import (ATTENTION_LOWERINGS, ATTENTION_ROPE, BF16_KERNELS, bf16_kernel_missing,
                        check_attention, round_to)

# name: (Hq, Hkv, Sq, Skv, D, attributes, query positions, key positions); positions None:
# the op's defaults (the queries the last Sq of Skv tokens).
CASES = {
    "causal-gqa-rope": (8, 2, 40, 40, 32, dict(causal=True, chunk=16, rope=True), None, None),
    "bidirectional": (4, 4, 33, 33, 32, dict(chunk=8), None, None),
    "window-in-chunk": (4, 2, 40, 40, 32, dict(causal=True, window=7, chunk=24), None, None),
    "chunked-prefill": (8, 2, 24, 60, 32, dict(causal=True, chunk=32), None, None),
    "decode": (8, 2, 1, 70, 32, dict(causal=True, chunk=16, rope=True), None, None),
    "alibi": (4, 4, 24, 24, 32, dict(causal=True, alibi=8.0, chunk=5), None, None),
    "negative-positions": (4, 2, 30, 30, 32, dict(causal=True, chunk=8),
                           np.arange(-17, 13), np.arange(-17, 13)),
    "temperature-nope": (8, 2, 40, 40, 32, dict(causal=True, temperature=(4, 0.5)), None, None),
    "temperature-rope-chunk": (4, 2, 33, 33, 32,
                               dict(causal=True, chunk=16, rope=True, temperature=(8, 0.25)),
                               None, None),
    "temperature-decode": (8, 2, 1, 70, 32, dict(causal=True, temperature=(16, 1.0)), None, None),
    "temperature-far": (4, 4, 20, 20, 32, dict(causal=True, temperature=(8192, 0.1)),
                        np.arange(2 ** 40, 2 ** 40 + 20), np.arange(2 ** 40, 2 ** 40 + 20)),
}


def _function(name: str, dtype: str) -> str:
    hq, hkv, sq, skv, d, attrs, qp, _ = CASES[name]
    t = lambda h, s: f"tensor<1x{h}x{s}x{d}x{dtype}>"  # noqa: E731
    op_attrs = {k: v for k, v in attrs.items() if k != "rope"}
    if attrs.get("rope"):
        op_attrs["rope"] = rope_attr(**ATTENTION_ROPE)
    positions = ("tensor<?xi64>", "tensor<?xi64>") if qp is not None else None
    return attention_function("attn_" + name.replace("-", "_"), t(hq, sq), t(hkv, skv),
                              t(hkv, skv), positions=positions, **op_attrs)


def _inputs(name: str, dtype: str, seed: int):
    hq, hkv, sq, skv, d, attrs, qp, kp = CASES[name]
    rng = np.random.default_rng(seed)
    q, k, v = (round_to(rng.standard_normal(shape), dtype).astype(np.float32)
               for shape in ((1, hq, sq, d), (1, hkv, skv, d), (1, hkv, skv, d)))
    args = [q, k, v] + ([qp.astype(np.int64), kp.astype(np.int64)] if qp is not None else [])
    ref_attrs = {k: v for k, v in attrs.items() if k != "rope"}
    want = reference.attention(q, k, v, q_positions=qp, k_positions=kp,
                               rope=ATTENTION_ROPE if attrs.get("rope") else None, **ref_attrs)
    return args, want


@pytest.mark.parametrize("lowering", sorted(ATTENTION_LOWERINGS))
def test_chunked_attention_f32(lowering):
    if lowering == "kernels-avx2" and "avx2" not in runner._cpu_flags():
        pytest.skip("the CPU has no AVX2")
    module = runner.compile("\n".join(_function(n, "f32") for n in CASES),
                            ATTENTION_LOWERINGS[lowering], timeout=600)
    for seed, name in enumerate(CASES):
        args, want = _inputs(name, "f32", seed)
        (got,) = module.call("attn_" + name.replace("-", "_"), *args)
        check_attention(got, want, "f32", f"{name} ({lowering})")


@pytest.mark.parametrize("kernel", sorted(BF16_KERNELS))
def test_chunked_attention_bf16(kernel):
    if bf16_kernel_missing(kernel):
        pytest.skip(bf16_kernel_missing(kernel))
    module = runner.compile("\n".join(_function(n, "bf16") for n in CASES),
                            ATTENTION_LOWERINGS["kernels"] + list(BF16_KERNELS[kernel]),
                            timeout=600)
    for seed, name in enumerate(CASES):
        args, want = _inputs(name, "bf16", seed + 10)
        (got,) = module.call("attn_" + name.replace("-", "_"), *args)
        check_attention(got, want, "bf16", f"{name} ({kernel})")


@pytest.mark.parametrize("feature", ["chunk", "temperature"])
def test_features_change_the_result(feature):
    """Each case's chunks (temperature) change its result (so the tests above can tell
    they were applied)."""
    for seed, name in enumerate(CASES):
        hq, hkv, sq, skv, d, attrs, qp, kp = CASES[name]
        if feature not in attrs:
            continue
        args, want = _inputs(name, "f32", seed)
        q, k, v = args[:3]
        without = {key: val for key, val in attrs.items() if key not in ("rope", feature)}
        plain = reference.attention(q, k, v, q_positions=qp, k_positions=kp,
                                    rope=ATTENTION_ROPE if attrs.get("rope") else None,
                                    **without)
        assert np.abs(plain - want).max() > 1e-3, name


def test_transformers_llama4_temperature():
    """Llama 4's attention module scales the queries of its NoPE layers as
    reference.query_temperature: its q_proj made the identity, its output compared at
    positions past several floors."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import Llama4TextConfig
    from transformers.models.llama4 import modeling_llama4 as m
    config = Llama4TextConfig(hidden_size=32, num_attention_heads=2, num_key_value_heads=2,
                              head_dim=16, num_hidden_layers=4, floor_scale=5, attn_scale=0.3,
                              no_rope_layers=[1, 1, 1, 0])
    module = m.Llama4TextAttention(config, layer_idx=3)
    seen = {}

    def capture(mod, q, k, v, mask, **kwargs):
        seen["q"] = q
        return torch.zeros(q.shape[0], q.shape[2], q.shape[1], q.shape[3]), None
    m.ALL_ATTENTION_FUNCTIONS["pe-capture"] = capture
    config._attn_implementation = "pe-capture"
    x = torch.randn(1, 23, 32)
    with torch.no_grad():
        module(x, position_embeddings=None, attention_mask=None)
        q = module.q_proj(x).view(1, 23, 2, 16).transpose(1, 2)
    ratio = (seen["q"] / q).mean(dim=(0, 1, 3)).double().numpy()
    np.testing.assert_allclose(ratio, reference.query_temperature(np.arange(23), 5, 0.3),
                               rtol=1e-6)


def test_transformers_chunked_mask():
    """transformers' chunked causal mask function hides the keys the reference hides."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.masking_utils import chunked_causal_mask_function
    chunk, length = 8, 37
    allowed = chunked_causal_mask_function(chunk, torch.zeros(1, dtype=torch.long))
    theirs = np.array([[bool(allowed(0, 0, torch.tensor(q), torch.tensor(k)))
                        for k in range(length)] for q in range(length)])
    # One-hot values: each output row is the softmax weights of its visible keys.
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 1, length, 16))
    k = rng.standard_normal((1, 1, length, 16))
    weights = reference.attention(q, k, np.eye(length)[None, None], causal=True, chunk=chunk)[0, 0]
    np.testing.assert_array_equal(weights > 0, theirs)
