"""pe kernels as PyTorch operators (`torch.ops.pe.*`).

    import torch, pe.torch
    out = pe.torch.attention(q, k, v, causal=True, rope="#pe.rope<theta = 500000.0, rotary_dim = 128>")

`torch.ops.pe.append_kv` (new keys rotated and written with the values into
a dense or paged KV cache, in place) and `torch.ops.pe.paged_attention`
(ragged queries over a paged cache) are the serving-path operators, compiled
and called the same way (`append_kv`, `paged_attention` below).

`torch.ops.pe.attention` is a `torch.library` custom operator: it takes CPU
tensors of float32, float16 or bfloat16 in BHSD layout (q [B,Hq,Sq,D], k
[B,Hkv,Skv,D], v [B,Hkv,Skv,Dv]) and int64 positions [B,S], and calls a
kernel compiled by pe-compile for its head counts, head sizes, dtype and
attention options (dynamic batch and lengths, so one kernel serves a whole
generation), on as many threads as `torch.get_num_threads()`. The kernel
reads the tensors' memory and writes the result
tensor in place: no copy, no numpy. A fake implementation lets
`torch.compile` trace through it. Inference only: the operator has no
gradient. CUDA tensors are refused (the GPU kernels are built as libraries or
PTX by `pe-compile --target=gpu`, docs/gpu.md).
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import threading
from typing import Dict, Mapping, Optional, Tuple, Union

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

from . import ir, runner

# The kernels run their threads on LLVM's OpenMP runtime (libomp), PyTorch its
# operators on its own pool. libomp's workers spin for 200 ms after each
# parallel region by default (KMP_BLOCKTIME): between two pe attention calls
# they would take the cores from PyTorch's matmuls. Zero makes them sleep at
# once (waking costs microseconds per call). A value the user set is kept;
# libomp reads it when the first kernel runs.
os.environ.setdefault("KMP_BLOCKTIME", "0")

__all__ = ["attention", "attention_ir", "append_kv", "paged_attention", "compiled_kernels"]

_ELEMENT = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
_KERNELS: Dict[Tuple, runner.Module] = {}
_LOCK = threading.Lock()


def _spec(causal: bool, window: Optional[int], scale: Optional[float],
          rope: Union[None, str, Mapping], alibi: Optional[float],
          softcap: Optional[float] = None, chunk: Optional[int] = None,
          temperature: Optional[Tuple[int, float]] = None) -> str:
    """The attention options as one string, the operator's `spec` argument:
    `causal=1 window=W scale=S alibi=A softcap=C chunk=N temperature=F,A
    rope=#pe.rope<...>` (`-` for none). Plain formatting, so that torch.compile
    traces it."""
    if isinstance(rope, Mapping):
        rope = ir.rope_attr(**rope)
    if window is not None and (int(window) != window or window < 1):
        raise ValueError(f"window must be an integer >= 1, got {window}")
    w = "-" if window is None else str(int(window))
    s = "-" if scale is None else repr(float(scale))
    a = "-" if alibi is None else repr(float(alibi))
    c = "-" if softcap is None else repr(float(softcap))
    if chunk is not None and (int(chunk) != chunk or chunk < 1):
        raise ValueError(f"chunk must be an integer >= 1, got {chunk}")
    n = "-" if chunk is None else str(int(chunk))
    t = "-" if temperature is None else f"{int(temperature[0])},{float(temperature[1])!r}"
    return (f"causal={int(bool(causal))} window={w} scale={s} alibi={a} softcap={c} "
            f"chunk={n} temperature={t} rope={rope or '-'}")


def _parse_spec(spec: str) -> dict:
    head, _, rope = spec.partition(" rope=")
    fields = dict(item.split("=", 1) for item in head.split())
    value = lambda text, kind: None if text == "-" else kind(text)  # noqa: E731
    temperature = fields.get("temperature", "-")
    return {"causal": fields["causal"] == "1", "window": value(fields["window"], int),
            "scale": value(fields["scale"], float), "alibi": value(fields["alibi"], float),
            "softcap": value(fields["softcap"], float), "rope": value(rope, str),
            "chunk": value(fields.get("chunk", "-"), int),
            "temperature": None if temperature == "-" else
            (int(temperature.split(",")[0]), float(temperature.split(",")[1]))}


def attention_ir(spec: str, heads: int, kv_heads: int, head_dim: int, value_dim: int,
                 element: str, masked: bool, sinks: bool = False, streams: int = 0,
                 shared_dim: int = 0) -> str:
    """The function `@attention` the operator compiles for `spec` (with `streams`, the q
    and k rope positions [B, streams, S] after the positions; with `sinks`, an f32 [Hq]
    argument after the mask; with `shared_dim`, the key heads' last `shared_dim` channels
    as a shared block [B, 1, Skv, shared_dim], the last argument)."""
    options = _parse_spec(spec)
    t = lambda h, d: f"tensor<?x{h}x?x{d}x{element}>"  # noqa: E731
    q, k, v, o = t(heads, head_dim), t(kv_heads, head_dim - shared_dim), \
        t(kv_heads, value_dim), t(heads, value_dim)
    pos = "tensor<?x?xi64>"
    streamed = f"tensor<?x{streams}x?xi64>"
    return ir.attention_function(
        "attention", q, k, v, out=o, positions=(pos, pos),
        rope_positions=(streamed, streamed) if streams else None,
        mask="tensor<?x1x?x?xf32>" if masked else None,
        sinks=f"tensor<{heads}xf32>" if sinks else None,
        shared_key=t(1, shared_dim) if shared_dim else None, scale=options["scale"],
        causal=options["causal"], window=options["window"], rope=options["rope"],
        alibi=options["alibi"], softcap=options["softcap"], chunk=options["chunk"],
        temperature=options["temperature"])


# Calls with fewer multiply-adds than this run on one thread. Waking libomp's
# sleeping workers (KMP_BLOCKTIME=0 above) costs about 100-150 us on a 2-core
# VM, more than such a call saves on a second core: a decode step over 512
# keys (32 query heads of 128) takes 0.18 ms on one thread and 0.27 ms on two;
# the two meet near 1,500 keys (2^23.5 multiply-adds).
SERIAL_WORK = 1 << 23


def _threads(query, key, value) -> int:
    """PyTorch's intra-op thread count, or 1 for a call below SERIAL_WORK
    multiply-adds (B Hq Sq Skv (D + Dv))."""
    threads = max(1, torch.get_num_threads())
    B, Hq, Sq, D = query.shape
    work = B * Hq * Sq * key.shape[2] * (D + value.shape[3])
    return 1 if work < SERIAL_WORK else threads


def _kernel(spec: str, query, key, value, masked: bool, sinks: bool = False,
            streams: int = 0, shared_dim: int = 0) -> runner.Module:
    """The kernel for these options and sizes, compiled on first use; it runs on
    as many threads as PyTorch's intra-op pool has (torch.get_num_threads()),
    on one for small calls (SERIAL_WORK)."""
    shape = (spec, query.shape[1], key.shape[1], query.shape[3], value.shape[3],
             _ELEMENT[query.dtype], masked, sinks, streams, shared_dim)
    threads = _threads(query, key, value)
    with _LOCK:
        if (shape, threads) not in _KERNELS:
            _KERNELS[shape, threads] = runner.compile(attention_ir(*shape),
                                                      [f"--num-threads={threads}"])
        return _KERNELS[shape, threads]


def compiled_kernels() -> int:
    """How many attention kernels this process has compiled."""
    return len(_KERNELS)


def _check(name: str, tensor: torch.Tensor, dtype=None) -> None:
    if tensor.device.type != "cpu":
        raise ValueError(f"pe.attention: {name} is on {tensor.device}; pe.torch runs CPU "
                         f"tensors (GPU kernels: pe-compile --target=gpu)")
    if dtype is not None and tensor.dtype != dtype:
        raise TypeError(f"pe.attention: {name} is {tensor.dtype}, expected {dtype}")


def _check_shapes(query, key, value, q_positions, k_positions, mask,
                  shared_key=None) -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() != 4:
            raise ValueError(f"pe.attention: {name} must be [B, H, S, D], got "
                             f"{tuple(t.shape)}")
    B, Hq, Sq, D = query.shape
    _, Hkv, Skv, _ = key.shape
    if shared_key is not None:
        if shared_key.dim() != 4 or tuple(shared_key.shape[:3]) != (B, 1, Skv) or \
                not 0 < shared_key.shape[3] < D:
            raise ValueError(f"pe.attention: shared_key must be [{B}, 1, {Skv}, Ds] with "
                             f"0 < Ds < {D}, got {tuple(shared_key.shape)}")
        D -= shared_key.shape[3]
    if key.shape[0] != B or key.shape[3] != D or value.shape[:3] != key.shape[:3]:
        raise ValueError(f"pe.attention: incompatible shapes query {tuple(query.shape)}, "
                         f"key {tuple(key.shape)}, value {tuple(value.shape)}")
    if Hkv == 0 or Hq % Hkv:
        raise ValueError(f"pe.attention: {Hq} query heads are not a multiple of {Hkv} "
                         f"key/value heads")
    for name, p, n in (("q_positions", q_positions, Sq), ("k_positions", k_positions, Skv)):
        if tuple(p.shape) != (B, n):
            raise ValueError(f"pe.attention: {name} must be [{B}, {n}], got {tuple(p.shape)}")
    if mask is not None and (mask.dim() != 4 or mask.shape[0] != B or mask.shape[1] != 1
                             or tuple(mask.shape[2:]) != (Sq, Skv)):
        raise ValueError(f"pe.attention: mask must be [{B}, 1, {Sq}, {Skv}], got "
                         f"{tuple(mask.shape)}")


def _descriptor(tensor: torch.Tensor, ttype: runner.TensorType, where: str):
    return runner.dense_descriptor(tensor.data_ptr(), tensor.shape, ttype, where)


def _attention_impl(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                    q_positions: torch.Tensor, k_positions: torch.Tensor,
                    mask: Optional[torch.Tensor], sinks: Optional[torch.Tensor],
                    spec: str, q_rope_positions: Optional[torch.Tensor] = None,
                    k_rope_positions: Optional[torch.Tensor] = None,
                    shared_key: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The operator's CPU implementation: checks, then the kernel's call."""
    for name, t in (("query", query), ("key", key), ("value", value), ("shared_key", shared_key)):
        if t is not None:
            _check(name, t, query.dtype)
    if query.dtype not in _ELEMENT:
        raise TypeError(f"pe.attention: {query.dtype} is not float32, float16 or bfloat16")
    _check("q_positions", q_positions, torch.int64)
    _check("k_positions", k_positions, torch.int64)
    if mask is not None:
        _check("mask", mask, torch.float32)
    if sinks is not None:
        _check("sinks", sinks, torch.float32)
        if tuple(sinks.shape) != (query.shape[1],):
            raise ValueError(f"pe.attention: sinks must be [{query.shape[1]}] (one per query "
                             f"head), got {tuple(sinks.shape)}")
    _check_shapes(query, key, value, q_positions, k_positions, mask, shared_key)
    streams = _check_rope_positions(spec, query, key, q_rope_positions, k_rope_positions)
    inputs = [t.contiguous() for t in (query, key, value, q_positions, k_positions,
                                       q_rope_positions, k_rope_positions, mask, sinks,
                                       shared_key)
              if t is not None]
    out = query.new_empty(query.shape[:3] + (value.shape[3],))
    module = _kernel(spec, query, key, value, mask is not None, sinks is not None, streams,
                     0 if shared_key is None else shared_key.shape[3])
    entry = module.entries["attention_into"]
    assert len(entry.arguments) == len(inputs) + 1, entry
    descriptors = [_descriptor(t, tt, f"pe.attention: argument {i}")
                   for i, (t, tt) in enumerate(zip(inputs + [out], entry.arguments))]
    module.invoke(entry, [ctypes.byref(d) for d in descriptors])
    return out


