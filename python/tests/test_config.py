"""pe.config: Hugging Face configs -> pe attributes -> IR -> CPU kernels.

Every example config in examples/configs/ is compiled and its kernels are
compared with the float64 reference (`pe.reference.attention`, an
implementation independent of the compiler). Tolerance: f32 kernels within
2e-5 of float64 for inputs of unit variance (the f32 flash-attention error
measured across the suite is below 2e-6); bf16 within 2^-7 relative of the
output scale (one rounding of the result). What each config must mean is
stated here from the published model descriptions, not read back from pe.
"""

import glob
import json
import os
import sys

import numpy as np
import pytest

from pe import config as pe_config
from pe import reference, runner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "configs", "*.json")))
NAMES = [os.path.basename(p)[:-5] for p in EXAMPLES]


def _example(name):
    return os.path.join(ROOT, "examples", "configs", name + ".json")


def _inputs(model, seq, kv, batch, offset, rng):
    q = rng.standard_normal((batch, model.num_attention_heads, seq, model.head_dim))
    k = rng.standard_normal((batch, model.num_key_value_heads, kv, model.head_dim))
    v = rng.standard_normal((batch, model.num_key_value_heads, kv, model.value_head_dim))
    kp = np.broadcast_to(np.arange(offset, offset + kv), (batch, kv)).astype(np.int64)
    return (q.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
            np.ascontiguousarray(kp[:, kv - seq:]), np.ascontiguousarray(kp))


