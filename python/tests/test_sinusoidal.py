"""pe.sinusoidal's variants: odd dimensions (a zero channel or an extra sin frequency),
`[cos | sin]`, frequency shifts, angle scales, fairseq's pad rows and float timesteps.

Each variant is compiled for the CPU and with the GPU schedule run on the CPU
(`--target=gpu-on-cpu`) and checked against the float64 reference; the reference is checked
against upstream code: transformers' Marian, DistilBERT and M2M100 tables, and (under the
extras) diffusers' `get_timestep_embedding`, whose formula ggml's `timestep_embedding` shares
(`freq_shift(0)`, `cos_first`, a zero channel for odd dimensions).

Tolerances: f32 within 1e-6 absolute of the float64 reference (the angles are reduced
exactly, then sin and cos of an f32 angle); f16 and bf16 within 1 ulp of the rounded
reference. Upstream tables computed in float32 differ by their rounding of the frequency
and the angle: within 1e-6 + 2^-21 |angle|.
"""

from __future__ import annotations

import numpy as np
import pytest

from pe import reference, runner
from pe.ir import sinusoidal_attrs, tensor_type
from pe.testing import round_to, spacing, ulp_distance

# (dim, attributes, positions): positions "int" mixes small, large, negative positions
# and the pad row's; "f32"/"f64" are fractional timesteps.
VARIANTS = {
    "marian-odd": (7, dict(layout="concat", odd="sin"), "int"),
    "distilbert-odd": (9, dict(odd="sin"), "int"),
    "fairseq-odd-pad": (9, dict(layout="concat", spacing="fairseq", odd="zero",
                                padding_idx=1), "int"),
    "interleaved-cos-first-odd-sin": (11, dict(cos_first=True, odd="sin"), "int"),
    "concat-cos-first-odd-sin": (11, dict(layout="concat", cos_first=True, odd="sin"), "int"),
    "shifted-base500": (16, dict(base=500.0, freq_shift=0.5), "int"),
    "dim1-sin": (1, dict(odd="sin"), "int"),
    "dim1-zero": (1, dict(odd="zero"), "int"),
    "timestep-sd": (32, dict(layout="concat", freq_shift=0.0, cos_first=True), "f32"),
    "timestep-ddpm-odd": (33, dict(layout="concat", freq_shift=1.0, odd="zero"), "f32"),
    "timestep-flux-scale": (16, dict(layout="concat", freq_shift=0.0, scale=1000.0,
                                     cos_first=True), "f32"),
    "timestep-f64": (12, dict(layout="concat", freq_shift=1.0, base=1000.0), "f64"),
}
LOWERINGS = {"cpu": (), "gpu-on-cpu": ("--target=gpu-on-cpu", "--gpu-block-size=32",
                                       "--gpu-max-blocks=3")}
DTYPES = ("f32", "bf16", "f16")
ROWS = 24


def _positions(kind: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "int":
        p = rng.integers(-3000, 3000, ROWS)
        p[:5] = [0, 1, 2 ** 20, -2 ** 20, 1]
        return p.astype(np.int64)
    t = rng.uniform(0.0, 1000.0, ROWS)
    t[:4] = [0.0, 999.5, 0.25, 1.0 / 3.0]
    return t.astype(np.float32 if kind == "f32" else np.float64)


def _function(name: str, dim: int, attrs: dict, kind: str, dtype: str) -> str:
    pos = tensor_type([ROWS], "i64" if kind == "int" else kind)
    out = tensor_type([ROWS, dim], dtype)
    return (f"func.func @{name}(%p: {pos}) -> {out} {{\n"
            f"  %e = pe.sinusoidal %p{sinusoidal_attrs(**attrs)} : {pos} -> {out}\n"
            f"  return %e : {out}\n}}")


def _name(variant: str, dtype: str) -> str:
    return f"sin_{variant.replace('-', '_')}_{dtype}"


@pytest.fixture(scope="module", params=sorted(LOWERINGS))
def module(request):
    funcs = [_function(_name(v, dt), dim, attrs, kind, dt)
             for v, (dim, attrs, kind) in VARIANTS.items() for dt in DTYPES]
    return runner.compile("\n".join(funcs), LOWERINGS[request.param], timeout=600)


def _check(got, want, dtype: str, what: str) -> None:
    got = np.asarray(got, dtype=np.float64)
    err = np.abs(got - want)
    if dtype == "f32":
        assert err.max() <= 1e-6, f"{what}: max abs error {err.max():.3e}"
        return
    expected = round_to(want, dtype)
    bad = (ulp_distance(got, expected, dtype) > 1) & (err > spacing(expected, dtype))
    assert not bad.any(), f"{what}: {int(bad.sum())} elements beyond 1 {dtype} ulp"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_compiled(module, variant, dtype):
    dim, attrs, kind = VARIANTS[variant]
    p = _positions(kind, seed=len(variant))
    (got,) = module.call(_name(variant, dtype), p)
    want = reference.sinusoidal(p, dim, **attrs)
    _check(got, want, dtype, f"{variant} {dtype}")
    if "padding_idx" in attrs:
        assert np.all(np.asarray(got)[p == attrs["padding_idx"]] == 0.0)


def test_channels_of_each_layout():
    """The channel maps, written out: sin k / cos k at these channels."""
    cases = {
        (7, "concat", False, "sin"): ([0, 1, 2, 3], [4, 5, 6]),
        (7, "interleaved", False, "sin"): ([0, 2, 4, 6], [1, 3, 5]),
        (7, "interleaved", True, "sin"): ([1, 3, 5, 6], [0, 2, 4]),
        (7, "concat", True, "sin"): ([3, 4, 5, 6], [0, 1, 2]),
        (7, "concat", True, "zero"): ([3, 4, 5], [0, 1, 2]),
        (8, "concat", True, None): ([4, 5, 6, 7], [0, 1, 2, 3]),
    }
    for (dim, layout, cos_first, odd), (sin, cos) in cases.items():
        got_sin, got_cos = reference.sinusoidal_channels(dim, layout, cos_first, odd)
        assert got_sin.tolist() == sin and got_cos.tolist() == cos, (dim, layout, cos_first, odd)


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError, match="odd"):
        reference.sinusoidal([0, 1], 7)
    with pytest.raises(ValueError, match="odd"):
        reference.sinusoidal([0, 1], 8, odd="zero")
    with pytest.raises(ValueError, match="freq_shift=1"):
        reference.sinusoidal([0, 1], 8, spacing="fairseq", freq_shift=0.0)
    with pytest.raises(ValueError, match="shift"):
        reference.sinusoidal([0, 1], 8, freq_shift=4.0)
    with pytest.raises(TypeError, match="padding_idx"):
        reference.sinusoidal(np.array([0.5, 1.0]), 8, padding_idx=1)


