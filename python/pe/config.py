"""A model's Hugging Face config as pe attributes, IR and compiled kernels.

    >>> import pe
    >>> model = pe.config.read("examples/configs/llama-3.1-8b.json")
    >>> model.kinds[0].rope_attr
    '#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<...>>'
    >>> module = model.compile(seq_len=128)           # the CPU kernels
    >>> (out,) = module.call("attention", q, k, v, positions, positions)

The config is read by `pe-compile --config` (one reader for C, C++ and
Python: docs/configs.md lists the fields and model types). A source is a
dict, a path to a config.json (or to the folder holding it), or a
transformers `PretrainedConfig`. An unknown model type, rope type or rope
parameter, a bad value, or two fields that contradict each other raise
ConfigError naming the field; fields unrelated to positional encoding and
attention are ignored.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Tuple

import numpy as np

from . import reference, runner

__all__ = ["ConfigError", "AttentionKind", "ModelConfig", "read"]


class ConfigError(ValueError):
    """A config pe cannot read; the message names the field."""


@dataclass(frozen=True)
class AttentionKind:
    """The attention of one kind of layer (`function` is its name in the IR)."""
    function: str
    layer_type: str
    causal: bool
    window: Optional[int]
    scale: Optional[float]  # None: 1/sqrt(head_dim)
    rope: Optional[dict]  # theta, rotary_dim, style, scaling (pe.reference form), attr
    alibi: Optional[float]  # max_bias
    softcap: Optional[float] = None  # logit soft-capping c (Gemma 2)
    chunk: Optional[int] = None  # chunked attention (Llama 4's attention_chunk_size)
    # Query temperature tuning (floor_scale, attn_scale): Llama 4's NoPE layers.
    temperature: Optional[Tuple[int, float]] = None
    # Learned attention sinks (gpt-oss): the function takes them, f32 [Hq], after the
    # positions.
    sinks: bool = False
    # The kind's key/value heads (MiMo-V2-Flash's sliding layers have twice the model's).
    num_key_value_heads: int = 0

    @property
    def rope_attr(self) -> Optional[str]:
        """The `#pe.rope<...>` attribute, or None."""
        return None if self.rope is None else self.rope["attr"]

    @property
    def rope_parameters(self) -> Optional[dict]:
        """RoPE as `pe.reference.apply_rope` keywords, or None."""
        if self.rope is None:
            return None
        return {k: v for k, v in self.rope.items() if k != "attr"}

    @property
    def rope_streams(self) -> int:
        """The position streams of an M-RoPE kind (its functions take q and k rope
        positions [B, A, S] after the positions), else 0."""
        return 0 if self.rope is None else len(self.rope.get("sections") or ())

    def reference(self, q, k, v, q_positions, k_positions, *extra,
                  shared_key=None) -> np.ndarray:
        """This attention in float64 (`pe.reference.attention`), with the function's
        further arguments: the q and k rope positions of an M-RoPE kind, then the sinks
        [Hq] where the kind has them; `shared_key` is latent attention's rotated key
        block [B, 1, Skv, qk_rope_head_dim] where the function takes it (`shared_key=True`
        when built), `k` then holding each head's channels before it."""
        expected = (2 if self.rope_streams else 0) + (1 if self.sinks else 0)
        if len(extra) != expected:
            raise ValueError(f"{self.function}: {expected} arguments after the positions "
                             f"(rope positions, sinks), got {len(extra)}")
        q_rope, k_rope = extra[:2] if self.rope_streams else (None, None)
        sinks = extra[-1] if self.sinks else None
        return reference.attention(q, k, v, q_positions=q_positions, k_positions=k_positions,
                                   sinks=sinks, shared_key=shared_key,
                                   q_rope_positions=q_rope,
                                   k_rope_positions=k_rope,
                                   scale=self.scale, causal=self.causal, window=self.window,
                                   rope=self.rope_parameters, alibi=self.alibi,
                                   softcap=self.softcap, chunk=self.chunk,
                                   temperature=self.temperature)