def test_every_example_is_tested():
    assert len(EXAMPLES) >= 10
    assert {"llama-3.1-8b", "qwen2.5-7b-instruct-yarn", "phi-3.5-mini-instruct",
            "mistral-7b-v0.1", "gpt-neox-20b", "gpt-j-6b", "bloom", "gpt2",
            "gemma-3-1b-it", "deepseek-v3"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_example_end_to_end(name):
    """config -> IR -> CPU code -> every kind of layer vs the float64 reference:
    a prefill and a decode step (1 query against a longer cache) at positions
    far from 0."""
    model = pe_config.read(_example(name))
    rng = np.random.default_rng(len(name))
    for seq, kv, batch in ((9, 9, 2), (1, 13, 1)):
        module = model.compile(seq_len=seq, kv_len=kv, batch=batch)
        for kind in model.kinds:
            q, k, v, qp, kp = _inputs(model, seq, kv, batch, 5000, rng)
            # gpt-oss's learned sinks, at scores' scale.
            sinks = (rng.standard_normal(model.num_attention_heads).astype(np.float32),) \
                if kind.sinks else ()
            (out,) = module.call(kind.function, q, k, v, qp, kp, *sinks)
            want = kind.reference(q, k, v, qp, kp, *sinks)
            assert np.abs(out - want).max() < 2e-5, (name, kind.function, seq, kv)


def _split_key(model, k):
    """A latent attention's keys as the per-head channels and the shared rotated block
    (every head's block the same: the first head's)."""
    own = model.head_dim - model.shared_key_dim
    k = np.array(k)
    k[:, :, :, own:] = k[:, :1, :, own:]
    return k, np.ascontiguousarray(k[:, :, :, :own]), np.ascontiguousarray(k[:, :1, :, own:])


def test_latent_attention_shared_key():
    """DeepSeek-V3 built with shared_key: the functions take k [B, H, Skv, 128] and k_pe
    [B, 1, Skv, 64] (pe.attention's shared_key), and equal the float64 reference of the
    keys with k_pe in every head, and the functions built without it on those keys;
    prefill and decode, YaRN's mscale in the scale."""
    model = pe_config.read(_example("deepseek-v3"))
    assert (model.head_dim, model.value_head_dim, model.shared_key_dim) == (192, 128, 64)
    ir = model.ir(seq_len=4, shared_key=True)
    assert "shared_key(%arg5 : tensor<1x1x4x64xf32>)" in ir, ir
    assert "tensor<1x128x4x128xf32>, tensor<1x128x4x128xf32>" in ir
    rng = np.random.default_rng(7)
    (kind,) = model.kinds
    for seq, kv, batch in ((9, 9, 2), (1, 13, 1)):
        shared = model.compile(seq_len=seq, kv_len=kv, batch=batch, shared_key=True)
        per_head = model.compile(seq_len=seq, kv_len=kv, batch=batch)
        q, k, v, qp, kp = _inputs(model, seq, kv, batch, 5000, rng)
        k, k_own, k_pe = _split_key(model, k)
        (out,) = shared.call(kind.function, q, k_own, v, qp, kp, k_pe)
        want = kind.reference(q, k, v, qp, kp)
        assert np.abs(want - kind.reference(q, k_own, v, qp, kp, shared_key=k_pe)).max() < 1e-12
        assert np.abs(out - want).max() < 2e-5, (seq, kv)
        (full,) = per_head.call(kind.function, q, k, v, qp, kp)
        assert np.abs(out - full).max() < 2e-5, (seq, kv)
        # Another block changes the result: the kernel reads it.
        (other,) = shared.call(kind.function, q, k_own, v, qp, kp, k_pe[:, :, ::-1].copy())
        assert np.abs(other - out).max() > 1e-3


def _small_mla():
    """A small DeepSeek-V3: 4 heads of 16 + 8 channels, values of 12, a latent of 20,
    YaRN (its mscale^2 in the scale)."""
    return _small(model_type="deepseek_v3", qk_nope_head_dim=16, qk_rope_head_dim=8,
                  v_head_dim=12, kv_lora_rank=20,
                  rope_scaling={"type": "yarn", "factor": 4.0, "mscale": 1.0,
                                "mscale_all_dim": 1.0, "original_max_position_embeddings": 64})


ABSORBED = {
    "deepseek-v3-yarn": {},
    # Rotate-half pairs, a latent narrower than the plain channels.
    "minicpm3": dict(model_type="minicpm3", rope_scaling=None, kv_lora_rank=12),
    # Half the block rotated: its other channels pass through after the rotated ones.
    "partial-rotary": dict(rope_scaling=None, partial_rotary_factor=0.5),
}


@pytest.mark.parametrize("case", sorted(ABSORBED))
def test_latent_attention_absorbed(case):
    """The absorbed form (--absorbed) against the expanded one, both compiled: with the
    latent c [B, S, R], k_pe [B, S, rope] and per-head W_UK [H, nope, R], W_UV [H, Dv, R],
    the expanded keys are [c W_UK^T | k_pe] and values c W_UV^T; the absorbed query is
    [q_nope W_UK | q_pe] over the cache [c | k_pe], and its result times W_UV^T must be
    the expanded result (same scale, the rope moved to the cache's block). Prefill
    (causal) and decode, f32; and the float64 reference of the absorbed form."""
    source = dict(_small_mla(), **ABSORBED[case])
    model = pe_config.read({k: v for k, v in source.items() if v is not None})
    (kind,) = model.kinds
    h, dv, r, rope_dim = 4, 12, model.kv_lora_rank, model.shared_key_dim
    nope = model.head_dim - rope_dim
    assert (nope, rope_dim, r) == (16, 8, source["kv_lora_rank"])
    ir = model.ir(seq_len=1, kv_len=-1, absorbed=True)
    assert f"rotary_offset = {r}" in ir and f"tensor<1x1x?x{r + rope_dim}xf32>" in ir, ir
    assert "tensor.extract_slice" in ir
    rng = np.random.default_rng(11)
    for seq, kv in ((7, 7), (1, 9)):
        w_uk = rng.standard_normal((h, nope, r)) / np.sqrt(r)
        w_uv = rng.standard_normal((h, dv, r)) / np.sqrt(r)
        c = rng.standard_normal((1, kv, r))
        k_pe = rng.standard_normal((1, 1, kv, rope_dim))
        q = rng.standard_normal((1, h, seq, nope + rope_dim))
        k = np.concatenate([np.einsum("bsr,hnr->bhsn", c, w_uk),
                            np.repeat(k_pe, h, axis=1)], axis=3)
        v = np.einsum("bsr,hdr->bhsd", c, w_uv)
        kp = np.arange(kv, dtype=np.int64)[None] + 100
        qp = np.ascontiguousarray(kp[:, kv - seq:])
        f32 = lambda x: np.ascontiguousarray(x, dtype=np.float32)  # noqa: E731
        expanded = model.compile(seq_len=seq, kv_len=kv)
        (want,) = expanded.call(kind.function, f32(q), f32(k), f32(v), qp, kp)
        q_abs = np.concatenate([np.einsum("bhsn,hnr->bhsr", q[..., :nope], w_uk),
                                q[..., nope:]], axis=3)
        cache = np.concatenate([c[:, None], k_pe], axis=3)
        absorbed = model.compile(seq_len=seq, kv_len=kv, absorbed=True)
        (latent,) = absorbed.call(kind.function, f32(q_abs), f32(cache), qp, kp)
        assert latent.shape == (1, h, seq, r)
        got = np.einsum("bhsr,hdr->bhsd", latent.astype(np.float64), w_uv)
        assert np.abs(got - want).max() < 1e-4, (seq, kv)
        reference_latent = model.absorbed_reference(kind, q_abs, cache, qp, kp)
        assert np.abs(latent - reference_latent).max() < 2e-5


def test_absorbed_needs_latent_attention():
    with pytest.raises(pe_config.ConfigError, match="--absorbed needs multi-head latent"):
        pe_config.read(_example("llama-3.1-8b")).ir(seq_len=4, absorbed=True)
    with pytest.raises(pe_config.ConfigError, match="two forms of latent attention"):
        pe_config.read(_small_mla()).ir(seq_len=4, absorbed=True, shared_key=True)
    with pytest.raises(ValueError, match="no kv_lora_rank"):
        llama = pe_config.read(_example("llama-3.1-8b"))
        llama.absorbed_reference(llama.kinds[0], None, None, None, None)
    small = pe_config.read(_small_mla())
    with pytest.raises(ValueError, match="have 28 channels"):
        small.absorbed_reference(small.kinds[0], np.zeros((1, 4, 1, 24)),
                                 np.zeros((1, 1, 3, 28)), None, None)


def test_shared_key_needs_latent_attention():
    with pytest.raises(pe_config.ConfigError,
                       match="--shared-key needs multi-head latent attention .* 'llama'"):
        pe_config.read(_example("llama-3.1-8b")).ir(seq_len=4, shared_key=True)
    assert pe_config.read(_example("llama-3.1-8b")).shared_key_dim == 0


# OPT keeps two rows before position 0; ALBERT's table is embedding_size wide.
OPT = {"model_type": "opt", "hidden_size": 64, "num_attention_heads": 4,
       "num_hidden_layers": 2, "max_position_embeddings": 40}
ALBERT = {"model_type": "albert", "hidden_size": 256, "embedding_size": 32,
          "num_attention_heads": 4, "num_hidden_layers": 2, "max_position_embeddings": 40}


@pytest.mark.parametrize("name", ["gpt2", "bert-base-uncased", "opt", "albert"])
def test_learned_position_embeddings(name):
    source = {"opt": OPT, "albert": ALBERT}.get(name) or _example(name)
    model = pe_config.read(source)
    assert model.position_encoding == "learned"
    offset, width = model.position_offset, model.embedding_size
    assert (offset, width) == {"opt": (2, 64), "albert": (0, 32)}.get(
        name, (0, model.hidden_size))
    module = model.compile(seq_len=6, batch=2)
    rng = np.random.default_rng(0)
    rows_in_table = model.max_position_embeddings + offset
    table = rng.standard_normal((rows_in_table, width)).astype(np.float32)
    positions = rng.integers(0, model.max_position_embeddings, (2, 6)).astype(np.int64)
    positions[0, 0] = model.max_position_embeddings - 1  # the last row
    (rows,) = module.call("position_embeddings", table, positions)
    np.testing.assert_array_equal(rows, table[positions + offset])
    bad = positions.copy()
    bad[1, 3] = model.max_position_embeddings
    with pytest.raises(runner.KernelError, match="out of range|outside"):
        module.call("position_embeddings", table, bad)


# What each published config means (from the models' papers and model cards).
EXPECTED = {
    "llama-3.1-8b": dict(heads=(32, 8, 128), kinds=1, window=None, causal=True,
                         theta=500000.0, rotary_dim=128, style="half",
                         scaling={"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                  "high_freq_factor": 4.0,
                                  "original_max_position_embeddings": 8192}),
    "qwen2.5-7b-instruct-yarn": dict(heads=(28, 4, 128), kinds=1, window=None, causal=True,
                                     theta=1e6, rotary_dim=128, style="half",
                                     scaling={"type": "yarn", "factor": 4.0,
                                              "original_max_position_embeddings": 32768}),
    "mistral-7b-v0.1": dict(heads=(32, 8, 128), kinds=1, window=4096, causal=True,
                            theta=10000.0, rotary_dim=128, style="half", scaling=None),
    "gpt-neox-20b": dict(heads=(64, 64, 96), kinds=1, window=None, causal=True,
                         theta=10000.0, rotary_dim=24, style="half", scaling=None),
    "gpt-j-6b": dict(heads=(16, 16, 256), kinds=1, window=None, causal=True,
                     theta=10000.0, rotary_dim=64, style="interleaved", scaling=None),
    "bloom": dict(heads=(112, 112, 128), kinds=1, window=None, causal=True, alibi=8.0),
    "gpt2": dict(heads=(12, 12, 64), kinds=1, window=None, causal=True),
    "bert-base-uncased": dict(heads=(12, 12, 64), kinds=1, window=None, causal=False),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_meaning(name):
    want = EXPECTED[name]
    model = pe_config.read(_example(name))
    assert (model.num_attention_heads, model.num_key_value_heads, model.head_dim) == want["heads"]
    assert len(model.kinds) == want["kinds"]
    kind = model.kinds[0]
    assert kind.function == "attention"
    assert kind.window == want["window"] and kind.causal == want["causal"]
    assert kind.alibi == want.get("alibi")
    if "theta" in want:
        rope = kind.rope_parameters
        assert (rope["theta"], rope["rotary_dim"], rope["style"]) == \
            (want["theta"], want["rotary_dim"], want["style"])
        assert rope.get("scaling") == want["scaling"]
    else:
        assert kind.rope is None


def test_phi3_longrope():
    """Phi-3: LongRoPE with s = 131072 / 4096 = 32 and magnitude
    sqrt(1 + ln 32 / ln 4096); the sliding window on every layer."""
    source = json.load(open(_example("phi-3.5-mini-instruct")))
    model = pe_config.read(source)
    (kind,) = model.kinds
    scaling = kind.rope_parameters["scaling"]
    assert scaling["type"] == "longrope" and scaling["factor"] == 32.0
    assert scaling["original_max_position_embeddings"] == 4096
    assert scaling["short_factor"] == source["rope_scaling"]["short_factor"]
    assert reference.rope_attention_factor(scaling) == pytest.approx(
        (1 + np.log(32) / np.log(4096)) ** 0.5, rel=1e-15)
    assert kind.window == 262144 and kind.rope_parameters["rotary_dim"] == 96


def test_gemma3_local_and_global_layers():
    """Gemma 3: five local layers (window 512, base 10^4) then a global one
    (base 10^6), repeated; scale 1/sqrt(query_pre_attn_scalar)."""
    model = pe_config.read(_example("gemma-3-1b-it"))
    assert [k.function for k in model.kinds] == ["attention_sliding", "attention_full"]
    assert model.layers[:6] == ("attention_sliding",) * 5 + ("attention_full",)
    assert len(model.layers) == 26
    local, full = model.kinds
    assert (local.window, local.rope_parameters["theta"]) == (512, 10000.0)
    assert (full.window, full.rope_parameters["theta"]) == (None, 1e6)
    assert local.scale is None  # query_pre_attn_scalar = head_dim = 256


def _small(**fields):
    base = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
            "num_key_value_heads": 2, "num_hidden_layers": 4, "max_position_embeddings": 256}
    base.update(fields)
    return base


@pytest.mark.parametrize("fields", [
    {"model_type": "mistral", "sliding_window": 4},
    {"model_type": "qwen2", "sliding_window": 3, "use_sliding_window": True,
     "max_window_layers": 2},
    {"model_type": "gemma2", "head_dim": 16, "sliding_window": 5, "query_pre_attn_scalar": 8,
     "attn_logit_softcapping": None},
    {"layer_types": ["full_attention", "sliding_attention"] * 2, "sliding_window": 2,
     "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 2.0,
                                            "rope_theta": 1e5},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}},
    {"model_type": "mpt", "attn_config": {"alibi": True, "softmax_scale": 0.3},
     "d_model": 64, "n_heads": 4, "n_layers": 2, "max_seq_len": 256},
    {"model_type": "falcon", "multi_query": True, "rope_theta": 5000.0},
    {"model_type": "phi", "partial_rotary_factor": 0.5},
    {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}, "max_position_embeddings": 8},
])
def test_windows_and_variants_that_bite(fields):
    """Small configs whose windows, scales and scalings change the result at
    a short length, against the reference."""
    model = pe_config.read(_small(**fields))
    module = model.compile(seq_len=12, batch=1)
    rng = np.random.default_rng(3)
    for kind in model.kinds:
        q, k, v, qp, kp = _inputs(model, 12, 12, 1, 0, rng)
        (out,) = module.call(kind.function, q, k, v, qp, kp)
        np.testing.assert_allclose(out, kind.reference(q, k, v, qp, kp), atol=2e-5, rtol=0)
        full = reference.attention(q, k, v, causal=kind.causal, scale=kind.scale,
                                   rope=kind.rope_parameters, alibi=kind.alibi)
        if kind.window is not None:  # the window changed the result
            assert np.abs(out - full).max() > 1e-3


