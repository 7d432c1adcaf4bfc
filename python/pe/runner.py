"""Compile pe IR with `pe-compile` and call its functions on numpy arrays.

    mod = runner.compile(ir_text)
    (y,) = mod.call("rope", x, positions)

The shared library's C interface (docs/c-abi.md) takes strided memref
descriptors; this module builds them with ctypes from C-contiguous arrays,
adopts or copies every result and only then frees their buffers.
Arguments are converted only where no value changes (an error names the
argument otherwise): float arrays whose values the element type holds
exactly, integers within range, never a float for an integer tensor.
bf16 arrays are held as float32 here and converted to and from bf16 bits
(round to nearest even) at the call boundary.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import tempfile
import weakref
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import numpy as np

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PE_COMPILE = os.environ.get("PE_COMPILE", os.path.join(_ROOT, "build", "bin", "pe-compile"))

_NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
          "i32": np.int32, "i64": np.int64, "index": np.int64}
_CTYPE = {"f32": ctypes.c_float, "f64": ctypes.c_double, "f16": ctypes.c_uint16,
          "bf16": ctypes.c_uint16, "i32": ctypes.c_int32, "i64": ctypes.c_int64,
          "index": ctypes.c_int64}

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


def to_bf16_bits(x) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns, round to nearest even."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    out = ((bits + rounding) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    out[nan] = 0x7FC0
    return out


def from_bf16_bits(bits) -> np.ndarray:
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


@dataclass(frozen=True)
class TensorType:
    shape: Tuple[int, ...]  # -1 for a dynamic dimension
    element: str

    @property
    def rank(self) -> int:
        return len(self.shape)


def _parse_type(text: str):
    text = text.strip()
    m = re.fullmatch(r"tensor<(.*)>", text)
    if not m:
        if text in ("index", "i64", "i32"):
            return text
        raise ValueError(f"unsupported argument type {text!r}")
    parts = m.group(1).split("x")
    dims = tuple(-1 if d == "?" else int(d) for d in parts[:-1])
    return TensorType(dims, parts[-1])


def _split_top(text: str) -> List[str]:
    """Split on commas outside <> and ()."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def parse_signatures(ir: str) -> Dict[str, Tuple[list, list]]:
    """Argument and result types of the public functions of `ir`."""
    sigs = {}
    for m in re.finditer(r"func\.func\s+@([\w$.]+)\s*\(", ir):
        name, i, depth = m.group(1), m.end(), 1
        start = i
        while depth:
            depth += {"(": 1, ")": -1}.get(ir[i], 0)
            i += 1
        try:
            args = [_parse_type(a.split(":", 1)[1]) for a in _split_top(ir[start:i - 1])]
            rest = ir[i:]
            results: list = []
            r = re.match(r"\s*->\s*", rest)
            if r:
                rest = rest[r.end():]
                if rest.startswith("("):
                    j, depth = 1, 1
                    while depth:
                        depth += {"(": 1, ")": -1}.get(rest[j], 0)
                        j += 1
                    results = [_parse_type(t) for t in _split_top(rest[1:j - 1])]
                else:
                    single = re.match(r"(tensor<[^{]*?>)\s*(attributes|\{)", rest)
                    if not single:
                        raise ValueError("unsupported result type")
                    results = [_parse_type(single.group(1))]
        except ValueError:
            continue  # not callable through Module.call (e.g. vector results)
        sigs[name] = (args, results)
    return sigs


_DESCRIPTORS: Dict[Tuple[int, str], type] = {}


def _descriptor(rank: int, element: str) -> type:
    key = (rank, element)
    if key not in _DESCRIPTORS:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTORS[key] = type(f"MemRef{rank}d_{element}", (ctypes.Structure,),
                                 {"_fields_": fields})
    return _DESCRIPTORS[key]


_INT_RANGE = {"i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
              "index": (-2**63, 2**63 - 1)}


