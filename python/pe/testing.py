"""Test utilities: run `pe-opt`, parse folded constants, compare in units in the last place.

All values are handled as float64 arrays holding values exactly representable in the element
type (f64, f32, f16, bf16); rounding from float64 is round-to-nearest-even, done once.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "PE_OPT",
    "run_pe_opt",
    "parse_returned_constants",
    "round_to",
    "spacing",
    "ulp_distance",
    "assert_within_ulp",
]

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PE_OPT = os.environ.get("PE_OPT", os.path.join(_ROOT, "build", "bin", "pe-opt"))

FLOAT_TYPES = ("f64", "f32", "f16", "bf16")


# ---------------------------------------------------------------------------
# Rounding and ulps
# ---------------------------------------------------------------------------

def _round_bf16(x: np.ndarray) -> np.ndarray:
    """float64 -> nearest bfloat16 (8 significant bits, ties to even), as float64."""
    x = np.asarray(x, dtype=np.float64)
    out = x.copy()
    # Normal results: ties-to-even on the bits, dropping the low 45 of the 52 fraction bits
    # (a carry out of the fraction steps the exponent, as it should).
    bits = x.view(np.uint64)
    lsb = (bits >> np.uint64(45)) & np.uint64(1)
    kept = (bits + np.uint64((1 << 44) - 1) + lsb) & np.uint64(~((1 << 45) - 1) & ((1 << 64) - 1))
    normal = np.isfinite(x) & (np.abs(x) >= 2.0 ** -126)
    out[normal] = kept.view(np.float64)[normal]
    # The subnormal range by scaling.
    finite = np.isfinite(x) & (x != 0) & ~normal
    xf = x[finite]
    _, e = np.frexp(xf)  # xf = m 2^e, 0.5 <= |m| < 1; the leading bit has weight 2^(e-1)
    # ulp = 2^(e-8) for normal numbers, 2^-133 in the subnormal range (exponent < -126).
    q = np.maximum(e - 8, -133)
    out[finite] = np.ldexp(np.rint(np.ldexp(xf, -q)), q)  # np.rint: ties to even
    with np.errstate(over="ignore"):
        out[np.abs(out) >= 2.0 ** 128] = np.copysign(np.inf, out[np.abs(out) >= 2.0 ** 128])
    return out


def round_to(x, dtype: str) -> np.ndarray:
    """Round float64 values once to `dtype` (RNE) and return them as float64."""
    x = np.asarray(x, dtype=np.float64)
    if dtype == "f64":
        return x.copy()
    if dtype == "f32":
        return x.astype(np.float32).astype(np.float64)
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float64)
    if dtype == "bf16":
        return _round_bf16(x)
    raise ValueError(f"unsupported element type {dtype}")


def _ordered(x: np.ndarray, dtype: str) -> np.ndarray:
    """Integers whose differences count representable values between two numbers."""
    x = np.asarray(x, dtype=np.float64)
    if dtype == "f64":
        bits, mask = x.view(np.int64), np.int64(0x7FFFFFFFFFFFFFFF)
        return np.where(bits < 0, -(bits & mask), bits).astype(object)  # avoid overflow
    if dtype in ("f32", "bf16"):
        bits = x.astype(np.float32).view(np.int32).astype(np.int64)
        ordered = np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
        return ordered // 65536 if dtype == "bf16" else ordered
    if dtype == "f16":
        bits = x.astype(np.float16).view(np.int16).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFF), bits)
    raise ValueError(dtype)


def ulp_distance(a, b, dtype: str) -> np.ndarray:
    """Number of `dtype` values between a and b (both representable in `dtype`)."""
    return np.abs(np.asarray(_ordered(a, dtype) - _ordered(b, dtype))).astype(np.float64)


def spacing(x, dtype: str) -> np.ndarray:
    """The `dtype` ulp at |x| (distance to the next larger magnitude)."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    if dtype == "f64":
        return np.spacing(x)
    if dtype == "f32":
        return np.spacing(x.astype(np.float32)).astype(np.float64)
    if dtype == "f16":
        return np.spacing(x.astype(np.float16)).astype(np.float64)
    if dtype == "bf16":
        _, e = np.frexp(np.where(x == 0, 2.0 ** -126, x))
        return np.ldexp(1.0, np.maximum(e - 8, -133))
    raise ValueError(dtype)