def test_softcap():
    """Gemma 2 caps its scores at attn_logit_softcapping (50 by default; null: none): the
    kinds carry it, the model's IR states it, and the kernels compute it."""
    default = pe_config.read(_small(model_type="gemma2", head_dim=16, sliding_window=5))
    assert {kind.softcap for kind in default.kinds} == {50.0}
    assert pe_config._pe_compile(default.source, "--emit=pe").count(
        "softcap(5.000000e+01)") == len(default.kinds)
    none = pe_config.read(_small(model_type="gemma2", head_dim=16, sliding_window=5,
                                 attn_logit_softcapping=None))
    assert {kind.softcap for kind in none.kinds} == {None}
    model = pe_config.read(_small(model_type="gemma2", head_dim=16, sliding_window=5,
                                  attn_logit_softcapping=2.0))
    rng = np.random.default_rng(3)
    q = 3 * rng.standard_normal((1, 4, 6, 16)).astype(np.float32)
    k = 3 * rng.standard_normal((1, 2, 6, 16)).astype(np.float32)
    v = rng.standard_normal((1, 2, 6, 16)).astype(np.float32)
    p = np.arange(6, dtype=np.int64)[None]
    kind = model.kinds[0]
    capped = kind.reference(q, k, v, p, p)
    plain = reference.attention(q, k, v, q_positions=p, k_positions=p, scale=kind.scale,
                                causal=kind.causal, window=kind.window,
                                rope=kind.rope_parameters)
    assert np.abs(capped - plain).max() > 1e-2


