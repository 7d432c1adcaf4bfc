"""NaN, inf and extreme positions: every lowering of pe.attention agrees with
the float64 reference.

The semantics (docs/dialect.md, "Numerics"): IEEE arithmetic on the visible
keys, so a NaN score (from Q, K, the mask or the bias) or a +inf score makes
its row NaN and an inf value makes its channel inf; a key of weight 0 (every
masked key) contributes nothing, whatever its key, value or mask entry holds;
a row without a visible key is 0. Distances between positions are exact for
any int64 positions, near INT64_MIN and INT64_MAX included.

Each case runs on the tiled prefill kernel (small and default tiles, 1 and 2
threads), the decode kernel (static single query, with key splitting on 2
threads) and the reference lowering (--tile-attention=false). Finite outputs
are compared with the tolerance of test_tile_attention.py; non-finite ones
must match exactly (NaN where the reference is NaN, the same infinities).
"""

import numpy as np
import pytest

from pe import reference, runner
from pe.testing import BF16_KERNELS, bf16_kernel_missing

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
REL = {"f32": 1e-5, "bf16": 1.6e-2}

# (flags, static single query)
LOWERINGS = {
    "tiled-small-1": (["--attention-rows=16", "--attention-block-keys=48", "--num-threads=1"], False),
    "tiled-small-2": (["--attention-rows=16", "--attention-block-keys=48", "--num-threads=2"], False),
    "tiled-default": (["--num-threads=1"], False),
    "decode-split": (["--num-threads=2"], True),
    "decode": (["--num-threads=1"], True),
    "reference": (["--tile-attention=false"], False),
}


def _ir(dtype, hq, hkv, sq, skv, d, *, static, causal=False, window=None, alibi=None,
        mask=False, positions=False):
    sqd, skd = (sq, skv) if static else ("?", "?")
    q = f"tensor<1x{hq}x{sqd}x{d}x{dtype}>"
    k = f"tensor<1x{hkv}x{skd}x{d}x{dtype}>"
    args, attrs = [f"%q: {q}", f"%k: {k}", f"%v: {k}"], ""
    if mask:
        m = f"tensor<1x{hq}x{sqd}x{skd}xf32>"
        args.append(f"%m: {m}")
        attrs += f" mask(%m : {m})"
    if positions:
        pq, pk = f"tensor<{sqd}xi64>", f"tensor<{skd}xi64>"
        args += [f"%qp: {pq}", f"%kp: {pk}"]
        attrs += f" q_positions(%qp : {pq}) k_positions(%kp : {pk})"
    if causal:
        attrs += " causal"
    if window:
        attrs += f" window({window})"
    if alibi:
        attrs += f" alibi({alibi})"
    return f"""
func.func @attn({", ".join(args)}) -> {q} {{
  %o = pe.attention %q, %k, %v{attrs} : {q}, {k}, {k} -> {q}
  return %o : {q}
}}"""


def assert_matches(got, want, dtype, what):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape, what
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    assert (nan_got == nan_want).all(), (
        f"{what}: NaN at {np.argwhere(nan_got != nan_want)[:4].tolist()} differs "
        f"(got {int(nan_got.sum())} NaN, reference {int(nan_want.sum())})")
    inf = np.isinf(want) | np.isinf(got)
    assert (got[inf] == want[inf]).all(), f"{what}: infinities differ"
    finite = ~(nan_want | inf)
    scale = max(1.0, float(np.abs(want[finite]).max(initial=0.0)))
    err = float(np.abs(got[finite] - want[finite]).max(initial=0.0))
    assert err <= REL[dtype] * scale, f"{what}: max error {err:.3g}"


def _base(rng, hq, hkv, sq, skv, d, dtype="f32"):
    q = rng.standard_normal((1, hq, sq, d)).astype(np.float32)
    k = rng.standard_normal((1, hkv, skv, d)).astype(np.float32)
    v = rng.standard_normal((1, hkv, skv, d)).astype(np.float32)
    if dtype == "bf16":
        q, k, v = (runner.from_bf16_bits(runner.to_bf16_bits(x)) for x in (q, k, v))
    return q, k, v


# Prefill scenarios: (description, hq, hkv, sq, skv, attention attributes, poison).
# `poison(q, k, v, mask)` writes the non-finite values in place.
def _poison_q(q, k, v, m):
    q[0, 1, 5, :] = np.nan  # one row


def _poison_k(q, k, v, m):
    k[0, 0, 7, 3] = np.nan  # rows at or after key 7 of heads 0, 1 (causal)


def _poison_v_nan(q, k, v, m):
    v[0, 1, 9, 2] = np.nan  # channel 2 of rows >= 9 of heads 2, 3; masked for rows < 9


