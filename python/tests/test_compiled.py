"""Compiled CPU code (`pe-compile --emit=shared`, via pe.runner) against the float64 oracle.

Every op of the `pe` dialect is compiled through the CPU pipeline (pe -> linalg -> tile +
vectorize -> LLVM) and run on numpy inputs; results are compared with `pe.reference`.
Functions are batched into one module per op group (module-scoped fixtures compile once),
and positions are always *function arguments* (never constants), so that nothing is folded
at compile time and the run-time lowering is what is measured (sequence-length-dependent
scalings then compute `seq_len = max(positions) + 1` at run time).

Inputs of f16/bf16 functions are first rounded to that type; the reference is computed in
float64 from exactly those rounded values (for bf16 the runner passes float32 arrays holding
bf16 values, which it converts without change).

Tolerances (per dtype; "scale" is stated for each op)
-----------------------------------------------------
RoPE (`pe.rope`), `pe.rope_tables`, `pe.sinusoidal`:
  The lowering reduces the angle p*f modulo 2 pi in f64 (error ~1e-16 for any |p| <= 2^40),
  rounds the reduced angle to f32 (<= pi * 2^-24 = 1.9e-7 absolute), takes f32 cos/sin
  (<= 1 ulp = 6e-8), multiplies by m in f32 and rotates with one FMA and one product.
  The total is below ~5e-7 * m * max|x| and does NOT grow with the position.
  * f32: max abs error <= ROPE_F32_ABS * max(1, m * max|x|)   (ROPE_F32_ABS = 1e-6);
    for tables/sinusoidal max|x| = 1.  This is the contract "f32 RoPE at positions up to
    1,048,576 within 1e-6 of float64" (see test_f32_rope_positions_up_to_2_20_within_1e-6).
  * f16 / bf16: the f32 result rounded once. Elementwise: within 1 ulp (of the element's
    own magnitude) of the correctly rounded reference, with an extra 2e-6 * scale absolute
    allowance for elements so small that the f32 error exceeds their ulp. Normalized:
    max abs error <= REL[dtype] * max(1, max|reference|), REL = 2e-3 (f16, ~2 ulps at 1.0:
    2 * 2^-10) and 1.6e-2 (bf16, 2 * 2^-7).
  * Channels >= rotary_dim are copied: bit-exact equality with the input.
`pe.rope_frequencies`:
  * f32: within 1 ulp of the float64 reference (computed in double and rounded once);
  * f64: relative error <= 1e-14 (~45 ulps). Constant frequencies are C++ `pow` vs numpy
    `pow` (a few ulps); dynamic NTK at run time is base[i] * exp(-(2i/r) ln c), whose
    relative error is ~ (1 + |2i/r ln c|) * 2^-53 (at most ~10 ulps for these configs).
`pe.alibi_slopes`: f32 within 1 ulp (rounded once), f64 within 4 ulps (both exp2 in double).
`pe.alibi_bias`: -slope * d with an exactly representable f32 slope and an integer distance
  |d| < 2^24 is a single f32 rounding in both implementations, so f32 is EXACT (0 ulp);
  f16/bf16 round that f32 value again (double rounding): within 1 ulp. -inf entries exact.
`pe.learned`: a gather, EXACT equality with the table rows.
`pe.attention` (scale = max|reference| of the whole output, or max|V| if that is 0):
  * f32: max abs error <= 1e-5 * scale (f32 accumulation of <= 64-term dot products, exp,
    sums of <= 64 terms and one division: a few 1e-7 relative in practice);
  * f16: 2e-3 * scale (the output is rounded once to f16: half an ulp is 2^-11 = 4.9e-4
    relative, plus the f32 error; 2e-3 = ~2 f16 ulps of the output magnitude);
  * bf16: 1.6e-2 * scale (half a bf16 ulp is 2^-8 = 3.9e-3 relative; 2 ulps = 1.56e-2).
  * A query row whose keys are all masked must be exactly 0, and no output may be NaN/inf.

Set PE_COMPILED_ERROR_TABLE=<file> to write the maximum measured errors per op/variant/dtype.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest

from pe import ir
from pe import reference as ref
from pe import runner
from pe.testing import round_to, spacing, ulp_distance

pytestmark = pytest.mark.skipif(not os.access(runner.PE_COMPILE, os.X_OK),
                                reason=f"pe-compile not found at {runner.PE_COMPILE}")


# ---------------------------------------------------------------------------
# Tolerances (see the module docstring for the justification)
# ---------------------------------------------------------------------------

ROPE_F32_ABS = 1e-6            # f32 RoPE / tables / sinusoidal: abs error per unit of scale
LOWP_REL = {"f16": 2e-3, "bf16": 1.6e-2}   # f16/bf16 normalized error (~2 ulps at 1.0)
LOWP_F32_ALLOWANCE = 2e-6      # elementwise extra allowance (the f32 error before rounding)
FREQ_F64_REL = 1e-14           # pe.rope_frequencies -> f64
SLOPES_F64_ULPS = 4            # pe.alibi_slopes -> f64
ATTN_REL = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}

DTYPES = ("f32", "f16", "bf16")

# Default small shapes: S = 37 is not a multiple of the vector width (16), so the vectorized
# loops run their masked/remainder iterations.
B, H, S, D = 2, 4, 37, 64

# ---------------------------------------------------------------------------
# Error bookkeeping (printed / written at the end of the module)
# ---------------------------------------------------------------------------

_ERRORS: Dict[Tuple[str, str, str, str], Tuple[float, float]] = {}


def record(op: str, variant: str, dtype: str, metric: str, value: float, tol: float) -> None:
    key = (op, variant, dtype, metric)
    old = _ERRORS.get(key)
    if old is None or value > old[0]:
        _ERRORS[key] = (float(value), float(tol))


@pytest.fixture(scope="module", autouse=True)
def _error_table():
    yield
    path = os.environ.get("PE_COMPILED_ERROR_TABLE")
    if not path or not _ERRORS:
        return
    lines = [f"{'op':<18} {'variant':<28} {'dtype':<5} {'metric':<10} {'max measured':>13} "
             f"{'tolerance':>10}"]
    for (op, variant, dtype, metric), (value, tol) in sorted(_ERRORS.items()):
        lines.append(f"{op:<18} {variant:<28} {dtype:<5} {metric:<10} {value:13.3e} {tol:10.1e}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def quantize(x, dtype: str) -> np.ndarray:
    """float64 values exactly representable in dtype."""
    return round_to(np.asarray(x, dtype=np.float64), dtype)


def as_input(xq: np.ndarray, dtype: str) -> np.ndarray:
    """The array handed to the runner for a tensor of `dtype` (xq already rounded)."""
    if dtype == "f16":
        return xq.astype(np.float16)
    return xq.astype(np.float32)  # f32, and bf16 (exact bf16 values held in float32)


def f64(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def ttype(shape: Sequence, elem: str) -> str:
    return "tensor<" + "".join(f"{'?' if d is None else d}x" for d in shape) + elem + ">"


def render_func(name: str, args: Sequence[Tuple[str, str]], body: Sequence[str],
                results: Sequence[Tuple[str, str]]) -> str:
    sig = ", ".join(f"{a}: {t}" for a, t in args)
    res = ", ".join(t for _, t in results)
    lines = [f"func.func @{name}({sig}) -> ({res}) {{"]
    lines += ["  " + b for b in body]
    lines.append(f"  return {', '.join(v for v, _ in results)} : {res}")
    lines.append("}")
    return "\n".join(lines) + "\n"


COMPILE_TIMEOUT_S = 300


class ModuleGroup:
    """One compiled module for all unmarked cases of a group; marked cases compile alone.

    A case that pe-compile rejects (or that must be marked for any other compiler bug) gets
    `marks=(pytest.mark.xfail(strict=True, reason=...),)`: it then stays out of the shared
    module (which would otherwise fail as a whole) and is compiled by itself in its test.
    """

    def __init__(self, cases):
        self.shared = compile_module([c.ir() for c in cases if not c.marks])

    def get(self, case) -> runner.Module:
        return compile_module([case.ir()]) if case.marks else self.shared

    def call(self, name, *args):
        return self.shared.call(name, *args)

    @property
    def library(self):
        return self.shared.library


# pe-compile arguments of every module compiled here: none (the CPU build); the GPU
# schedule run on the CPU in test_gpu_schedule.py.
TARGET_ARGS: Tuple[str, ...] = ()
# The qemu CPU model the modules run on (None: this machine); test_avx2_kernels.py's
# emulated Zen 2.
QEMU_CPU: Optional[str] = None


def compile_module(funcs: Sequence[str], extra_args: Sequence[str] = ()) -> runner.Module:
    """`runner.compile` of the concatenated functions, with a time limit.

    A pe-compile that never finishes (an earlier build looped on pe.alibi_bias, eating memory)
    fails the fixture instead of hanging the whole run.
    """
    return runner.compile("\n".join(funcs), [*TARGET_ARGS, *extra_args],
                          timeout=COMPILE_TIMEOUT_S, qemu_cpu=QEMU_CPU)


def check_rope_like(got, want, dtype: str, scale: float, op: str, variant: str,
                    what: str = "") -> None:
    """RoPE/table/sinusoidal comparison (module docstring). `scale` = max(1, m*max|x|)."""
    got, want = f64(got), f64(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert np.isfinite(got).all(), f"{what}: non-finite values in the compiled result"
    err = np.abs(got - want)
    imax = np.unravel_index(int(np.argmax(err)), err.shape)
    detail = (f"{what}: max abs error {err.max():.3e} at {tuple(int(i) for i in imax)} "
              f"(got {got[imax]!r}, float64 reference {want[imax]!r}), scale {scale:.4g}")
    if dtype == "f32":
        tol = ROPE_F32_ABS * scale
        record(op, variant, dtype, "abs/scale", err.max() / scale, ROPE_F32_ABS)
        assert err.max() <= tol, detail + f", tolerance {tol:.3e}"
        return
    # f16 / bf16: elementwise 1 ulp of the correctly rounded reference (+ f32 allowance) ...
    expected = round_to(want, dtype)
    ulps = ulp_distance(got, expected, dtype)
    allowance = spacing(expected, dtype) + LOWP_F32_ALLOWANCE * scale
    bad = (ulps > 1) & (err > allowance)
    assert not bad.any(), (detail + f"; {int(bad.sum())} elements are more than 1 {dtype} ulp "
                           f"from the rounded reference, e.g. index "
                           f"{tuple(int(i) for i in np.argwhere(bad)[0])}")
    # ... and the normalized error.
    norm = max(1.0, float(np.abs(want).max()))
    record(op, variant, dtype, "abs/scale", err.max() / norm, LOWP_REL[dtype])
    assert err.max() <= LOWP_REL[dtype] * norm, detail + f", tolerance {LOWP_REL[dtype]} * {norm}"


# ---------------------------------------------------------------------------
# RoPE configurations: name -> (theta, scaling for a given rotary_dim)
# ---------------------------------------------------------------------------

def _longrope_lists(r: int):
    h = r // 2
    short = [round(1.0 + 0.05 * k + 0.003 * (k % 3), 6) for k in range(h)]
    long_ = [round(1.0 + 0.9 * k ** 1.25, 6) for k in range(h)]
    return short, long_


def _longrope(r: int, L0: int, select: str, **kw) -> dict:
    short, long_ = _longrope_lists(r)
    d = {"type": "longrope", "short_factor": short, "long_factor": long_,
         "original_max_position_embeddings": L0, "select": select}
    d.update(kw)
    return d


VARIANTS = {
    "none": lambda r: (10000.0, None),
    "linear": lambda r: (10000.0, {"type": "linear", "factor": 4.0}),
    "ntk": lambda r: (10000.0, {"type": "ntk", "factor": 2.5}),
    # Lmax = 32 < S: scaled by the run-time seq_len for every position set used here.
    "dynamic_ntk": lambda r: (10000.0, {"type": "dynamic_ntk", "factor": 2.0,
                                        "max_position_embeddings": 32}),
    # Lmax = 4096: unscaled for small positions, scaled for large ones.
    "dynamic_ntk_L4096": lambda r: (10000.0, {"type": "dynamic_ntk", "factor": 4.0,
                                              "max_position_embeddings": 4096}),
    "yarn": lambda r: (10000.0, {"type": "yarn", "factor": 4.0,
                                 "original_max_position_embeddings": 2048}),
    "yarn_mscale_notrunc": lambda r: (1000000.0, {
        "type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096,
        "beta_fast": 16.0, "beta_slow": 2.0, "mscale": 0.707, "mscale_all_dim": 1.0,
        "truncate": False}),
    "yarn_notrunc": lambda r: (10000.0, {"type": "yarn", "factor": 8.0,
                                         "original_max_position_embeddings": 1024,
                                         "truncate": False}),
    # mscale_all_dim = 0: m falls back to get_mscale(s) = 1.1386 (the ratio would be 1.098)
    "yarn_mscale_all_dim0": lambda r: (10000.0, {"type": "yarn", "factor": 4.0,
                                                 "original_max_position_embeddings": 2048,
                                                 "mscale": 0.707, "mscale_all_dim": 0.0}),
    "yarn_attn_factor": lambda r: (500000.0, {"type": "yarn", "factor": 32.0,
                                              "original_max_position_embeddings": 4096,
                                              "attention_factor": 1.1}),
    "llama3": lambda r: (500000.0, {"type": "llama3", "factor": 8.0,
                                    "original_max_position_embeddings": 8192}),
    "llama3_lf2_hf8": lambda r: (500000.0, {"type": "llama3", "factor": 16.0,
                                            "low_freq_factor": 2.0, "high_freq_factor": 8.0,
                                            "original_max_position_embeddings": 1024}),
    "longrope_short": lambda r: (10000.0, _longrope(r, 32, "short", factor=8.0)),
    "longrope_long": lambda r: (10000.0, _longrope(r, 32, "long", factor=8.0,
                                                   attention_factor=1.25)),
    # L0 = 32 < S: the run-time seq_len selects long_factor.
    "longrope_dynamic": lambda r: (10000.0, _longrope(r, 32, "dynamic", factor=8.0)),
    # L0 = 4096: short for small positions, long for large ones.
    "longrope_dynamic_L4096": lambda r: (10000.0, _longrope(r, 4096, "dynamic", factor=16.0)),
    # HF v5 proportional: the first floor(0.25 * r/2) pairs rotate (at theta^(-2i/r) / 2),
    # the others have frequency 0 and pass unrotated
    "proportional": lambda r: (10000.0, {"type": "proportional", "factor": 2.0,
                                         "partial_rotary_factor": 0.25}),
}
VARIANT_NAMES = list(VARIANTS)


def rope_config(variant: str, r: int, style: str = "half"):
    theta, scaling = VARIANTS[variant](r)
    attr = ir.rope_attr(theta, r, style, scaling)
    return theta, scaling, attr, ref.rope_attention_factor(scaling)


# ---------------------------------------------------------------------------
# Positions
# ---------------------------------------------------------------------------

POS_KINDS_1D = ("contiguous", "offset", "random", "large", "negative")
POS_KINDS_2D = ("batch", "batch_large")


def make_positions(kind: str, batch: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """int64 positions: [length] for the 1-D kinds, [batch, length] for the batch kinds."""
    if kind == "contiguous":
        return np.arange(length, dtype=np.int64)
    if kind == "offset":
        return 1000 + np.arange(length, dtype=np.int64)
    if kind == "random":  # unsorted, with repeats
        p = rng.integers(0, 3000, length)
        if length >= 8:
            p[3] = p[7] = p[length - 1]
        return p.astype(np.int64)
    if kind == "large":  # up to 2^20 = 1048576 inclusive, unsorted, a few small ones
        p = rng.integers(2 ** 20 - 200000, 2 ** 20 + 1, length)
        for i, v in enumerate((2 ** 20, 2 ** 20 - 1, 0, 1, 2 ** 19 + 3)):
            if i < length:
                p[(5 * i) % length] = v
        return p.astype(np.int64)
    if kind == "negative":
        p = rng.integers(-3000, 3000, length)
        p[0] = -1
        if length > 2:
            p[2] = -2 ** 20
        return p.astype(np.int64)
    if kind == "batch":  # row 0 contiguous, others shifted and permuted
        rows = [np.arange(length)] + [500 * b + rng.permutation(length) for b in range(1, batch)]
        return np.stack(rows).astype(np.int64)
    if kind == "batch_large":
        rows = [np.arange(length)] + [2 ** 20 - 3 * b - rng.permutation(length)
                                      for b in range(1, batch)]
        return np.stack(rows).astype(np.int64)
    raise ValueError(kind)


def pos_np(p: np.ndarray, elem: str) -> np.ndarray:
    return p.astype(np.int32 if elem == "i32" else np.int64)


# ===========================================================================
# pe.rope
# ===========================================================================

@dataclass
class RopeCase:
    id: str
    variant: str = "none"
    dtype: str = "f32"
    style: str = "half"
    layout: str = "bhsd"
    r: int = 64
    d: int = D
    pos: str = "offset"
    pos_elem: str = "i64"
    dynamic: bool = False              # batch and sequence dims '?'
    runs: Tuple[Tuple[int, int], ...] = ((B, S),)   # (batch, seq) shapes to call with
    marks: tuple = ()

    @property
    def fname(self) -> str:
        return "rope_" + self.id.replace("-", "_").replace(".", "_")

    def xshape(self, b, s):
        return (b, H, s, self.d) if self.layout == "bhsd" else (b, s, H, self.d)

    def ir(self) -> str:
        _, _, attr, _ = rope_config(self.variant, self.r, self.style)
        b, s = (None, None) if self.dynamic else self.runs[0]
        xt = ttype(self.xshape(b, s), self.dtype)
        batched = self.pos in POS_KINDS_2D
        pt = ttype((b, s) if batched else (s,), self.pos_elem)
        lay = " layout(bshd)" if self.layout == "bshd" else ""
        body = [f"%y = pe.rope {attr} %x, %p{lay} : {xt}, {pt}"]
        return render_func(self.fname, [("%x", xt), ("%p", pt)], body, [("%y", xt)])


def _rope_cases() -> List[RopeCase]:
    cases = []
    # every scaling variant x every dtype (offset positions: 1000 + i)
    for v in VARIANT_NAMES:
        for dt in DTYPES:
            cases.append(RopeCase(f"{v}-{dt}", variant=v, dtype=dt))
    # every scaling variant at positions up to 2^20 (f32), and per-batch positions (bf16)
    for v in VARIANT_NAMES:
        cases.append(RopeCase(f"{v}-large-f32", variant=v, pos="large"))
        cases.append(RopeCase(f"{v}-batch-bf16", variant=v, dtype="bf16", pos="batch"))
    # layouts: style x layout x (full, partial rotary) x dtype; partial uses YaRN (m != 1,
    # which must not touch the pass-through channels)
    for dt in DTYPES:
        for style in ("half", "interleaved"):
            for layout in ("bhsd", "bshd"):
                for r, v in ((64, "none"), (32, "yarn")):
                    cases.append(RopeCase(f"{style}-{layout}-r{r}of64-{dt}", variant=v, dtype=dt,
                                          style=style, layout=layout, r=r, pos="random"))
    # positions (f32 and f16), i32 and i64 positions
    for kind in POS_KINDS_1D + POS_KINDS_2D:
        for dt in ("f32", "f16"):
            cases.append(RopeCase(f"pos-{kind}-{dt}", variant="none", dtype=dt, pos=kind))
        cases.append(RopeCase(f"pos-{kind}-i32-bshd-interleaved", variant="llama3", pos=kind,
                              pos_elem="i32", layout="bshd", style="interleaved"))
    # shapes: dynamic batch and sequence, called with several shapes; D not 64
    dyn_runs = ((B, S), (3, 1), (1, 16), (2, 50))
    for dt in DTYPES:
        cases.append(RopeCase(f"dynamic-bhsd-{dt}", variant="yarn", dtype=dt, pos="random",
                              dynamic=True, runs=dyn_runs))
        cases.append(RopeCase(f"dynamic-bshd-batchpos-interleaved-{dt}",
                              variant="dynamic_ntk_L4096", dtype=dt, style="interleaved",
                              layout="bshd", pos="batch_large", dynamic=True, runs=dyn_runs))
    cases.append(RopeCase("dynamic-longrope_dynamic-seq-switch", variant="longrope_dynamic_L4096",
                          pos="contiguous", dynamic=True,
                          runs=((1, 4096), (1, 4097), (2, 3))))
    cases.append(RopeCase("d24-r16-interleaved-f32", d=24, r=16, style="interleaved",
                          variant="ntk"))
    cases.append(RopeCase("d128-r128-llama3-bf16", d=128, r=128, variant="llama3",
                          dtype="bf16"))
    cases.append(RopeCase("r2-of-64-f32", r=2, variant="linear", pos="large"))
    return cases


ROPE_CASES = _rope_cases()


@pytest.fixture(scope="module")
def rope_module():
    return ModuleGroup(ROPE_CASES)


def _run_rope_case(module, case: RopeCase, b: int, s: int, x_amp: float = 1.0):
    rng = rng_for(f"{case.id}-{b}-{s}")
    theta, scaling, _, m = rope_config(case.variant, case.r, case.style)
    xq = quantize(x_amp * rng.standard_normal(case.xshape(b, s)), case.dtype)
    pos = make_positions(case.pos, b, s, rng)
    (y,) = module.call(case.fname, as_input(xq, case.dtype), pos_np(pos, case.pos_elem))
    want = ref.apply_rope(xq, pos, theta, case.r, scaling, case.style, case.layout)
    return xq, pos, f64(y), want, m


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=c.marks) for c in ROPE_CASES])
def test_rope(rope_module, case: RopeCase):
    module = rope_module.get(case)
    for b, s in case.runs:
        xq, pos, y, want, m = _run_rope_case(module, case, b, s)
        scale = max(1.0, m * float(np.abs(xq).max()))
        check_rope_like(y, want, case.dtype, scale, "rope", case.variant,
                        f"{case.id} [B={b}, S={s}]")
        # partial rotary: the pass-through channels are copied bit for bit (no m)
        if case.r < case.d:
            np.testing.assert_array_equal(y[..., case.r:], xq[..., case.r:])


def test_f32_rope_positions_up_to_2_20_within_1e_6_of_float64(rope_module):
    """f32 RoPE at positions up to 1,048,576 within 1e-6 of float64 (|x| <= 1, m = 1)."""
    pos = np.array([2 ** 20, 2 ** 20 - 1, 2 ** 20 - 2, 1048000, 999999, 2 ** 19 + 1, 65537,
                    1 << 18, 777777, 3] + list(range(2 ** 20 - 27, 2 ** 20)), dtype=np.int64)
    assert pos.size == S and pos.max() == 1048576
    worst = 0.0
    for variant in ("none", "linear", "ntk", "dynamic_ntk", "dynamic_ntk_L4096", "llama3",
                    "llama3_lf2_hf8"):
        case = next(c for c in ROPE_CASES if c.id == f"{variant}-large-f32")
        theta, scaling, _, m = rope_config(variant, case.r)
        assert m == 1.0
        x = rng_for(variant).uniform(-1.0, 1.0, (B, H, S, D)).astype(np.float32)
        (y,) = rope_module.call(case.fname, x, pos)
        want = ref.apply_rope(f64(x), pos, theta, case.r, scaling)
        err = float(np.abs(f64(y) - want).max())
        worst = max(worst, err)
        assert err <= 1e-6, f"{variant}: max abs error {err:.3e} > 1e-6 at positions <= 2^20"
    record("rope", "positions<=2^20,|x|<=1", "f32", "abs", worst, 1e-6)


# ===========================================================================
# pe.rope_tables
# ===========================================================================

@dataclass
class TablesCase:
    id: str
    variant: str
    dtype: str = "f32"
    r: int = 64
    pos: str = "random"
    pos_elem: str = "i64"
    dynamic: bool = False
    marks: tuple = ()

    @property
    def fname(self) -> str:
        return "tables_" + self.id.replace("-", "_")

    def ir(self) -> str:
        _, _, attr, _ = rope_config(self.variant, self.r)
        batched = self.pos in POS_KINDS_2D
        b, s = (None, None) if self.dynamic else (B, S)
        pshape = (b, s) if batched else (s,)
        pt = ttype(pshape, self.pos_elem)
        tt = ttype(pshape + (self.r // 2,), self.dtype)
        body = [f"%c, %s = pe.rope_tables {attr} %p : {pt} -> {tt}"]
        return render_func(self.fname, [("%p", pt)], body, [("%c", tt), ("%s", tt)])


def _tables_cases() -> List[TablesCase]:
    cases = []
    for v in VARIANT_NAMES:
        for dt in DTYPES:
            cases.append(TablesCase(f"{v}-{dt}", v, dt, pos="offset"))
        cases.append(TablesCase(f"{v}-batch_large-f32", v, "f32", pos="batch_large"))
        cases.append(TablesCase(f"{v}-large-i32-f32", v, "f32", pos="large", pos_elem="i32"))
    cases.append(TablesCase("dynamic-negative-r16-f16", "yarn", "f16", r=16, pos="negative",
                            dynamic=True))
    cases.append(TablesCase("dynamic-batch-longrope_dynamic-bf16", "longrope_dynamic_L4096",
                            "bf16", pos="batch_large", dynamic=True))
    return cases


TABLES_CASES = _tables_cases()


@pytest.fixture(scope="module")
def tables_module():
    return ModuleGroup(TABLES_CASES)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=c.marks)
                                  for c in TABLES_CASES])
def test_rope_tables(tables_module, case: TablesCase):
    theta, scaling, _, m = rope_config(case.variant, case.r)
    module = tables_module.get(case)
    runs = ((B, S), (3, 1), (1, 40)) if case.dynamic else ((B, S),)
    for b, s in runs:
        pos = make_positions(case.pos, b, s, rng_for(f"{case.id}-{b}-{s}"))
        cos, sin = module.call(case.fname, pos_np(pos, case.pos_elem))
        want_cos, want_sin = ref.rope_tables(pos, theta, case.r, scaling)  # seq_len = max+1
        scale = max(1.0, m)
        check_rope_like(cos, want_cos, case.dtype, scale, "rope_tables", case.variant,
                        f"{case.id} cos [B={b}, S={s}]")
        check_rope_like(sin, want_sin, case.dtype, scale, "rope_tables", case.variant,
                        f"{case.id} sin [B={b}, S={s}]")


# ===========================================================================
# pe.rope_frequencies (run-time seq_len)
# ===========================================================================

FREQ_R = 64
SEQ_LENS = (0, 1, 31, 32, 33, 37, 1000, 4095, 4096, 4097, 100000, 2 ** 20)


def _freq_fname(variant: str) -> str:
    return "freq_" + variant


def _freq_ir(variant: str) -> str:
    _, _, attr, _ = rope_config(variant, FREQ_R)
    h = FREQ_R // 2
    t32, t64 = ttype((h,), "f32"), ttype((h,), "f64")
    body = [f"%a = pe.rope_frequencies {attr} seq_len %n -> {t32}",
            f"%b = pe.rope_frequencies {attr} seq_len %n -> {t64}",
            f"%c = pe.rope_frequencies {attr} -> {t32}",
            f"%d = pe.rope_frequencies {attr} -> {t64}"]
    return render_func(_freq_fname(variant), [("%n", "index")], body,
                       [("%a", t32), ("%b", t64), ("%c", t32), ("%d", t64)])


@pytest.fixture(scope="module")
def freq_module():
    return compile_module([_freq_ir(v) for v in VARIANT_NAMES])


def _check_freqs(got32, got64, want, label, variant):
    got32, got64 = f64(got32), f64(got64)
    ulps = ulp_distance(got32, round_to(want, "f32"), "f32")
    record("rope_frequencies", variant, "f32", "ulp", ulps.max(), 1)
    assert ulps.max() <= 1, f"{label} f32: {ulps.max():.0f} ulp, got {got32}, want {want}"
    zero = want == 0.0  # proportional scaling: pairs that do not rotate must be exactly 0
    assert (got32[zero] == 0.0).all() and (got64[zero] == 0.0).all(), f"{label}: {got64}"
    rel = np.abs(got64 - want) / np.where(zero, 1.0, np.abs(want))
    record("rope_frequencies", variant, "f64", "rel", rel.max(), FREQ_F64_REL)
    assert rel.max() <= FREQ_F64_REL, (f"{label} f64: relative error {rel.max():.3e} at pair "
                                       f"{int(np.argmax(rel))}: got {got64[np.argmax(rel)]!r}, "
                                       f"want {want[np.argmax(rel)]!r}")


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_rope_frequencies(freq_module, variant):
    theta, scaling, _, _ = rope_config(variant, FREQ_R)
    no_seq = ref.rope_inv_freq(theta, FREQ_R, scaling, seq_len=None)
    for n in SEQ_LENS:
        a, b_, c, d = freq_module.call(_freq_fname(variant), n)
        want = ref.rope_inv_freq(theta, FREQ_R, scaling, seq_len=n)
        _check_freqs(a, b_, want, f"{variant} seq_len={n}", variant)
        # without seq_len: unscaled dynamic NTK / short longrope factors
        _check_freqs(c, d, no_seq, f"{variant} without seq_len", variant)


def test_rope_frequencies_seq_len_switches():
    """The run-time seq_len really selects (guards against a test that cannot fail)."""
    theta, sc, _, _ = rope_config("longrope_dynamic_L4096", FREQ_R)
    assert not np.allclose(ref.rope_inv_freq(theta, FREQ_R, sc, 4096),
                           ref.rope_inv_freq(theta, FREQ_R, sc, 4097))
    theta, sc, _, _ = rope_config("dynamic_ntk_L4096", FREQ_R)
    assert not np.allclose(ref.rope_inv_freq(theta, FREQ_R, sc, 4096),
                           ref.rope_inv_freq(theta, FREQ_R, sc, 4097))


# ===========================================================================
# pe.sinusoidal
# ===========================================================================

@dataclass
class SinCase:
    id: str
    dtype: str = "f32"
    dim: int = 64
    base: Optional[float] = None
    layout: Optional[str] = None
    spacing: Optional[str] = None
    pos: str = "large"
    pos_elem: str = "i64"
    dynamic: bool = False

    @property
    def fname(self) -> str:
        return "sin_" + self.id.replace("-", "_").replace(".", "_")

    def ir(self) -> str:
        batched = self.pos in POS_KINDS_2D
        b, s = (None, None) if self.dynamic else (B, S)
        pshape = (b, s) if batched else (s,)
        pt = ttype(pshape, self.pos_elem)
        rt = ttype(pshape + (self.dim,), self.dtype)
        opts = ""
        if self.base is not None:
            opts += f" base({ir.format_f64(self.base)})"
        if self.layout is not None:
            opts += f" layout({self.layout})"
        if self.spacing is not None:
            opts += f" spacing({self.spacing})"
        body = [f"%e = pe.sinusoidal %p{opts} : {pt} -> {rt}"]
        return render_func(self.fname, [("%p", pt)], body, [("%e", rt)])


def _sin_cases() -> List[SinCase]:
    cases = []
    for dt in DTYPES:
        for layout in ("interleaved", "concat"):
            for sp in ("paper", "fairseq"):
                cases.append(SinCase(f"{layout}-{sp}-{dt}", dt, layout=layout, spacing=sp))
    cases.append(SinCase("defaults-contiguous-f32", pos="contiguous"))
    cases.append(SinCase("base500-dim30-concat-negative-i32-f32", base=500.0, dim=30,
                         layout="concat", pos="negative", pos_elem="i32"))
    cases.append(SinCase("batch_large-fairseq-dynamic-bf16", "bf16", spacing="fairseq",
                         pos="batch_large", dynamic=True))
    cases.append(SinCase("batch-dynamic-f16-dim4", "f16", dim=4, spacing="fairseq",
                         pos="batch", dynamic=True))
    return cases


SIN_CASES = _sin_cases()


@pytest.fixture(scope="module")
def sin_module():
    return compile_module([c.ir() for c in SIN_CASES])


@pytest.mark.parametrize("case", SIN_CASES, ids=lambda c: c.id)
def test_sinusoidal(sin_module, case: SinCase):
    runs = ((B, S), (3, 1), (1, 33)) if case.dynamic else ((B, S),)
    for b, s in runs:
        pos = make_positions(case.pos, b, s, rng_for(f"{case.id}-{b}-{s}"))
        (e,) = sin_module.call(case.fname, pos_np(pos, case.pos_elem))
        want = ref.sinusoidal(pos, case.dim, case.base or 10000.0, case.layout or "interleaved",
                              case.spacing or "paper")
        check_rope_like(e, want, case.dtype, 1.0, "sinusoidal",
                        f"{case.layout or 'interleaved'}/{case.spacing or 'paper'}",
                        f"{case.id} [B={b}, S={s}]")


# ===========================================================================
# pe.learned
# ===========================================================================

LEARNED_N, LEARNED_D = 50, 24


@dataclass
class LearnedCase:
    id: str
    dtype: str = "f32"
    dyn_rows: bool = False
    batched: bool = False
    pos_elem: str = "i64"
    dyn_seq: bool = True

    @property
    def fname(self) -> str:
        return "learned_" + self.id.replace("-", "_")

    def ir(self) -> str:
        tt = ttype((None if self.dyn_rows else LEARNED_N, LEARNED_D), self.dtype)
        s = None if self.dyn_seq else S
        pshape = (B, s) if self.batched else (s,)
        pt = ttype(pshape, self.pos_elem)
        rt = ttype(pshape + (LEARNED_D,), self.dtype)
        body = [f"%e = pe.learned %t[%p] : {tt}, {pt} -> {rt}"]
        return render_func(self.fname, [("%t", tt), ("%p", pt)], body, [("%e", rt)])


LEARNED_CASES = [
    LearnedCase(f"{dt}-{'dynrows' if dr else 'static'}-{'bs' if bt else 's'}-{pe_}",
                dt, dr, bt, pe_)
    for dt in DTYPES for dr in (False, True) for bt in (False, True)
    for pe_ in (("i64", "i32") if dt == "f32" else ("i64",))
] + [LearnedCase("f32-static-seq", dyn_seq=False)]


@pytest.fixture(scope="module")
def learned_module():
    return compile_module([c.ir() for c in LEARNED_CASES])


def _learned_table(dtype: str, rows: int = LEARNED_N) -> np.ndarray:
    return quantize(rng_for(f"table-{dtype}-{rows}").standard_normal((rows, LEARNED_D)), dtype)


@pytest.mark.parametrize("case", LEARNED_CASES, ids=lambda c: c.id)
def test_learned_in_range(learned_module, case: LearnedCase):
    rows_list = (LEARNED_N, 7) if case.dyn_rows else (LEARNED_N,)
    for rows in rows_list:
        table = _learned_table(case.dtype, rows)
        rng = rng_for(case.id)
        seqs = (S,) if not case.dyn_seq else (S, 1, 64)
        for s in seqs:
            shape = (B, s) if case.batched else (s,)
            pos = rng.integers(0, rows, shape)
            pos.reshape(-1)[0] = 0
            pos.reshape(-1)[-1] = rows - 1
            (e,) = learned_module.call(case.fname, as_input(table, case.dtype),
                                       pos_np(pos, case.pos_elem))
            want = ref.learned(table, pos)
            np.testing.assert_array_equal(f64(e), want,
                                          err_msg=f"{case.id}: rows={rows}, positions {pos}")
    record("learned", "gather", case.dtype, "abs", 0.0, 0.0)


# (case id, table rows, positions, the offending (position, flat entry))
_OOR = [
    ("f32-static-s-i64", LEARNED_N, [0, 1, 2, 50, 3], (50, 3)),              # p == N
    ("f32-static-s-i64", LEARNED_N, [4, -1, 2], (-1, 1)),                    # negative
    ("f32-static-s-i32", LEARNED_N, [-2147483648, 0], (-2147483648, 0)),     # i32 min
    ("f32-static-s-i64", LEARNED_N, [3, 2 ** 40], (2 ** 40, 1)),             # far beyond N
    ("f16-dynrows-s-i64", 7, [6, 0, 7], (7, 2)),                             # run-time N
    ("bf16-static-bs-i64", LEARNED_N, [[0, 1, 2, 3], [4, 5, -7, 6]], (-7, 6)),  # [B,S]: flat
    ("f32-dynrows-bs-i32", 12, [[0, 11, 1], [2, 3, 12]], (12, 5)),
]


@pytest.mark.parametrize("case_id,rows,positions,bad", _OOR,
                         ids=[f"{c}-p{b[0]}-entry{b[1]}" for c, _, _, b in _OOR])
def test_learned_out_of_range_is_a_runtime_error(learned_module, case_id, rows, positions,
                                                 bad):
    """The call raises KernelError (status 2, PE_ERROR_POSITION) naming the first bad
    position and its flat entry; the module goes on working."""
    case = next(c for c in LEARNED_CASES if c.id == case_id)
    table = _learned_table(case.dtype, rows)
    pos = np.asarray(positions, dtype=np.int64)
    p, entry = bad
    message = f"pe.learned: position {p} (entry {entry}) is out of range for a table of {rows} rows"
    with pytest.raises(runner.KernelError) as caught:
        learned_module.call(case.fname, as_input(table, case.dtype), pos_np(pos, case.pos_elem))
    assert caught.value.status == 2 and caught.value.message == message
    with pytest.raises(IndexError, match=f"position {p} \\(entry {entry}\\)"):
        ref.learned(table, pos)
    good = np.clip(pos, 0, rows - 1)
    (e,) = learned_module.call(case.fname, as_input(table, case.dtype), pos_np(good, case.pos_elem))
    np.testing.assert_array_equal(f64(e), ref.learned(table, good))


# ===========================================================================
# pe.alibi_slopes and pe.alibi_bias
# ===========================================================================

SLOPE_CASES = [(h, mb) for h in (1, 2, 3, 5, 6, 8, 12, 16, 32, 40, 112)
               for mb in (8.0, 16.0, 5.5)]
# Above 2^16 heads the slopes are not folded: computed at run time.
SLOPE_CASES += [(65537, 8.0)]


def _slopes_fname(h, mb):
    return f"slopes_{h}_{str(mb).replace('.', '_')}"


@dataclass
class BiasCase:
    id: str
    mode: str = "causal"
    slope_dtype: str = "f32"
    dtype: str = "f32"
    heads: int = 6
    q: str = "contiguous"       # positions kind for q (Sq = 37) ...
    k: str = "contiguous"       # ... and k (Skv = 29)
    pos_elem: str = "i64"
    dynamic: bool = False
    from_op: bool = False       # slopes from pe.alibi_slopes in the same function

    @property
    def fname(self) -> str:
        return "bias_" + self.id.replace("-", "_")

    def shapes(self, sq=S, skv=29):
        qs = (B, sq) if self.q in POS_KINDS_2D else (sq,)
        ks = (B, skv) if self.k in POS_KINDS_2D else (skv,)
        batched = len(qs) == 2 or len(ks) == 2
        out = ((B,) if batched else ()) + (self.heads, sq, skv)
        return qs, ks, out

    def ir(self) -> str:
        sq, skv = (None, None) if self.dynamic else (S, 29)
        qs, ks, out = self.shapes(sq, skv)
        st = ttype((self.heads,), self.slope_dtype)
        qt, kt, rt = ttype(qs, self.pos_elem), ttype(ks, self.pos_elem), ttype(out, self.dtype)
        args = [("%qp", qt), ("%kp", kt)]
        body = []
        if self.from_op:
            body.append(f"%sl = pe.alibi_slopes : {st}")
            slopes = "%sl"
        else:
            args.insert(0, ("%sl", st))
            slopes = "%sl"
        body.append(f"%b = pe.alibi_bias {self.mode} {slopes}, %qp, %kp : {st}, {qt}, {kt} -> {rt}")
        return render_func(self.fname, args, body, [("%b", rt)])


def _bias_cases() -> List[BiasCase]:
    cases = []
    for mode in ("causal", "symmetric"):
        for sdt in DTYPES:
            for dt in DTYPES:
                cases.append(BiasCase(f"{mode}-slopes_{sdt}-{dt}", mode, sdt, dt, q="random",
                                      k="random"))
        cases.append(BiasCase(f"{mode}-batch_q-f32", mode, q="batch", k="contiguous"))
        cases.append(BiasCase(f"{mode}-batch_k-i32-bf16", mode, dtype="bf16", q="random",
                              k="batch", pos_elem="i32"))
        cases.append(BiasCase(f"{mode}-large-f32", mode, q="large", k="large"))
        cases.append(BiasCase(f"{mode}-dynamic-from_op-h12-f32", mode, heads=12, from_op=True,
                              dynamic=True, q="batch", k="batch"))
    return cases


BIAS_CASES = _bias_cases()


@pytest.fixture(scope="module")
def alibi_module():
    funcs = []
    for h, mb in SLOPE_CASES:
        body = [f"%a = pe.alibi_slopes max_bias({ir.format_f64(mb)}) : {ttype((h,), 'f32')}",
                f"%b = pe.alibi_slopes max_bias({ir.format_f64(mb)}) : {ttype((h,), 'f64')}"]
        funcs.append(render_func(_slopes_fname(h, mb), [], body,
                                 [("%a", ttype((h,), "f32")), ("%b", ttype((h,), "f64"))]))
    funcs += [c.ir() for c in BIAS_CASES]
    return compile_module(funcs)


@pytest.mark.parametrize("heads,max_bias", SLOPE_CASES,
                         ids=[f"H{h}-max_bias{mb}" for h, mb in SLOPE_CASES])
def test_alibi_slopes(alibi_module, heads, max_bias):
    a, b_ = alibi_module.call(_slopes_fname(heads, max_bias))
    want = ref.alibi_slopes(heads, max_bias)
    u32 = ulp_distance(f64(a), round_to(want, "f32"), "f32")
    u64 = ulp_distance(f64(b_), want, "f64")
    record("alibi_slopes", "max_bias", "f32", "ulp", u32.max(), 1)
    record("alibi_slopes", "max_bias", "f64", "ulp", u64.max(), SLOPES_F64_ULPS)
    assert u32.max() <= 1, f"f32 slopes {a} vs {want}"
    assert u64.max() <= SLOPES_F64_ULPS, f"f64 slopes {b_} vs {want}"


@pytest.mark.parametrize("case", BIAS_CASES, ids=lambda c: c.id)
def test_alibi_bias(alibi_module, case: BiasCase):
    runs = ((S, 29), (1, 40), (16, 3)) if case.dynamic else ((S, 29),)
    for sq, skv in runs:
        rng = rng_for(f"{case.id}-{sq}-{skv}")
        qp = make_positions(case.q, B, sq, rng)
        kp = make_positions(case.k, B, skv, rng)
        if case.from_op:
            slopes = ref.alibi_slopes(case.heads)
            (got,) = alibi_module.call(case.fname, pos_np(qp, case.pos_elem),
                                       pos_np(kp, case.pos_elem))
        else:
            slopes = quantize(rng.uniform(0.001, 0.9, case.heads), case.slope_dtype)
            (got,) = alibi_module.call(case.fname, as_input(slopes, case.slope_dtype),
                                       pos_np(qp, case.pos_elem), pos_np(kp, case.pos_elem))
        want = ref.alibi_bias(round_to(slopes, "f32"), qp, kp, case.mode)
        got = f64(got)
        assert got.shape == want.shape, f"{case.id}: shape {got.shape} != {want.shape}"
        assert not np.isnan(got).any()
        np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want),
                                      err_msg=f"{case.id}: -inf (future key) pattern differs")
        if case.mode == "causal":
            assert np.isneginf(want).any() and np.isfinite(want).any()
        fin = np.isfinite(want)
        ulps = ulp_distance(got[fin], round_to(want[fin], case.dtype), case.dtype)
        allowed = 0 if case.dtype == "f32" else 1
        record("alibi_bias", case.mode, case.dtype, "ulp", ulps.max(), allowed)
        if ulps.max() > allowed:
            j = int(np.argmax(ulps))
            raise AssertionError(f"{case.id} [Sq={sq}, Skv={skv}]: {ulps.max():.0f} ulp: got "
                                 f"{got[fin][j]!r}, reference {want[fin][j]!r}")


# ===========================================================================
# pe.attention
# ===========================================================================

@dataclass
class AttnCase:
    id: str
    dtype: str = "f32"
    b: int = B
    hq: int = 4
    hkv: int = 4
    sq: int = S
    skv: int = S
    d: int = D
    dv: Optional[int] = None
    causal: bool = False
    window: Optional[int] = None
    mask: Optional[str] = None          # None | "11" ([1,1,Sq,Skv]) | "bh" ([B,Hq,Sq,Skv])
    mask_dtype: Optional[str] = None    # default: the attention dtype
    mask_neginf_rows: bool = False      # some mask rows entirely -inf
    qpos: Optional[str] = None          # positions kind, None = default positions
    kpos: Optional[str] = None
    qpos_values: Optional[Sequence[int]] = None   # explicit q positions ([Sq])
    kpos_values: Optional[Sequence[int]] = None
    pos_elem: str = "i64"
    rope: Optional[str] = None          # a VARIANTS name
    rope_r: Optional[int] = None        # default: D
    rope_style: str = "half"
    alibi: Optional[float] = None
    scale: Optional[float] = None
    dynamic: bool = False               # batch and both sequence dims '?'
    runs: Optional[Tuple[Tuple[int, int, int], ...]] = None   # (B, Sq, Skv) for dynamic
    expect_empty_rows: bool = False     # at least one fully masked query row must occur
    x_amp: float = 1.0
    marks: tuple = ()

    @property
    def fname(self) -> str:
        return "attn_" + self.id.replace("-", "_").replace(".", "_")

    @property
    def Dv(self) -> int:
        return self.dv or self.d

    @property
    def rotary(self) -> int:
        return self.rope_r or self.d

    def shapes_to_run(self):
        return self.runs or ((self.b, self.sq, self.skv),)

    def ir(self) -> str:
        if self.dynamic:
            b, sq, skv = None, None, None
        else:
            b, sq, skv = self.b, self.sq, self.skv
        dt = self.dtype
        qt = ttype((b, self.hq, sq, self.d), dt)
        kt = ttype((b, self.hkv, skv, self.d), dt)
        vt = ttype((b, self.hkv, skv, self.Dv), dt)
        ot = ttype((b, self.hq, sq, self.Dv), dt)
        args = [("%q", qt), ("%k", kt), ("%v", vt)]
        opts = ""
        if self.mask:
            mshape = (1, 1, sq, skv) if self.mask == "11" else (b, self.hq, sq, skv)
            mt = ttype(mshape, self.mask_dtype or dt)
            args.append(("%m", mt))
            opts += f" mask(%m : {mt})"
        if self.qpos or self.qpos_values is not None:
            pt = ttype((b, sq) if self.qpos in POS_KINDS_2D else (sq,), self.pos_elem)
            args.append(("%qp", pt))
            opts += f" q_positions(%qp : {pt})"
        if self.kpos or self.kpos_values is not None:
            pt = ttype((b, skv) if self.kpos in POS_KINDS_2D else (skv,), self.pos_elem)
            args.append(("%kp", pt))
            opts += f" k_positions(%kp : {pt})"
        rope = rope_config(self.rope, self.rotary, self.rope_style)[2] if self.rope else None
        opts += ir.attention_attrs(scale=self.scale, causal=self.causal, window=self.window,
                                   rope=rope, alibi=self.alibi)
        body = [f"%o = pe.attention %q, %k, %v{opts} : {qt}, {kt}, {vt} -> {ot}"]
        return render_func(self.fname, args, body, [("%o", ot)])


def _attn_cases() -> List[AttnCase]:
    c: List[AttnCase] = []
    for dt in DTYPES:
        c += [
            AttnCase(f"plain-{dt}", dt),
            AttnCase(f"causal-{dt}", dt, causal=True),
            AttnCase(f"gqa32x8-causal-{dt}", dt, hq=32, hkv=8, sq=13, skv=13, d=16,
                     causal=True),
            AttnCase(f"mqa-{dt}", dt, hq=8, hkv=1, sq=11, skv=29, d=32, causal=True),
            AttnCase(f"window-causal-{dt}", dt, causal=True, window=5),
            AttnCase(f"window-noncausal-{dt}", dt, window=4),
            AttnCase(f"mask11-{dt}", dt, mask="11"),
            AttnCase(f"maskBH-causal-{dt}", dt, mask="bh", causal=True),
            AttnCase(f"rope-causal-{dt}", dt, causal=True, rope="none"),
            AttnCase(f"rope-llama3-gqa-{dt}", dt, hq=32, hkv=8, sq=13, skv=13, d=16,
                     causal=True, rope="llama3", qpos="batch_large", kpos="batch_large"),
            AttnCase(f"alibi-causal-{dt}", dt, causal=True, alibi=8.0),
            AttnCase(f"decode-rope-{dt}", dt, sq=1, skv=41, causal=True, rope="yarn"),
            AttnCase(f"empty-rows-window-causal-{dt}", dt, causal=True, window=4,
                     qpos_values=[5, 50, 99, 100, 101, 120, 136, 139, 140, 141, 200, 0, 103],
                     kpos_values=list(range(100, 137)), sq=13, skv=37,
                     expect_empty_rows=True),
            AttnCase(f"empty-rows-neginf-mask-{dt}", dt, mask="bh", mask_neginf_rows=True,
                     expect_empty_rows=True),
            AttnCase(f"dynamic-rope-causal-{dt}", dt, causal=True, rope="none", dynamic=True,
                     runs=((B, S, S), (1, 1, 20), (3, 5, 16), (2, 17, 17))),
        ]
    c += [
        # scalings fused in attention (f32)
        *[AttnCase(f"rope-{v}-f32", causal=True, rope=v, qpos="offset", kpos="offset")
          for v in VARIANT_NAMES if v != "none"],
        AttnCase("rope-interleaved-partial-r32-f32", rope="yarn", rope_r=32,
                 rope_style="interleaved", causal=True),
        AttnCase("rope-large-positions-f32", rope="llama3", qpos="large", kpos="large"),
        AttnCase("rope-batch-positions-bf16", "bf16", rope="dynamic_ntk_L4096",
                 qpos="batch_large", kpos="batch_large", causal=True),
        # the L0/Lmax = 4096 variants take their scaled / long branch at large positions
        AttnCase("rope-dynamic_ntk_L4096-large-f32", rope="dynamic_ntk_L4096", qpos="large",
                 kpos="large", window=300000),
        AttnCase("rope-longrope_dynamic_L4096-large-f32", rope="longrope_dynamic_L4096",
                 qpos="large", kpos="large"),
        AttnCase("rope-dynamic_ntk-q-k-seq_len-differ-f32", rope="dynamic_ntk", sq=5, skv=37,
                 qpos="offset", kpos="contiguous"),
        # positions
        AttnCase("positions-random-causal-window-f32", qpos="random", kpos="random",
                 causal=True, window=700),
        AttnCase("positions-batch-i32-causal-f32", qpos="batch", kpos="batch", causal=True,
                 pos_elem="i32"),
        AttnCase("positions-batch-window-noncausal-f16", "f16", qpos="batch", kpos="batch",
                 window=6),
        AttnCase("default-positions-chunk-causal-f32", sq=9, skv=37, causal=True),
        AttnCase("default-positions-chunk-window-f32", sq=9, skv=37, causal=True, window=3),
        AttnCase("decode-gqa-window-alibi-f32", hq=32, hkv=8, sq=1, skv=45, d=16,
                 causal=True, window=16, alibi=8.0),
        AttnCase("decode-mqa-batchpos-window-f32", hq=8, hkv=1, sq=1, skv=45, d=32,
                 kpos="batch", qpos="batch", alibi=4.0, window=20),
        # alibi variants
        AttnCase("alibi-noncausal-h6-f32", hq=6, hkv=3, alibi=8.0),
        AttnCase("alibi-max_bias16-offset-bf16", "bf16", hq=12, hkv=12, d=32, alibi=16.0,
                 qpos="offset", kpos="offset", causal=True),
        AttnCase("alibi-rope-mask11-f32", alibi=8.0, rope="none", mask="11", causal=True),
        # masks
        AttnCase("mask11-f32mask-bf16", "bf16", mask="11", mask_dtype="f32", causal=True),
        AttnCase("maskBH-f16mask-f32", mask="bh", mask_dtype="f16"),
        AttnCase("maskBH-gqa-f32", hq=32, hkv=8, sq=13, skv=13, d=16, mask="bh"),
        # other shapes / attributes
        AttnCase("dv32-scale0.3-f32", dv=32, scale=0.3, causal=True),
        AttnCase("large-logits-scale1-f32", scale=1.0, x_amp=1.5),
        AttnCase("sq-gt-skv-causal-f32", sq=37, skv=20, causal=True, expect_empty_rows=True),
        AttnCase("dynamic-mask11-window-batchpos-f32", mask="11", qpos="batch", kpos="batch",
                 causal=True, window=9, dynamic=True,
                 runs=((B, S, S), (1, 1, 33), (3, 16, 16))),
        AttnCase("dynamic-gqa-alibi-rope-f16", "f16", hq=32, hkv=8, d=16, alibi=8.0,
                 rope="llama3", causal=True, dynamic=True, runs=((2, 13, 13), (1, 1, 30))),
        # fully masked rows
        AttnCase("empty-rows-causal-f32", qpos_values=list(range(S)),
                 kpos_values=list(range(10, 10 + S)), causal=True, expect_empty_rows=True),
        AttnCase("empty-rows-window-noncausal-f32", window=3, sq=6,
                 qpos_values=[0, 20, 35, 50, 70, 90], kpos_values=list(range(40, 40 + S)),
                 expect_empty_rows=True),
        AttnCase("empty-rows-mask11-alibi-bf16", "bf16", mask="11", mask_neginf_rows=True,
                 alibi=8.0, expect_empty_rows=True),
        AttnCase("empty-rows-rope-window-f16", "f16", rope="yarn", causal=True, window=2,
                 qpos_values=[3, 1000, 1001, 20, 2000, 0, 7], kpos_values=list(range(0, 37)),
                 sq=7, expect_empty_rows=True),
        AttnCase("empty-all-rows-mqa-f32", hq=8, hkv=1, causal=True, d=32,
                 qpos_values=list(range(S)), kpos_values=list(range(1000, 1000 + S)),
                 expect_empty_rows=True),
    ]
    return c


ATTN_CASES = _attn_cases()


@pytest.fixture(scope="module")
def attn_module():
    return ModuleGroup(ATTN_CASES)


def _attn_inputs(case: AttnCase, b: int, sq: int, skv: int):
    rng = rng_for(f"{case.id}-{b}-{sq}-{skv}")
    dt = case.dtype
    q = quantize(case.x_amp * rng.standard_normal((b, case.hq, sq, case.d)), dt)
    k = quantize(case.x_amp * rng.standard_normal((b, case.hkv, skv, case.d)), dt)
    v = quantize(rng.standard_normal((b, case.hkv, skv, case.Dv)), dt)
    call_args = [as_input(q, dt), as_input(k, dt), as_input(v, dt)]
    kw = {}
    if case.mask:
        mdt = case.mask_dtype or dt
        mshape = (1, 1, sq, skv) if case.mask == "11" else (b, case.hq, sq, skv)
        m = rng.standard_normal(mshape)
        m[rng.random(mshape) < 0.1] = -np.inf
        if case.mask_neginf_rows:
            if case.mask == "11":
                m[0, 0, [0, sq // 2, sq - 1], :] = -np.inf
            else:
                m[0, 1, 3, :] = -np.inf
                m[b - 1, case.hq - 1, sq - 1, :] = -np.inf
                m[b - 1, 0, 0, :] = -np.inf
        m = quantize(m, mdt)
        call_args.append(as_input(m, mdt))
        kw["mask"] = m
    qp = kp = None
    if case.qpos or case.qpos_values is not None:
        qp = (np.asarray(case.qpos_values, dtype=np.int64) if case.qpos_values is not None
              else make_positions(case.qpos, b, sq, rng))
        call_args.append(pos_np(qp, case.pos_elem))
        kw["q_positions"] = qp
    if case.kpos or case.kpos_values is not None:
        kp = (np.asarray(case.kpos_values, dtype=np.int64) if case.kpos_values is not None
              else make_positions(case.kpos, b, skv, rng))
        call_args.append(pos_np(kp, case.pos_elem))
        kw["k_positions"] = kp
    if case.rope:
        theta, scaling, _, _ = rope_config(case.rope, case.rotary, case.rope_style)
        kw["rope"] = {"theta": theta, "rotary_dim": case.rotary, "scaling": scaling,
                      "style": case.rope_style}
    return q, k, v, call_args, kw


def _fully_masked_rows(case: AttnCase, kw, b, sq, skv) -> np.ndarray:
    """[B, Hq, Sq] booleans: every key masked (independent of pe.reference)."""
    qp = kw.get("q_positions")
    kp = kw.get("k_positions")
    qp = np.arange(sq) + (skv - sq) if qp is None else qp
    kp = np.arange(skv) if kp is None else kp
    qp = np.broadcast_to(qp, (b, sq)) if np.ndim(qp) == 1 else qp
    kp = np.broadcast_to(kp, (b, skv)) if np.ndim(kp) == 1 else kp
    d = qp[:, :, None] - kp[:, None, :]
    masked = np.zeros((b, sq, skv), dtype=bool)
    if case.causal:
        masked |= d < 0
    if case.window is not None:
        masked |= d >= case.window
        if not case.causal:
            masked |= -d >= case.window
    masked = np.broadcast_to(masked[:, None], (b, case.hq, sq, skv))
    if "mask" in kw:
        masked = masked | np.isneginf(kw["mask"])
    return masked.all(axis=-1)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=c.marks) for c in ATTN_CASES])
def test_attention(attn_module, case: AttnCase):
    module = attn_module.get(case)
    for b, sq, skv in case.shapes_to_run():
        q, k, v, call_args, kw = _attn_inputs(case, b, sq, skv)
        (out,) = module.call(case.fname, *call_args)
        out = f64(out)
        want = ref.attention(q, k, v, scale=case.scale, causal=case.causal,
                             window=case.window, alibi=case.alibi, **kw)
        label = f"{case.id} [B={b}, Sq={sq}, Skv={skv}]"
        assert out.shape == want.shape, f"{label}: shape {out.shape} != {want.shape}"
        assert np.isfinite(out).all(), (f"{label}: {int((~np.isfinite(out)).sum())} NaN/inf "
                                        f"outputs")
        empty = _fully_masked_rows(case, kw, b, sq, skv)
        if case.expect_empty_rows:
            assert empty.any(), f"{label}: the case was meant to contain a fully masked row"
        if empty.any():
            rows = out[empty]
            assert (rows == 0.0).all(), (f"{label}: fully masked rows must be exactly 0; "
                                         f"{int((rows != 0).any(axis=-1).sum())} of "
                                         f"{rows.shape[0]} are not (max |.| "
                                         f"{np.abs(rows).max():.3e})")
            assert (want[empty] == 0.0).all()
        mref = float(np.abs(want).max())
        scale = mref if mref > 0 else float(np.abs(v).max())
        err = np.abs(out - want)
        rel = float(err.max()) / scale
        variant = case.id.rsplit("-", 1)[0]
        record("attention", variant, case.dtype, "rel", rel, ATTN_REL[case.dtype])
        if rel > ATTN_REL[case.dtype]:
            i = tuple(int(t) for t in np.unravel_index(int(np.argmax(err)), err.shape))
            raise AssertionError(f"{label}: max error {err.max():.3e} = {rel:.3e} x max|ref| "
                                 f"({scale:.4g}) > {ATTN_REL[case.dtype]} at {i}: got "
                                 f"{out[i]!r}, reference {want[i]!r}")


def test_attention_without_keys_is_zero(attn_module):
    """Skv = 0 (dynamic key length): every row is fully masked -> exactly 0, no NaN."""
    case = next(c for c in ATTN_CASES if c.id == "dynamic-rope-causal-f32")
    rng = rng_for(case.id + "-nokeys")
    q = rng.standard_normal((2, case.hq, 3, case.d)).astype(np.float32)
    kv = np.zeros((2, case.hkv, 0, case.d), dtype=np.float32)
    (out,) = attn_module.call(case.fname, q, kv, kv)
    assert out.shape == (2, case.hq, 3, case.Dv)
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out, 0.0)


def test_rope_empty_sequence(rope_module):
    """S = 0 with seq_len-dependent scaling (max over no positions): an empty result."""
    case = next(c for c in ROPE_CASES if c.id == "dynamic-bshd-batchpos-interleaved-f32")
    (y,) = rope_module.call(case.fname, np.zeros((2, 0, H, D), np.float32),
                            np.zeros((2, 0), np.int64))
    assert y.shape == (2, 0, H, D)


# ===========================================================================
# The checks can fail
# ===========================================================================

def test_checks_reject_errors_just_above_the_tolerances():
    """Perturbations of 2x the tolerance are rejected by the comparison helpers."""
    want = np.linspace(-1.5, 1.5, 64)
    check_rope_like(want, want, "f32", 1.0, "selftest", "x", "exact")
    with pytest.raises(AssertionError):
        check_rope_like(want + 2 * ROPE_F32_ABS, want, "f32", 1.0, "selftest", "x", "f32")
    for dt in ("f16", "bf16"):
        exact = round_to(want, dt)
        check_rope_like(exact, want, dt, 1.0, "selftest", "x", dt)
        # 2 ulps off a single element: rejected elementwise
        bumped = exact.copy()
        bumped[40] += 2 * spacing(exact[40], dt)
        with pytest.raises(AssertionError):
            check_rope_like(bumped, want, dt, 1.0, "selftest", "x", dt)
    _ERRORS.pop(("selftest", "x", "f32", "abs/scale"), None)
    for dt in ("f16", "bf16"):
        _ERRORS.pop(("selftest", "x", dt, "abs/scale"), None)