def test_layer_types_and_scales():
    model = pe_config.read(_small(model_type="qwen2", sliding_window=3, use_sliding_window=True,
                                  max_window_layers=2))
    assert model.layers == ("attention_full",) * 2 + ("attention_sliding",) * 2
    model = pe_config.read(_small(model_type="gemma2", head_dim=16, sliding_window=5,
                                  attn_logit_softcapping=None,
                                  query_pre_attn_scalar=8))
    assert model.layers == ("attention_sliding", "attention_full") * 2
    assert model.kinds[0].scale == 1 / np.sqrt(8)
    mpt = pe_config.read(_small(model_type="mpt", attn_config={"alibi": True,
                                                               "softmax_scale": 0.3}))
    assert (mpt.kinds[0].alibi, mpt.kinds[0].scale) == (8.0, 0.3)
    assert pe_config.read(_small(model_type="falcon", multi_query=True)
                          ).num_key_value_heads == 1
    assert pe_config.read(_small(model_type="falcon", multi_query=False, num_kv_heads=2)
                          ).num_key_value_heads == 2
    # LLaMA ignores sliding_window; Qwen2 without use_sliding_window too, even
    # with layer_types; Mistral ignores layer_types.
    assert pe_config.read(_small(sliding_window=4)).kinds[0].window is None
    assert pe_config.read(_small(model_type="qwen2", sliding_window=4)).kinds[0].window is None
    assert pe_config.read(_small(model_type="qwen2", sliding_window=4,
                                 layer_types=["sliding_attention"] * 4)).kinds[0].window is None
    assert pe_config.read(_small(model_type="mistral", sliding_window=4,
                                 layer_types=["full_attention"] * 4)).kinds[0].window == 4


