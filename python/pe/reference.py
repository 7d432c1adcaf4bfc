"""Float64 reference implementations of the positional encodings of the `pe` dialect.

This module is the oracle that compiled code is checked against. It is written from the
formulas in ``docs/variants.md`` and the op/attribute descriptions in ``PEOps.td`` /
``PEAttrs.td``; it deliberately shares no code with the C++ positional math in ``lib/Math``.
Where upstream implementations differ, it follows Hugging Face transformers.

Conventions
-----------
* ``theta`` is the RoPE base ``b``, ``rotary_dim`` is ``r`` (even), pair index ``i < r/2``.
* A RoPE scaling is ``None`` or a dict whose ``"type"`` is one of ``linear``, ``ntk``,
  ``dynamic_ntk``, ``yarn``, ``llama3``, ``longrope``, with the parameter names of the
  ``#pe.<type>`` attributes (``factor``, ``original_max_position_embeddings``, ``beta_fast``,
  ``beta_slow``, ``mscale``, ``mscale_all_dim``, ``attention_factor``, ``truncate``,
  ``low_freq_factor``, ``high_freq_factor``, ``max_position_embeddings``, ``short_factor``,
  ``long_factor``, ``select``). Missing optional parameters take the attribute defaults.
* ``seq_len``: the sequence length of the call, ``max(positions) + 1``. ``None`` means unknown:
  ``dynamic_ntk`` is then unscaled and ``longrope`` with ``select="dynamic"`` uses the short
  factors.

Accuracy
--------
Frequencies are evaluated in float64 (``numpy.power``/``log``/``exp``), so each one carries a
relative error of a few float64 ulps against the exact real value.

Angles ``p * f`` are *not* formed in floating point: the integer position ``p`` and the float64
frequency ``f`` are multiplied exactly in binary fixed point with 330 fraction bits (the exact
value of the float64 ``f`` is used; an ``|f|`` below 2**-277 makes an angle below ``pi``, taken
as it is), the product is reduced modulo ``2*pi`` using ``pi`` to 110 digits (computed here with
Machin's formula), and only the reduced angle in ``[-pi, pi]`` is rounded to float64 (absolute
error <= 2**-52) before ``numpy.cos``/``numpy.sin`` (<= 1 ulp).
So a table entry is within about 5e-16 of ``m * cos(p * f)`` for *any* int64 position, where
``f`` is the float64 frequency. Against the exact mathematical value the remaining error is
``m * |p| * |f - f_exact|``, i.e. ``|p| * f * (a few) * 2**-53`` (about 1e-10 at p = 2**20 for
f = 1), which is far below one float32 ulp except for entries whose value is itself close to 0.
"""

from __future__ import annotations

import decimal
import math
from typing import Mapping, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "SCALING_TYPES",
    "get_mscale",
    "yarn_correction_range",
    "rope_inv_freq",
    "rope_attention_factor",
    "reduced_angles",
    "rope_tables",
    "apply_rope",
    "sinusoidal_frequencies",
    "sinusoidal_channels",
    "sinusoidal",
    "learned",
    "alibi_slopes",
    "alibi_bias",
    "attention",
]

SCALING_TYPES = ("linear", "ntk", "dynamic_ntk", "yarn", "llama3", "longrope", "proportional")

# ---------------------------------------------------------------------------
# Exact angle reduction
# ---------------------------------------------------------------------------

_DEC = decimal.Context(prec=110, rounding=decimal.ROUND_HALF_EVEN)


def _machin_pi(ctx: decimal.Context) -> decimal.Decimal:
    """pi = 16 atan(1/5) - 4 atan(1/239), summed in `ctx` with 10 guard digits."""
    work = decimal.Context(prec=ctx.prec + 10)

    def atan_inv(n: int) -> decimal.Decimal:
        x = work.divide(decimal.Decimal(1), decimal.Decimal(n))
        x2 = work.multiply(x, x)
        term, total, k = x, x, 1
        eps = decimal.Decimal(10) ** (-(work.prec + 2))
        while abs(term) > eps:
            # work.minus, not unary minus: that rounds to the thread's context (28 digits).
            term = work.minus(work.multiply(term, x2))
            k += 2
            total = work.add(total, work.divide(term, decimal.Decimal(k)))
        return total

    pi = work.subtract(work.multiply(16, atan_inv(5)), work.multiply(4, atan_inv(239)))
    return ctx.plus(pi)


_PI = _machin_pi(_DEC)
_TWO_PI = _DEC.multiply(2, _PI)
assert float(_PI) == math.pi


