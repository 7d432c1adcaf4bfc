"""Compile pe IR with `pe-compile` and call its functions on numpy arrays.

    mod = runner.compile(ir_text)
    (y,) = mod.call("rope", x, positions)

The library's functions are read from the JSON that `pe-compile --interface`
writes beside it; its C interface (docs/c-abi.md) takes dense memref
descriptors, which this module builds with ctypes from C-contiguous arrays
(zero-copy where the array already has the element type). Results are
adopted without a copy, or written into caller arrays with `out=`.
Arguments are converted only where no value changes (an error names the
argument otherwise): float arrays whose values the element type holds
exactly, integers within range, never a float for an integer tensor. bf16
is `ml_dtypes.bfloat16`. An error status of a compiled function (a size
mismatch, a position out of range) raises KernelError with its message.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import tempfile
import weakref
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

import numpy as np

try:  # bf16 as a numpy dtype; without it, bf16 tensors are uint16 bit patterns
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - a machine without the requirement
    ml_dtypes = None
    BF16 = np.dtype(np.uint16)

_HERE = os.path.dirname(os.path.abspath(__file__))


def _find_pe_compile() -> str:
    """$PE_COMPILE, else the one installed with the package (pip install .),
    else the source tree's build."""
    if os.environ.get("PE_COMPILE"):
        return os.environ["PE_COMPILE"]
    packaged = os.path.join(_HERE, "_native", "bin", "pe-compile")
    if os.access(packaged, os.X_OK):
        return packaged
    return os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build", "bin", "pe-compile")


PE_COMPILE = _find_pe_compile()

_NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": BF16,
          "i1": np.bool_, "i8": np.int8, "i16": np.int16,
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


def bf16_array(values) -> np.ndarray:
    """`values` rounded to bf16 (nearest even) as the runner takes bf16 tensors."""
    bits = to_bf16_bits(values)
    return bits if ml_dtypes is None else bits.view(BF16)


def to_float32(array) -> np.ndarray:
    """A result as float32 values (bf16 given as bit patterns too)."""
    array = np.asarray(array)
    return from_bf16_bits(array) if array.dtype == np.uint16 else array.astype(np.float32)


@dataclass(frozen=True)
class TensorType:
    shape: Tuple[int, ...]  # -1 for a dynamic dimension
    element: str

    @property
    def rank(self) -> int:
        return len(self.shape)


def _value_type(entry: dict):
    """A TensorType, the element name of a scalar, or None (a type without a C
    form, such as a vector), from the interface JSON."""
    if entry["kind"] == "tensor":
        return TensorType(tuple(entry["shape"]), entry["dtype"])
    return entry["dtype"] if entry["kind"] == "scalar" else None


@dataclass(frozen=True)
class Entry:
    """One exported function of a library (pe-compile --interface)."""
    name: str
    symbol: str
    arguments: Tuple  # TensorType or scalar element names
    results: Tuple
    outputs: int  # trailing arguments that are written (the `_into` entries)
    in_place: Tuple[int, ...] = ()  # arguments updated in place (pe.in_place)


def read_interface(path: str) -> Tuple[str, Dict[str, Entry]]:
    """The error-message symbol and the entries, by function name, of a library's
    interface JSON."""
    with open(path) as f:
        doc = json.load(f)
    entries = {}
    for fn in doc["functions"]:
        entries[fn["name"]] = Entry(fn["name"], fn["symbol"],
                                    tuple(_value_type(a) for a in fn["arguments"]),
                                    tuple(_value_type(r) for r in fn["results"]),
                                    int(fn["outputs"]),
                                    tuple(int(i) for i in fn.get("in_place", ())))
    return doc["last_error"], entries


class LoadError(OSError):
    """A compiled library that the dynamic loader refuses: the message says
    which library, the loader's reason and what usually causes it."""

    def __init__(self, library: str, reason: str):
        hint = ""
        if "undefined symbol" in reason:
            hint = ("; the library needs a helper the process cannot resolve: pe's runtime "
                    "(libpe_runtime.so, linked beside the library by pe-compile) or a compiler "
                    "helper such as __truncsfbf2 (from libgcc); rebuild the library with the "
                    "pe-compile of this installation")
        elif "cannot open shared object" in reason or "No such file" in reason:
            hint = ("; a library it links was not found (beside it, or on "
                    "LD_LIBRARY_PATH)")
        super().__init__(f"pe: cannot load the kernel library {library}: {reason}{hint}")
        self.library, self.reason = library, reason