def test_layers_without_rope():
    """NoPE layers: SmolLM3's no_rope_layers (else every no_rope_layer_interval-th
    layer), EXAONE 4's global layers when it has a window, Cohere 2's layers other
    than its sliding ones; their kind has no RoPE and a function of its own."""
    smol = pe_config.read(_small(model_type="smollm3"))
    assert smol.layers == ("attention_full",) * 3 + ("attention_full_nope",)
    assert smol.kind(3).rope is None and smol.kind(0).rope_parameters["theta"] == 2e6
    smol = pe_config.read(_small(model_type="smollm3", no_rope_layers=[0, 1, 1, 0]))
    assert [smol.kind(i).rope is None for i in range(4)] == [True, False, False, True]
    smol = pe_config.read(_small(model_type="smollm3", no_rope_layers=[1, 1, 1, 1]))
    assert smol.layers == ("attention",) * 4
    types = ["sliding_attention", "full_attention"] * 2
    exaone = pe_config.read(_small(model_type="exaone4", layer_types=types, sliding_window=3))
    assert [exaone.kind(i).rope is None for i in range(4)] == [False, True] * 2
    assert exaone.kind(0).window == 3 and exaone.kind(1).window is None
    exaone = pe_config.read(_small(model_type="exaone4", layer_types=["full_attention"] * 4,
                                   sliding_window=None))
    assert exaone.kind(0).rope is not None  # no window: every layer rotates
    cohere2 = pe_config.read(_small(model_type="cohere2", layer_types=types, sliding_window=3))
    assert [cohere2.kind(i).rope is None for i in range(4)] == [False, True] * 2
    assert cohere2.kind(0).rope_parameters["style"] == "interleaved"


def test_llama4_chunked_and_nope_layers():
    """Llama 4: chunked attention (attention_chunk_size) in the layers that rotate, full
    attention with query temperature tuning in its NoPE layers (every fourth, or
    no_rope_layers), complex-number (interleaved) pairs; layer_types where given."""
    llama4 = pe_config.read(_small(model_type="llama4_text", num_hidden_layers=8,
                                   attention_chunk_size=16, floor_scale=32, attn_scale=0.25))
    assert llama4.layers == ("attention_chunked",) * 3 + ("attention_full",) \
        + ("attention_chunked",) * 3 + ("attention_full",)
    chunked, full = llama4.kind(0), llama4.kind(3)
    assert chunked.chunk == 16 and chunked.temperature is None and chunked.window is None
    assert chunked.rope_parameters == {"theta": 5e5, "rotary_dim": 16, "style": "interleaved"}
    assert full.rope is None and full.chunk is None and full.temperature == (32, 0.25)
    # The class defaults: chunks of 8192, tuning on with floor 8192 and scale 0.1.
    default = pe_config.read(_small(model_type="llama4_text"))
    assert default.kind(0).chunk == 8192 and default.kind(3).temperature == (8192, 0.1)
    untuned = pe_config.read(_small(model_type="llama4_text", attn_temperature_tuning=False,
                                    no_rope_layers=[1, 0, 0, 1]))
    assert untuned.layers == ("attention_chunked", "attention_full", "attention_full",
                              "attention_chunked")
    assert untuned.kind(1).temperature is None
    typed = pe_config.read(_small(model_type="llama4_text", no_rope_layers=[1, 1, 1, 0],
                                  layer_types=["chunked_attention", "full_attention"] * 2))
    assert typed.layers == ("attention_chunked", "attention_full", "attention_chunked",
                            "attention_full_nope")


def test_gpt_oss_sinks():
    """gpt-oss: learned sinks in every layer (the functions take them, f32 [Hq], after the
    positions), sliding and full layers, YaRN without truncation; the compiled kinds
    against the float64 reference with sinks."""
    model = pe_config.read(_example("gpt-oss-20b"))
    assert [k.function for k in model.kinds] == ["attention_sliding", "attention_full"]
    assert all(k.sinks for k in model.kinds) and model.kinds[0].window == 128
    assert model.kinds[1].rope_parameters["scaling"]["truncate"] is False
    assert "sinks(%arg5 : tensor<64xf32>)" in model.ir(seq_len=8)
    small = pe_config.read(_small(model_type="gpt_oss", sliding_window=3,
                                  layer_types=["sliding_attention", "full_attention"] * 2))
    module = small.compile(seq_len=9)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 4, 9, 16)).astype(np.float32)
    k, v = (rng.standard_normal((1, 2, 9, 16)).astype(np.float32) for _ in range(2))
    pos = np.arange(9)[None]
    sinks = rng.standard_normal(4).astype(np.float32) * 2
    for kind in small.kinds:
        (out,) = module.call(kind.function, q, k, v, pos, pos, sinks)
        want = kind.reference(q, k, v, pos, pos, sinks)
        assert np.abs(out - want).max() < 1e-5
        assert np.abs(want - kind.reference(q, k, v, pos, pos, sinks * 0 - 50)).max() > 1e-2
    with pytest.raises(ValueError, match="1 arguments after the positions"):
        small.kinds[0].reference(q, k, v, pos, pos)


def test_mimo_v2_flash_kinds():
    """MiMo-V2-Flash with its config class's defaults: full attention in layer 0 and every
    sixth layer, sliding (window 128) elsewhere with learned sinks and twice the key/value
    heads; each layer type its own rope_parameters (theta 5e6 / 1e4, partial rotary 0.334
    of head_dim: int(24 x 0.334) = 8 channels); values of v_head_dim. The compiled kinds
    against the float64 reference."""
    small = pe_config.read(_small(model_type="mimo_v2_flash", num_attention_heads=8,
                                  num_key_value_heads=2, num_hidden_layers=7, head_dim=24,
                                  v_head_dim=16))
    assert small.layers == ("attention_full",) + ("attention_sliding",) * 4 + \
        ("attention_full", "attention_sliding")
    full, sliding = small.kind(0), small.kind(1)
    assert (full.num_key_value_heads, sliding.num_key_value_heads) == (2, 4)
    assert (full.sinks, sliding.sinks) == (False, True)
    assert (full.window, sliding.window) == (None, 128)
    assert (full.rope["theta"], sliding.rope["theta"]) == (5e6, 1e4)
    assert full.rope["rotary_dim"] == sliding.rope["rotary_dim"] == 8
    assert small.value_head_dim == 16 and small.head_dim == 24
    module = small.compile(seq_len=9)
    rng = np.random.default_rng(2)
    q = rng.standard_normal((1, 8, 9, 24)).astype(np.float32)
    pos = np.arange(9)[None] + 300
    sinks = rng.standard_normal(8).astype(np.float32)
    for kind in (full, sliding):
        heads = kind.num_key_value_heads
        k = rng.standard_normal((1, heads, 9, 24)).astype(np.float32)
        v = rng.standard_normal((1, heads, 9, 16)).astype(np.float32)
        extra = (sinks,) if kind.sinks else ()
        (out,) = module.call(kind.function, q, k, v, pos, pos, *extra)
        assert out.shape == (1, 8, 9, 16)
        want = kind.reference(q, k, v, pos, pos, *extra)
        assert np.abs(out - want).max() < 1e-5
    with pytest.raises(pe_config.ConfigError, match="do not divide 6 query heads"):
        pe_config.read(_small(model_type="mimo_v2_flash", num_attention_heads=6,
                              num_key_value_heads=2, num_hidden_layers=2))