def assert_within_ulp(actual, reference, dtype: str, ulps: int = 1,
                      extra_abs=None, what: str = "") -> None:
    """Assert each actual value is within `ulps` ulps of `reference` (float64) rounded to dtype.

    `extra_abs` (broadcastable): an additional absolute allowance for entries where the
    float64 reference is itself uncertain by more than an ulp (see test docstrings). An entry
    passes if its ulp distance is <= `ulps`, or |actual - reference| <= ulps * ulp + extra_abs.
    """
    actual = np.asarray(actual, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    assert actual.shape == reference.shape, (
        f"{what}: shape {actual.shape} != reference shape {reference.shape}")
    expected = round_to(reference, dtype)
    dist = ulp_distance(actual, expected, dtype)
    ok = dist <= ulps
    if extra_abs is not None:
        allowance = ulps * spacing(expected, dtype) + np.broadcast_to(extra_abs, actual.shape)
        ok |= np.abs(actual - reference) <= allowance
    if ok.all():
        return
    bad = np.argwhere(~ok)
    order = np.argsort(-dist[~ok], kind="stable")
    lines = []
    for j in order[:12]:
        idx = tuple(int(v) for v in bad[j])
        lines.append(f"  index {idx}: pe-opt {actual[idx]!r}, reference {reference[idx]!r} "
                     f"(rounded {expected[idx]!r}), {dist[idx]:.0f} ulp")
    raise AssertionError(
        f"{what}: {len(bad)} of {actual.size} {dtype} values differ by more than {ulps} ulp"
        + (" (plus the stated reference allowance)" if extra_abs is not None else "")
        + ":\n" + "\n".join(lines))


# ---------------------------------------------------------------------------
# pe-opt
# ---------------------------------------------------------------------------

def run_pe_opt(mlir: str, args: Sequence[str] = ("-canonicalize",),
               pe_opt: Optional[str] = None) -> str:
    """Run pe-opt on `mlir` text; return stdout, raise with stderr on failure."""
    tool = pe_opt or PE_OPT
    proc = subprocess.run([tool, *args, "-"], input=mlir, capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{tool} {' '.join(args)} failed ({proc.returncode}):\n"
                           f"{proc.stderr}\n--- input ---\n{mlir}")
    return proc.stdout


_CONST_RE = re.compile(
    r"^\s*(%[\w$.-]+) = arith\.constant dense<(.*)> : tensor<([0-9x]*)(f64|f32|f16|bf16)>\s*$")
_RETURN_RE = re.compile(r"^\s*(?:func\.)?return (.*?) : (.*)$")


def _tensor_shape(dims: str) -> Tuple[int, ...]:
    return tuple(int(d) for d in dims.split("x") if d)


def _bits_to_values(bits: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "f64":
        return bits.astype(np.uint64).view(np.float64).astype(np.float64)
    if dtype == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if dtype == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if dtype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    raise ValueError(dtype)


_WIDTH = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2}


def _parse_dense(body: str, shape: Tuple[int, ...], dtype: str) -> np.ndarray:
    count = int(np.prod(shape)) if shape else 1
    body = body.strip()
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        width = _WIDTH[dtype]
        utype = {8: "<u8", 4: "<u4", 2: "<u2"}[width]
        values = _bits_to_values(np.frombuffer(raw, dtype=utype), dtype)
    else:
        tokens = [t.strip() for t in body.replace("[", " ").replace("]", " ").split(",")]
        tokens = [t for t in tokens if t]
        out = []
        for t in tokens:
            if t.lower().startswith("0x"):
                out.append(_bits_to_values(np.array([int(t, 16)]), dtype)[0])
            else:
                out.append(float(t))
        # Decimal text is rounded once to the element type (it was printed from that type).
        values = round_to(np.array(out, dtype=np.float64), dtype)
    if values.size == 1 and count != 1:
        values = np.full(count, values[0])  # splat
    if values.size != count:
        raise ValueError(f"dense<{body[:80]}...> has {values.size} values, expected {count}")
    return values.reshape(shape)


def parse_returned_constants(text: str) -> List[Tuple[np.ndarray, str]]:
    """Values returned by the (single) function of folded pe-opt output, in return order.

    Each returned value must be an `arith.constant dense<...>`; returns (values, dtype) pairs
    with float64 values exactly representable in dtype.
    """
    constants: Dict[str, Tuple[str, Tuple[int, ...], str]] = {}
    returned: Optional[List[str]] = None
    for line in text.splitlines():
        m = _CONST_RE.match(line)
        if m:
            constants[m.group(1)] = (m.group(2), _tensor_shape(m.group(3)), m.group(4))
            continue
        r = _RETURN_RE.match(line)
        if r:
            returned = [v.strip() for v in r.group(1).split(",")]
    if returned is None:
        raise ValueError(f"no return in pe-opt output:\n{text}")
    results = []
    for name in returned:
        if name not in constants:
            raise AssertionError(f"returned value {name} was not folded to a dense constant:\n{text}")
        body, shape, dtype = constants[name]
        results.append((_parse_dense(body, shape, dtype), dtype))
    return results


def inner_loops(asm: str):
    """The innermost loops of LLVM's verbose assembly (`--emit=asm`, one
    function's or several), as (header label, instructions) pairs: a block
    (a label, or a `%bb.N:` comment) whose comments say `This Inner Loop
    Header`, with every block whose comments say `in Loop: Header=<it>`. Comment lines (`#` on x86, `//` on AArch64) such
    as `# 32-byte Spill` stay attached to their instruction."""
    import re
    blocks, current, name = {}, None, None
    for line in asm.splitlines():
        # A block: a label, or a fallthrough block's `# %bb.N:` comment.
        label = (re.match(r"^(\.?L?[\w.$]+):(.*)$", line) or
                 re.match(r"^(?:#|//) (%bb\.\d+):(.*)$", line))
        if label:
            name = label.group(1).lstrip(".").replace("LBB", "BB")
            current = blocks.setdefault(name, {"lines": [], "comments": label.group(2)})
            continue
        if current is None:
            continue
        stripped = line.strip()
        if stripped.startswith(("#", "//")):
            current["comments"] += " " + stripped
        else:
            current["lines"].append(stripped)
    headers = [n for n, b in blocks.items() if "This Inner Loop Header" in b["comments"]]
    loops = []
    for header in headers:
        body = list(blocks[header]["lines"])
        for n, b in blocks.items():
            if n != header and re.search(rf"in Loop: Header={re.escape(header)} ", b["comments"] + " "):
                body += b["lines"]
        loops.append((header, body))
    return loops


# The bf16 attention kernels of pe-compile, each forced by its options:
# f32 FMAs on widened operands, bf16 pair dot products (vdpbf16ps, BFDOT),
# AMX tiles (prefill; decode shapes take the FMA or dot-product kernel).
# Without options pe-compile chooses among them for the target.
BF16_KERNELS: Dict[str, Tuple[str, ...]] = {
    "fma": ("--bf16-dot=off", "--amx=off"),
    "dot": ("--bf16-dot=on", "--amx=off"),
    "amx": ("--amx=on",),
}


def bf16_kernel_missing(kernel: str) -> Optional[str]:
    """Why this host cannot run code of the bf16 kernel `kernel` (None: it can)."""
    from pe import runner
    if kernel == "dot" and not runner.host_has_avx512_bf16():
        return "the CPU has no avx512_bf16"
    if kernel == "amx" and not runner.host_has_amx():
        return "the CPU has no AMX (amx_bf16, amx_tile)"
    return None


# ---------------------------------------------------------------------------
# Attention features (soft-capping, sinks, ...): the shapes and lowerings each
# one's tests compile, and their tolerance.
# ---------------------------------------------------------------------------

# Relative to max(1, max |out|), as for `pe.attention` itself (f16: two ulps of
# the output, 2 * 2^-10; bf16: 2 * 2^-7; f32: accumulation error).
ATTENTION_TOLERANCE = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}
# The rotation of the cases with `rope`.
ATTENTION_ROPE = {"theta": 10000.0, "rotary_dim": 32}