# ---------------------------------------------------------------------------
# Upstream code
# ---------------------------------------------------------------------------

def _upstream_tolerance(positions, dim, **attrs) -> np.ndarray:
    w = reference.sinusoidal_frequencies(dim, **{k: attrs[k] for k in attrs
                                                 if k in ("base", "spacing", "freq_shift",
                                                          "scale", "odd")})
    return 1e-6 + 2.0 ** -21 * np.abs(np.asarray(positions, dtype=np.float64)).max() * w.max()


@pytest.mark.parametrize("dim", [6, 7, 64, 65])
def test_marian_table(dim):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding
    n = 40
    want = MarianSinusoidalPositionalEmbedding(n, dim).create_weight().double().numpy()
    attrs = dict(layout="concat", odd="sin" if dim % 2 else None)
    got = reference.sinusoidal(np.arange(n), dim, **attrs)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)  # rounded once to f32
    del torch


@pytest.mark.parametrize("dim", [6, 9])
def test_distilbert_table(dim):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.distilbert.modeling_distilbert import _create_sinusoidal_embeddings
    n = 40
    out = torch.empty(n, dim)
    _create_sinusoidal_embeddings(n, dim, out)
    got = reference.sinusoidal(np.arange(n), dim, odd="sin" if dim % 2 else None)
    np.testing.assert_allclose(got, out.double().numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("dim", [8, 9, 64])
def test_m2m100_table_with_pad_row(dim):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding
    n, pad = 50, 1
    want = M2M100SinusoidalPositionalEmbedding.get_embedding(n, dim, pad).double().numpy()
    attrs = dict(layout="concat", spacing="fairseq", padding_idx=pad,
                 odd="zero" if dim % 2 else None)
    got = reference.sinusoidal(np.arange(n), dim, **attrs)
    np.testing.assert_allclose(got, want, rtol=0, atol=_upstream_tolerance(np.arange(n), dim,
                                                                           **attrs))
    assert np.all(got[pad] == 0.0)


DIFFUSERS = {
    # (dim, flip_sin_to_cos, downscale_freq_shift, scale, max_period)
    "sd-unet": (320, True, 0.0, 1.0, 10000),
    "ddpm": (128, False, 1.0, 1.0, 10000),
    "odd-dim": (33, True, 0.0, 1.0, 10000),
    "flux-guidance": (256, True, 0.0, 1000.0, 10000),
    "shift-half": (64, False, 0.5, 1.0, 1000),
}


@pytest.mark.parametrize("case", sorted(DIFFUSERS))
def test_diffusers_timestep_embedding(case):
    torch = pytest.importorskip("torch")
    embeddings = pytest.importorskip("diffusers.models.embeddings")
    dim, flip, shift, scale, period = DIFFUSERS[case]
    t = np.array([0.0, 1.0, 0.5, 999.0, 250.25, 0.001], dtype=np.float32)
    if scale != 1.0:
        t = t / 1000.0
    want = embeddings.get_timestep_embedding(torch.from_numpy(t), dim, flip_sin_to_cos=flip,
                                             downscale_freq_shift=shift, scale=scale,
                                             max_period=period).double().numpy()
    attrs = dict(base=float(period), layout="concat", freq_shift=shift, scale=scale,
                 cos_first=flip, odd="zero" if dim % 2 else None)
    got = reference.sinusoidal(t, dim, **attrs)
    np.testing.assert_allclose(got, want, rtol=0, atol=_upstream_tolerance(t, dim, **attrs))