# model type: (rope fields, sections, mode, rotary_dim, style)
MROPE = {
    "qwen2_vl_text": (dict(rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}),
                      [2, 3, 3], "contiguous", 16, "half"),
    "qwen2_5_vl_text": (dict(rope_parameters={"rope_type": "default", "rope_theta": 1e6,
                                              "mrope_section": [4, 2, 2]}),
                        [4, 2, 2], "contiguous", 16, "half"),
    "qwen3_vl_text": (dict(head_dim=48), [24, 20, 20], "interleaved", 128, "half"),
    "glm4v_text": (dict(head_dim=32, rope_parameters={"rope_type": "default", "rope_theta": 1e4,
                                                       "partial_rotary_factor": 0.5,
                                                       "mrope_section": [2, 3, 3]}),
                   [2, 3, 3], "contiguous", 16, "interleaved"),
}


@pytest.mark.parametrize("model_type", sorted(MROPE))
def test_mrope_families(model_type):
    """The Qwen-VL and GLM-4V text attentions: M-RoPE sections (given, else the modeling
    code's default) and mode; the functions take the q and k rope positions [B, 3, S]
    after the positions, which place the causal mask; compiled against the reference."""
    fields, sections, mode, rotary_dim, style = MROPE[model_type]
    if model_type == "qwen3_vl_text":  # its default [24, 20, 20] needs 64 pairs
        fields = dict(fields, head_dim=128)
    model = pe_config.read(_small(model_type=model_type, **fields))
    (kind,) = model.kinds
    rope = kind.rope_parameters
    assert (rope["sections"], rope["section_mode"], rope["rotary_dim"], rope["style"]) == \
        (sections, mode, rotary_dim, style)
    assert kind.rope_streams == 3
    module = model.compile(seq_len=7)
    rng = np.random.default_rng(1)
    d = model.head_dim
    q = rng.standard_normal((1, 4, 7, d)).astype(np.float32)
    k, v = (rng.standard_normal((1, 2, 7, d)).astype(np.float32) for _ in range(2))
    pos = np.arange(7)[None]
    # An image of 2 x 3 patches after one text token: t stays, h and w walk the grid.
    grid = np.array([[0, 1, 1, 1, 1, 1, 1], [0, 10, 10, 10, 90, 90, 90],
                     [0, 10, 50, 90, 10, 50, 90]])[None]
    (out,) = module.call(kind.function, q, k, v, pos, pos, grid, grid)
    want = kind.reference(q, k, v, pos, pos, grid, grid)
    assert np.abs(out - want).max() < 1e-5
    assert np.abs(want - kind.reference(q, k, v, pos, pos, grid[:, :1].repeat(3, 1),
                                        grid[:, :1].repeat(3, 1))).max() > 1e-3


def test_mrope_model_without_its_rotary_embedding_is_refused():
    """pe.transformers.fuse_rope reads an M-RoPE model's position streams from its text
    rotary embedding; a model without one is refused, naming why, and left alone
    (the fused M-RoPE families: test_fused_mrope.py)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import pe.transformers
    config = transformers.Qwen3VLTextConfig(hidden_size=64, num_attention_heads=4,
                                            num_key_value_heads=2, head_dim=128,
                                            num_hidden_layers=1, intermediate_size=32,
                                            vocab_size=32)
    model = transformers.Qwen3VLTextModel(config)
    model.rotary_emb = torch.nn.Identity()
    forwards = [m.forward for m in model.modules()]
    with pytest.raises(ValueError, match="M-RoPE position streams but has no text rotary"):
        pe.transformers.fuse_rope(model)
    assert [m.forward for m in model.modules()] == forwards
    assert not hasattr(model, "_pe_streams")


def test_mrope_sections_of_transformers():
    """The sections pe reads are those transformers' rotary modules apply."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.models.qwen3_vl import modeling_qwen3_vl
    config = transformers.Qwen3VLTextConfig(hidden_size=256, num_attention_heads=2,
                                            num_key_value_heads=2, head_dim=128)
    rotary = modeling_qwen3_vl.Qwen3VLTextRotaryEmbedding(config)
    read = pe_config.read(config)
    assert read.kinds[0].rope_parameters["sections"] == list(rotary.mrope_section)
    assert read.kinds[0].rope_parameters["section_mode"] == "interleaved"


