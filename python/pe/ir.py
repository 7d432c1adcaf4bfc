"""Render `pe` dialect attributes and small MLIR functions as text.

The scaling dicts are those of :mod:`pe.reference` (``{"type": "yarn", "factor": 4.0, ...}``,
parameter names = attribute parameter names), so one configuration drives both the reference
and the generated IR::

    >>> rope_attr(500000.0, 16, scaling={"type": "llama3", "factor": 8.0,
    ...                                  "original_max_position_embeddings": 8192})
    '#pe.rope<theta = 500000.0, rotary_dim = 16, style = half, scaling = #pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>>'
"""

from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "format_f64",
    "sinusoidal_attrs",
    "scaling_attr",
    "rope_attr",
    "tensor_type",
    "attention_attrs",
    "attention_function",
    "FunctionBuilder",
]

# Parameter order of each scaling attribute (as declared in PEAttrs.td) and their kinds.
_SCALING_PARAMS = {
    "linear": [("factor", "f64")],
    "ntk": [("factor", "f64")],
    "dynamic_ntk": [("factor", "f64"), ("max_position_embeddings", "int")],
    "yarn": [("factor", "f64"), ("original_max_position_embeddings", "int"),
             ("beta_fast", "f64"), ("beta_slow", "f64"), ("mscale", "f64"),
             ("mscale_all_dim", "f64"), ("attention_factor", "f64"), ("truncate", "bool"),
             ("extrapolation_factor", "f64")],
    "llama3": [("factor", "f64"), ("low_freq_factor", "f64"), ("high_freq_factor", "f64"),
               ("original_max_position_embeddings", "int")],
    "longrope": [("short_factor", "list"), ("long_factor", "list"),
                 ("original_max_position_embeddings", "int"), ("factor", "f64"),
                 ("attention_factor", "f64"), ("select", "enum")],
    "proportional": [("factor", "f64"), ("partial_rotary_factor", "f64")],
}


def format_f64(x: float) -> str:
    """A float literal MLIR reads back as the same double (always with a '.')."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"cannot render non-finite value {x}")
    text = repr(x)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def _format_param(kind: str, value) -> str:
    if kind == "f64":
        return format_f64(value)
    if kind == "int":
        if int(value) != value:
            raise ValueError(f"expected an integer, got {value}")
        return str(int(value))
    if kind == "bool":
        return "true" if value else "false"
    if kind == "list":
        return "[" + ", ".join(format_f64(v) for v in value) + "]"
    if kind == "enum":
        return str(value)
    raise AssertionError(kind)


def scaling_attr(scaling: Optional[Mapping]) -> Optional[str]:
    """``#pe.<type><...>`` for a scaling dict; None for no scaling. None-valued keys are omitted."""
    if scaling is None:
        return None
    s = dict(scaling)
    kind = s.pop("type", None) or s.pop("rope_type", None)
    if kind in (None, "default"):
        return None
    if kind not in _SCALING_PARAMS:
        raise ValueError(f"unknown scaling type {kind!r}")
    params = _SCALING_PARAMS[kind]
    unknown = set(s) - {name for name, _ in params}
    if unknown:
        raise ValueError(f"unknown parameters for #pe.{kind}: {sorted(unknown)}")
    parts = [f"{name} = {_format_param(k, s[name])}" for name, k in params
             if s.get(name) is not None]
    return f"#pe.{kind}<" + ", ".join(parts) + ">"