@functools.lru_cache(maxsize=None)
def _spec_streams(spec: str) -> int:
    """The position streams of the spec's rope: its sections, 0 for one stream (read
    once per spec, not per call)."""
    rope = _parse_spec(spec)["rope"] or ""
    match = re.search(r"sections = \[([0-9, ]*)\]", rope)
    return len(match.group(1).split(",")) if match else 0


def _check_rope_positions(spec: str, query, key, q_rope, k_rope) -> int:
    """The position streams of the spec's rope (0: one stream), with the q and k rope
    positions checked against them: int64 [B, A, Sq] and [B, A, Skv], given exactly
    when the rope has sections."""
    streams = _spec_streams(spec)
    if (q_rope is None) != (k_rope is None) or (q_rope is not None) != bool(streams):
        raise ValueError("pe.attention: q_rope_positions and k_rope_positions are given "
                         "exactly when the rope has sections (multi-stream RoPE)")
    for name, p, n in (("q_rope_positions", q_rope, query.shape[2]),
                       ("k_rope_positions", k_rope, key.shape[2])):
        if p is None:
            continue
        _check(name, p, torch.int64)
        if tuple(p.shape) != (query.shape[0], streams, n):
            raise ValueError(f"pe.attention: {name} must be [{query.shape[0]}, {streams}, "
                             f"{n}], got {tuple(p.shape)}")
    return streams