def test_class_defaults():
    """A field left out means the transformers config class's default; an
    explicit null stays null."""
    assert pe_config.read(_small(model_type="mistral")).kinds[0].window == 4096
    assert pe_config.read(_small(model_type="mistral", sliding_window=None)).kinds[0].window \
        is None
    assert pe_config.read(_small(model_type="mixtral")).kinds[0].rope_parameters["theta"] == 1e6
    assert pe_config.read(_small(model_type="phi")).kinds[0].rope_parameters["rotary_dim"] == 8
    qwen3 = pe_config.read(_small(model_type="qwen3", sliding_window=4, use_sliding_window=True,
                                  num_hidden_layers=30))
    assert qwen3.head_dim == 128 and qwen3.layers.count("attention_sliding") == 2
    gemma3 = pe_config.read(_small(model_type="gemma3_text", num_hidden_layers=6))
    assert gemma3.head_dim == 256 and gemma3.kinds[0].window == 4096
    assert [k.rope_parameters["theta"] for k in gemma3.kinds] == [1e4, 1e6]
    gptj = pe_config.read(_small(model_type="gptj", hidden_size=512))
    assert gptj.kinds[0].rope_parameters["rotary_dim"] == 64


def test_sources(tmp_path):
    """A dict, a path and a folder read alike (a PretrainedConfig:
    test_hf_integration.py)."""
    path = _example("llama-3.1-8b")
    by_path = pe_config.read(path)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(open(path).read())
    assert pe_config.read(str(folder)).kinds == by_path.kinds
    assert pe_config.read(json.load(open(path))).kinds == by_path.kinds
    with pytest.raises(TypeError, match="expected a dict"):
        pe_config.read(42)


DROP = object()  # a field left out
GEMMA2 = dict(model_type="gemma2", attn_logit_softcapping=None, head_dim=16)
BAD = [
    ({"model_type": "llama"}, "config field 'hidden_size': required"),
    (_small(model_type=DROP), "config field 'model_type': required"),
    (_small(model_type="rwkv"), "config field 'model_type': 'rwkv' is not a model type"),
    (_small(num_key_value_heads=3), "config field 'num_key_value_heads': 3 key/value heads "
                                    "do not divide 4 query heads"),
    (_small(hidden_size=66), "config field 'num_attention_heads': 4 heads do not divide "
                             "hidden size 66"),
    (_small(num_attention_heads=-4), "config field 'num_attention_heads': expected an "
                                     "integer in [1, 1048576], got -4"),
    (_small(rope_theta="big"), "config field 'rope_theta': expected a number"),
    (_small(rope_scaling={"rope_type": "yarnn", "factor": 2.0}),
     "config field 'rope_scaling.rope_type': 'yarnn' is not a RoPE type pe reads"),
    (_small(rope_scaling={"rope_type": "linear"}),
     "config field 'rope_scaling.factor': required by rope_type 'linear'"),
    (_small(rope_scaling={"rope_type": "linear", "factor": 2.0, "beta_fast": 32}),
     "config field 'rope_scaling.beta_fast': not a parameter of rope_type 'linear'"),
    (_small(rope_scaling={"rope_type": "linear", "factor": -2.0}), "factor"),
    (_small(rope_scaling=[1, 2]), "config field 'rope_scaling': expected an object or null"),
    (_small(rope_scaling={"rope_type": "linear", "factor": 2.0},
            rope_parameters={"rope_type": "yarn", "factor": 2.0}),
     "config field 'rope_scaling': rope type 'linear' contradicts rope_parameters' 'yarn'"),
    (_small(partial_rotary_factor=0.0), "config field 'partial_rotary_factor': expected a "
                                        "value in (0, 1], got 0"),
    (_small(model_type="gptj", rotary_dim=7), "config field 'rotary_dim': expected an even "
                                              "number in [2, head_dim = 16], got 7"),
    (_small(**GEMMA2, layer_types=["full_attention"]), "config field 'layer_types': expected "
                                                       "a list of 4 layer types"),
    (_small(**GEMMA2, layer_types=["full_attention", "chunked_attention"] * 2),
     "config field 'layer_types': expected 'full_attention' or 'sliding_attention', got "
     "\"chunked_attention\""),
    (_small(model_type="qwen2_vl_text"),
     "config field 'rope_scaling.mrope_section': required by the M-RoPE of model type "
     "'qwen2_vl_text'"),
    (_small(model_type="qwen2_vl_text", rope_scaling={"type": "mrope", "mrope_section": [4, 4, 4]}),
     "'#pe.rope' expects the sections to sum to rotary_dim/2 = 8"),
    (_small(model_type="llama4_text", layer_types=["global"] * 4),
     "config field 'layer_types': expected 'full_attention', 'sliding_attention' or "
     "'chunked_attention', got \"global\""),
    (_small(model_type="llama4_text", attention_chunk_size=0),
     "config field 'attention_chunk_size': expected an integer in [1, 1099511627776], got 0"),
    (_small(model_type="llama4_text", floor_scale=0),
     "config field 'floor_scale': expected an integer in [1, 1099511627776], got 0"),
    (_small(model_type="llama4_text", attn_scale=1e7),
     "'#pe.temperature' expects a finite attn_scale of at most 1e6 in magnitude"),
    (_small(**GEMMA2, layer_types=["sliding_attention"] * 4),
     "config field 'sliding_window': required by the sliding-window layers"),
    (_small(model_type="gemma2", attn_logit_softcapping=0.0, sliding_window=4),
     "config field 'attn_logit_softcapping': expected a finite number > 0, got 0"),
    (_small(model_type="gemma2", attn_logit_softcapping="big", sliding_window=4),
     "config field 'attn_logit_softcapping': expected a number"),
    (_small(model_type="gpt2", scale_attn_by_inverse_layer_idx=True, n_positions=64),
     "config field 'scale_attn_by_inverse_layer_idx': a per-layer score scale is not read"),
    (_small(model_type="mpt", attn_config={"alibi": False}), "config field "
     "'attn_config.alibi': pe reads MPT models with ALiBi"),
    (_small(model_type="mpt", attn_config={"alibi_bias_max": 4}), "config field "
     "'attn_config.alibi_bias_max': transformers' MPT uses 8"),
    (_small(model_type="falcon", alibi=True), "config field 'alibi': Falcon scales its ALiBi"),
    (_small(model_type="gemma3_text", use_bidirectional_attention=True),
     "config field 'use_bidirectional_attention'"),
    (_small(model_type="gptj", rope_theta=20000.0, rotary_dim=8), "config field 'rope_theta': "
     "transformers' GPT-J rotates with base 10000"),
    (_small(model_type="gptj"), "config field 'rotary_dim': expected an even number in "
                                "[2, head_dim = 16], got 64"),
    (_small(rope_scaling={"rope_type": "linear", "factor": 2.0},
            rope_parameters={"rope_type": "linear", "factor": 4.0}),
     "config field 'rope_scaling.factor': contradicts rope_parameters"),
    (_small(**GEMMA2, query_pre_attn_scalar=0, sliding_window=4),
     "config field 'query_pre_attn_scalar': expected a finite number > 0"),
    (_small(num_hidden_layers=10 ** 12), "config field 'num_hidden_layers': expected an "
                                         "integer in [1, 1048576]"),
    (_small(model_type="bert", position_embedding_type="relative_key"),
     "config field 'position_embedding_type': 'relative_key' is not read"),
    (_small(model_type="gpt_neox", rope_theta=20000.0), "config field 'rope_theta': GPT-NeoX "
                                                        "configs give rotary_emb_base"),
    (_small(rope_scaling={"rope_type": "longrope", "short_factor": [1.0], "long_factor": [1.0]},
            original_max_position_embeddings=64), "short_factor"),
    (_small(text_config=3), "config field 'text_config': expected an object"),
    (_small(model_type="smollm3", no_rope_layers=[1, 0]), "config field 'no_rope_layers': "
     "expected a list of 4 entries"),
    (_small(model_type="smollm3", no_rope_layers=[1, 2, 1, 1]), "config field "
     "'no_rope_layers': expected entries 1 (RoPE) or 0 (none)"),
    (_small(model_type="deepseek_v3", qk_rope_head_dim=None), "config field "
     "'qk_rope_head_dim': required (multi-head latent attention)"),
]