@dataclass(frozen=True)
class ModelConfig:
    """What pe reads from a config: sizes, and one AttentionKind per kind of layer."""
    source: dict
    model_type: str
    position_encoding: str  # "rope", "alibi" or "learned"
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    hidden_size: int
    num_hidden_layers: int
    max_position_embeddings: int
    kinds: Tuple[AttentionKind, ...]
    layers: Tuple[str, ...]  # the function of each layer
    # Learned positions: the table is [max_position_embeddings + position_offset,
    # embedding_size] and position p reads row p + position_offset (OPT, BioGPT: 2).
    position_offset: int = 0
    embedding_size: int = 0
    # The value head dim: head_dim but for multi-head latent attention (v_head_dim beside the
    # query/key head of qk_nope_head_dim + qk_rope_head_dim channels).
    value_head_dim: int = 0
    # Multi-head latent attention: the rotated block's channels (qk_rope_head_dim), which
    # functions built with shared_key=True take as their last argument, k_pe [B, 1, Skv,
    # shared_key_dim], k then holding head_dim - shared_key_dim channels; 0 otherwise.
    shared_key_dim: int = 0
    # Multi-head latent attention: the compressed latent's channels (kv_lora_rank), the
    # absorbed form's value width; 0 otherwise.
    kv_lora_rank: int = 0

    def kind(self, layer: int) -> AttentionKind:
        """The attention of layer `layer`."""
        name = self.layers[layer]
        return next(k for k in self.kinds if k.function == name)

    def ir(self, seq_len: Optional[int] = None, kv_len: Optional[int] = None,
           batch: int = 1, dtype: str = "f32", *, shared_key: bool = False,
           absorbed: bool = False) -> str:
        """The module: `@attention` (or one function per kind) taking
        q [B,Hq,S,D], k, v [B,Hkv,Skv,D], q_positions [B,S], k_positions [B,Skv]
        (i64), and `@position_embeddings` for learned positions. A length of
        None is dynamic (`?`); kv_len defaults to seq_len (-1: any). Latent attention
        only: with `shared_key`, k holds the channels before the rotated block and the
        functions take the block, k_pe [B,1,Skv,shared_key_dim], last; with `absorbed`,
        the functions take q [B,H,S,R + shared_key_dim] and the compressed cache
        [B,1,Skv,R + shared_key_dim] (R = kv_lora_rank) and return [B,H,S,R]
        (`absorbed_reference`)."""
        return _pe_compile(self.source, "--emit=pe",
                           *_shape_args(seq_len, kv_len, batch, dtype, shared_key, absorbed))

    def compile(self, seq_len: Optional[int] = None, kv_len: Optional[int] = None,
                batch: int = 1, dtype: str = "f32", extra_args: Sequence[str] = (), *,
                shared_key: bool = False, absorbed: bool = False) -> runner.Module:
        """The CPU kernels of `ir(...)`, loaded (`runner.Module`)."""
        return runner.compile(self.ir(seq_len, kv_len, batch, dtype, shared_key=shared_key,
                                      absorbed=absorbed), extra_args)

    def absorbed_reference(self, kind: AttentionKind, q, cache, q_positions,
                           k_positions) -> np.ndarray:
        """The float64 reference of the absorbed form of latent attention `kind`: the
        query heads over the cache's one head, the values its first kv_lora_rank
        channels, the expanded head's scale, the rope on the cache's trailing block."""
        if not self.kv_lora_rank:
            raise ValueError(f"{self.model_type} has no kv_lora_rank (the absorbed form is "
                             f"latent attention's)")
        if kind.sinks or kind.rope_streams:
            raise ValueError(f"{kind.function}: the absorbed form takes no sinks or rope "
                             f"streams")
        width = self.kv_lora_rank + self.shared_key_dim
        if np.shape(q)[-1] != width or np.shape(cache)[-1] != width:
            raise ValueError(f"the absorbed form's q and cache have {width} channels "
                             f"(kv_lora_rank + the rotated block), got {np.shape(q)[-1]} "
                             f"and {np.shape(cache)[-1]}")
        rope = kind.rope_parameters
        if rope is not None:
            rope = dict(rope, rotary_offset=self.kv_lora_rank)
        scale = kind.scale if kind.scale is not None else self.head_dim ** -0.5
        cache = np.asarray(cache)
        return reference.attention(q, cache, cache[..., :self.kv_lora_rank],
                                   q_positions=q_positions, k_positions=k_positions,
                                   scale=scale, causal=kind.causal, window=kind.window,
                                   rope=rope, alibi=kind.alibi, softcap=kind.softcap,
                                   chunk=kind.chunk, temperature=kind.temperature)

    def build(self, output: str, target: str = "cpu", emit: Optional[str] = None,
              seq_len: Optional[int] = None, kv_len: Optional[int] = None,
              batch: int = 1, dtype: str = "f32", extra_args: Sequence[str] = (), *,
              shared_key: bool = False, absorbed: bool = False) -> str:
        """Writes `output` with pe-compile: a shared library (CPU; with its C
        header and interface JSON beside it), or PTX / cubin / fatbin
        (`target="gpu"`, `emit` defaults to ptx). Returns `output`."""
        if target not in ("cpu", "gpu"):
            raise ValueError(f"target must be 'cpu' or 'gpu', got {target!r}")
        emit = emit or ("shared" if target == "cpu" else "ptx")
        extra = list(extra_args)
        if emit == "shared":  # the C header and the interface runner.load reads, beside it
            stem = os.path.splitext(output)[0]
            extra += [f"--header={stem}.h", f"--interface={stem}.json"]
        _pe_compile(self.source, f"--target={target}", f"--emit={emit}", "-o", output,
                    *_shape_args(seq_len, kv_len, batch, dtype, shared_key, absorbed), *extra)
        return output