def _poison_v_inf(q, k, v, m):
    v[0, 0, 11, 4] = np.inf
    v[0, 1, 30, 6] = -np.inf


def _poison_hidden_by_mask(q, k, v, m):
    # Keys hidden only by -inf mask entries, with NaN or inf in their key or value:
    # the rows that do not see them stay finite.
    m[0, :, :, 5] = -np.inf
    k[0, 0, 5, :] = np.nan
    v[0, 1, 5, :] = np.inf
    m[0, 2, 12, 13] = -np.inf
    k[0, 1, 13, 0] = np.inf


def _poison_mask(q, k, v, m):
    m[0, 0, 20, 3] = np.inf       # a +inf score: the row is NaN
    m[0, 2, 30, 30] = np.nan      # a NaN score: the row is NaN
    m[0, 3, 10, :] = -np.inf      # every key masked: the row is 0
    m[0, 1, 25, 26:] = np.nan     # NaN only on keys masked by causal: no effect


PREFILL = {
    "nan-query": (4, 2, 40, 40, dict(causal=True), _poison_q),
    "nan-key": (4, 2, 40, 40, dict(causal=True), _poison_k),
    "nan-value-masked-for-early-rows": (4, 2, 40, 40, dict(causal=True), _poison_v_nan),
    "inf-values": (4, 2, 40, 40, dict(causal=True), _poison_v_inf),
    "mask-inf-nan": (4, 2, 40, 40, dict(causal=True, mask=True), _poison_mask),
    "hidden-by-mask": (4, 2, 40, 40, dict(mask=True), _poison_hidden_by_mask),
    "alibi-nan-key": (4, 2, 40, 40, dict(causal=True, alibi=8.0), _poison_k),
    "alibi-nan-value": (4, 4, 40, 40, dict(causal=True, alibi=8.0), _poison_v_nan),
    "window-nan-value": (4, 2, 40, 40, dict(causal=True, window=4), _poison_v_nan),
}


@pytest.mark.parametrize("lowering", [l for l in LOWERINGS if not LOWERINGS[l][1]])
@pytest.mark.parametrize("name", sorted(PREFILL))
def test_prefill_nonfinite(name, lowering):
    hq, hkv, sq, skv, attrs, poison = PREFILL[name]
    flags, _ = LOWERINGS[lowering]
    rng = np.random.default_rng(7)
    q, k, v = _base(rng, hq, hkv, sq, skv, 32)
    m = rng.standard_normal((1, hq, sq, skv)).astype(np.float32) if attrs.get("mask") else None
    poison(q, k, v, m)
    mod = runner.compile(_ir("f32", hq, hkv, sq, skv, 32, static=False, **attrs),
                         extra_args=flags)
    args = [q, k, v] + ([m] if m is not None else [])
    (got,) = mod.call("attn", *args)
    want = reference.attention(q, k, v, mask=m, causal=attrs.get("causal", False),
                               window=attrs.get("window"), alibi=attrs.get("alibi"))
    if name == "hidden-by-mask":
        # Heads 0 and 1 read KV head 0, whose NaN key 5 every row masks.
        assert np.isfinite(want[0, :2]).all()
    else:
        assert np.isnan(want).any() or np.isinf(want).any() or name == "mask-inf-nan"
    assert_matches(got, want, "f32", f"{name} on {lowering}")


@pytest.mark.parametrize("kernel", sorted(BF16_KERNELS))
@pytest.mark.parametrize("name", ["nan-query", "nan-key", "nan-value-masked-for-early-rows",
                                  "inf-values", "hidden-by-mask", "mask-inf-nan",
                                  "window-nan-value", "alibi-nan-value"])
def test_prefill_nonfinite_bf16(name, kernel):
    """bf16 prefill with f32 FMAs, on vdpbf16ps dot products and on AMX tiles,
    whose masked keys with NaN/inf values take the path that skips weight-0
    keys."""
    if bf16_kernel_missing(kernel):
        pytest.skip(bf16_kernel_missing(kernel))
    hq, hkv, sq, skv, attrs, poison = PREFILL[name]
    rng = np.random.default_rng(8)
    q, k, v = _base(rng, hq, hkv, sq, skv, 32, "bf16")
    m = rng.standard_normal((1, hq, sq, skv)).astype(np.float32) if attrs.get("mask") else None
    poison(q, k, v, m)
    mod = runner.compile(_ir("bf16", hq, hkv, sq, skv, 32, static=False, **attrs),
                         extra_args=["--attention-rows=16", "--attention-block-keys=48",
                                     *BF16_KERNELS[kernel]])
    (got,) = mod.call("attn", q, k, v, *([m] if m is not None else []))
    want = reference.attention(q, k, v, mask=m, causal=attrs.get("causal", False),
                               window=attrs.get("window"), alibi=attrs.get("alibi"))
    assert_matches(got, want, "bf16", f"{name} ({kernel})")