@torch.library.custom_op("pe::attention", mutates_args=())
def _attention_op(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                  q_positions: torch.Tensor, k_positions: torch.Tensor,
                  mask: Optional[torch.Tensor], sinks: Optional[torch.Tensor],
                  spec: str, q_rope_positions: Optional[torch.Tensor] = None,
                  k_rope_positions: Optional[torch.Tensor] = None,
                  shared_key: Optional[torch.Tensor] = None) -> torch.Tensor:
    return _attention_impl(query, key, value, q_positions, k_positions, mask, sinks, spec,
                           q_rope_positions, k_rope_positions, shared_key)


def _plain_call(tensors) -> bool:
    """Whether a call may skip the dispatcher: plain tensors (no fake or
    functional subclass), no gradient asked for, no torch.compile tracing
    and no dispatch mode. The dispatcher costs about 40 us a call, a third
    of a short decode step's attention."""
    if torch.compiler.is_compiling() or _get_current_dispatch_mode() is not None:
        return False
    grad = torch.is_grad_enabled()
    return all(t is None or (type(t) is torch.Tensor and not (grad and t.requires_grad))
               for t in tensors)


@_attention_op.register_fake
def _(query, key, value, q_positions, k_positions, mask, sinks, spec, q_rope_positions=None,
      k_rope_positions=None, shared_key=None):
    return query.new_empty(query.shape[:3] + (value.shape[3],))


