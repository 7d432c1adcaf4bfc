"""Unit tests of the float64 reference (pe.reference) itself.

Golden values come from docs/variants.md (values of the upstream implementations) or from closed forms; property tests check the structure (rotation invariants, layouts,
masking) against straightforward loop implementations written here.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from pe import ir
from pe import reference as ref

RNG = np.random.default_rng(1234)


# ---------------------------------------------------------------------------
# Golden values from docs/variants.md
# ---------------------------------------------------------------------------

def test_yarn_correction_range_golden():
    # "for r=16, L0=4096, b=1e4 the correction range is [2, 6]; for r=128 it is [20, 46]"
    assert ref.yarn_correction_range(16, 1e4, 4096) == (2.0, 6.0)
    assert ref.yarn_correction_range(128, 1e4, 4096) == (20.0, 46.0)
    low, high = ref.yarn_correction_range(16, 1e4, 4096, truncate=False)
    assert low == pytest.approx(2.61806, abs=1e-5) and high == pytest.approx(5.62836, abs=1e-5)


def test_yarn_frequencies_r16():
    # Ramp over pairs [2, 6]: pairs 0..2 extrapolated, 6..7 interpolated (/4), 3..5 blended.
    f = ref.rope_inv_freq(1e4, 16, {"type": "yarn", "factor": 4.0,
                                    "original_max_position_embeddings": 4096})
    base = 1e4 ** (-np.arange(8) / 8)
    ramp = np.array([0, 0, 0, 0.25, 0.5, 0.75, 1, 1])
    np.testing.assert_allclose(f, base * (ramp / 4 + (1 - ramp)), rtol=1e-15)
    assert f[3] == pytest.approx(0.025693506, rel=1e-8)


def test_yarn_magnitude():
    y = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
    assert ref.rope_attention_factor(y) == pytest.approx(1.1386294361, rel=1e-10)
    assert ref.rope_attention_factor({**y, "factor": 1.0}) == 1.0
    # mscale only (HF ignores it) vs both set
    assert ref.rope_attention_factor({**y, "mscale": 0.707}) == pytest.approx(1.1386294361)
    assert ref.rope_attention_factor({**y, "mscale": 0.707, "mscale_all_dim": 0.707}) == 1.0
    assert ref.rope_attention_factor({**y, "attention_factor": 2.5}) == 2.5


def test_alibi_slopes_golden():
    assert ref.alibi_slopes(6).tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]
    assert ref.alibi_slopes(8).tolist() == [2.0 ** -k for k in range(1, 9)]
    assert ref.alibi_slopes(1).tolist() == [2.0 ** -8]
    # H=12: 8 slopes 2^-1..2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (interleaved, not continued)
    np.testing.assert_allclose(ref.alibi_slopes(12)[8:], 2.0 ** -(np.arange(4) + 0.5), rtol=1e-15)
    # max_bias generalizes 8: H=4, max_bias=4 -> 2^-1, 2^-2, 2^-3, 2^-4
    assert ref.alibi_slopes(4, 4.0).tolist() == [0.5, 0.25, 0.125, 0.0625]


@pytest.mark.parametrize("heads", [3, 5, 6, 7, 12, 24, 40, 64])
def test_alibi_slopes_match_mpt_rule(heads):
    # MPT: N = next power of two, 2^(-k max_bias/N) for k=1..N, [odd-indexed, even-indexed][:H]
    n_up = 1 << (heads - 1).bit_length()
    s = [2.0 ** (-8.0 * k / n_up) for k in range(1, n_up + 1)]
    mpt = (s[1::2] + s[0::2])[:heads] if n_up != heads else s
    np.testing.assert_allclose(ref.alibi_slopes(heads), mpt, rtol=1e-15)


def test_longrope_magnitude_golden():
    # "m = 1.19024 for s=32, L0=4096"
    lr = {"type": "longrope", "short_factor": [1.0] * 4, "long_factor": [2.0] * 4,
          "original_max_position_embeddings": 4096, "factor": 32.0}
    assert round(ref.rope_attention_factor(lr), 5) == 1.19024
    assert ref.rope_attention_factor({**lr, "factor": 1.0}) == 1.0


def test_longrope_selection():
    lr = {"type": "longrope", "short_factor": [1.0, 2.0], "long_factor": [4.0, 8.0],
          "original_max_position_embeddings": 4096}
    base = 1e4 ** (-np.arange(2) / 2)
    short, long_ = base / [1.0, 2.0], base / [4.0, 8.0]
    np.testing.assert_allclose(ref.rope_inv_freq(1e4, 4, lr), short, rtol=1e-15)  # unknown
    np.testing.assert_allclose(ref.rope_inv_freq(1e4, 4, lr, 4096), short, rtol=1e-15)
    np.testing.assert_allclose(ref.rope_inv_freq(1e4, 4, lr, 4097), long_, rtol=1e-15)
    np.testing.assert_allclose(ref.rope_inv_freq(1e4, 4, {**lr, "select": "long"}), long_,
                               rtol=1e-15)
    np.testing.assert_allclose(ref.rope_inv_freq(1e4, 4, {**lr, "select": "short"}, 10 ** 6),
                               short, rtol=1e-15)
    # rope_tables derives seq_len = max(p) + 1
    c_short, _ = ref.rope_tables([0, 4095], 1e4, 4, lr)
    c_long, _ = ref.rope_tables([0, 4096], 1e4, 4, lr)
    assert c_short[1, 1] == pytest.approx(math.cos(4095 * short[1]), abs=1e-12)
    assert c_long[1, 1] == pytest.approx(math.cos(4096 * long_[1]), abs=1e-12)


def test_sinusoidal_fairseq_vs_marian_golden():
    # "at row 3, channel 1 is 0.7207 in fairseq and 0.8126 in Marian" (dim 16, [sin | cos])
    fairseq = ref.sinusoidal(np.arange(4), 16, layout="concat", spacing="fairseq")
    marian = ref.sinusoidal(np.arange(4), 16, layout="concat", spacing="paper")
    assert fairseq[3, 1] == pytest.approx(0.7207, abs=5e-5)
    assert marian[3, 1] == pytest.approx(0.8126, abs=5e-5)
    # fairseq: the last frequency is exactly 1/base
    assert ref.sinusoidal_frequencies(16, spacing="fairseq")[-1] == pytest.approx(1e-4, rel=1e-14)


def test_sinusoidal_layouts():
    p = np.array([0, 5, 17])
    inter = ref.sinusoidal(p, 8)
    concat = ref.sinusoidal(p, 8, layout="concat")
    np.testing.assert_array_equal(inter[:, 0::2], concat[:, :4])
    np.testing.assert_array_equal(inter[:, 1::2], concat[:, 4:])
    np.testing.assert_array_equal(inter[0], [0, 1] * 4)
    w = 10000.0 ** (-np.arange(4) * 2 / 8)
    np.testing.assert_allclose(inter[2, 0::2], np.sin(17 * w), atol=1e-15)


def test_dynamic_ntk_golden():
    # HF: seq_len <= max positions leaves inv_freq unscaled; 8192 with L_max 4096, s 2 gives
    # b' = 1e4 * 3^(r/(r-2)).
    d = {"type": "dynamic_ntk", "factor": 2.0, "max_position_embeddings": 4096}
    base = ref.rope_inv_freq(1e4, 64)
    np.testing.assert_array_equal(ref.rope_inv_freq(1e4, 64, d), base)
    np.testing.assert_array_equal(ref.rope_inv_freq(1e4, 64, d, 8), base)
    np.testing.assert_array_equal(ref.rope_inv_freq(1e4, 64, d, 4096), base)
    theta = 1e4 * 3.0 ** (64 / 62)
    np.testing.assert_allclose(ref.rope_inv_freq(1e4, 64, d, 8192),
                               theta ** (-np.arange(32) / 32), rtol=1e-14)


def test_ntk_lowest_frequency_divided_by_factor():
    f = ref.rope_inv_freq(1e4, 64, {"type": "ntk", "factor": 4.0})
    base = ref.rope_inv_freq(1e4, 64)
    assert f[0] == 1.0
    assert f[-1] == pytest.approx(base[-1] / 4.0 ** (62 / 62) * 1.0, rel=1e-13)


def test_llama3_bands():
    s = {"type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}
    base = ref.rope_inv_freq(500000.0, 128)
    f = ref.rope_inv_freq(500000.0, 128, s)
    wavelen = 2 * np.pi / base
    high = wavelen < 8192 / 4
    low = wavelen > 8192 / 1
    mid = ~high & ~low
    np.testing.assert_array_equal(f[high], base[high])
    np.testing.assert_allclose(f[low], base[low] / 8, rtol=1e-15)
    smooth = (8192 / wavelen[mid] - 1) / 3
    np.testing.assert_allclose(f[mid], (1 - smooth) * base[mid] / 8 + smooth * base[mid],
                               rtol=1e-15)
    # wavelen < 2048 <=> i < 64 ln(2048/2pi)/ln(5e5) = 28.2; > 8192 <=> i > 34.98
    assert (high.sum(), mid.sum(), low.sum()) == (29, 6, 29)
    assert np.all(np.diff(f) < 0)  # monotone after scaling


def test_linear_scaling():
    np.testing.assert_allclose(ref.rope_inv_freq(1e4, 32, {"type": "linear", "factor": 4.0}),
                               ref.rope_inv_freq(1e4, 32) / 4, rtol=1e-15)


def test_inv_freq_default_values():
    np.testing.assert_allclose(ref.rope_inv_freq(1e4, 8), [1, 0.1, 0.01, 0.001], rtol=1e-15)


# ---------------------------------------------------------------------------
# Angle reduction
# ---------------------------------------------------------------------------

def test_reduced_angle_golden_sin_1e22():
    # 1e22 is a double; sin(10^22) = -0.8522008497671888017727... needs exact reduction.
    a = ref.reduced_angles(np.array([1]), [1e22])
    assert math.sin(a[0, 0]) == pytest.approx(-0.8522008497671888, abs=2e-16)


def test_pi_to_110_digits():
    # pi to 120 digits, independent of the module's Machin evaluation.
    pi = ("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862"
          "803482534211706798214808651328230664709")
    assert abs(Fraction(ref._PI) - Fraction(pi)) < Fraction(1, 10 ** 109)
    assert abs(Fraction(ref._TWO_PI_FIXED, 2 ** ref._FRACTION_BITS) - 2 * Fraction(pi)) < Fraction(1, 2 ** 329)


def test_reduced_angles_match_fraction_arithmetic():
    # pi to 50 digits (independent of the module's Machin evaluation)
    pi = Fraction("3.14159265358979323846264338327950288419716939937510")
    for p in [1, 3, 4096, 1048575, 65536 * 7, 2 ** 31 - 1, -1048575]:
        # The last three: the fixed-point path at its smallest exponent, then angles below pi.
        for f in [1.0, 0.1, 1e4 ** (-5 / 8), 5e5 ** (-63 / 64), 1e22, 3 * 2.0 ** -330,
                  3 * 2.0 ** -331, 3e-101]:
            x = Fraction(p) * Fraction(f)
            k = round(x / (2 * pi))
            expected = float(x - k * 2 * pi)
            got = ref.reduced_angles(np.array([p]), [f])[0, 0]
            assert abs(got - expected) <= 1e-15, (p, f, got, expected)


def test_rope_tables_large_position_accuracy():
    p = 1048575
    f = ref.rope_inv_freq(500000.0, 128)
    cos, sin = ref.rope_tables([p], 500000.0, 128)
    np.testing.assert_allclose(cos[0] ** 2 + sin[0] ** 2, 1.0, rtol=1e-15)
    # Naive float64 product: error <= p f 2^-53 ~ 1e-10, so they agree to that level...
    np.testing.assert_allclose(cos[0], np.cos(p * f), atol=1e-9)
    # ...while a float32 angle is off by far more (docs/variants.md, "Numerics").
    naive32 = np.cos((np.float32(p) * f.astype(np.float32)).astype(np.float64))
    assert np.max(np.abs(naive32 - cos[0])) > 1e-3


# ---------------------------------------------------------------------------
# apply_rope
# ---------------------------------------------------------------------------

def rotate_loop(x, positions, inv, m, style, rotary_dim):
    """One vector at a time, with math.cos/math.sin (small positions only)."""
    out = np.array(x, dtype=np.float64)
    B, H, S, D = x.shape
    h = rotary_dim // 2
    for b in range(B):
        for hh in range(H):
            for s in range(S):
                p = positions[b][s] if np.ndim(positions) == 2 else positions[s]
                for i in range(h):
                    c0, c1 = (i, i + h) if style == "half" else (2 * i, 2 * i + 1)
                    a = p * inv[i]
                    x0, x1 = x[b, hh, s, c0], x[b, hh, s, c1]
                    out[b, hh, s, c0] = m * (x0 * math.cos(a) - x1 * math.sin(a))
                    out[b, hh, s, c1] = m * (x1 * math.cos(a) + x0 * math.sin(a))
    return out


@pytest.mark.parametrize("style", ["half", "interleaved"])
@pytest.mark.parametrize("rotary_dim", [4, 8, 12])
@pytest.mark.parametrize("scaling", [
    None,
    {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64},
    {"type": "longrope", "short_factor": [1.0, 1.5, 2.0, 3.0, 4.0, 5.0][:6],
     "long_factor": [2.0] * 6, "original_max_position_embeddings": 8, "factor": 8.0},
], ids=["none", "yarn", "longrope"])
def test_apply_rope_matches_loop(style, rotary_dim, scaling):
    if scaling and scaling["type"] == "longrope":
        scaling = {**scaling, "short_factor": scaling["short_factor"][: rotary_dim // 2],
                   "long_factor": scaling["long_factor"][: rotary_dim // 2]}
    x = RNG.standard_normal((2, 3, 5, 12))
    pos = np.array([[0, 1, 2, 3, 4], [7, 9, 11, 13, 15]])
    got = ref.apply_rope(x, pos, 100.0, rotary_dim, scaling, style)
    seq_len = int(pos.max()) + 1
    inv = ref.rope_inv_freq(100.0, rotary_dim, scaling, seq_len)
    m = ref.rope_attention_factor(scaling)
    np.testing.assert_allclose(got, rotate_loop(x, pos, inv, m, style, rotary_dim),
                               rtol=1e-13, atol=1e-13)
    # partial rotary: the tail passes through untouched
    np.testing.assert_array_equal(got[..., rotary_dim:], x[..., rotary_dim:])


def test_apply_rope_layouts_agree():
    x = RNG.standard_normal((2, 4, 6, 16))  # bhsd
    pos = np.arange(6) + 100
    a = ref.apply_rope(x, pos, rotary_dim=16, layout="bhsd")
    b = ref.apply_rope(np.transpose(x, (0, 2, 1, 3)), pos, rotary_dim=16, layout="bshd")
    np.testing.assert_allclose(np.transpose(b, (0, 2, 1, 3)), a, rtol=0, atol=0)


def test_apply_rope_styles_are_a_channel_permutation():
    # half on x equals interleaved on x with channels (i, i+r/2) moved to (2i, 2i+1).
    x = RNG.standard_normal((1, 2, 3, 8))
    perm = np.array([0, 4, 1, 5, 2, 6, 3, 7])  # interleaved channel -> source channel
    half = ref.apply_rope(x, [1, 2, 3], style="half")
    inter = ref.apply_rope(x[..., perm], [1, 2, 3], style="interleaved")
    np.testing.assert_allclose(inter, half[..., perm], atol=1e-15)
    assert not np.allclose(ref.apply_rope(x, [1, 2, 3], style="interleaved"), half)


def test_apply_rope_relative_position_and_norm():
    q = RNG.standard_normal((1, 1, 1, 32))
    k = RNG.standard_normal((1, 1, 1, 32))
    dots = []
    for shift in [0, 17, 100000]:
        rq = ref.apply_rope(q, [5 + shift])
        rk = ref.apply_rope(k, [2 + shift])
        dots.append(float(np.sum(rq * rk)))
        assert np.linalg.norm(rq) == pytest.approx(np.linalg.norm(q), rel=1e-14)
    assert dots[0] == pytest.approx(dots[1], rel=1e-12)
    assert dots[0] == pytest.approx(dots[2], rel=1e-9)


def test_apply_rope_position_zero_scales_by_magnitude():
    x = RNG.standard_normal((1, 2, 3, 8))
    y = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
    out = ref.apply_rope(x, [0, 0, 0], rotary_dim=6, scaling=y)
    m = 0.1 * math.log(4) + 1
    np.testing.assert_allclose(out[..., :6], m * x[..., :6], rtol=1e-15)
    np.testing.assert_array_equal(out[..., 6:], x[..., 6:])


# ---------------------------------------------------------------------------
# learned, alibi_bias
# ---------------------------------------------------------------------------

def test_learned_lookup_and_errors():
    table = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(ref.learned(table, [3, 0]), [[9, 10, 11], [0, 1, 2]])
    np.testing.assert_array_equal(ref.learned(table, [[1], [2]]).shape, (2, 1, 3))
    with pytest.raises(IndexError, match=r"position 4 \(entry 1\).*4 rows"):
        ref.learned(table, [0, 4])
    with pytest.raises(IndexError, match="position -1"):
        ref.learned(table, [-1])


def test_alibi_bias_forms():
    slopes = ref.alibi_slopes(2)
    q, k = np.array([2, 3]), np.array([0, 1, 2, 3])
    causal = ref.alibi_bias(slopes, q, k, "causal")
    sym = ref.alibi_bias(slopes, q, k, "symmetric")
    assert causal.shape == (2, 2, 4)
    np.testing.assert_array_equal(causal[0, 0], [-2 / 16, -1 / 16, 0, -np.inf])
    np.testing.assert_array_equal(sym[1, 0], [-2 / 256, -1 / 256, 0, -1 / 256])
    batched = ref.alibi_bias(slopes, np.array([[2, 3], [5, 6]]), k, "symmetric")
    assert batched.shape == (2, 2, 2, 4)
    np.testing.assert_array_equal(batched[0], sym)


# ---------------------------------------------------------------------------
# attention
# ---------------------------------------------------------------------------

def attention_loop(q, k, v, mask, qpos, kpos, scale, causal, window, rope, alibi):
    B, Hq, Sq, D = q.shape
    Hkv, Skv = k.shape[1], k.shape[2]
    if rope is not None:
        q = ref.apply_rope(q, qpos, **rope)
        k = ref.apply_rope(k, kpos, **rope)
    qp = np.broadcast_to(qpos, (B, Sq))
    kp = np.broadcast_to(kpos, (B, Skv))
    slopes = ref.alibi_slopes(Hq, alibi) if alibi is not None else None
    out = np.zeros((B, Hq, Sq, v.shape[-1]))
    for b in range(B):
        for h in range(Hq):
            g = h // (Hq // Hkv)
            for i in range(Sq):
                logits = []
                for j in range(Skv):
                    d = qp[b, i] - kp[b, j]
                    if (causal and d < 0) or (window is not None and
                                              (d >= window or (not causal and -d >= window))):
                        logits.append(-math.inf)
                        continue
                    s = scale * float(np.dot(q[b, h, i], k[b, g, j]))
                    if slopes is not None:
                        s -= slopes[h] * d
                    if mask is not None:
                        s += mask[min(b, mask.shape[0] - 1), min(h, mask.shape[1] - 1), i, j]
                    logits.append(s)
                mx = max(logits)
                if mx == -math.inf:
                    continue
                w = [math.exp(x - mx) for x in logits]
                tot = sum(w)
                out[b, h, i] = sum(wj * v[b, g, j] for wj, j in zip(w, range(Skv))) / tot
    return out


ATTN_CASES = [
    dict(),
    dict(causal=True),
    dict(causal=True, window=3),
    dict(window=2),
    dict(alibi=8.0, causal=True),
    dict(alibi=4.0),
    dict(rope={"theta": 100.0, "rotary_dim": 4, "style": "interleaved"}, causal=True),
    dict(rope={"theta": 1e4, "rotary_dim": 8,
               "scaling": {"type": "yarn", "factor": 4.0,
                           "original_max_position_embeddings": 4}}),
    dict(q_positions=np.array([[3, 9, 10], [0, 1, 2]]), k_positions=np.arange(6) * 2,
         causal=True, scale=0.3),
    dict(mask=True, causal=True),
]


@pytest.mark.parametrize("kw", ATTN_CASES, ids=[",".join(sorted(c)) or "plain" for c in ATTN_CASES])
def test_attention_matches_loop(kw):
    kw = dict(kw)
    B, Hq, Hkv, Sq, Skv, D, Dv = 2, 4, 2, 3, 6, 8, 5
    q = RNG.standard_normal((B, Hq, Sq, D))
    k = RNG.standard_normal((B, Hkv, Skv, D))
    v = RNG.standard_normal((B, Hkv, Skv, Dv))
    if kw.get("mask") is True:
        mask = RNG.standard_normal((1, Hq, Sq, Skv))
        mask[0, 1, 2, :] = -np.inf  # a fully masked row through the additive mask
        kw["mask"] = mask
    got = ref.attention(q, k, v, **kw)
    qpos = kw.get("q_positions", np.arange(Sq) + Skv - Sq)
    kpos = kw.get("k_positions", np.arange(Skv))
    expected = attention_loop(q, k, v, kw.get("mask"), qpos, kpos,
                              kw.get("scale", 1 / math.sqrt(D)), kw.get("causal", False),
                              kw.get("window"), kw.get("rope"), kw.get("alibi"))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)
    assert np.all(np.isfinite(got))


def test_attention_fully_masked_rows_are_zero():
    q = RNG.standard_normal((1, 2, 3, 4))
    k = RNG.standard_normal((1, 1, 3, 4))
    v = RNG.standard_normal((1, 1, 3, 4))
    # query positions before every key under causal masking
    out = ref.attention(q, k, v, q_positions=[0, 5, 6], k_positions=[1, 2, 3], causal=True)
    np.testing.assert_array_equal(out[:, :, 0], 0.0)
    assert np.all(out[:, :, 1:] != 0.0)


def test_attention_gqa_equals_repeated_heads():
    q = RNG.standard_normal((1, 6, 4, 8))
    k = RNG.standard_normal((1, 2, 4, 8))
    v = RNG.standard_normal((1, 2, 4, 8))
    a = ref.attention(q, k, v, causal=True)
    b = ref.attention(q, np.repeat(k, 3, axis=1), np.repeat(v, 3, axis=1), causal=True)
    np.testing.assert_allclose(a, b, rtol=0, atol=0)


def test_attention_default_positions_are_suffix():
    # Sq=1 decode step against 5 keys with causal: the query sees every key.
    q = RNG.standard_normal((1, 1, 1, 4))
    k = RNG.standard_normal((1, 1, 5, 4))
    v = RNG.standard_normal((1, 1, 5, 4))
    np.testing.assert_allclose(ref.attention(q, k, v, causal=True), ref.attention(q, k, v),
                               rtol=1e-15)


# ---------------------------------------------------------------------------
# pe.ir rendering
# ---------------------------------------------------------------------------

def test_ir_rope_attr():
    assert ir.rope_attr(500000.0, 16, scaling={
        "type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}) == (
        "#pe.rope<theta = 500000.0, rotary_dim = 16, style = half, scaling = "
        "#pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>")
    assert ir.rope_attr(rotary_dim=8, style="interleaved") == (
        "#pe.rope<theta = 10000.0, rotary_dim = 8, style = interleaved>")
    assert ir.scaling_attr({"type": "yarn", "factor": 32, "original_max_position_embeddings": 4096,
                            "truncate": False, "mscale": None}) == (
        "#pe.yarn<factor = 32.0, original_max_position_embeddings = 4096, truncate = false>")
    assert ir.scaling_attr({"type": "longrope", "short_factor": [1, 1.5], "long_factor": [2, 3e-7],
                            "original_max_position_embeddings": 4096, "select": "long"}) == (
        "#pe.longrope<short_factor = [1.0, 1.5], long_factor = [2.0, 3.0e-07], "
        "original_max_position_embeddings = 4096, select = long>")
    assert ir.format_f64(1e22) == "1.0e+22"
    with pytest.raises(ValueError):
        ir.scaling_attr({"type": "yarn", "factr": 2})