def rope_attr(theta: float = 10000.0, rotary_dim: int = 128, style: str = "half",
              scaling: Optional[Mapping] = None, freq_factors: Optional[Sequence[float]] = None,
              magnitude: Optional[float] = None, rotary_offset: Optional[int] = None,
              sections: Optional[Sequence[int]] = None,
              section_mode: Optional[str] = None) -> str:
    """``#pe.rope<theta = ..., rotary_dim = ..., style = ..., scaling = ...,
    freq_factors = [...], magnitude = ..., rotary_offset = ..., sections = [...],
    section_mode = ...>``."""
    if style not in ("half", "interleaved"):
        raise ValueError(f"style must be 'half' or 'interleaved', got {style!r}")
    parts = [f"theta = {format_f64(theta)}", f"rotary_dim = {int(rotary_dim)}",
             f"style = {style}"]
    sc = scaling_attr(scaling)
    if sc is not None:
        parts.append(f"scaling = {sc}")
    if freq_factors is not None:
        parts.append("freq_factors = [" + ", ".join(format_f64(f) for f in freq_factors) + "]")
    if magnitude is not None:
        parts.append(f"magnitude = {format_f64(magnitude)}")
    if rotary_offset:
        parts.append(f"rotary_offset = {int(rotary_offset)}")
    if sections is not None:
        parts.append("sections = [" + ", ".join(str(int(s)) for s in sections) + "]")
    if section_mode is not None and section_mode != "contiguous":
        parts.append(f"section_mode = {section_mode}")
    return "#pe.rope<" + ", ".join(parts) + ">"


