"""Multi-stream RoPE: `#pe.rope<..., sections = [...], section_mode = ...>` with positions
`[A, S]` / `[B, A, S]`, one row per position stream.

Modes: `contiguous` (M-RoPE: Qwen2-VL, Qwen2.5-VL, GLM-4V; ggml MROPE), `interleaved`
(Qwen3-VL; ggml IMROPE with four sections, vLLM `mrope_interleaved`), `vision` (ggml VISION,
Qwen2-VL's vision tower) and `axes` (n-axis RoPE: FLUX).

Checked: folded frequencies and tables against the float64 reference; `pe.rope` compiled for
the CPU (kernel and reference lowering) and with the GPU schedule on the CPU, f32 and bf16,
both layouts, shared and batched positions; attention with the rotation fused (given as
`rope_positions`, and fused from two `pe.rope`) through every lowering of
`pe.testing.ATTENTION_LOWERINGS`; a run-time error for rope positions of the wrong length;
the reference against upstream code: transformers' Qwen2-VL, Qwen3-VL and GLM-4V text
rotations (and the stream each of their pairs takes), Qwen2-VL's and Llama 4's vision
rotations, diffusers' FLUX embedding (under the extras), and
ggml's `ggml_mrope_cache_init` (its stream and ladder choice restated from
`ggml-cpu/ops.cpp`).

Tolerances: folded frequencies within 4 ulp of f64 (same formula), tables within 2e-6;
`pe.rope` f32 within 4e-6 x max(1, max|x|), bf16 within 1 ulp plus that; attention as
`pe.testing.ATTENTION_TOLERANCE`; upstream goldens computed in float32 within
1e-6 + 2^-21 x the largest angle (their float32 angles), the float64 ones within 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

from pe import ir, reference, runner
from pe.testing import ATTENTION_LOWERINGS, ROPE_LOWERINGS, check_attention, \
    compile_rope_module, parse_returned_constants, round_to, run_pe_opt

# name: rope keyword arguments (reference.apply_rope / ir.rope_attr); rotary_dim 32 (16 pairs)
# unless given.
CONFIGS = {
    # Qwen2-VL's [16, 24, 24] of 64 pairs, scaled to 16.
    "mrope": dict(theta=1000000.0, sections=[4, 6, 6]),
    # GLM-4V: interleaved pairs over a partial block.
    "mrope-interleaved-pairs": dict(theta=10000.0, rotary_dim=16, style="interleaved",
                                    sections=[2, 3, 3]),
    # A scaling and a magnitude on the running ladder.
    "mrope-yarn": dict(theta=1000000.0, sections=[4, 6, 6], magnitude=1.25,
                       scaling={"type": "yarn", "factor": 4.0,
                                "original_max_position_embeddings": 64}),
    # Qwen3-VL's layout: pairs 13 and 14, past 3 s_h and 3 s_w, fall back to stream 0.
    "imrope": dict(theta=5000000.0, sections=[8, 4, 4], section_mode="interleaved"),
    # ggml IMROPE: a fourth section, the fallback stream of pairs 13 and 14.
    "imrope-ggml": dict(theta=5000000.0, sections=[8, 4, 4, 0], section_mode="interleaved"),
    # ggml VISION / Qwen2-VL's vision tower: (h, w) ladders restarting per section.
    "vision": dict(theta=10000.0, sections=[8, 8], section_mode="vision"),
    "vision-unequal": dict(theta=10000.0, sections=[10, 6], section_mode="vision"),
    # FLUX: axes [16, 56, 56] of 128 channels, scaled to [4, 14, 14] of 32.
    "axes": dict(theta=10000.0, style="interleaved", sections=[2, 7, 7], section_mode="axes"),
    # A rotated block at an offset, four streams.
    "axes-offset-half": dict(theta=10000.0, rotary_dim=16, rotary_offset=16,
                             sections=[2, 2, 2, 2], section_mode="axes"),
}


def _kwargs(config: dict) -> dict:
    return {"rotary_dim": 32, **config}


def _attr(config: dict) -> str:
    return ir.rope_attr(**_kwargs(config))


def _streams(config: dict) -> int:
    return len(config["sections"])


def _table_kwargs(config: dict) -> dict:
    return {k: v for k, v in _kwargs(config).items() if k not in ("style", "rotary_offset")}


def _positions(rng, shape) -> np.ndarray:
    """Positions with the extremes M-RoPE sees: 0, a large temporal index, grid indices."""
    p = rng.integers(0, 3000, shape).astype(np.int64)
    p.reshape(-1)[:2] = [0, 2 ** 20]
    return p


def _name(prefix: str, name: str) -> str:
    return prefix + name.replace("-", "_")


# ---------------------------------------------------------------------------
# The reference's stream assignment, against the mode definitions
# ---------------------------------------------------------------------------

def test_pair_streams():
    assert reference.pair_streams(16, [2, 3, 3]).tolist() == \
        [0, 0, 1, 1, 1, 2, 2, 2]
    # Hugging Face's Qwen3-VL: h on k % 3 == 1 below 3 s_h, w on k % 3 == 2 below 3 s_w.
    streams = reference.pair_streams(128, [24, 20, 20], "interleaved")
    assert streams[:6].tolist() == [0, 1, 2, 0, 1, 2] and streams[60:].tolist() == [0] * 4
    assert np.bincount(streams).tolist() == [24, 20, 20]
    # ggml: the unclaimed pairs 61, 62 go to the fourth stream.
    ggml = reference.pair_streams(128, [24, 20, 20, 0], "interleaved")
    assert ggml[60:].tolist() == [0, 3, 3, 0]


# ---------------------------------------------------------------------------
# Folds
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_folded_frequencies_and_tables(name):
    config = CONFIGS[name]
    h = _kwargs(config)["rotary_dim"] // 2
    a = _streams(config)
    rng = np.random.default_rng(len(name))
    positions = _positions(rng, (2, a, 5))
    ptype = f"tensor<2x{a}x5xi64>"
    text = (f"func.func @f() -> (tensor<{h}xf64>, tensor<2x5x{h}xf32>, tensor<2x5x{h}xf32>) {{\n"
            f"  %p = arith.constant dense<{positions.tolist()}> : {ptype}\n"
            f"  %f = pe.rope_frequencies {_attr(config)} -> tensor<{h}xf64>\n"
            f"  %c, %s = pe.rope_tables {_attr(config)} %p : {ptype} -> tensor<2x5x{h}xf32>\n"
            f"  return %f, %c, %s : tensor<{h}xf64>, tensor<2x5x{h}xf32>, tensor<2x5x{h}xf32>\n}}\n")
    (freqs, _), (cos, _), (sin, _) = parse_returned_constants(run_pe_opt(text))
    kwargs = _table_kwargs(config)
    np.testing.assert_allclose(freqs, reference.rope_inv_freq(
        **{k: v for k, v in kwargs.items() if k != "magnitude"}), rtol=4 * 2.0 ** -52, atol=0)
    want_cos, want_sin = reference.rope_tables(positions, **kwargs)
    np.testing.assert_allclose(cos, want_cos, rtol=0, atol=2e-6)
    np.testing.assert_allclose(sin, want_sin, rtol=0, atol=2e-6)


# ---------------------------------------------------------------------------
# pe.rope compiled
# ---------------------------------------------------------------------------

B, H, S, D = 2, 3, 12, 64


def _rope_functions(dtype: str) -> str:
    funcs = []
    for name, config in CONFIGS.items():
        a = _streams(config)
        for layout, x_shape, p_shape in (("bhsd", (B, H, S, D), (a, S)),
                                         ("bshd", (B, S, H, D), (B, a, S))):
            xt = ir.tensor_type(x_shape, dtype)
            pt = ir.tensor_type(p_shape, "i64")
            lay = "" if layout == "bhsd" else " layout(bshd)"
            funcs.append(f"func.func @{_name('rope_' + layout + '_', name)}(%x: {xt}, %p: {pt})"
                         f" -> {xt} {{\n  %y = pe.rope {_attr(config)} %x, %p{lay} : {xt}, {pt}\n"
                         f"  return %y : {xt}\n}}")
    return "\n".join(funcs)


@pytest.fixture(scope="module", params=sorted(ROPE_LOWERINGS))
def rope_module(request):
    return compile_rope_module(_rope_functions, request.param)


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_rope_compiled(rope_module, name, dtype, layout):
    config = CONFIGS[name]
    a = _streams(config)
    rng = np.random.default_rng(len(name) + len(layout))
    shape = (B, H, S, D) if layout == "bhsd" else (B, S, H, D)
    x = round_to(rng.standard_normal(shape), dtype)
    p = _positions(rng, (a, S) if layout == "bhsd" else (B, a, S))
    (y,) = rope_module[dtype].call(_name(f"rope_{layout}_", name), x.astype(np.float32), p)
    want = reference.apply_rope(x, p, layout=layout, **_kwargs(config))
    err = np.abs(np.asarray(y, dtype=np.float64) - want)
    scale = max(1.0, np.abs(want).max())
    if dtype == "f32":
        assert err.max() <= 4e-6 * scale, f"{name}: {err.max():.3g}"
    else:
        assert np.all(err <= np.abs(round_to(want, "bf16")) * 2.0 ** -7 + 4e-6 * scale), \
            f"{name}: {err.max():.3g}"


# ---------------------------------------------------------------------------
# Attention with the rotation fused
# ---------------------------------------------------------------------------

# name: (Sq, Skv) of the fused attention cases (prefill, and a decode step).
ATTENTION_SHAPES = {"prefill": (20, 20), "decode": (1, 33)}
ATTENTION_ROPES = ("mrope", "imrope", "vision", "axes")
HQ, HKV, AD = 4, 2, 32


def _attention_functions() -> str:
    funcs = []
    for shape, (sq, skv) in ATTENTION_SHAPES.items():
        for name in ATTENTION_ROPES:
            config = CONFIGS[name]
            a = _streams(config)
            q, k = (ir.tensor_type((2, h, s, AD), "f32") for h, s in ((HQ, sq), (HKV, skv)))
            qp, kp = ir.tensor_type((2, a, sq), "i64"), ir.tensor_type((a, skv), "i64")
            attrs = ir.attention_attrs(causal=True, rope=_attr(config))
            fname = _name(f"attn_{shape}_", name)
            funcs.append(
                f"func.func @{fname}(%q: {q}, %k: {k}, %v: {k}, %qp: {qp}, %kp: {kp}) -> {q} {{\n"
                f"  %o = pe.attention %q, %k, %v{attrs} rope_positions(%qp, %kp : {qp}, {kp})"
                f" : {q}, {k}, {k} -> {q}\n  return %o : {q}\n}}")
            # The unfused form: two pe.rope at the same positions (for
            # pe-fuse-rope-into-attention), queries and keys in one sequence.
            if shape == "prefill":
                p = ir.tensor_type((a, sq), "i64")
                funcs.append(
                    f"func.func @{_name('unfused_', name)}(%q: {q}, %k: {k}, %v: {k}, %p: {p})"
                    f" -> {q} {{\n"
                    f"  %qr = pe.rope {_attr(config)} %q, %p : {q}, {p}\n"
                    f"  %kr = pe.rope {_attr(config)} %k, %p : {k}, {p}\n"
                    f"  %o = pe.attention %qr, %kr, %v causal : {q}, {k}, {k} -> {q}\n"
                    f"  return %o : {q}\n}}")
    return "\n".join(funcs)


@pytest.mark.parametrize("lowering", sorted(ATTENTION_LOWERINGS))
def test_attention_with_fused_rotation(lowering):
    if lowering == "kernels-avx2" and "avx2" not in runner._cpu_flags():
        pytest.skip("the CPU has no AVX2")
    module = runner.compile(_attention_functions(), ATTENTION_LOWERINGS[lowering], timeout=600)
    rng = np.random.default_rng(5)
    for shape, (sq, skv) in ATTENTION_SHAPES.items():
        for name in ATTENTION_ROPES:
            rope = _kwargs(CONFIGS[name])
            a = _streams(rope)
            q = rng.standard_normal((2, HQ, sq, AD)).astype(np.float32)
            k = rng.standard_normal((2, HKV, skv, AD)).astype(np.float32)
            v = rng.standard_normal((2, HKV, skv, AD)).astype(np.float32)
            qp, kp = _positions(rng, (2, a, sq)), _positions(rng, (a, skv))
            (got,) = module.call(_name(f"attn_{shape}_", name), q, k, v, qp, kp)
            want = reference.attention(q, k, v, causal=True, rope=rope, q_rope_positions=qp,
                                       k_rope_positions=kp)
            check_attention(got, want, "f32", f"{name} {shape} ({lowering})")
            # Every stream counts: rotating all pairs by stream 0 is another attention.
            first = reference.attention(q, k, v, causal=True, rope=rope,
                                        q_rope_positions=np.repeat(qp[:, :1], a, axis=1),
                                        k_rope_positions=np.repeat(kp[:1], a, axis=0))
            assert np.abs(first - want).max() > 1e-3
            if shape == "prefill":
                p = _positions(rng, (a, sq))
                (got,) = module.call(_name("unfused_", name), q, k, v, p)
                want = reference.attention(q, k, v, causal=True, rope=rope,
                                           q_rope_positions=p, k_rope_positions=p)
                check_attention(got, want, "f32", f"{name} unfused ({lowering})")


def test_rope_positions_of_the_wrong_length():
    config = CONFIGS["mrope"]
    q = "tensor<1x2x?x32xf32>"
    text = (f"func.func @f(%q: {q}, %qp: tensor<3x?xi64>, %kp: tensor<3x?xi64>) -> {q} {{\n"
            f"  %o = pe.attention %q, %q, %q causal rope({_attr(config)}) rope_positions(%qp, %kp"
            f" : tensor<3x?xi64>, tensor<3x?xi64>) : {q}, {q}, {q} -> {q}\n"
            f"  return %o : {q}\n}}")
    module = runner.compile(text, ["--num-threads=1"], timeout=600)
    x = np.zeros((1, 2, 6, 32), dtype=np.float32)
    good = np.zeros((3, 6), dtype=np.int64)
    module.call("f", x, good, good)
    with pytest.raises(runner.KernelError, match="rope_positions differ in length"):
        module.call("f", x, good, np.zeros((3, 5), dtype=np.int64))


# ---------------------------------------------------------------------------
# Upstream code
# ---------------------------------------------------------------------------

def _float32_tolerance(positions, inv_freq) -> float:
    """1e-6 plus 2^-21 of the largest angle: their angles are float32 products."""
    return 1e-6 + 2.0 ** -21 * float(np.abs(positions).max()) * float(np.max(inv_freq))


def _grid_positions(batch: int, text: int, grid_h: int, grid_w: int):
    """Qwen2-VL's position ids [3, B, S] for `text` tokens, one image of grid_h x grid_w
    patches, `text` tokens again (get_rope_index's layout)."""
    t0 = np.arange(text)
    t = np.concatenate([t0, np.full(grid_h * grid_w, text), text + max(grid_h, grid_w) + t0])
    hh = np.concatenate([t0, text + np.repeat(np.arange(grid_h), grid_w),
                         text + max(grid_h, grid_w) + t0])
    ww = np.concatenate([t0, text + np.tile(np.arange(grid_w), grid_h),
                         text + max(grid_h, grid_w) + t0])
    ids = np.stack([t, hh, ww])
    return np.broadcast_to(ids[:, None], (3, batch, ids.shape[1])).copy()


def _hf_text_case(torch, config, rotary, apply, mrope_section=None):
    """(x, position ids [3, B, S], transformers' rotation of x) for a text rotary class."""
    rng = np.random.default_rng(0)
    ids = _grid_positions(2, 5, 3, 4)
    head_dim = config.head_dim
    x = rng.standard_normal((2, config.num_attention_heads, ids.shape[-1], head_dim))
    xt = torch.tensor(x, dtype=torch.float32)
    cos, sin = rotary(xt, torch.tensor(ids))
    args = (xt, xt, cos, sin) + ((mrope_section,) if mrope_section is not None else ())
    out, _ = apply(*args)
    return x, ids, out.double().numpy()


def test_transformers_stream_assignment():
    """transformers' own section code picks, for every pair, the stream pair_streams names:
    frequencies marked by stream (a * 1000 + k) go through Qwen2-VL's section split and
    Qwen3-VL's interleaving."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.qwen3_vl import Qwen3VLTextConfig
    from transformers.models.qwen3_vl import modeling_qwen3_vl as m3
    from transformers.models.qwen2_vl import modeling_qwen2_vl as m2
    half, sections = 64, [24, 20, 20]
    marked = torch.tensor([[[[a * 1000.0 + k for k in range(half)]]] for a in range(3)])
    rotary = m3.Qwen3VLTextRotaryEmbedding(Qwen3VLTextConfig(
        hidden_size=256, num_attention_heads=2, head_dim=128,
        rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": sections}))
    got = rotary.apply_interleaved_mrope(marked.clone(), sections)[0, 0].numpy()
    streams = reference.pair_streams(2 * half, sections, "interleaved")
    assert (got // 1000).astype(int).tolist() == streams.tolist()
    # Qwen2-VL's split of the duplicated [cos | cos] table: with q = 1 and sin = 0 its
    # rotation returns the cos it chose per channel.
    table = torch.cat([marked, marked], dim=-1)
    ones = torch.ones(1, 1, 1, 2 * half)
    chosen, _ = m2.apply_multimodal_rotary_pos_emb(ones, ones, table, torch.zeros_like(table),
                                                   sections)
    chosen = chosen[0, 0, 0].numpy()
    assert (chosen[:half] // 1000).astype(int).tolist() == \
        reference.pair_streams(2 * half, sections).tolist()
    np.testing.assert_array_equal(chosen[:half], chosen[half:])


def test_transformers_qwen2_vl_mrope():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.qwen2_vl import Qwen2VLTextConfig
    from transformers.models.qwen2_vl import modeling_qwen2_vl as m
    config = Qwen2VLTextConfig(hidden_size=256, num_attention_heads=2, num_key_value_heads=2,
                               rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                                                "mrope_section": [16, 24, 24]})
    config.head_dim = 128
    x, ids, want = _hf_text_case(torch, config, m.Qwen2VLRotaryEmbedding(config),
                                 m.apply_multimodal_rotary_pos_emb, [16, 24, 24])
    ours = reference.apply_rope(x, ids.transpose(1, 0, 2), theta=1000000.0, rotary_dim=128,
                                sections=[16, 24, 24])
    inv = reference.rope_inv_freq(1000000.0, 128)
    np.testing.assert_allclose(ours, want, rtol=0, atol=_float32_tolerance(ids, inv) * 4)


def test_transformers_qwen3_vl_interleaved_mrope():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.qwen3_vl import Qwen3VLTextConfig
    from transformers.models.qwen3_vl import modeling_qwen3_vl as m
    config = Qwen3VLTextConfig(hidden_size=256, num_attention_heads=2, num_key_value_heads=2,
                               head_dim=128,
                               rope_parameters={"rope_type": "default", "rope_theta": 5000000.0,
                                                "mrope_section": [24, 20, 20],
                                                "mrope_interleaved": True})
    x, ids, want = _hf_text_case(torch, config, m.Qwen3VLTextRotaryEmbedding(config),
                                 m.apply_rotary_pos_emb)
    ours = reference.apply_rope(x, ids.transpose(1, 0, 2), theta=5000000.0, rotary_dim=128,
                                sections=[24, 20, 20], section_mode="interleaved")
    inv = reference.rope_inv_freq(5000000.0, 128)
    np.testing.assert_allclose(ours, want, rtol=0, atol=_float32_tolerance(ids, inv) * 4)
    # The contiguous sections would rotate differently.
    other = reference.apply_rope(x, ids.transpose(1, 0, 2), theta=5000000.0, rotary_dim=128,
                                 sections=[24, 20, 20])
    assert np.abs(other - want).max() > 1e-2


def test_transformers_glm4v_mrope_on_interleaved_pairs():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.glm4v import Glm4vTextConfig
    from transformers.models.glm4v import modeling_glm4v as m
    config = Glm4vTextConfig(hidden_size=256, num_attention_heads=2, num_key_value_heads=2,
                             rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                              "mrope_section": [8, 12, 12],
                                              "partial_rotary_factor": 0.5})
    config.head_dim = 128
    x, ids, want = _hf_text_case(torch, config, m.Glm4vTextRotaryEmbedding(config),
                                 m.apply_rotary_pos_emb)
    ours = reference.apply_rope(x, ids.transpose(1, 0, 2), theta=10000.0, rotary_dim=64,
                                style="interleaved", sections=[8, 12, 12])
    inv = reference.rope_inv_freq(10000.0, 64)
    np.testing.assert_allclose(ours, want, rtol=0, atol=_float32_tolerance(ids, inv) * 4)


def test_transformers_qwen2_vl_vision_rotation():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.qwen2_vl import modeling_qwen2_vl as m
    head_dim, grid_h, grid_w = 80, 6, 7
    rotary = m.VisionRotaryEmbedding(head_dim // 2)
    hpos = np.repeat(np.arange(grid_h), grid_w)
    wpos = np.tile(np.arange(grid_w), grid_h)
    hw = np.stack([hpos, wpos], axis=-1)  # [S, 2], as rot_pos_emb gathers it
    freqs = rotary(torch.tensor(hw))  # [S, head_dim / 2]: h frequencies, then w
    emb = torch.cat((freqs, freqs), dim=-1)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((hw.shape[0], 3, head_dim))  # [S, H, D]
    xt = torch.tensor(x, dtype=torch.float32)
    want, _ = m.apply_rotary_pos_emb_vision(xt, xt, emb.cos(), emb.sin())
    ours = reference.apply_rope(x[None], hw.T, theta=10000.0, rotary_dim=head_dim,
                                sections=[head_dim // 4, head_dim // 4], section_mode="vision",
                                layout="bshd")[0]
    np.testing.assert_allclose(ours, want.double().numpy(), rtol=0, atol=1e-5)


def test_transformers_llama4_vision_rotation():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.llama4 import Llama4VisionConfig
    from transformers.models.llama4 import modeling_llama4 as m
    config = Llama4VisionConfig(image_size=48, patch_size=8, hidden_size=128,
                                num_attention_heads=2, rope_parameters={"rope_theta": 10000.0})
    head_dim, side = 64, 6
    freqs_ci = m.Llama4VisionRotaryEmbedding(config).freqs_ci  # [S, 1, D/2], class token last
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, side * side + 1, 2, head_dim))  # [B, S, H, D]
    xt = torch.tensor(x, dtype=torch.float32)
    want, _ = m.vision_apply_rotary_emb(xt, xt, freqs_ci)
    # Patch k at (k mod side, k div side), both + 1; the class token at 0.
    k = np.arange(side * side)
    xy = np.stack([np.append(k % side + 1, 0), np.append(k // side + 1, 0)])
    ours = reference.apply_rope(x, xy, theta=10000.0, rotary_dim=head_dim, style="interleaved",
                                sections=[head_dim // 4, head_dim // 4], section_mode="axes",
                                layout="bshd")
    np.testing.assert_allclose(ours, want.double().numpy(), rtol=0, atol=1e-5)


def test_diffusers_flux_axes():
    torch = pytest.importorskip("torch")
    pytest.importorskip("diffusers")
    from diffusers.models.embeddings import FluxPosEmbed, apply_rotary_emb
    axes = [16, 56, 56]
    rng = np.random.default_rng(2)
    ids = np.stack([np.zeros(24), rng.integers(0, 64, 24), rng.integers(0, 64, 24)], axis=-1)
    cos, sin = FluxPosEmbed(theta=10000, axes_dim=axes)(torch.tensor(ids, dtype=torch.float64))
    x = rng.standard_normal((1, 2, ids.shape[0], sum(axes)))
    want = apply_rotary_emb(torch.tensor(x), (cos, sin), use_real=True).double().numpy()
    ours = reference.apply_rope(x, ids.T.astype(np.int64), theta=10000.0, rotary_dim=sum(axes),
                                style="interleaved", sections=[a // 2 for a in axes],
                                section_mode="axes")
    # Their angles in float64, cos and sin rounded to float32.
    np.testing.assert_allclose(ours, want, rtol=0, atol=1e-6)


def _ggml_mrope_angles(p_t, p_h, p_w, p_e, sections, n_dims, pairs, base, is_imrope,
                       indep_sects):
    """ggml's ggml_mrope_cache_init: the angle of each pair, restated in float64."""
    theta_scale = base ** (-2.0 / n_dims)
    theta = {"t": float(p_t), "h": float(p_h), "w": float(p_w), "e": float(p_e)}
    start = dict(theta)
    sect_dims = sum(sections)
    sec_w = sections[0] + sections[1]
    sec_e = sections[2] + sec_w
    angles = []
    for k in range(pairs):
        sector = k % sect_dims
        if indep_sects:
            for name, at in (("t", 0), ("h", sections[0]), ("w", sec_w), ("e", sec_e)):
                if sector == at:
                    theta[name] = start[name]
        if is_imrope:
            if sector % 3 == 1 and sector < 3 * sections[1]:
                stream = "h"
            elif sector % 3 == 2 and sector < 3 * sections[2]:
                stream = "w"
            elif sector % 3 == 0 and sector < 3 * sections[0]:
                stream = "t"
            else:
                stream = "e"
        else:
            stream = "t"
            if sections[0] <= sector < sec_w:
                stream = "h"
            elif sec_w <= sector < sec_w + sections[2]:
                stream = "w"
            elif sector >= sec_w + sections[2]:
                stream = "e"
        angles.append(theta[stream])
        for name in theta:
            theta[name] *= theta_scale
    return np.array(angles)


# ggml mode: (sections, n_dims, pairs, pe keyword arguments)
GGML_MODES = {
    "MROPE": ([8, 12, 12, 0], 64, 32, dict(sections=[8, 12, 12])),
    "MROPE-4": ([8, 8, 8, 8], 64, 32, dict(sections=[8, 8, 8, 8])),
    "IMROPE": ([24, 20, 20, 0], 128, 64, dict(sections=[24, 20, 20, 0],
                                               section_mode="interleaved")),
    # VISION: n_dims = D/2 pairs over the whole head of D = 80 channels.
    "VISION": ([20, 20, 0, 0], 40, 40, dict(sections=[20, 20], section_mode="vision")),
    "VISION-unequal": ([24, 16, 0, 0], 40, 40, dict(sections=[24, 16], section_mode="vision")),
}


@pytest.mark.parametrize("mode", sorted(GGML_MODES))
def test_ggml_mrope_cache(mode):
    sections, n_dims, pairs, ours = GGML_MODES[mode]
    rotary_dim = 2 * pairs
    base = 10000.0
    rng = np.random.default_rng(len(mode))
    for _ in range(4):
        p = rng.integers(0, 500, 4)
        want = _ggml_mrope_angles(*p, sections, n_dims, pairs, base, mode.startswith("IMROPE"),
                                  mode.startswith("VISION"))
        inv = reference.rope_inv_freq(base, rotary_dim, sections=ours["sections"],
                                      section_mode=ours.get("section_mode", "contiguous"))
        streams = reference.pair_streams(rotary_dim, ours["sections"],
                                         ours.get("section_mode", "contiguous"))
        got = p[:len(ours["sections"])][streams] * inv
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