# 0, 1, 2, ...: default positions are views of it (grown on demand).
_RANGE = torch.arange(0, 1 << 12, dtype=torch.int64)


def _range(start: int, length: int) -> torch.Tensor:
    """start, start + 1, ..., start + length - 1 (int64), a view when it can."""
    global _RANGE
    if start < 0:
        return torch.arange(start, start + length, dtype=torch.int64)
    if start + length > _RANGE.shape[0]:
        _RANGE = torch.arange(0, max(2 * _RANGE.shape[0], start + length), dtype=torch.int64)
    return _RANGE[start:start + length]


def _default_positions(positions, batch: int, length: int, start: int,
                       name: str) -> torch.Tensor:
    if positions is None:
        positions = _range(start, length)
        return positions.view(1, length) if batch == 1 else \
            positions.expand(batch, length).contiguous()
    positions = torch.as_tensor(positions, dtype=torch.int64)
    if positions.dim() == 1 and positions.shape[0] == length:
        positions = positions.expand(batch, length)
    if tuple(positions.shape) != (batch, length):
        raise ValueError(f"pe.attention: {name} must be [{length}] or [{batch}, {length}], "
                         f"got {tuple(positions.shape)}")
    return positions.contiguous()


def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
              q_positions=None, k_positions=None, mask: Optional[torch.Tensor] = None, *,
              causal: bool = False, window: Optional[int] = None,
              scale: Optional[float] = None, rope: Union[None, str, Mapping] = None,
              alibi: Optional[float] = None, softcap: Optional[float] = None,
              sinks: Optional[torch.Tensor] = None, chunk: Optional[int] = None,
              temperature: Optional[Tuple[int, float]] = None,
              q_rope_positions: Optional[torch.Tensor] = None,
              k_rope_positions: Optional[torch.Tensor] = None,
              shared_key: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`pe.attention` on torch tensors (semantics: docs/dialect.md).

    Positions are [S] or [B, S] (default: queries at Skv - Sq + i, keys at j);
    `mask` is additive float32 [B, 1, Sq, Skv] (-inf hides a key); `rope` is a
    `#pe.rope<...>` attribute or `pe.ir.rope_attr` keywords (RoPE fused: q and
    k are given un-rotated); `alibi` is max_bias; `softcap` caps the scaled
    scores at c tanh(s / c) (Gemma 2); `sinks` [Hq] are attention sinks (one
    logit per query head in the softmax's denominator, gpt-oss; any float
    dtype, used as float32); `chunk` is chunked attention (Llama 4) and
    `temperature` (floor_scale, attn_scale) Llama 4's query temperature. A rope with
    sections (M-RoPE) rotates by `q_rope_positions` [B, A, Sq] and `k_rope_positions`
    [B, A, Skv] (int64, one stream per section) while the positions place the masks.
    `shared_key` [B, 1, Skv, Ds] is the last Ds channels of every key head (multi-head
    latent attention's k_pe, read once rather than copied into each head); `key` then
    holds the other D - Ds channels.
    """
    B, _, Sq, _ = query.shape
    Skv = key.shape[2]
    qp = _default_positions(q_positions, B, Sq, Skv - Sq, "q_positions")
    kp = _default_positions(k_positions, B, Skv, 0, "k_positions")
    spec = _spec(causal, window, scale, rope, alibi, softcap, chunk, temperature)
    if sinks is not None:
        sinks = sinks.detach().to(torch.float32)
    streams = [None if p is None else torch.as_tensor(p, dtype=torch.int64).contiguous()
               for p in (q_rope_positions, k_rope_positions)]
    if _plain_call((query, key, value, mask, sinks, shared_key)):
        return _attention_impl(query, key, value, qp, kp, mask, sinks, spec, *streams,
                               shared_key)
    return torch.ops.pe.attention(query, key, value, qp, kp, mask, sinks, spec, *streams,
                                  shared_key)


# ---------------------------------------------------------------------------
# KV cache: torch.ops.pe.append_kv and torch.ops.pe.paged_attention
# ---------------------------------------------------------------------------

_LAYOUTS = ("dense", "nhd", "hnd")


def _cache_spec(layout: str, rope: Union[None, str, Mapping]) -> str:
    """`layout=L rope=#pe.rope<...>`, the append operator's spec."""
    if layout not in _LAYOUTS:
        raise ValueError(f"pe.append_kv: layout must be one of {_LAYOUTS}, got {layout!r}")
    if isinstance(rope, Mapping):
        rope = ir.rope_attr(**rope)
    return f"layout={layout} rope={rope or '-'}"


def _rope_streams(rope: Optional[str]) -> int:
    """The position streams of a multi-stream rope attribute (its sections), else 0."""
    found = re.search(r"sections = \[([^\]]*)\]", rope or "")
    return len(found.group(1).split(",")) if found else 0


def append_kv_ir(spec: str, heads: int, dim: int, value_dim: int, page_size: int,
                 element: str) -> str:
    """The function `@append_kv` the operator compiles: dynamic batch, tokens, cache
    length or pages; the caches are `pe.in_place` arguments."""
    head, _, rope = spec.partition(" rope=")
    layout = head.split("=", 1)[1]
    rope = None if rope == "-" else rope
    streams = _rope_streams(rope)
    if layout == "dense":
        rows = lambda d: f"tensor<?x{heads}x?x{d}x{element}>"  # noqa: E731
        cache = rows
        index = "tensor<?x?xi64>"
        pos = f"tensor<?x{streams}x?xi64>" if streams else index
    else:
        rows = lambda d: f"tensor<?x{heads}x{d}x{element}>"  # noqa: E731
        page = (page_size, heads) if layout == "nhd" else (heads, page_size)
        cache = lambda d: f"tensor<?x{page[0]}x{page[1]}x{d}x{element}>"  # noqa: E731
        index = "tensor<?xi64>"
        pos = f"tensor<{streams}x?xi64>" if streams else index
    k, v, kc, vc = rows(dim), rows(value_dim), cache(dim), cache(value_dim)
    positions = f" positions(%pos : {pos})" if rope else ""
    rotation = f" rope({rope})" if rope else ""
    return f"""func.func @append_kv(%k: {k}, %v: {v}, %kc: {kc} {{pe.in_place}},
                     %vc: {vc} {{pe.in_place}}, %slots: {index}, %pos: {pos})
    -> ({kc}, {vc}) {{
  %a, %b = pe.append_kv %k, %v into %kc, %vc slots(%slots : {index}){positions} layout({layout}){rotation}
           : {k}, {v} -> {kc}, {vc}
  return %a, %b : {kc}, {vc}
}}
"""


def _cached_kernel(key: Tuple, build) -> runner.Module:
    with _LOCK:
        if key not in _KERNELS:
            _KERNELS[key] = build()
        return _KERNELS[key]


def _call_entry(module: runner.Module, name: str, tensors, what: str) -> None:
    """Calls `name` with descriptors of the tensors' memory (no copies)."""
    entry = module.entries[name]
    assert len(entry.arguments) == len(tensors), entry
    descriptors = [_descriptor(t, tt, f"{what}: argument {i}")
                   for i, (t, tt) in enumerate(zip(tensors, entry.arguments))]
    module.invoke(entry, [ctypes.byref(d) for d in descriptors])


def _append_kv_impl(key, value, key_cache, value_cache, slots, positions, spec) -> None:
    what = "pe.append_kv"
    for name, t in (("key", key), ("value", value), ("key_cache", key_cache),
                    ("value_cache", value_cache)):
        _check(name, t, key_cache.dtype)
        if name.endswith("cache") and not t.is_contiguous():
            raise ValueError(f"{what}: {name} must be contiguous (it is updated in place)")
    if key_cache.dtype not in _ELEMENT:
        raise TypeError(f"{what}: {key_cache.dtype} is not float32, float16 or bfloat16")
    _check("slots", slots, torch.int64)
    paged = not spec.startswith("layout=dense")
    if key.dim() != (3 if paged else 4) or key_cache.dim() != 4:
        raise ValueError(f"{what}: key {tuple(key.shape)} and key_cache "
                         f"{tuple(key_cache.shape)} do not fit the layout ({spec})")
    streams = _rope_streams(spec.partition(" rope=")[2])
    if positions is None:
        positions = slots
    _check("positions", positions, torch.int64)
    if streams and positions.dim() != slots.dim() + 1:
        raise ValueError(f"{what}: a multi-stream rope takes positions [A, ...] with the "
                         f"slots' shape after A = {streams} streams, got "
                         f"{tuple(positions.shape)} for slots {tuple(slots.shape)}")
    heads, dim, value_dim = key.shape[1], key.shape[-1], value.shape[-1]
    page_size = key_cache.shape[2 if "layout=hnd" in spec else 1] if paged else 0
    shape = ("append_kv", spec, heads, dim, value_dim, page_size, _ELEMENT[key.dtype])
    module = _cached_kernel(shape, lambda: runner.compile(append_kv_ir(*shape[1:]),
                                                           ["--num-threads=1"]))
    if not paged and slots.dim() == 1:  # [S] shared by the batch
        slots = slots.expand(key.shape[0], -1)
    if not paged and positions.dim() == (2 if streams else 1):  # shared by the batch
        positions = positions.expand(key.shape[0], *positions.shape)
    tensors = [key.contiguous(), value.contiguous(), key_cache, value_cache,
               slots.contiguous(), positions.contiguous()]
    _call_entry(module, "append_kv", tensors, what)


@torch.library.custom_op("pe::append_kv", mutates_args=("key_cache", "value_cache"))
def _append_kv_op(key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor,
                  value_cache: torch.Tensor, slots: torch.Tensor,
                  positions: Optional[torch.Tensor], spec: str) -> None:
    _append_kv_impl(key, value, key_cache, value_cache, slots, positions, spec)


@_append_kv_op.register_fake
def _(key, value, key_cache, value_cache, slots, positions, spec):
    return None


def append_kv(key: torch.Tensor, value: torch.Tensor, key_cache: torch.Tensor,
              value_cache: torch.Tensor, slots: torch.Tensor,
              positions: Optional[torch.Tensor] = None, *, layout: str = "nhd",
              rope: Union[None, str, Mapping] = None) -> None:
    """`pe.append_kv` on torch tensors, writing into `key_cache` and `value_cache` in
    place (semantics: docs/dialect.md). Paged (`nhd`, `hnd`): key [T, Hkv, D], value
    [T, Hkv, Dv], slots [T] (vLLM's slot_mapping, -1 skips a token); dense: key
    [B, Hkv, S, D], caches [B, Hkv, Smax, D], slots [S] or [B, S]. With `rope` the keys
    are rotated by `positions` (int64, the slots' shape; a multi-stream rope's
    [A, T] paged, [A, S] or [B, A, S] dense) as they are written."""
    spec = _cache_spec(layout, rope)
    if (rope is None) != (positions is None):
        raise ValueError("pe.append_kv: positions are given exactly when rope is")
    if _plain_call((key, value, key_cache, value_cache)):
        return _append_kv_impl(key, value, key_cache, value_cache, slots, positions, spec)
    return torch.ops.pe.append_kv(key, value, key_cache, value_cache, slots, positions, spec)


def paged_attention_ir(spec: str, heads: int, kv_heads: int, head_dim: int, value_dim: int,
                       page_size: int, element: str, sinks: bool = False,
                       mask_heads: int = 0) -> str:
    """The function `@paged_attention` the operator compiles (dynamic tokens, pages,
    sequences and block-table width); with `mask_heads` (1 or Hq), an f32 [T, mask_heads,
    K] soft mask `%m`, then with `sinks` an f32 [Hq] argument `%s`, then with a
    multi-stream rope its rows' positions, an i64 [A, T] argument `%rp`, last."""
    layout_part, _, rest = spec.partition(" ")
    layout = layout_part.split("=", 1)[1]
    o = _parse_spec(rest)
    page = (page_size, kv_heads) if layout == "nhd" else (kv_heads, page_size)
    q, out = f"tensor<?x{heads}x{head_dim}x{element}>", f"tensor<?x{heads}x{value_dim}x{element}>"
    kc = f"tensor<?x{page[0]}x{page[1]}x{head_dim}x{element}>"
    vc = f"tensor<?x{page[0]}x{page[1]}x{value_dim}x{element}>"
    attrs = (f" scale({ir.format_f64(o['scale'])})" if o["scale"] is not None else "") + \
        (" causal" if o["causal"] else "") + \
        (f" window({o['window']})" if o["window"] is not None else "") + \
        (f" chunk({o['chunk']})" if o["chunk"] is not None else "") + \
        (f" rope({o['rope']})" if o["rope"] else "") + \
        (f" alibi({ir.format_f64(o['alibi'])})" if o["alibi"] is not None else "") + \
        (f" softcap({ir.format_f64(o['softcap'])})" if o["softcap"] is not None else "")
    if o["temperature"] is not None:
        floor, scale = o["temperature"]
        attrs += (f" temperature(#pe.temperature<floor_scale = {floor}, "
                  f"attn_scale = {ir.format_f64(scale)}>)")
    mask = f"tensor<?x{mask_heads}x?xf32>"
    streams = _rope_streams(o["rope"])
    rows = f"tensor<{streams}x?xi64>"
    sinks_param = (f", %m: {mask}" if mask_heads else "") + \
        (f", %s: tensor<{heads}xf32>" if sinks else "") + \
        (f", %rp: {rows}" if streams else "")
    sinks_operand = (f" mask(%m : {mask})" if mask_heads else "") + \
        (f" sinks(%s : tensor<{heads}xf32>)" if sinks else "") + \
        (f" rope_positions(%rp : {rows})" if streams else "")
    return f"""func.func @paged_attention(%q: {q}, %kc: {kc}, %vc: {vc}, %bt: tensor<?x?xi32>,
                           %lens: tensor<?xi32>, %cu: tensor<?xi32>{sinks_param}) -> {out} {{
  %o = pe.paged_attention %q, %kc, %vc block_table(%bt : tensor<?x?xi32>)
       kv_lens(%lens : tensor<?xi32>) cu_seqlens(%cu : tensor<?xi32>){sinks_operand} layout({layout}){attrs}
       : {q}, {kc}, {vc} -> {out}
  return %o : {out}
}}
"""


def _paged_attention_impl(query, key_cache, value_cache, block_table, kv_lens, cu_seqlens,
                          sinks, spec, mask=None, rope_positions=None) -> torch.Tensor:
    what = "pe.paged_attention"
    streams = _rope_streams(_parse_spec(spec.partition(" ")[2])["rope"])
    if (rope_positions is not None) != bool(streams):
        raise ValueError(f"{what}: rope_positions ([A, T] int64) are given exactly with a "
                         "multi-stream rope (one with sections)")
    if rope_positions is not None:
        _check("rope_positions", rope_positions, torch.int64)
        if tuple(rope_positions.shape) != (streams, query.shape[0]):
            raise ValueError(f"{what}: rope_positions must be [{streams}, {query.shape[0]}] "
                             f"(the rope's streams by the query rows), got "
                             f"{tuple(rope_positions.shape)}")
    for name, t in (("query", query), ("key_cache", key_cache), ("value_cache", value_cache)):
        _check(name, t, query.dtype)
    if query.dtype not in _ELEMENT:
        raise TypeError(f"{what}: {query.dtype} is not float32, float16 or bfloat16")
    for name, t in (("block_table", block_table), ("kv_lens", kv_lens),
                    ("cu_seqlens", cu_seqlens)):
        _check(name, t, torch.int32)
    if query.dim() != 3 or key_cache.dim() != 4 or value_cache.dim() != 4:
        raise ValueError(f"{what}: query must be [T, Hq, D] and the caches 4-D pages, got "
                         f"{tuple(query.shape)}, {tuple(key_cache.shape)}")
    if sinks is not None:
        _check("sinks", sinks)
        if not sinks.is_floating_point() or tuple(sinks.shape) != (query.shape[1],):
            raise ValueError(f"{what}: sinks must be [{query.shape[1]}] floats (one per query "
                             f"head), got {tuple(sinks.shape)} {sinks.dtype}")
    if mask is not None:
        _check("mask", mask, torch.float32)
        if mask.dim() != 3 or mask.shape[0] != query.shape[0] or \
                mask.shape[1] not in (1, query.shape[1]):
            raise ValueError(f"{what}: mask must be [{query.shape[0]}, {query.shape[1]} or 1, "
                             f"K] (a row over the keys per query), got {tuple(mask.shape)}")
    hnd = spec.startswith("layout=hnd")
    page_size, kv_heads = (key_cache.shape[2], key_cache.shape[1]) if hnd else \
        (key_cache.shape[1], key_cache.shape[2])
    shape = ("paged_attention", spec, query.shape[1], kv_heads, query.shape[2],
             value_cache.shape[3], page_size, _ELEMENT[query.dtype], sinks is not None,
             0 if mask is None else mask.shape[1])
    threads = max(1, torch.get_num_threads())
    module = _cached_kernel(shape + (threads,), lambda: runner.compile(
        paged_attention_ir(*shape[1:]), [f"--num-threads={threads}"]))
    out = query.new_empty((query.shape[0], query.shape[1], value_cache.shape[3]))
    tensors = [t.contiguous() for t in (query, key_cache, value_cache, block_table, kv_lens,
                                        cu_seqlens)]
    if mask is not None:
        tensors.append(mask.contiguous())
    if sinks is not None:  # f32 holds every bf16/f16 sink exactly
        tensors.append(sinks.to(torch.float32).contiguous())
    if rope_positions is not None:
        tensors.append(rope_positions.contiguous())
    _call_entry(module, "paged_attention_into", tensors + [out], what)
    return out


@torch.library.custom_op("pe::paged_attention", mutates_args=())
def _paged_attention_op(query: torch.Tensor, key_cache: torch.Tensor,
                        value_cache: torch.Tensor, block_table: torch.Tensor,
                        kv_lens: torch.Tensor, cu_seqlens: torch.Tensor,
                        sinks: Optional[torch.Tensor], spec: str,
                        mask: Optional[torch.Tensor] = None,
                        rope_positions: Optional[torch.Tensor] = None) -> torch.Tensor:
    return _paged_attention_impl(query, key_cache, value_cache, block_table, kv_lens,
                                 cu_seqlens, sinks, spec, mask, rope_positions)


@_paged_attention_op.register_fake
def _(query, key_cache, value_cache, block_table, kv_lens, cu_seqlens, sinks, spec, mask=None,
      rope_positions=None):
    return query.new_empty((query.shape[0], query.shape[1], value_cache.shape[3]))


def paged_attention(query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                    block_table: torch.Tensor, kv_lens: torch.Tensor,
                    cu_seqlens: torch.Tensor, *, layout: str = "nhd", causal: bool = False,
                    window: Optional[int] = None, scale: Optional[float] = None,
                    rope: Union[None, str, Mapping] = None, alibi: Optional[float] = None,
                    softcap: Optional[float] = None, chunk: Optional[int] = None,
                    sinks: Optional[torch.Tensor] = None,
                    temperature: Optional[Tuple[int, float]] = None,
                    mask: Optional[torch.Tensor] = None,
                    rope_positions: Optional[torch.Tensor] = None) -> torch.Tensor:
    """`pe.paged_attention` on torch tensors (semantics: docs/dialect.md): query
    [T, Hq, D] packed by `cu_seqlens` (int32 [B + 1]), pages of `key_cache` /
    `value_cache` through `block_table` (int32 [B, M]) for `kv_lens` (int32 [B]) keys per
    sequence; `rope` rotates the queries (the cache holds rotated keys); `sinks` ([Hq],
    any float dtype) are gpt-oss's per-head logits; `temperature` (floor_scale,
    attn_scale) Llama 4's query temperature; `mask` (float32 [T, Hq or 1, K], additive,
    -inf hides a key) each query row's soft mask over its sequence's first K >= L keys;
    `rope_positions` (int64 [A, T], with a multi-stream rope and only then: Qwen2-VL /
    Qwen3-VL M-RoPE) each query row's position in each of the rope's A streams.
    Returns [T, Hq, Dv]."""
    if layout not in ("nhd", "hnd"):
        raise ValueError(f"pe.paged_attention: layout must be 'nhd' or 'hnd', got {layout!r}")
    spec = f"layout={layout} " + _spec(causal, window, scale, rope, alibi, softcap, chunk,
                                        temperature)
    args = (query, key_cache, value_cache, block_table, kv_lens, cu_seqlens, sinks)
    if _plain_call((query, key_cache, value_cache, sinks, mask, rope_positions)):
        return _paged_attention_impl(*args, spec, mask, rope_positions)
    return torch.ops.pe.paged_attention(*args, spec, mask, rope_positions)