def tensor_type(shape: Sequence[int], elem: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def attention_attrs(*, scale: Optional[float] = None, causal: bool = False,
                    window: Optional[int] = None, chunk: Optional[int] = None,
                    rope: Optional[str] = None,
                    alibi: Optional[float] = None, softcap: Optional[float] = None,
                    temperature: Optional[Tuple[int, float]] = None,
                    rope_positions: str = "") -> str:
    """The optional attributes of `pe.attention`, in the op's syntax and order (each with a
    leading space): ``attention_attrs(causal=True, window=4096)`` -> ``' causal window(4096)'``.
    ``rope_positions`` is the text of the op's rope positions, placed after ``rope``."""
    text = ""
    if scale is not None:
        text += f" scale({format_f64(scale)})"
    if causal:
        text += " causal"
    if window is not None:
        text += f" window({int(window)})"
    if chunk is not None:
        text += f" chunk({int(chunk)})"
    if rope is not None:
        text += f" rope({rope})"
    text += rope_positions
    if alibi is not None:
        text += f" alibi({format_f64(alibi)})"
    if softcap is not None:
        text += f" softcap({format_f64(softcap)})"
    if temperature is not None:
        floor_scale, attn_scale = temperature
        text += (f" temperature(#pe.temperature<floor_scale = {int(floor_scale)}, "
                 f"attn_scale = {format_f64(attn_scale)}>)")
    return text


def _dims(type_text: str) -> list:
    """The dims of ``tensor<1x8x?x64xf32>`` (None for ``?``)."""
    inner = type_text[len("tensor<"):-1].split("x")[:-1]
    return [None if d == "?" else int(d) for d in inner]


def attention_function(name: str, q: str, k: str, v: str, *, out: Optional[str] = None,
                       positions=None, mask: Optional[str] = None, rotate: Optional[str] = None,
                       alibi_bias: Optional[str] = None, attend_positions: bool = True,
                       sinks: Optional[str] = None, rope_positions=None,
                       shared_key: Optional[str] = None, **attrs) -> str:
    """A `func.func @name` around one `pe.attention`, its operands the function's arguments.

    ``q``, ``k``, ``v`` (and ``out``, default ``q``'s type) are tensor types. ``positions`` is
    None (the op's default positions), one type (one argument ``%p`` for the query and key
    positions) or a pair of types (``%qp``, ``%kp``); ``mask`` a type (an argument ``%mask``
    after the positions). ``rotate`` (a ``#pe.rope`` attribute) rotates q and k with `pe.rope`
    at ``%p`` before the attention, the unfused form that `pe-fuse-rope-into-attention` fuses;
    ``alibi_bias`` (``"causal"`` or ``"symmetric"``) makes the mask a `pe.alibi_bias` of the
    query heads at ``%p``, the form `pe-fuse-alibi-into-attention` fuses. With
    ``attend_positions=False`` the attention keeps its default positions (``%p`` feeds the
    rotation only). ``sinks`` is the type of an argument ``%sinks`` ([Hq] attention sinks).
    ``rope_positions`` is a pair of types (``%qrp``, ``%krp``): the position streams of a
    multi-stream RoPE ([A, S] or [B, A, S]). ``shared_key`` is the type of an argument
    ``%ks``, the key channels every head shares ([B, 1, Skv, Ds]: MLA's k_pe). ``attrs``
    are those of :func:`attention_attrs`.
    Arguments: q, k, v, the positions, the rope positions, the mask, the sinks, the shared
    key block."""
    out = out or q
    params = [f"%q: {q}", f"%k: {k}", f"%v: {v}"]
    body, operands = [], ""
    shared = isinstance(positions, str)
    if shared:
        params.append(f"%p: {positions}")
        if attend_positions:
            operands += f" q_positions(%p : {positions}) k_positions(%p : {positions})"
    elif positions is not None:
        qp, kp = positions
        params += [f"%qp: {qp}", f"%kp: {kp}"]
        operands += f" q_positions(%qp : {qp}) k_positions(%kp : {kp})"
    streams = ""
    if rope_positions is not None:
        qrp, krp = rope_positions
        params += [f"%qrp: {qrp}", f"%krp: {krp}"]
        streams = f" rope_positions(%qrp, %krp : {qrp}, {krp})"
    if (rotate or alibi_bias) and not shared:
        raise ValueError("rotate and alibi_bias need one positions argument")
    q_in, k_in = "%q", "%k"
    if rotate:
        body += [f"%qr = pe.rope {rotate} %q, %p : {q}, {positions}",
                 f"%kr = pe.rope {rotate} %k, %p : {k}, {positions}"]
        q_in, k_in = "%qr", "%kr"
    if mask is not None:
        params.append(f"%mask: {mask}")
        operands = f" mask(%mask : {mask})" + operands
    elif alibi_bias:
        heads, (length,) = _dims(q)[1], _dims(positions)
        slopes, bias = f"tensor<{heads}xf32>", f"tensor<{heads}x{length}x{length}xf32>"
        masked = f"tensor<1x{heads}x{length}x{length}xf32>"
        body += [f"%slopes = pe.alibi_slopes : {slopes}",
                 f"%bias = pe.alibi_bias {alibi_bias} %slopes, %p, %p : {slopes}, {positions}, "
                 f"{positions} -> {bias}",
                 f"%mask = tensor.expand_shape %bias [[0, 1], [2], [3]] output_shape "
                 f"[1, {heads}, {length}, {length}] : {bias} into {masked}"]
        operands = f" mask(%mask : {masked})" + operands
    if sinks is not None:
        params.append(f"%sinks: {sinks}")
        operands += f" sinks(%sinks : {sinks})"
    if shared_key is not None:
        params.append(f"%ks: {shared_key}")
        operands += f" shared_key(%ks : {shared_key})"
    body.append(f"%o = pe.attention {q_in}, {k_in}, %v{operands}"
                f"{attention_attrs(**attrs, rope_positions=streams)} : "
                f"{q}, {k}, {v} -> {out}")
    lines = "\n".join("  " + line for line in body)
    return (f"func.func @{name}({', '.join(params)}) -> {out} {{\n{lines}\n"
            f"  return %o : {out}\n}}\n")


def sinusoidal_attrs(base: Optional[float] = None, layout: Optional[str] = None,
                     spacing: Optional[str] = None, *, freq_shift: Optional[float] = None,
                     scale: Optional[float] = None, cos_first: bool = False,
                     odd: Optional[str] = None, padding_idx: Optional[int] = None) -> str:
    """The attributes of a pe.sinusoidal in its syntax (a leading space each; "" for none)."""
    opts = ""
    if base is not None:
        opts += f" base({format_f64(base)})"
    if layout is not None:
        opts += f" layout({layout})"
    if spacing is not None:
        opts += f" spacing({spacing})"
    if freq_shift is not None:
        opts += f" freq_shift({format_f64(freq_shift)})"
    if scale is not None:
        opts += f" scale({format_f64(scale)})"
    if cos_first:
        opts += " cos_first"
    if odd is not None:
        opts += f" odd({odd})"
    if padding_idx is not None:
        opts += f" padding_idx({int(padding_idx)})"
    return opts


class FunctionBuilder:
    """Builds a `func.func` of constants and pe ops that returns the chosen values."""

    def __init__(self, name: str = "f"):
        self.name = name
        self._lines: list = []
        self._types: dict = {}
        self._results: list = []
        self._count = 0

    def _fresh(self, hint: str = "v") -> str:
        self._count += 1
        return f"%{hint}{self._count}"

    def type_of(self, value: str) -> str:
        return self._types[value]

    def positions(self, values, elem: str = "i64") -> str:
        arr = np.asarray(values, dtype=np.int64)
        name = self._fresh("pos")
        ty = tensor_type(arr.shape, elem)
        self._lines.append(f"{name} = arith.constant dense<{arr.tolist()}> : {ty}")
        self._types[name] = ty
        return name

    def index(self, value: int) -> str:
        name = self._fresh("idx")
        self._lines.append(f"{name} = arith.constant {int(value)} : index")
        self._types[name] = "index"
        return name

    def rope_frequencies(self, rope: str, size: int, elem: str = "f32",
                         seq_len: Optional[str] = None) -> str:
        name = self._fresh("freq")
        ty = tensor_type([size], elem)
        sl = f" seq_len {seq_len}" if seq_len is not None else ""
        self._lines.append(f"{name} = pe.rope_frequencies {rope}{sl} -> {ty}")
        self._types[name] = ty
        return name

    def rope_tables(self, rope: str, positions: str, shape: Sequence[int], elem: str = "f32"):
        cos, sin = self._fresh("cos"), self._fresh("sin")
        ty = tensor_type(shape, elem)
        self._lines.append(f"{cos}, {sin} = pe.rope_tables {rope} {positions} : "
                           f"{self._types[positions]} -> {ty}")
        self._types[cos] = self._types[sin] = ty
        return cos, sin

    def sinusoidal(self, positions: str, shape: Sequence[int], elem: str = "f32",
                   base: Optional[float] = None, layout: Optional[str] = None,
                   spacing: Optional[str] = None, *, freq_shift: Optional[float] = None,
                   scale: Optional[float] = None, cos_first: bool = False,
                   odd: Optional[str] = None, padding_idx: Optional[int] = None) -> str:
        name = self._fresh("sin")
        ty = tensor_type(shape, elem)
        self._lines.append(f"{name} = pe.sinusoidal {positions}"
                           f"{sinusoidal_attrs(base, layout, spacing, freq_shift=freq_shift, scale=scale, cos_first=cos_first, odd=odd, padding_idx=padding_idx)}"
                           f" : {self._types[positions]} -> {ty}")
        self._types[name] = ty
        return name

    def alibi_slopes(self, num_heads: int, elem: str = "f32",
                     max_bias: Optional[float] = None) -> str:
        name = self._fresh("slopes")
        ty = tensor_type([num_heads], elem)
        mb = f" max_bias({format_f64(max_bias)})" if max_bias is not None else ""
        self._lines.append(f"{name} = pe.alibi_slopes{mb} : {ty}")
        self._types[name] = ty
        return name

    def returns(self, *values: str) -> None:
        self._results.extend(values)

    def render(self) -> str:
        types = [self._types[v] for v in self._results]
        body = ["  " + line for line in self._lines]
        if self._results:
            body.append(f"  return {', '.join(self._results)} : {', '.join(types)}")
        else:
            body.append("  return")
        return (f"func.func @{self.name}() -> ({', '.join(types)}) {{\n"
                + "\n".join(body) + "\n}\n")