def _checked_array(value, ttype: TensorType, where: str) -> np.ndarray:
    """`value` as a C-contiguous array of the tensor's element type, converted
    only where no value changes: floats and integers that the element type
    holds exactly, integers within its range. A float or bool for an integer
    tensor, a value out of range or one that would round is an error naming
    the argument. bf16 tensors take float32 arrays, which are rounded to
    nearest even at the call (the documented bf16 convention); other dtypes
    must hold bf16 values exactly."""
    array = np.asarray(value)
    element = ttype.element
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{where}: expected numbers for a tensor of {element}, got "
                        f"{array.dtype}")
    if element in _INT_RANGE:
        if array.dtype.kind in "fb":
            raise TypeError(f"{where}: expected integers for a tensor of {element}, "
                            f"got {array.dtype} values")
        low, high = _INT_RANGE[element]
        if array.size and (int(array.min()) < low or int(array.max()) > high):
            bad = array[(array < low) | (array > high)].flat[0]
            raise OverflowError(f"{where}: {int(bad)} is outside the range of {element} "
                                f"[{low}, {high}]")
        return np.ascontiguousarray(array, dtype=_NUMPY[element])
    converted = (to_bf16_bits(array) if element == "bf16"
                 else np.ascontiguousarray(array, dtype=_NUMPY[element]))
    if array.dtype != (np.float32 if element == "bf16" else _NUMPY[element]):
        back = from_bf16_bits(converted) if element == "bf16" else converted
        if array.dtype.kind in "iu":  # compared as integers: float64 rounds above 2^53
            with np.errstate(invalid="ignore"):
                exact = np.isfinite(back) & (back.astype(np.float64) == array.astype(np.float64))
                exact &= back.astype(np.float64).astype(array.dtype) == array
        else:
            back = back.astype(np.float64)
            exact = (back == array) | (np.isnan(back) & np.isnan(array.astype(np.float64)))
        if not exact.all():
            bad = array.flat[int(np.argmin(exact.ravel()))]
            raise ValueError(f"{where}: {bad!r} ({array.dtype}) is not exactly a {element}; "
                             f"round it explicitly")
    return np.ascontiguousarray(array, dtype=np.float32 if element == "bf16" else _NUMPY[element])


def _to_descriptor(array: np.ndarray, ttype: TensorType):
    if array.ndim != ttype.rank:
        raise ValueError(f"expected a rank-{ttype.rank} array, got shape {array.shape}")
    for got, want in zip(array.shape, ttype.shape):
        if want >= 0 and got != want:
            raise ValueError(f"expected shape {ttype.shape}, got {array.shape}")
    if ttype.element == "bf16":
        array = to_bf16_bits(array)
    else:
        array = np.ascontiguousarray(array, dtype=_NUMPY[ttype.element])
    desc = _descriptor(ttype.rank, ttype.element)()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    itemsize = array.itemsize
    for i in range(ttype.rank):
        desc.sizes[i] = array.shape[i]
        desc.strides[i] = array.strides[i] // itemsize
    return desc, array


def _checked_scalar(value, element: str, where: str) -> int:
    """An integer argument, exactly: no float, no bool, within its range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{where}: expected an integer for {element}, got "
                        f"{type(value).__name__} {value!r}")
    low, high = _INT_RANGE[element]
    if not low <= int(value) <= high:
        raise OverflowError(f"{where}: {value} is outside the range of {element}")
    return int(value)


def host_has_amx() -> bool:
    """Whether this CPU has AMX bf16 tiles (code built with --amx=on runs here)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return "amx_bf16" in flags and "amx_tile" in flags


def _adopt(desc, ttype: TensorType):
    """The result buffer itself as an array that frees it when collected, for a
    dense row-major result of its own allocation (else None)."""
    dtype = np.dtype(_NUMPY[ttype.element])
    shape = tuple(desc.sizes[i] for i in range(ttype.rank))
    dense, stride = True, 1
    for i in reversed(range(ttype.rank)):
        if shape[i] != 1 and desc.strides[i] != stride:
            dense = False
        stride *= shape[i]
    if not dense or ttype.element == "bf16" or any(n == 0 for n in shape):
        return None
    buf = (ctypes.c_char * (stride * dtype.itemsize)).from_address(
        desc.aligned + desc.offset * dtype.itemsize)
    weakref.finalize(buf, _libc.free, desc.allocated)
    return np.frombuffer(buf, dtype=dtype).reshape(shape)