class KernelError(RuntimeError):
    """A compiled function returned an error status (enum pe_status): the message
    names the op, what differs and the values."""

    def __init__(self, function: str, status: int, message: str):
        super().__init__(f"{function}: {message} (status {status})")
        self.function, self.status, self.message = function, status, message


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


_INT_RANGE = {"i1": (0, 1), "i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1),
              "i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
              "index": (-2**63, 2**63 - 1)}


def _checked_array(value, ttype: TensorType, where: str) -> np.ndarray:
    """`value` as a C-contiguous array of the tensor's element type, converted
    only where no value changes: floats and integers that the element type
    holds exactly, integers within its range. A float or bool for an integer
    tensor, a value out of range or one that would round is an error naming
    the argument (round explicitly, e.g. `x.astype(ml_dtypes.bfloat16)`)."""
    array = np.asarray(value)
    element = ttype.element
    dtype = np.dtype(_NUMPY[element])
    if array.dtype == dtype:
        return np.ascontiguousarray(array)
    if element == "bf16" and ml_dtypes is None:
        raise TypeError(f"{where}: bf16 tensors take uint16 bit patterns (runner.bf16_array) "
                        f"without ml_dtypes, got {array.dtype}")
    if array.dtype.kind not in "biuf" and array.dtype != BF16:
        raise TypeError(f"{where}: expected numbers for a tensor of {element}, got "
                        f"{array.dtype}")
    if element in _INT_RANGE:
        if array.dtype.kind in "fbV" or array.dtype == BF16:
            raise TypeError(f"{where}: expected integers for a tensor of {element}, "
                            f"got {array.dtype} values")
        low, high = _INT_RANGE[element]
        if array.size and (int(array.min()) < low or int(array.max()) > high):
            bad = array[(array < low) | (array > high)].flat[0]
            raise OverflowError(f"{where}: {int(bad)} is outside the range of {element} "
                                f"[{low}, {high}]")
        return np.ascontiguousarray(array, dtype=dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        converted = np.ascontiguousarray(array, dtype=dtype)
        back = converted.astype(np.float64)
        if array.dtype.kind in "iu":  # compared as integers: float64 rounds above 2^53
            exact = np.isfinite(back) & (back == array.astype(np.float64))
            exact &= back.astype(array.dtype) == array
        else:
            wide = array.astype(np.float64)
            exact = (back == wide) | (np.isnan(back) & np.isnan(wide))
    if not exact.all():
        bad = array.flat[int(np.argmin(exact.ravel()))]
        raise ValueError(f"{where}: {bad!r} ({array.dtype}) is not exactly a {element}; "
                         f"round it explicitly")
    return converted


def _writable_array(value, ttype: TensorType, where: str) -> np.ndarray:
    """An argument that the function updates in place (pe.in_place, a KV
    cache): the caller's own array, never a converted copy."""
    dtype = np.dtype(_NUMPY[ttype.element])
    if (not isinstance(value, np.ndarray) or value.dtype != dtype
            or not value.flags.c_contiguous or not value.flags.writeable):
        raise TypeError(f"{where}: updated in place, so it must be a writeable "
                        f"C-contiguous array of {dtype}")
    return value


def dense_descriptor(pointer: int, shape: Sequence[int], ttype: TensorType, where: str):
    """The descriptor of a dense row-major buffer of the element type at
    `pointer` (numpy arrays, torch tensors: no copy)."""
    shape = tuple(int(n) for n in shape)
    rank = len(ttype.shape)
    if len(shape) != rank:
        raise ValueError(f"{where}: expected a rank-{rank} array, got shape {shape}")
    for got, want in zip(shape, ttype.shape):
        if want >= 0 and got != want:
            raise ValueError(f"{where}: expected shape {ttype.shape} (-1: any), got {shape}")
    desc = _descriptor(rank, ttype.element)()
    desc.allocated = desc.aligned = pointer
    if rank:
        strides = [1] * rank
        for i in range(rank - 1, 0, -1):
            strides[i - 1] = strides[i] * shape[i]
        desc.sizes[:] = shape
        desc.strides[:] = strides
    return desc


def _to_descriptor(array: np.ndarray, ttype: TensorType, where: str):
    """The descriptor of a C-contiguous `array` of the element type."""
    return dense_descriptor(array.ctypes.data, array.shape, ttype, where)


def _checked_scalar(value, element: str, where: str) -> int:
    """An integer argument, exactly: no float, no bool, within its range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{where}: expected an integer for {element}, got "
                        f"{type(value).__name__} {value!r}")
    low, high = _INT_RANGE[element]
    if not low <= int(value) <= high:
        raise OverflowError(f"{where}: {value} is outside the range of {element}")
    return int(value)


def _cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def host_has_amx() -> bool:
    """Whether this CPU has AMX bf16 tiles (code built with --amx=on runs here)."""
    return {"amx_bf16", "amx_tile"} <= _cpu_flags()


def host_has_avx512_bf16() -> bool:
    """Whether this CPU has AVX512-BF16 (pe-compile's default --bf16-dot=auto
    then computes bf16 attention with vdpbf16ps)."""
    return "avx512_bf16" in _cpu_flags()


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
    if not dense or any(n == 0 for n in shape):
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
        return np.zeros(shape, dtype)
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, desc.strides[:ttype.rank]))
    buf = (ctypes.c_char * (extent * dtype.itemsize)).from_address(
        desc.aligned + desc.offset * dtype.itemsize)
    flat = np.frombuffer(buf, dtype=dtype, count=extent)
    return np.lib.stride_tricks.as_strided(flat, shape, strides).copy()


def _result_slot(types):
    """The ctypes object the C interface writes results into: a descriptor or
    scalar for one result, a struct of them for several (None for none)."""
    def ctype(t):
        return _descriptor(t.rank, t.element) if isinstance(t, TensorType) else _CTYPE[t]
    if not types:
        return None
    if len(types) == 1:
        return ctype(types[0])()
    return type("Results", (ctypes.Structure,),
                {"_fields_": [(f"r{i}", ctype(t)) for i, t in enumerate(types)]})()


class Module:
    """A compiled library: call its public functions on numpy arrays.

    `call(name, *args)` returns new arrays; `call(name, *args, out=arrays)`
    writes the tensor results into `out` (C-contiguous arrays of the result
    dtypes, 64-byte aligned to be written in place) through the `_into`
    entry. An error status raises KernelError.
    """

    def __init__(self, library: str, interface: str, owner=None):
        self.library = library
        last_error, self.entries = read_interface(interface)
        try:
            self._lib = ctypes.CDLL(library)
        except OSError as error:
            raise LoadError(library, str(error)) from None
        self._last_error = getattr(self._lib, last_error)
        self._last_error.restype = ctypes.c_char_p
        self._owner = owner  # e.g. the temporary folder, removed with the module

    @property
    def functions(self) -> List[str]:
        """The public functions (each `f` also has `f_into` where it returns tensors)."""
        return [n for n, e in self.entries.items() if e.outputs == 0]

    def call(self, name: str, *args, out=None) -> List[np.ndarray]:
        if name not in self.entries:
            raise KeyError(f"the library has no function {name!r}; it has "
                           f"{sorted(self.functions)}")
        if out is None:
            return self._call(self.entries[name], args, ())
        outs = [out] if isinstance(out, np.ndarray) else list(out)
        into = self.entries.get(name + "_into")
        if into is None:
            raise TypeError(f"{name} has no destination-passing entry (no tensor results, "
                            f"or a library compiled without them)")
        if len(outs) != into.outputs:
            raise TypeError(f"{name} writes {into.outputs} outputs, got {len(outs)}")
        return self._call(into, args, outs)

    def _call(self, entry: Entry, args, outs) -> List[np.ndarray]:
        if None in entry.arguments or None in entry.results:
            raise TypeError(f"{entry.name} has operands without a C form (vectors): "
                            f"call {entry.symbol} through ctypes")
        inputs = entry.arguments[:len(entry.arguments) - entry.outputs]
        if len(args) != len(inputs):
            raise TypeError(f"{entry.name} takes {len(inputs)} arguments, got {len(args)}")
        c_args, keep, owned = [], [], set()
        for i, (value, t) in enumerate(zip(args, inputs)):
            where = f"{entry.name}: argument {i}"
            if i in entry.in_place:
                array = _writable_array(value, t, where)
                desc = _to_descriptor(array, t, where)
                keep.append(desc)
                c_args.append(ctypes.byref(desc))
            elif isinstance(t, TensorType):
                array = _checked_array(value, t, where)
                desc = _to_descriptor(array, t, where)
                keep += [desc, array]
                owned.add(desc.allocated)
                c_args.append(ctypes.byref(desc))
            else:
                c_args.append(_CTYPE[t](_checked_scalar(value, t, where)))
        for i, (array, t) in enumerate(zip(outs, entry.arguments[len(inputs):])):
            where = f"{entry.name}: output {i}"
            if (not isinstance(array, np.ndarray) or array.dtype != np.dtype(_NUMPY[t.element])
                    or not array.flags.c_contiguous or not array.flags.writeable):
                raise TypeError(f"{where}: expected a writeable C-contiguous array of "
                                f"{np.dtype(_NUMPY[t.element])}")
            desc = _to_descriptor(array, t, where)
            keep.append(desc)
            c_args.append(ctypes.byref(desc))
        slot = _result_slot(entry.results)
        if slot is not None:
            c_args.insert(0, ctypes.byref(slot))
        self.invoke(entry, c_args)
        if slot is None:
            return list(outs)
        values = ([slot] if len(entry.results) == 1 else
                  [getattr(slot, f"r{i}") for i in range(len(entry.results))])
        return list(outs) + _collect_results(values, entry.results, owned)


    def invoke(self, entry: Entry, c_args) -> None:
        """Calls `entry` with ready C arguments (descriptors by reference, then
        scalars); an error status raises KernelError."""
        function = getattr(self._lib, entry.symbol)
        function.restype = ctypes.c_int32
        status = function(*c_args)
        if status != 0:
            raise KernelError(entry.name, status, self._last_error().decode())


def _collect_results(values, result_types, inputs) -> List:
    """Every result as an array (or scalar) first, then the buffers freed: a
    buffer that two results share (or that is an input) is read before
    anything is freed and released once."""
    outputs, adopted, to_free = [], set(), set()
    for d, t in zip(values, result_types):
        if not isinstance(t, TensorType):
            outputs.append(d.value if hasattr(d, "value") else d)
            continue
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


def compile(ir: str, extra_args: Sequence[str] = (), timeout: float | None = None,
            qemu_cpu: str | None = None) -> Module:
    """Compile `ir` with `pe-compile --emit=shared` into a temporary folder and
    load it; the folder is removed with the module. With `--mtriple` of
    another architecture in `extra_args`, or with `qemu_cpu` (a qemu CPU model
    of this architecture, e.g. "EPYC-Rome" for AMD Zen 2), the module runs under
    qemu-user (`pe.emulated.EmulatedModule`, the same `call`)."""
    folder = tempfile.TemporaryDirectory(prefix="pe-")
    src = os.path.join(folder.name, "module.mlir")
    lib = os.path.join(folder.name, "libmodule.so")
    interface = os.path.join(folder.name, "module.json")
    with open(src, "w") as f:
        f.write(ir)
    command = [PE_COMPILE, src, "--emit=shared", "-o", lib, f"--interface={interface}",
               *extra_args]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"pe-compile did not finish within {timeout} s") from None
    if proc.returncode != 0:
        raise RuntimeError(f"pe-compile failed:\n{proc.stderr}")
    from pe import emulated  # imports this module
    arch = emulated.triple_arch(command)
    if (arch and arch != emulated.host_arch()) or qemu_cpu:  # under qemu-user
        return emulated.EmulatedModule(arch or emulated.host_arch(), lib, interface,
                                       owner=folder, sve_bits=emulated.sve_vector_bits(command),
                                       cpu=qemu_cpu)
    return Module(lib, interface, owner=folder)


def load(library: str, interface: str | None = None) -> Module:
    """A library compiled by `pe-compile --emit=shared --interface=FILE`
    (default FILE: the library's path with `.json` for its extension)."""
    return Module(library, interface or os.path.splitext(library)[0] + ".json")