@pytest.mark.parametrize("source,message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_configs(source, message):
    source = {k: v for k, v in source.items() if v is not DROP}
    with pytest.raises(pe_config.ConfigError) as info:
        pe_config.read(source)
    assert message in str(info.value)


def test_unrelated_fields_are_ignored():
    plain = pe_config.read(_small())
    noisy = pe_config.read(_small(vocab_size=32000, rms_norm_eps=1e-6, hidden_act="silu",
                                  torch_dtype="bfloat16", architectures=["LlamaForCausalLM"],
                                  some_future_field={"x": 1}))
    assert plain.kinds == noisy.kinds


def test_cli(tmp_path, capsys):
    from pe.__main__ import main
    path = _example("mistral-7b-v0.1")
    assert main(["emit", path, "--seq-len", "4"]) == 0
    assert "window(4096)" in capsys.readouterr().out
    assert main(["run", path, "--seq-len", "5", "--offset", "100"]) == 0
    out = capsys.readouterr().out
    assert "max |pe - float64 reference|" in out and out.strip().endswith("OK")
    assert "(one cold call" in out  # a single timing says what it is
    assert main(["bench", path, "--seq-len", "8", "--repeat", "2"]) == 0
    assert "ms median of 2 warm calls, after one warm-up" in capsys.readouterr().out
    library = str(tmp_path / "libmistral.so")
    assert main(["compile", path, "-o", library, "--seq-len", "8"]) == 0
    module = runner.load(library)
    assert "attention" in module.functions
    # Latent attention: values of v_head_dim, the rotated key block its own argument, and
    # the absorbed form.
    for flags in ([], ["--shared-key"], ["--absorbed"]):
        assert main(["run", _example("deepseek-v3"), "--seq-len", "3", "--kv-len", "5",
                     *flags]) == 0
        assert capsys.readouterr().out.strip().endswith("OK")
    for flag in ("--shared-key", "--absorbed"):
        assert main(["bench", _example("deepseek-v3"), "--seq-len", "2", "--repeat", "1",
                     flag]) == 0
        assert "median of 1 warm calls" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_small(rope_scaling={"rope_type": "llama3", "factor": 8.0})))
    assert main(["emit", str(bad)]) == 1
    assert "config field 'rope_scaling.low_freq_factor'" in capsys.readouterr().err


def test_cli_status_lines_are_cleared(monkeypatch, capsys):
    """On a terminal the compile status and the progress bar are cleared
    (carriage return and erase line) before results are printed."""
    from pe import __main__ as cli
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert cli.main(["run", _example("mistral-7b-v0.1"), "--seq-len", "4"]) == 0
    err = capsys.readouterr().err
    assert err.endswith("\r\033[K")  # nothing left on the status line
    assert "\n" not in err  # status lines never scroll results away