# name: (Hq, Hkv, Sq, Skv, D, attention attributes)
ATTENTION_CASES = {
    "gqa-causal-rope": (8, 2, 40, 40, 32, dict(causal=True, rope=True)),
    "mha-window": (4, 4, 33, 33, 32, dict(causal=True, window=7)),
    "alibi-causal": (4, 4, 24, 24, 32, dict(causal=True, alibi=8.0)),
    "mask-gqa": (8, 2, 17, 29, 32, dict(mask=True)),
    "decode": (8, 2, 1, 70, 32, dict(causal=True, rope=True)),
}

# Every way an attention runs: the CPU kernels (small tiles so that the cases
# span several, key splits with 2 threads; the defaults; the 8-lane AVX2
# kernels, also on an AVX-512 host), the reference lowering, and the GPU SIMT
# kernel's schedule on the CPU.
ATTENTION_LOWERINGS = {
    "kernels": ["--attention-rows=16", "--attention-block-keys=24", "--num-threads=2"],
    "kernels-default": ["--num-threads=1"],
    "kernels-avx2": ["--mcpu=x86-64-v3", "--num-threads=2"],
    "reference": ["--fuse=false", "--tile-attention=false", "--tile-rope=false"],
    "gpu-schedule": ["--target=gpu-on-cpu", "--gpu-block-size=32", "--gpu-max-blocks=3"],
}


# Every way a `pe.rope` runs: the CPU kernel, the reference lowering, the GPU
# kernel's schedule on the CPU.
ROPE_LOWERINGS = {"cpu": [], "reference": ["--tile-rope=false"],
                  "gpu-schedule": ["--target=gpu-on-cpu", "--gpu-block-size=32",
                                   "--gpu-max-blocks=3"]}


def compile_rope_module(functions_of, lowering: str, dtypes=("f32", "bf16")):
    """{dtype: module}: the IR `functions_of(dtype)` compiled with the options of
    ROPE_LOWERINGS[lowering], once per element type."""
    from . import runner  # noqa: PLC0415 - pe.runner needs the built tools
    return {dt: runner.compile(functions_of(dt), ROPE_LOWERINGS[lowering], timeout=600)
            for dt in dtypes}


def check_attention(got, want, dtype: str, what: str) -> None:
    """Asserts `got` within ATTENTION_TOLERANCE[dtype] of the float64 `want`."""
    got = np.asarray(got, dtype=np.float64)
    err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
    assert err <= ATTENTION_TOLERANCE[dtype], f"{what}: relative error {err:.3g}"