def _from_descriptor(desc, ttype: TensorType) -> np.ndarray:
    dtype = np.dtype(_NUMPY[ttype.element])
    shape = tuple(desc.sizes[i] for i in range(ttype.rank))
    strides = tuple(desc.strides[i] * dtype.itemsize for i in range(ttype.rank))
    if any(s == 0 for s in shape):
        out = np.zeros(shape, dtype)
    else:
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, desc.strides[:ttype.rank]))
        buf = (ctypes.c_char * (extent * dtype.itemsize)).from_address(
            desc.aligned + desc.offset * dtype.itemsize)
        flat = np.frombuffer(buf, dtype=dtype, count=extent)
        out = np.lib.stride_tricks.as_strided(flat, shape, strides).copy()
    if ttype.element == "bf16":
        return from_bf16_bits(out)
    return out


class Module:
    """A compiled module: call its public functions on numpy arrays."""

    def __init__(self, library: str, signatures):
        self.library = library
        self.signatures = signatures
        self._lib = ctypes.CDLL(library)

    def call(self, name: str, *args) -> List[np.ndarray]:
        arg_types, result_types = self.signatures[name]
        if len(args) != len(arg_types):
            raise TypeError(f"{name} takes {len(arg_types)} arguments, got {len(args)}")
        c_args, keep, inputs = [], [], set()
        for i, (value, t) in enumerate(zip(args, arg_types)):
            where = f"{name}: argument {i}"
            if isinstance(t, TensorType):
                desc, array = _to_descriptor(_checked_array(value, t, where), t)
                keep += [desc, array]
                inputs.add(desc.allocated)
                c_args.append(ctypes.byref(desc))
            else:
                c_args.append(ctypes.c_int64(_checked_scalar(value, t, where)))
        descs = [_descriptor(t.rank, t.element)() for t in result_types]
        if len(descs) == 1:
            c_args.insert(0, ctypes.byref(descs[0]))
        elif descs:
            packed = type("Results", (ctypes.Structure,),
                          {"_fields_": [(f"r{i}", type(d)) for i, d in enumerate(descs)]})()
            c_args.insert(0, ctypes.byref(packed))
        getattr(self._lib, "_mlir_ciface_" + name)(*c_args)
        if len(descs) > 1:
            descs = [getattr(packed, f"r{i}") for i in range(len(descs))]
        return _collect_results(descs, result_types, inputs)


def _collect_results(descs, result_types, inputs) -> List[np.ndarray]:
    """Every result as an array first, then the buffers freed: a buffer that
    two results share (or that is an input) is read before anything is freed
    and released once."""
    outputs, adopted, to_free = [], set(), set()
    for d, t in zip(descs, result_types):
        owned = d.allocated and d.allocated not in inputs
        array = None
        if owned and d.allocated not in adopted and d.allocated not in to_free:
            array = _adopt(d, t)  # zero-copy: the array frees the buffer
        if array is not None:
            adopted.add(d.allocated)
        else:
            array = _from_descriptor(d, t)
            if owned:
                to_free.add(d.allocated)
        outputs.append(array)
    for pointer in to_free - adopted:
        _libc.free(pointer)
    return outputs


def compile(ir: str, workdir: str | None = None, extra_args: Sequence[str] = ()) -> Module:
    """Compile `ir` with `pe-compile --emit=shared` and load it."""
    workdir = workdir or tempfile.mkdtemp(prefix="pe-")
    src = os.path.join(workdir, "module.mlir")
    lib = os.path.join(workdir, "module.so")
    with open(src, "w") as f:
        f.write(ir)
    proc = subprocess.run([PE_COMPILE, src, "--emit=shared", "-o", lib, *extra_args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"pe-compile failed:\n{proc.stderr}")
    return Module(lib, parse_signatures(ir))