def _shape_args(seq_len, kv_len, batch, dtype, shared_key=False, absorbed=False) -> list:
    args = [f"--batch={int(batch)}", f"--dtype={dtype}"]
    if shared_key:
        args.append("--shared-key")
    if absorbed:
        args.append("--absorbed")
    if seq_len is not None:
        args.append(f"--seq-len={int(seq_len)}")
    if kv_len is not None:
        args.append(f"--kv-len={int(kv_len)}")
    return args


def _pe_compile(source: dict, *args: str) -> str:
    """Runs `pe-compile --config=<source> args` and returns its output."""
    with tempfile.TemporaryDirectory(prefix="pe-config-") as folder:
        path = os.path.join(folder, "config.json")
        with open(path, "w") as f:
            json.dump(source, f)
        proc = subprocess.run([runner.PE_COMPILE, f"--config={path}", *args],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        prefix = f"pe-compile: error: {path}: "
        lines = [line[len(prefix):] if line.startswith(prefix) else line
                 for line in proc.stderr.strip().splitlines()]
        raise ConfigError("\n".join(lines))
    return proc.stdout


def _load_source(config) -> dict:
    if isinstance(config, Mapping):
        return dict(config)
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        if os.path.isdir(path):
            path = os.path.join(path, "config.json")
        with open(path) as f:
            try:
                return json.load(f)
            except json.JSONDecodeError as error:
                raise ConfigError(f"{path} is not JSON: {error}") from None
    if hasattr(config, "to_dict"):  # transformers.PretrainedConfig
        return json.loads(json.dumps(config.to_dict(), default=str))
    raise TypeError(f"expected a dict, a path or a PretrainedConfig, got "
                    f"{type(config).__name__}")


def _temperature(value) -> Optional[Tuple[int, float]]:
    return None if value is None else (int(value["floor_scale"]), float(value["attn_scale"]))


def read(config) -> ModelConfig:
    """Reads a config (dict, path to config.json or its folder, PretrainedConfig)."""
    source = _load_source(config)
    doc = json.loads(_pe_compile(source, "--emit=config"))
    kinds = tuple(AttentionKind(k["function"], k["layer_type"], k["causal"], k["window"],
                                k["scale"], k["rope"], k["alibi"], k.get("softcap"),
                                k.get("chunk"), _temperature(k.get("temperature")),
                                bool(k.get("sinks", False)),
                                int(k.get("num_key_value_heads", doc["num_key_value_heads"])))
                  for k in doc["kinds"])
    return ModelConfig(source, doc["model_type"], doc["position_encoding"],
                       doc["num_attention_heads"], doc["num_key_value_heads"], doc["head_dim"],
                       doc["hidden_size"], doc["num_hidden_layers"],
                       doc["max_position_embeddings"], kinds, tuple(doc["layers"]),
                       doc["position_offset"], doc["embedding_size"],
                       doc.get("value_head_dim", doc["head_dim"]),
                       doc.get("shared_key_dim", 0), doc.get("kv_lora_rank", 0))