# 2*pi in binary fixed point, _FRACTION_BITS bits after the point (the Decimal value above
# carries about 365 bits): x = p * f is exact in this form whenever f = m / 2^e with
# e <= _FRACTION_BITS, and integer arithmetic reduces it about four times faster than Decimal.
_FRACTION_BITS = 330
_TWO_PI_FIXED = int(decimal.Context(prec=220).multiply(_TWO_PI, 1 << _FRACTION_BITS)
                    .to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def _reduce_one(p, f: float) -> float:
    """p*f reduced to [-pi, pi], from the exact product, rounded once to float64.

    ``p`` is an int (a position) or a float (a timestep); both are exact rationals.
    """
    if p == 0 or f == 0.0:
        return 0.0
    if isinstance(p, float) and not math.isfinite(p):
        return math.nan
    pm, pd = (p, 1) if isinstance(p, int) else p.as_integer_ratio()
    m, d = f.as_integer_ratio()  # f = m / d, d = 2^e
    num, den = pm * m, pd * d
    e = den.bit_length() - 1
    if e > _FRACTION_BITS:
        if num.bit_length() <= e:
            return num / den  # |p f| < 1 < pi: the angle itself (int / int rounds once)
        raise ValueError(f"cannot reduce {p!r} * {f!r} exactly")
    x = num << (_FRACTION_BITS - e)  # p * f * 2^F, exact
    t = _TWO_PI_FIXED
    k = (2 * x + t) // (2 * t)  # nearest integer to x / (2 pi) (never a tie: pi is irrational)
    return math.ldexp(float(x - k * t), -_FRACTION_BITS)  # int -> float rounds once


def reduced_angles(positions, freqs) -> np.ndarray:
    """Angles ``positions[..., None] * freqs`` reduced modulo 2*pi (see module docstring).

    ``positions`` are integers (or floats: timesteps) of any shape, ``freqs`` a 1-D float64
    vector. Returns float64 of shape ``positions.shape + freqs.shape``; each entry is the exact
    reduction of the product of the position and the float64 frequency, rounded once.
    """
    pos = np.asarray(positions)
    if pos.size and not (np.issubdtype(pos.dtype, np.integer)
                         or np.issubdtype(pos.dtype, np.floating)):
        raise TypeError(f"positions must be integers or floats, got dtype {pos.dtype}")
    f = np.asarray(freqs, dtype=np.float64).reshape(-1)
    out = np.empty(pos.shape + f.shape, dtype=np.float64)
    if out.size == 0:
        return out
    flat_out = out.reshape(-1, f.size)
    cache: dict = {}
    for row, p in enumerate(pos.reshape(-1).tolist()):
        vals = cache.get(p)
        if vals is None:
            vals = [_reduce_one(p, float(fk)) for fk in f.tolist()]
            cache[p] = vals
        flat_out[row, :] = vals
    return out


# ---------------------------------------------------------------------------
# RoPE frequencies
# ---------------------------------------------------------------------------

_DEFAULTS = {
    "linear": {},
    "ntk": {},
    "dynamic_ntk": {},
    "yarn": {"beta_fast": 32.0, "beta_slow": 1.0, "mscale": None, "mscale_all_dim": None,
             "attention_factor": None, "truncate": True, "extrapolation_factor": 1.0},
    "llama3": {"low_freq_factor": 1.0, "high_freq_factor": 4.0},
    "longrope": {"factor": 1.0, "attention_factor": None, "select": "dynamic"},
    "proportional": {"factor": 1.0, "partial_rotary_factor": 1.0},
}
_REQUIRED = {
    "linear": ("factor",),
    "ntk": ("factor",),
    "dynamic_ntk": ("factor", "max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings"),
    "llama3": ("factor", "original_max_position_embeddings"),
    "longrope": ("short_factor", "long_factor", "original_max_position_embeddings"),
    "proportional": (),
}


def _normalize_scaling(scaling: Optional[Mapping]) -> Optional[dict]:
    if scaling is None:
        return None
    s = dict(scaling)
    kind = s.pop("type", None) or s.pop("rope_type", None)
    if kind in (None, "default"):
        if s:
            raise ValueError(f"unexpected parameters for the default RoPE: {sorted(s)}")
        return None
    if kind not in _DEFAULTS:
        raise ValueError(f"unknown RoPE scaling type {kind!r}; expected one of {SCALING_TYPES}")
    missing = [k for k in _REQUIRED[kind] if s.get(k) is None]
    if missing:
        raise ValueError(f"{kind} scaling needs {missing}")
    allowed = set(_REQUIRED[kind]) | set(_DEFAULTS[kind])
    unknown = set(s) - allowed
    if unknown:
        raise ValueError(f"unknown parameters for {kind} scaling: {sorted(unknown)}")
    out = dict(_DEFAULTS[kind])
    out.update(s)
    out["type"] = kind
    return out


def _check_rope(theta: float, rotary_dim: int) -> None:
    if not (math.isfinite(theta) and theta > 1.0):
        raise ValueError(f"theta must be a finite number > 1, got {theta}")
    if int(rotary_dim) != rotary_dim or rotary_dim < 2 or rotary_dim % 2:
        raise ValueError(f"rotary_dim must be an even integer >= 2, got {rotary_dim}")


def _unscaled(theta: float, rotary_dim: int) -> np.ndarray:
    """theta^(-2i/r), i < r/2."""
    i = np.arange(rotary_dim // 2, dtype=np.float64)
    return np.power(np.float64(theta), -(2.0 * i) / rotary_dim)


def get_mscale(s: float, k: float = 1.0) -> float:
    """YaRN magnitude: 1 for s <= 1, else 0.1 k ln s + 1 (HF `get_mscale`)."""
    return 1.0 if s <= 1.0 else 0.1 * k * math.log(s) + 1.0


def yarn_correction_range(rotary_dim: int, theta: float, original_max_position_embeddings: int,
                          beta_fast: float = 32.0, beta_slow: float = 1.0,
                          truncate: bool = True):
    """(low, high) pair indices of the YaRN ramp, before the `low == high` guard.

    corr(n) = r ln(L0 / (2 pi n)) / (2 ln theta); low = corr(beta_fast), high = corr(beta_slow),
    floor/ceil when truncating, then clamped to [0, r - 1] (HF `find_correction_range`).
    """
    r, L0 = rotary_dim, original_max_position_embeddings

    def corr(n_rot: float) -> float:
        return r * math.log(L0 / (n_rot * 2.0 * math.pi)) / (2.0 * math.log(theta))

    low, high = corr(beta_fast), corr(beta_slow)
    if truncate:
        low, high = float(math.floor(low)), float(math.ceil(high))
    return max(low, 0.0), min(high, float(r - 1))


def _longrope_uses_long(s: dict, seq_len: Optional[int]) -> bool:
    select = s["select"]
    if select == "long":
        return True
    if select == "short":
        return False
    if select != "dynamic":
        raise ValueError(f"longrope select must be dynamic|short|long, got {select!r}")
    return seq_len is not None and seq_len > s["original_max_position_embeddings"]


def _freq_factors(freq_factors, half: int) -> np.ndarray:
    """ggml's per-pair divisors of the base frequencies (all 1 when None)."""
    if freq_factors is None:
        return np.ones(half)
    ff = np.asarray(freq_factors, dtype=np.float64)
    if ff.shape != (half,) or not np.all(np.isfinite(ff) & (ff > 0)):
        raise ValueError(f"freq_factors must be rotary_dim/2 = {half} finite numbers > 0, "
                         f"got {ff.tolist()}")
    return ff


SECTION_MODES = ("contiguous", "interleaved", "vision", "axes")


def _check_sections(sections, section_mode: str, half: int, scaling, freq_factors) -> list:
    """The sections of a multi-stream RoPE as a list (as `#pe.rope`'s verifier)."""
    if section_mode not in SECTION_MODES:
        raise ValueError(f"section_mode must be one of {SECTION_MODES}, got {section_mode!r}")
    sec = [int(x) for x in sections]
    lo, hi = (3 if section_mode == "interleaved" else 2), (8 if section_mode == "axes" else 4)
    if not lo <= len(sec) <= hi:
        raise ValueError(f"{lo} to {hi} sections with section_mode {section_mode}, got {sec}")
    if any(x < 0 for x in sec) or sum(sec) != half:
        raise ValueError(f"sections must be >= 0 and sum to rotary_dim/2 = {half}, got {sec}")
    restarts = section_mode in ("vision", "axes")
    if restarts and (_normalize_scaling(scaling) is not None or freq_factors is not None):
        raise ValueError(f"section_mode {section_mode} takes no scaling and no freq_factors")
    s = _normalize_scaling(scaling)
    if s is not None and (s["type"] == "dynamic_ntk" or
                          (s["type"] == "longrope" and s["select"] == "dynamic")):
        raise ValueError("a multi-stream RoPE takes no sequence-length dependent scaling")
    return sec


def pair_streams(rotary_dim: int, sections, section_mode: str = "contiguous") -> np.ndarray:
    """The position stream of each pair of a multi-stream RoPE (`RopeSections`).

    contiguous / vision / axes: the sections in order. interleaved (Qwen3-VL): pair k takes
    stream k mod 3 when k < 3 sections[k mod 3], else the fallback: the fourth stream of four
    sections (ggml IMROPE), else the first (Hugging Face, vLLM)."""
    half = int(rotary_dim) // 2
    sec = [int(x) for x in sections]
    if section_mode == "interleaved":
        fallback = 3 if len(sec) == 4 else 0
        return np.array([k % 3 if k < 3 * sec[k % 3] else fallback for k in range(half)])
    return np.repeat(np.arange(len(sec)), sec)[:half]


def _restarted_ladder(theta: float, rotary_dim: int, sections, section_mode: str) -> np.ndarray:
    """vision: theta^(-2k'/(r/2)); axes: theta^(-2k'/(2 s_j)), k' the pair's index in its
    section j."""
    parts = []
    for s in sections:
        k = np.arange(s, dtype=np.float64)
        width = rotary_dim // 2 if section_mode == "vision" else 2 * s
        parts.append(np.power(np.float64(theta), -(2.0 * k) / width))
    return np.concatenate(parts)


def rope_inv_freq(theta: float = 10000.0, rotary_dim: int = 128,
                  scaling: Optional[Mapping] = None,
                  seq_len: Optional[int] = None, freq_factors=None,
                  sections=None, section_mode: str = "contiguous") -> np.ndarray:
    """Inverse frequencies ``inv_freq[i]``, ``i < rotary_dim/2``, after the scaling (float64).

    ``freq_factors`` (ggml) divide the base frequencies ``theta^(-2i/r)`` before the scaling.
    With ``sections`` in mode ``vision`` or ``axes`` the ladder restarts in every section
    (see `_restarted_ladder`).
    """
    _check_rope(theta, rotary_dim)
    r = int(rotary_dim)
    half = r // 2
    if sections is not None:
        sec = _check_sections(sections, section_mode, half, scaling, freq_factors)
        if section_mode in ("vision", "axes"):
            return _restarted_ladder(theta, r, sec, section_mode)
    s = _normalize_scaling(scaling)
    ff = _freq_factors(freq_factors, half)
    base = _unscaled(theta, r) / ff
    if s is None:
        return base
    kind = s["type"]
    if kind == "linear":
        return base / s["factor"]
    if kind == "ntk":
        if r <= 2:
            raise ValueError("ntk scaling needs rotary_dim > 2")
        new_theta = theta * s["factor"] ** (r / (r - 2))
        return _unscaled(new_theta, r) / ff
    if kind == "dynamic_ntk":
        if r <= 2:
            raise ValueError("dynamic_ntk scaling needs rotary_dim > 2")
        if seq_len is None:
            return base
        l_max = s["max_position_embeddings"]
        length = max(int(seq_len), l_max)
        factor = s["factor"]
        new_theta = theta * (factor * length / l_max - (factor - 1.0)) ** (r / (r - 2))
        return _unscaled(new_theta, r) / ff
    if kind == "yarn":
        low, high = yarn_correction_range(r, theta, s["original_max_position_embeddings"],
                                          s["beta_fast"], s["beta_slow"], s["truncate"])
        if low == high:
            high += 0.001
        idx = np.arange(half, dtype=np.float64)
        ramp = np.clip((idx - low) / (high - low), 0.0, 1.0)  # weight of interpolation
        # extrapolation_factor e (ggml ext_factor, vLLM) keeps the share e of the extrapolation.
        keep = s["extrapolation_factor"] * (1.0 - ramp)
        return base / s["factor"] * (1.0 - keep) + base * keep
    if kind == "llama3":
        factor, lf, hf = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
        L0 = s["original_max_position_embeddings"]
        wavelen = 2.0 * math.pi / base
        low_wavelen, high_wavelen = L0 / lf, L0 / hf
        out = np.where(wavelen > low_wavelen, base / factor, base)
        if hf == lf:  # Llama 4's: no blend band (its one wavelength L0 / lf is kept)
            return out
        smooth = (L0 / wavelen - lf) / (hf - lf)
        smoothed = (1.0 - smooth) * out / factor + smooth * out
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        return np.where(medium, smoothed, out)
    if kind == "longrope":
        ext = s["long_factor"] if _longrope_uses_long(s, seq_len) else s["short_factor"]
        ext = np.asarray(ext, dtype=np.float64)
        if ext.shape != (half,):
            raise ValueError(f"longrope factor lists need rotary_dim/2 = {half} entries, "
                             f"got {ext.shape[0]}")
        i = np.arange(half, dtype=np.float64)
        return 1.0 / (ext * np.power(np.float64(theta), (2.0 * i) / r) * ff)
    if kind == "proportional":
        # HF v5 `proportional`: the first floor(prf * r / 2) pairs rotate at
        # theta^(-2i/r) / factor, the others not at all.
        rotated = int(math.floor(s["partial_rotary_factor"] * r / 2))
        i = np.arange(half, dtype=np.float64)
        inv = base / s["factor"]
        return np.where(i < rotated, inv, 0.0)
    raise AssertionError(kind)


def rope_attention_factor(scaling: Optional[Mapping] = None, magnitude: float = 1.0) -> float:
    """Magnitude ``m`` multiplying cos and sin: ``magnitude`` (ggml ``attn_factor``) times the
    scaling's (1 unless YaRN or LongRoPE)."""
    if not (math.isfinite(magnitude) and magnitude > 0):
        raise ValueError(f"magnitude must be a finite number > 0, got {magnitude}")
    return magnitude * _scaling_magnitude(scaling)


def _scaling_magnitude(scaling: Optional[Mapping]) -> float:
    s = _normalize_scaling(scaling)
    if s is None:
        return 1.0
    if s["type"] == "yarn":
        if s["attention_factor"] is not None:
            return float(s["attention_factor"])
        factor = s["factor"]
        if s["mscale"] and s["mscale_all_dim"]:
            return get_mscale(factor, s["mscale"]) / get_mscale(factor, s["mscale_all_dim"])
        return get_mscale(factor)
    if s["type"] == "longrope":
        if s["attention_factor"] is not None:
            return float(s["attention_factor"])
        factor = s["factor"]
        if factor <= 1.0:
            return 1.0
        return math.sqrt(1.0 + math.log(factor) / math.log(s["original_max_position_embeddings"]))
    return 1.0


_INT64_MAX = 2**63 - 1


def _seq_len_of(positions: np.ndarray) -> Optional[int]:
    """max(positions) + 1, saturating at INT64_MAX (a position of INT64_MAX has
    no successor)."""
    return min(int(positions.max()) + 1, _INT64_MAX) if positions.size else None


def rope_tables(positions, theta: float = 10000.0, rotary_dim: int = 128,
                scaling: Optional[Mapping] = None, seq_len: Optional[int] = None,
                freq_factors=None, magnitude: float = 1.0, sections=None,
                section_mode: str = "contiguous"):
    """(cos, sin) of shape ``positions.shape + (rotary_dim/2,)``, magnitude included.

    ``cos[..., i] = m cos(p inv_freq[i])``. When ``seq_len`` is None it is ``max(positions)+1``
    (as `pe.rope_tables`); pass it explicitly to override. With ``sections`` the positions are
    ``[..., A, S]`` (one row per stream) and pair i takes the position of its stream
    (`pair_streams`): the tables are ``[..., S, r/2]``.
    """
    pos = np.asarray(positions)
    m = rope_attention_factor(scaling, magnitude)
    if sections is not None:
        inv = rope_inv_freq(theta, rotary_dim, scaling, None, freq_factors, sections,
                            section_mode)
        streams = pair_streams(rotary_dim, sections, section_mode)
        if pos.ndim < 2 or pos.shape[-2] != len(sections):
            raise ValueError(f"positions of shape {pos.shape} do not hold {len(sections)} "
                             "streams in dimension -2")
        per_stream = [reduced_angles(pos[..., a, :], inv) for a in range(len(sections))]
        ang = np.stack(per_stream)[streams, ..., np.arange(len(streams))]
        ang = np.moveaxis(ang, 0, -1)
        return m * np.cos(ang), m * np.sin(ang)
    if seq_len is None:
        seq_len = _seq_len_of(pos)
    inv = rope_inv_freq(theta, rotary_dim, scaling, seq_len, freq_factors)
    ang = reduced_angles(pos, inv)
    return m * np.cos(ang), m * np.sin(ang)


def apply_rope(x, positions, theta: float = 10000.0, rotary_dim: Optional[int] = None,
               scaling: Optional[Mapping] = None, style: str = "half", layout: str = "bhsd",
               seq_len: Optional[int] = None, freq_factors=None,
               magnitude: float = 1.0, rotary_offset: int = 0, sections=None,
               section_mode: str = "contiguous") -> np.ndarray:
    """Rotate ``x`` (``[B,H,S,D]`` for bhsd, ``[B,S,H,D]`` for bshd) by ``positions``.

    ``positions`` is ``[S]`` (shared by the batch) or ``[B, S]``; with ``sections`` (a
    multi-stream RoPE) ``[A, S]`` or ``[B, A, S]``. Pairs are ``o + (i, i + r/2)``
    (``half``) or ``o + (2i, 2i+1)`` (``interleaved``), ``o = rotary_offset`` (ggml ``n_offs``);
    the channels outside ``[o, o + r)`` pass through.
    Returns float64.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 4:
        raise ValueError(f"x must be rank 4, got shape {x.shape}")
    if layout not in ("bhsd", "bshd"):
        raise ValueError(f"layout must be 'bhsd' or 'bshd', got {layout!r}")
    if style not in ("half", "interleaved"):
        raise ValueError(f"style must be 'half' or 'interleaved', got {style!r}")
    D = x.shape[-1]
    r = D if rotary_dim is None else int(rotary_dim)
    o = int(rotary_offset)
    if o < 0 or o + r > D:
        raise ValueError(f"rotary_offset {o} + rotary_dim {r} exceeds the head dimension {D}")
    seq_axis = 2 if layout == "bhsd" else 1
    pos = np.asarray(positions)
    S = x.shape[seq_axis]
    streams = 0 if sections is None else 1  # the stream dim before the sequence
    batched = pos.ndim == 2 + streams
    if pos.ndim not in (1 + streams, 2 + streams) or pos.shape[-1] != S or \
            (batched and pos.shape[0] not in (1, x.shape[0])):
        raise ValueError(f"positions of shape {pos.shape} do not match x of shape {x.shape}")
    cos, sin = rope_tables(pos, theta, r, scaling, seq_len, freq_factors,
                           magnitude, sections, section_mode)  # [S, h] or [B, S, h]
    if not batched:
        cos, sin = cos[None], sin[None]
    # to [B|1, 1, S, h] (bhsd) or [B|1, S, 1, h] (bshd)
    cos = cos[:, None] if layout == "bhsd" else cos[:, :, None]
    sin = sin[:, None] if layout == "bhsd" else sin[:, :, None]
    h = r // 2
    out = x.copy()
    if style == "half":
        i0, i1 = o + np.arange(h), o + np.arange(h) + h
    else:
        i0, i1 = o + np.arange(0, r, 2), o + np.arange(1, r, 2)
    x0, x1 = x[..., i0], x[..., i1]
    out[..., i0] = x0 * cos - x1 * sin
    out[..., i1] = x1 * cos + x0 * sin
    return out


# ---------------------------------------------------------------------------
# Absolute encodings
# ---------------------------------------------------------------------------

def sinusoidal_frequencies(dim: int, base: float = 10000.0, spacing: str = "paper", *,
                           freq_shift: Optional[float] = None, scale: float = 1.0,
                           odd: Optional[str] = None) -> np.ndarray:
    """scale * w_k for the sin series of a sinusoidal table (its first ``dim // 2`` are the cos
    series'): k < dim//2, plus k = dim//2 with ``odd="sin"`` and an odd ``dim``.

    w_k = base^(-2k/dim) (paper); exp(-k ln(base) / (h - s)) with h = dim//2 and s = 1 for
    ``spacing="fairseq"`` (tensor2tensor, fairseq), s = ``freq_shift`` otherwise (diffusers'
    ``downscale_freq_shift``).
    """
    if spacing not in ("paper", "fairseq"):
        raise ValueError(f"spacing must be 'paper' or 'fairseq', got {spacing!r}")
    if spacing == "fairseq":
        if freq_shift is not None:
            raise ValueError("spacing='fairseq' is freq_shift=1; give one of them")
        freq_shift = 1.0
    h = dim // 2
    count = h + (1 if odd == "sin" and dim % 2 else 0)
    k = np.arange(count, dtype=np.float64)
    if freq_shift is None:
        w = np.power(np.float64(base), -(2.0 * k) / dim)
    else:
        if not h - freq_shift > 0:
            raise ValueError(f"dim//2 - shift must be > 0 (the exponent divides by it), got "
                             f"dim//2 = {h}, shift {freq_shift}")
        w = np.exp(-k * (math.log(base) / (h - freq_shift)))
    return scale * w


def sinusoidal_channels(dim: int, layout: str = "interleaved", cos_first: bool = False,
                        odd: Optional[str] = None):
    """The output channels of the sin series and of the cos series (index arrays).

    interleaved: the first series at 2k, the second at 2k+1; concat: the first series' block,
    then the second's. ``cos_first`` makes cos the first series. With ``odd="sin"`` the sin
    series' extra frequency is the last channel of its block (the table's last channel when
    interleaved); with ``odd="zero"`` the last channel belongs to neither.
    """
    if layout not in ("interleaved", "concat"):
        raise ValueError(f"layout must be 'interleaved' or 'concat', got {layout!r}")
    h = dim // 2
    n_sin = h + (1 if odd == "sin" and dim % 2 else 0)
    k = np.arange(h)
    if layout == "interleaved":
        sin = 2 * k + (1 if cos_first else 0)
        cos = 2 * k + (0 if cos_first else 1)
        if n_sin > h:
            sin = np.append(sin, 2 * h)
    elif cos_first:
        cos, sin = k, h + np.arange(n_sin)
    else:
        sin, cos = np.arange(n_sin), n_sin + k
    return sin, cos


def sinusoidal(positions, dim: int, base: float = 10000.0, layout: str = "interleaved",
               spacing: str = "paper", *, freq_shift: Optional[float] = None,
               scale: float = 1.0, cos_first: bool = False, odd: Optional[str] = None,
               padding_idx: Optional[int] = None) -> np.ndarray:
    """Sinusoidal table of shape ``positions.shape + (dim,)``: sin and cos of the angles
    ``p * w_k`` (``sinusoidal_frequencies``) at ``sinusoidal_channels``.

    ``positions`` are integers, or floats (diffusion timesteps). An odd ``dim`` needs ``odd``:
    ``"zero"`` (fairseq, diffusers, ggml) or ``"sin"`` (Marian, DistilBERT). Rows at
    ``padding_idx`` are zero (fairseq's pad row).
    """
    if dim < 1:
        raise ValueError(f"dim must be >= 1, got {dim}")
    if (dim % 2 == 1) != (odd is not None):
        raise ValueError(f"odd='zero' or 'sin' is needed with an odd dim and only then "
                         f"(dim {dim}, odd {odd!r})")
    if odd not in (None, "zero", "sin"):
        raise ValueError(f"odd must be 'zero' or 'sin', got {odd!r}")
    pos = np.asarray(positions)
    w = sinusoidal_frequencies(dim, base, spacing, freq_shift=freq_shift, scale=scale, odd=odd)
    sin_ch, cos_ch = sinusoidal_channels(dim, layout, cos_first, odd)
    ang = reduced_angles(pos, w)
    out = np.zeros(pos.shape + (dim,), dtype=np.float64)
    out[..., sin_ch] = np.sin(ang)
    out[..., cos_ch] = np.cos(ang[..., :cos_ch.size])
    if padding_idx is not None:
        if not np.issubdtype(pos.dtype, np.integer):
            raise TypeError("padding_idx needs integer positions")
        out[pos == padding_idx] = 0.0
    return out


def learned(table, positions) -> np.ndarray:
    """Rows ``table[p]``; a position outside ``[0, N)`` raises IndexError (never clamps)."""
    table = np.asarray(table)
    if table.ndim != 2:
        raise ValueError(f"table must be [N, D], got shape {table.shape}")
    pos = np.asarray(positions)
    if pos.size and not np.issubdtype(pos.dtype, np.integer):
        raise TypeError(f"positions must be integers, got dtype {pos.dtype}")
    n = table.shape[0]
    bad = np.flatnonzero((pos < 0) | (pos >= n)) if pos.size else np.array([], dtype=int)
    if bad.size:
        j = int(bad[0])
        p = int(pos.reshape(-1)[j])
        raise IndexError(f"learned position embedding: position {p} (entry {j}) is out of "
                         f"range for a table of {n} rows (valid positions are 0..{n - 1})")
    return table[pos]


# ---------------------------------------------------------------------------
# KV cache
# ---------------------------------------------------------------------------

CACHE_LAYOUTS = ("dense", "nhd", "hnd")


def cache_capacity(cache, layout: str = "dense") -> int:
    """Slots of a cache: ``Smax`` of ``[B, H, Smax, D]``, or pages x page size."""
    cache = np.asarray(cache)
    if layout == "dense":
        return int(cache.shape[2])
    return int(cache.shape[0]) * int(cache.shape[1 if layout == "nhd" else 2])


def append_kv(key, value, key_cache, value_cache, slots, layout: str = "dense",
              positions=None, rope: Optional[Mapping] = None):
    """The caches with the new rows written at their slots (`pe.append_kv`), float64.

    dense: ``key [B, H, S, D]``, caches ``[B, H, Smax, D]``, slots ``[S]`` or ``[B, S]``;
    nhd / hnd: ``key [T, H, D]``, pages ``[P, page_size, H, D]`` / ``[P, H, page_size, D]``,
    slots ``[T]`` (slot ``s`` is row ``s % page_size`` of page ``s // page_size``).
    A slot of -1 skips its token; any other slot outside ``[0, capacity)`` raises
    IndexError. With ``rope`` (keyword arguments of `apply_rope`: theta, rotary_dim,
    scaling, style, sections) each key row is rotated by its position first (a
    multi-stream rope: positions ``[A, T]`` for pages, ``[A, S]`` or ``[B, A, S]`` dense).
    Tokens are written in order (a repeated slot keeps the later token).
    """
    if layout not in CACHE_LAYOUTS:
        raise ValueError(f"layout must be one of {CACHE_LAYOUTS}, got {layout!r}")
    key = np.asarray(key, dtype=np.float64)
    value = np.asarray(value, dtype=np.float64)
    k_out = np.array(key_cache, dtype=np.float64)
    v_out = np.array(value_cache, dtype=np.float64)
    slots = np.asarray(slots)
    capacity = cache_capacity(k_out, layout)
    flat = slots.reshape(-1)
    bad = np.flatnonzero((flat < -1) | (flat >= capacity))
    if bad.size:
        j = int(bad[0])
        raise IndexError(f"append_kv: slot {int(flat[j])} (entry {j}) is out of range for "
                         f"a cache of {capacity} slots")
    if (rope is None) != (positions is None):
        raise ValueError("positions are given exactly when rope is")
    if layout == "dense":
        if rope is not None:
            key = apply_rope(key, positions, layout="bhsd", **rope)
        B, _, S, _ = key.shape
        per_batch = slots if slots.ndim == 2 else np.broadcast_to(slots, (B, S))
        for b in range(B):
            for s in range(S):
                slot = int(per_batch[b, s])
                if slot >= 0:
                    k_out[b, :, slot] = key[b, :, s]
                    v_out[b, :, slot] = value[b, :, s]
        return k_out, v_out
    if rope is not None:  # [T, H, D] as a batch of T one-token sequences
        pos = np.asarray(positions)
        # [T] -> [T, 1]; a multi-stream rope's [A, T] -> [T, A, 1]
        pos = pos.T[:, :, None] if rope.get("sections") is not None else pos.reshape(-1, 1)
        key = apply_rope(key[:, None], pos, layout="bshd", **rope)[:, 0]
    page_size = k_out.shape[1 if layout == "nhd" else 2]
    for t, slot in enumerate(flat):
        if slot < 0:
            continue
        page, row = divmod(int(slot), page_size)
        if layout == "nhd":
            k_out[page, row], v_out[page, row] = key[t], value[t]
        else:
            k_out[page, :, row], v_out[page, :, row] = key[t], value[t]
    return k_out, v_out


def gather_pages(cache, block_table_row, length: int, layout: str = "nhd") -> np.ndarray:
    """Keys (or values) ``0 .. length-1`` of one sequence as ``[H, length, D]``: key ``j``
    is row ``j % page_size`` of page ``block_table_row[j // page_size]``."""
    cache = np.asarray(cache)
    page_size = cache.shape[1 if layout == "nhd" else 2]
    rows = []
    for j in range(length):
        page = int(block_table_row[j // page_size])
        if not 0 <= page < cache.shape[0]:
            raise IndexError(f"paged_attention: page {page} is out of range for a cache of "
                             f"{cache.shape[0]} pages")
        rows.append(cache[page, j % page_size] if layout == "nhd"
                    else cache[page, :, j % page_size])
    heads, dim = (cache.shape[2], cache.shape[3]) if layout == "nhd" else \
        (cache.shape[1], cache.shape[3])
    return (np.stack(rows, axis=1) if rows else np.zeros((heads, 0, dim))).astype(np.float64)


def paged_attention(q, key_cache, value_cache, block_table, kv_lens, cu_seqlens,
                    layout: str = "nhd", scale=None, causal: bool = False,
                    window: Optional[int] = None, rope: Optional[Mapping] = None,
                    alibi: Optional[float] = None, softcap: Optional[float] = None,
                    chunk: Optional[int] = None, sinks=None,
                    temperature: Optional[Tuple[int, float]] = None, mask=None,
                    rope_positions=None):
    """`pe.paged_attention`, float64: for sequence ``b`` the packed query rows
    ``cu_seqlens[b] .. cu_seqlens[b+1]-1`` of ``q [T, Hq, D]`` are the last ``Sq`` of its
    ``L = kv_lens[b]`` tokens; its keys and values are gathered from the pages of
    ``block_table[b]`` (already rotated: ``rope`` rotates the queries only, at positions
    ``L - Sq + i``) and attended as `attention` (``sinks``: one logit per query head;
    ``mask [T, Hq|1, K]``: each query row's additive mask over the sequence's keys, its
    first ``L`` columns read; ``rope_positions [A, T]``: a multi-stream ``rope`` rotates
    each query row by its column of streams instead). Returns ``[T, Hq, Dv]``."""
    q = np.asarray(q, dtype=np.float64)
    cu = np.asarray(cu_seqlens)
    out = np.zeros((q.shape[0], q.shape[1], np.asarray(value_cache).shape[3]))
    if cu[0] != 0 or cu[-1] != q.shape[0]:
        raise ValueError(f"cu_seqlens must run from 0 to {q.shape[0]}, got {cu.tolist()}")
    for b, length in enumerate(np.asarray(kv_lens)):
        start, stop, length = int(cu[b]), int(cu[b + 1]), int(length)
        if not 0 <= stop - start <= length:
            raise ValueError(f"paged_attention: sequence {b} has {stop - start} queries but "
                             f"{length} keys")
        rows = q[start:stop].transpose(1, 0, 2)[None]  # [1, Hq, Sq, D]
        positions = np.arange(length - (stop - start), length)
        if rope is not None:
            streams = rope.get("sections") is not None
            if streams != (rope_positions is not None):
                raise ValueError("rope_positions go with a multi-stream rope (sections), "
                                 "and only")
            rotate_at = np.asarray(rope_positions)[:, start:stop] if streams else positions
            rows = apply_rope(rows, rotate_at, layout="bhsd", **rope)
        k = gather_pages(key_cache, block_table[b], length, layout)[None]
        v = gather_pages(value_cache, block_table[b], length, layout)[None]
        rows_mask = None
        if mask is not None:
            if np.shape(mask)[2] < length:
                raise ValueError(f"paged_attention: sequence {b} has {length} keys but the "
                                 f"mask only {np.shape(mask)[2]} key columns")
            rows_mask = np.asarray(mask, np.float64)[start:stop, :, :length]
            rows_mask = rows_mask.transpose(1, 0, 2)[None]
        o = attention(rows, k, v, mask=rows_mask, scale=scale, causal=causal, window=window,
                      alibi=alibi,
                      softcap=softcap, q_positions=positions, k_positions=np.arange(length),
                      chunk=chunk, sinks=sinks, temperature=temperature)
        out[start:stop] = o[0].transpose(1, 0, 2)
    return out


# ---------------------------------------------------------------------------
# ALiBi
# ---------------------------------------------------------------------------

def _alibi_power_of_two(n: int, max_bias: float) -> list:
    # Geometric sequence whose first term equals its ratio: 2^(-max_bias/n).
    return [2.0 ** (-max_bias * (h + 1) / n) for h in range(n)]


def alibi_slopes(num_heads: int, max_bias: float = 8.0) -> np.ndarray:
    """ALiBi slopes, the paper's construction generalized by ``max_bias``.

    For a power of two H: 2^(-max_bias (h+1)/H). Otherwise, with n the largest power of two
    below H: the n-head slopes, then the slopes at even indices of the 2n-head set, the first
    H - n of them (these interleave with the first group).
    """
    if int(num_heads) != num_heads or num_heads < 1:
        raise ValueError(f"num_heads must be an integer >= 1, got {num_heads}")
    if not (math.isfinite(max_bias) and max_bias > 0):
        raise ValueError(f"max_bias must be a finite number > 0, got {max_bias}")
    n = 1 << (int(num_heads).bit_length() - 1)
    slopes = _alibi_power_of_two(n, max_bias)
    if n < num_heads:
        slopes += _alibi_power_of_two(2 * n, max_bias)[0::2][: num_heads - n]
    return np.asarray(slopes, dtype=np.float64)


def _distance(k, q) -> np.ndarray:
    """k - q for int64 positions, exactly (whatever their size) and then rounded once to
    float64: |k - q| is formed as an unsigned 64-bit number, which holds every difference
    of two int64 values."""
    k = np.asarray(k, dtype=np.int64)
    q = np.asarray(q, dtype=np.int64)
    k, q = np.broadcast_arrays(k, q)
    ahead = k >= q
    with np.errstate(over="ignore"):
        magnitude = np.where(ahead, k.astype(np.uint64) - q.astype(np.uint64),
                             q.astype(np.uint64) - k.astype(np.uint64))
    value = magnitude.astype(np.float64)
    return np.where(ahead, value, -value)


def _at_least_apart(a, b, distance: int) -> np.ndarray:
    """a - b >= distance for int64 a, b and distance >= 0, without overflow."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(over="ignore"):
        gap = a.astype(np.uint64) - b.astype(np.uint64)
    return (a >= b) & (gap >= np.uint64(distance))


def alibi_bias(slopes, q_pos, k_pos, mode: str = "causal") -> np.ndarray:
    """ALiBi bias ``[H, Sq, Skv]`` (or ``[B, H, Sq, Skv]`` if a positions tensor is ``[B, S]``).

    causal: -slope (q - k), and -inf where k > q; symmetric: -slope |q - k|. The distance
    q - k is exact for any int64 positions.
    """
    slopes = np.asarray(slopes, dtype=np.float64)
    q = np.asarray(q_pos).astype(np.int64)
    k = np.asarray(k_pos).astype(np.int64)
    batched = q.ndim == 2 or k.ndim == 2
    qq, kk = q[..., :, None], k[..., None, :]
    kmq = _distance(kk, qq)  # [Sq,Skv] or [B,Sq,Skv]
    future = kk > qq
    if batched:
        if kmq.ndim == 2:
            kmq, future = kmq[None], future[None]
        sl = slopes[None, :, None, None]
        kmq, future = kmq[:, None], future[:, None]
    else:
        sl = slopes[:, None, None]
        kmq, future = kmq[None], future[None]
    if mode == "causal":
        bias = sl * kmq
        bias = np.where(future, -np.inf, bias)
    elif mode == "symmetric":
        bias = -sl * np.abs(kmq)
    else:
        raise ValueError(f"mode must be 'causal' or 'symmetric', got {mode!r}")
    return bias


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------

def query_temperature(positions, floor_scale: int, attn_scale: float) -> np.ndarray:
    """Llama 4's query temperature: 1 + attn_scale ln(1 + max(0, floor((p + 1) /
    floor_scale))), the floor exact for any int64 position (the max only acts below -1)."""
    if int(floor_scale) != floor_scale or floor_scale < 1:
        raise ValueError(f"floor_scale must be an integer >= 1, got {floor_scale}")
    p = np.asarray(positions).astype(object)
    quotient = np.maximum(np.asarray((p + 1) // int(floor_scale), dtype=np.float64), 0.0)
    return 1.0 + float(attn_scale) * np.log1p(quotient)


def _positions_2d(pos, batch: int, length: int, name: str) -> np.ndarray:
    p = np.asarray(pos).astype(np.int64)
    if p.ndim == 1:
        p = np.broadcast_to(p[None], (batch, p.shape[0]))
    if p.ndim != 2 or p.shape[1] != length or p.shape[0] not in (1, batch):
        raise ValueError(f"{name} of shape {np.shape(pos)} do not fit [{batch}, {length}]")
    return np.broadcast_to(p, (batch, length))


def attention(q, k, v, mask=None, q_positions=None, k_positions=None, scale=None,
              causal: bool = False, window: Optional[int] = None,
              rope: Optional[Mapping] = None, alibi: Optional[float] = None,
              softcap: Optional[float] = None, sinks=None, q_rope_positions=None,
              k_rope_positions=None, chunk: Optional[int] = None,
              temperature: Optional[Tuple[int, float]] = None,
              shared_key=None) -> np.ndarray:
    """`pe.attention`: softmax(softcap(scale Q'K'^T) + bias + mask) V, float64, with
    softcap(s) = c tanh(s / c) for ``softcap`` c (Gemma 2's logit soft-capping) and the
    identity without. ``sinks`` ([Hq]): attention sinks, one logit per query head in the
    softmax's denominator only (a key of value 0 that every query sees: gpt-oss).
    ``temperature`` = (floor_scale, attn_scale) multiplies the scores of the query at
    position p by `query_temperature` (Llama 4's NoPE layers).
    A multi-stream ``rope`` (``sections``) rotates Q and K by ``q_rope_positions`` and
    ``k_rope_positions`` (``[A, S]`` or ``[B, A, S]``); the positions place the masks.
    ``shared_key`` ([B, 1, Skv, Ds]) is the last Ds channels of every key head (multi-head
    latent attention's k_pe): k then holds the other D - Ds.

    q: [B,Hq,Sq,D], k: [B,Hkv,Skv,D], v: [B,Hkv,Skv,Dv]; query head h reads kv head
    h // (Hq/Hkv). Positions default to q: Skv - Sq + i, k: j. ``rope`` is a dict of
    `apply_rope` keywords (theta, rotary_dim, scaling, style); Q and K are each rotated by
    their own positions, as two `pe.rope` ops would (layout bhsd). ``alibi`` is max_bias.
    Masked keys: chunk (floor(k_pos / C) != floor(q_pos / C): Llama 4's chunked attention),
    causal (k_pos > q_pos), window (q_pos - k_pos >= W, and without causal also
    k_pos - q_pos >= W), and -inf entries of the additive mask; distances are exact for any
    int64 positions. A fully masked row gives 0. NaN and inf follow IEEE arithmetic on the
    visible keys (a NaN score, or a +inf one, makes its row NaN); a key of weight 0 adds
    nothing to the output, whatever its value holds.
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("q, k and v must be rank 4")
    if shared_key is not None:
        shared_key = np.asarray(shared_key, dtype=np.float64)
        if shared_key.ndim != 4 or shared_key.shape[1] != 1 or \
                shared_key.shape[0] != k.shape[0] or shared_key.shape[2] != k.shape[2]:
            raise ValueError(f"shared_key{shared_key.shape} is not [B, 1, Skv, Ds] of k{k.shape}")
        k = np.concatenate([k, np.broadcast_to(shared_key, k.shape[:3] + shared_key.shape[3:])],
                           axis=3)
    B, Hq, Sq, D = q.shape
    _, Hkv, Skv, Dk = k.shape
    if Dk != D or k.shape[0] != B or v.shape[:3] != (B, Hkv, Skv):
        raise ValueError(f"incompatible shapes q{q.shape} k{k.shape} v{v.shape}")
    if Hq % Hkv:
        raise ValueError(f"Hq = {Hq} is not a multiple of Hkv = {Hkv}")
    group = Hq // Hkv
    if scale is None:
        scale = 1.0 / math.sqrt(D)
    qp_in = np.arange(Sq, dtype=np.int64) + (Skv - Sq) if q_positions is None else np.asarray(q_positions)
    kp_in = np.arange(Skv, dtype=np.int64) if k_positions is None else np.asarray(k_positions)
    qp = _positions_2d(qp_in, B, Sq, "q_positions")
    kp = _positions_2d(kp_in, B, Skv, "k_positions")
    if rope is not None:
        cfg = dict(rope)
        cfg.pop("layout", None)
        multi = cfg.get("sections") is not None
        if multi != (q_rope_positions is not None and k_rope_positions is not None):
            raise ValueError("rope positions go with a multi-stream rope (sections), and only")
        q = apply_rope(q, q_rope_positions if multi else qp_in, layout="bhsd", **cfg)
        k = apply_rope(k, k_rope_positions if multi else kp_in, layout="bhsd", **cfg)
    # Query head h = kvh * group + g: the group's heads share K and V (no repeated copies).
    qg = q.reshape(B, Hkv, group, Sq, D)
    scores = scale * np.matmul(qg, k[:, :, None].swapaxes(-1, -2)).reshape(B, Hq, Sq, Skv)
    if temperature is not None:
        scores = scores * query_temperature(qp, *temperature)[:, None, :, None]
    if softcap is not None:
        scores = softcap * np.tanh(scores / softcap)
    qq, kk = qp[:, :, None], kp[:, None, :]
    if alibi is not None:
        # -slope (q - k) = slope (k - q), the distance exact for any int64 positions.
        slopes = alibi_slopes(Hq, alibi)
        scores = scores + slopes[None, :, None, None] * _distance(kk, qq)[:, None]
    if mask is not None:
        # A -inf entry hides its key whatever the score holds (NaN + -inf is NaN).
        m = np.asarray(mask, dtype=np.float64)
        scores = np.where(np.isneginf(m), -np.inf, scores + m)
    masked = np.zeros((B, Sq, Skv), dtype=bool)
    if causal:
        masked |= kk > qq
    if window is not None:
        masked |= _at_least_apart(qq, kk, window)
        if not causal:
            masked |= _at_least_apart(kk, qq, window)
    if chunk is not None:
        if int(chunk) < 1:
            raise ValueError(f"chunk must be >= 1, got {chunk}")
        masked |= np.floor_divide(kk, int(chunk)) != np.floor_divide(qq, int(chunk))
    scores = np.where(masked[:, None], -np.inf, scores)
    # IEEE on the visible keys: a NaN score makes its row NaN (np.max propagates it).
    row_max = scores.max(axis=-1, keepdims=True, initial=-np.inf)
    sink = None
    if sinks is not None:
        sink = np.asarray(sinks, dtype=np.float64)
        if sink.shape != (Hq,):
            raise ValueError(f"sinks must be [Hq] = [{Hq}], got {sink.shape}")
        sink = np.broadcast_to(sink[None, :, None, None], row_max.shape)
        row_max = np.maximum(row_max, sink)
    empty = row_max == -np.inf  # no visible key
    with np.errstate(invalid="ignore"):
        w = np.exp(scores - np.where(empty, 0.0, row_max))
    denom = w.sum(axis=-1, keepdims=True)
    if sink is not None:
        with np.errstate(invalid="ignore"):
            denom = denom + np.exp(sink - np.where(empty, 0.0, row_max))
    with np.errstate(invalid="ignore"):
        probs = np.divide(w, denom, out=np.zeros_like(w), where=denom != 0)
    # A key of weight 0 (every masked key) adds nothing, even a NaN or inf value.
    if np.isfinite(v).all():
        pg = probs.reshape(B, Hkv, group, Sq, Skv)
        return np.matmul(pg, v[:, :, None]).reshape(B, Hq, Sq, v.shape[-1])
    p, vv = probs[..., None], np.repeat(v, group, axis=1)[:, :, None]
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(p == 0.0, 0.0, p * vv).sum(axis=-2)