# Decode: one query at the last position against 40 keys, a window of 10
# hides keys 0..29.
DECODE = {
    "nan-query": lambda q, k, v: q.__setitem__((0, 1, 0, 3), np.nan),
    "nan-key-visible": lambda q, k, v: k.__setitem__((0, 0, 35, 1), np.nan),
    "nan-key-hidden": lambda q, k, v: k.__setitem__((0, 0, 5, 1), np.nan),
    "nan-value-hidden": lambda q, k, v: v.__setitem__((0, 1, 5, 2), np.nan),
    "inf-value-visible": lambda q, k, v: v.__setitem__((0, 1, 38, 2), np.inf),
}


@pytest.mark.parametrize("lowering", ["decode", "decode-split", "reference"])
@pytest.mark.parametrize("name", sorted(DECODE))
def test_decode_nonfinite(name, lowering):
    flags, static = LOWERINGS[lowering]
    rng = np.random.default_rng(9)
    hq, hkv, sq, skv, d = 4, 2, 1, 40, 32
    q, k, v = _base(rng, hq, hkv, sq, skv, d)
    DECODE[name](q, k, v)
    mod = runner.compile(_ir("f32", hq, hkv, sq, skv, d, static=True, causal=True, window=10),
                         extra_args=flags)
    (got,) = mod.call("attn", q, k, v)
    want = reference.attention(q, k, v, causal=True, window=10)
    if name.endswith("hidden"):
        assert np.isfinite(want).all()
    assert_matches(got, want, "f32", f"{name} on {lowering}")


@pytest.mark.parametrize("kernel", ["dot", "fma"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(DECODE))
def test_decode_nonfinite_bf16(name, threads, kernel):
    """bf16 decode: with dot products, tiles without masked keys take the pair
    products, the window's tiles the FMAs that skip weight-0 keys."""
    if bf16_kernel_missing(kernel):
        pytest.skip(bf16_kernel_missing(kernel))
    rng = np.random.default_rng(9)
    hq, hkv, sq, skv, d = 4, 2, 1, 120, 32
    q, k, v = _base(rng, hq, hkv, sq, skv, d, "bf16")
    DECODE[name](q, k, v)
    mod = runner.compile(_ir("bf16", hq, hkv, sq, skv, d, static=True, causal=True, window=10),
                         extra_args=[f"--num-threads={threads}", "--attention-block-keys=48",
                                     *BF16_KERNELS[kernel]])
    (got,) = mod.call("attn", q, k, v)
    want = reference.attention(q, k, v, causal=True, window=10)
    assert_matches(got, want, "bf16", f"{name} ({kernel}, {threads} threads)")


def _extreme_positions():
    """Queries near INT64_MAX and keys spread from INT64_MIN to INT64_MAX: every
    difference q - k overflows int64 for some pair."""
    qp = np.array([INT64_MAX - 40 + 3 * i for i in range(12)] + [INT64_MIN + 5, 0, -1, INT64_MAX],
                  dtype=np.int64)
    kp = np.array([INT64_MIN, INT64_MIN + 1, INT64_MIN + 7, -3, 0, 5, 2**62, INT64_MAX - 100]
                  + [INT64_MAX - 45 + 2 * i for i in range(20)] + [INT64_MAX], dtype=np.int64)
    return qp, kp


@pytest.mark.parametrize("lowering", [l for l in LOWERINGS if not LOWERINGS[l][1]])
@pytest.mark.parametrize("attrs", [dict(causal=True), dict(window=9), dict(causal=True, window=9),
                                   dict(causal=True, alibi=8.0), dict(window=2**62)],
                         ids=["causal", "window", "causal-window", "alibi", "window-2^62"])
def test_extreme_positions(attrs, lowering):
    """Masks and ALiBi distances near INT64_MIN / INT64_MAX: no wrap-around."""
    flags, _ = LOWERINGS[lowering]
    qp, kp = _extreme_positions()
    rng = np.random.default_rng(10)
    q, k, v = _base(rng, 4, 2, len(qp), len(kp), 32)
    if attrs.get("alibi"):
        # ALiBi biases at distances near 2^63 are about -2^63 slope: only the
        # nearest keys carry weight; scale the scores so that they still count.
        q *= 1e18
    mod = runner.compile(_ir("f32", 4, 2, len(qp), len(kp), 32, static=False,
                             positions=True, **attrs), extra_args=flags)
    (got,) = mod.call("attn", q, k, v, qp, kp)
    want = reference.attention(q, k, v, q_positions=qp, k_positions=kp,
                               causal=attrs.get("causal", False), window=attrs.get("window"),
                               alibi=attrs.get("alibi"))
    assert_matches(got, want, "f32", f"{attrs} on {lowering}")
