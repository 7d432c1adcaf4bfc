"""pe attention inside Hugging Face transformers.

    import pe.transformers
    pe.transformers.register()                       # attn_implementation="pe"
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="pe")

`register()` adds `"pe"` to transformers' `AttentionInterface` (and a mask
function to `AttentionMaskInterface`). The model then calls the compiled
`pe.attention` kernel (`pe.torch`) for every layer: causal, sliding windows
(`sliding_window`), GQA without repeating K/V, the model's score scale, and
the padding mask where one is needed. transformers applies RoPE before it
calls an attention function, so with `"pe"` the rotation is still PyTorch's
and rotated keys are cached.

`register()` also adds `"paged|pe"`, the paged-attention interface of
transformers' continuous batching (`model.generate_batch(...)` with
`attn_implementation="paged|pe"`): each layer writes its new keys and values
into transformers' paged cache with `pe.append_kv` and attends over the
pages in place with `pe.paged_attention` (`paged_attention_forward`).

`fuse_rope(model)` goes further for LLaMA-family models (LLaMA, Mistral,
Qwen2; any module shaped like `LlamaAttention`): each attention layer passes
un-rotated q and k and their positions to `pe.attention` with the model's
RoPE (read from its config by `pe.config`) fused into the kernel, so rotated
q and k never exist; the KV cache then holds un-rotated keys.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import types
import weakref
from typing import Dict, Optional

import torch

from . import config as pe_config
from . import reference
from . import torch as pe_torch

__all__ = ["register", "attention_forward", "paged_attention_forward", "fuse_rope", "NAME"]

NAME = "pe"
PAGED_NAME = "paged|" + NAME


def _additive(mask: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """transformers' mask (bool: True attends; or additive float) as an
    additive float32 mask [B, 1, Sq, Skv]."""
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        zero = torch.zeros((), dtype=torch.float32)
        return torch.where(mask, zero, torch.tensor(float("-inf"))).contiguous()
    # Eager masks hold finfo.min for hidden keys: make them -inf (exactly hidden).
    mask = mask.to(torch.float32)
    return torch.where(mask <= torch.finfo(torch.float32).min / 2,
                       torch.tensor(float("-inf")), mask).contiguous()


# Keyword arguments of attention calls that change the result and that pe
# attention does not implement: refused rather than ignored.
_REFUSED = {"cu_seq_lens_q": "packed sequences",
            "cu_seq_lens_k": "packed sequences", "max_length_q": "packed sequences",
            "max_length_k": "packed sequences", "seq_idx": "packed sequences",
            "position_bias": "an additive position bias"}


def _check_call(dropout, softcap, kwargs) -> None:
    if dropout:
        raise NotImplementedError("pe attention is for inference: dropout must be 0 "
                                  "(call model.eval())")
    if softcap is not None and not softcap > 0:
        raise ValueError(f"softcap must be a number > 0, got {softcap}")
    if kwargs.get("output_attentions"):
        raise NotImplementedError("pe attention does not return attention weights")
    for name, what in _REFUSED.items():
        if kwargs.get(name) is not None:
            raise NotImplementedError(f"pe attention does not implement {what} ({name})")


def _rules(module, attention_mask, window, kwargs):
    """(mask, causal, window) for the kernel: a mask from transformers is the
    whole rule (causal, window, padding, and any or/and terms); without one
    (see `_mask`) the kernel applies the causal rule as transformers' SDPA
    function would (the call's `is_causal`, else the module's) and the
    call's window."""
    if attention_mask is not None:
        return _additive(attention_mask), False, None
    causal = kwargs.get("is_causal")
    if causal is None:
        causal = getattr(module, "is_causal", True)
    return None, bool(causal), window


def attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0,
                      sliding_window=None, softcap=None, **kwargs):
    """An attention function of transformers' `AttentionInterface`: q [B,Hq,S,D],
    k and v [B,Hkv,Skv,D] (RoPE applied), output [B, S, Hq, D] and no weights.
    Every option comes from the call, as transformers' own functions take
    them: a module's attributes (a `sliding_window` it keeps for its mask
    builder, say) never add a rule the call did not ask for."""
    _check_call(dropout, softcap, kwargs)
    if attention_mask is not None and attention_mask.dim() == 4 and attention_mask.shape[1] != 1:
        raise NotImplementedError(
            f"pe attention takes one mask for all heads; {type(module).__name__} passes a mask "
            f"per head {tuple(attention_mask.shape)}")
    mask, causal, window = _rules(module, attention_mask, sliding_window, kwargs)
    # Attention sinks (gpt-oss passes its per-head `sinks` as s_aux).
    out = pe_torch.attention(query, key, value, mask=mask, causal=causal, window=window,
                             scale=scaling, softcap=softcap, sinks=kwargs.get("s_aux"))
    return out.transpose(1, 2).contiguous(), None


def _mask(batch_size, q_length, kv_length, q_offset=0, kv_offset=0, mask_function=None,
          attention_mask=None, allow_is_causal_skip=True, local_size=None, config=None,
          **kwargs):
    """No mask where the kernel's causal rule is the whole mask: no padding,
    no window or chunk (local_size), the queries are the last keys (a
    dynamic cache; not a static cache's empty slots), and the model follows
    SDPA's contract (its modules' `is_causal`; see `_allow_mask_skip`).
    Else transformers' boolean SDPA mask (its additive eager mask for models
    without SDPA support), which the kernel then applies alone."""
    from transformers.masking_utils import (causal_mask_function, eager_mask,
                                            prepare_padding_mask, sdpa_mask)
    padding = prepare_padding_mask(attention_mask, kv_length, kv_offset)
    aligned = q_offset + q_length == kv_offset + kv_length
    sdpa_contract = _may_skip_mask(config)
    if (allow_is_causal_skip and aligned and local_size is None and sdpa_contract
            and (padding is None or bool(padding.all()))):
        return None
    if not sdpa_contract:
        # A model without SDPA support may edit its mask as eager's (additive
        # float; DeepSeek-V4 appends its compressor's block bias to it).
        kwargs.pop("dtype", None)
        return eager_mask(batch_size, q_length, kv_length, q_offset, kv_offset,
                          mask_function or causal_mask_function, attention_mask,
                          dtype=torch.float32, local_size=local_size, **kwargs)
    return sdpa_mask(batch_size, q_length, kv_length, q_offset, kv_offset,
                     mask_function or causal_mask_function, attention_mask,
                     allow_is_causal_skip=False, local_size=local_size, **kwargs)


@functools.lru_cache(maxsize=None)
def _routes_attention(model_class) -> bool:
    """Whether the attention layers of `model_class` call transformers'
    AttentionInterface: transformers' own test (an attention module in the
    modeling source must call `get_interface`), and no table of the model's
    own attention classes indexed by the implementation's name."""
    check = getattr(model_class, "_can_set_attn_implementation", None)
    if check is not None and not check():
        return False
    try:
        source = inspect.getsource(sys.modules[model_class.__module__])
    except (KeyError, OSError, TypeError):
        return True
    return re.search(r"ATTENTION_CLASSES\s*\[\s*config\._attn_implementation", source) is None


# The configs of the models built with pe attention that follow SDPA's
# contract: with no mask, their attention modules say whether they are
# causal (`is_causal`). Only for these may the mask function skip the mask.
_MASK_SKIP: Dict[int, "weakref.ref"] = {}


def _allow_mask_skip(config, allowed: bool) -> None:
    key = id(config)
    if allowed:
        _MASK_SKIP[key] = weakref.ref(config, lambda _: _MASK_SKIP.pop(key, None))
    else:
        _MASK_SKIP.pop(key, None)


def _may_skip_mask(config) -> bool:
    ref = _MASK_SKIP.get(id(config))
    return ref is not None and ref() is config


def _refuse_other_models(names) -> None:
    """Makes building a model with a pe attention name fail, naming the class,
    when the model computes attention in its own code: pe's attention and
    mask functions would not be called, or only the mask function, and the
    model would silently run without its causal mask."""
    from transformers import PreTrainedModel
    original = PreTrainedModel._check_and_adjust_attn_implementation
    if hasattr(original, "_pe_names"):
        original._pe_names.update(names)
        return

    def checked(self, attn_implementation, *args, **kwargs):
        base = attn_implementation.split("|")[-1] if isinstance(attn_implementation, str) else None
        if base in checked._pe_names:
            if not _routes_attention(type(self)):
                raise NotImplementedError(
                    f"pe attention cannot run in {type(self).__name__}: its attention layers do "
                    f"not call transformers' AttentionInterface (use attn_implementation="
                    f"\"eager\" or \"sdpa\" for this model)")
            _allow_mask_skip(self.config, bool(getattr(type(self), "_supports_sdpa", False)))
        return original(self, attn_implementation, *args, **kwargs)
    checked._pe_names = set(names)
    PreTrainedModel._check_and_adjust_attn_implementation = checked


def _sequence_pages(rows: torch.Tensor, cu: torch.Tensor, page_size: int) -> torch.Tensor:
    """The block table [B, M] of sequences whose cache rows (physical row indices
    of `[pages * page_size, H, D]`, in position order) are `rows[cu[b]:cu[b+1]]`;
    NotImplementedError where a sequence's rows are not whole pages in order (a
    sliding-window group's ring of rows, say)."""
    lengths = (cu[1:] - cu[:-1]).tolist()
    width = max([-(-n // page_size) for n in lengths] + [1])
    table = torch.zeros((len(lengths), width), dtype=torch.int32)
    for b, n in enumerate(lengths):
        mine = rows[int(cu[b]):int(cu[b]) + n].to(torch.int64)
        pages = mine[::page_size] // page_size
        expected = pages.repeat_interleave(page_size)[:n] * page_size + \
            torch.arange(n) % page_size
        if not torch.equal(mine, expected):
            raise NotImplementedError(
                "pe paged attention reads whole pages in position order; this cache "
                "group's rows are not (a sliding-window layer's ring buffer)")
        table[b, :pages.numel()] = pages.to(torch.int32)
    return table


def _window_pages(pages, new_rows, read, sentinel, cu_k):
    """A sliding-window group's keys (or values) of each sequence as whole pages of
    their own, and the block table over them: transformers keeps such a group's rows
    in a ring that the new rows may overwrite, and lists in `read` the cached rows of
    each sequence (its last W - 1, in position order) and a `sentinel` entry per new
    row; here, as in its own paged path, the cached rows are copied and the new rows
    (`new_rows` [T, H, D], in order) take the sentinels' places."""
    page_size = pages.shape[1]
    flat = pages.reshape(-1, *pages.shape[2:])
    fresh = read == sentinel
    rows = flat.index_select(0, torch.where(fresh, torch.zeros_like(read), read))
    rows[fresh] = new_rows
    lengths = (cu_k[1:] - cu_k[:-1]).tolist()
    counts = [-(-n // page_size) for n in lengths]
    table = torch.zeros((len(lengths), max(counts + [1])), dtype=torch.int32)
    index, first = [], 0
    for b, (n, count) in enumerate(zip(lengths, counts)):
        mine = torch.arange(int(cu_k[b]), int(cu_k[b]) + n)
        index.append(torch.cat([mine, mine.new_zeros(count * page_size - n)]))
        table[b, :count] = torch.arange(first, first + count, dtype=torch.int32)
        first += count
    index = torch.cat(index) if index else torch.zeros(0, dtype=torch.int64)
    return rows.index_select(0, index).view(-1, page_size, *rows.shape[1:]), table


def paged_attention_forward(module, query, key, value, attention_mask, cache=None,
                            cu_seq_lens_q=None, cu_seq_lens_k=None, scaling=None,
                            dropout=0.0, sliding_window=None, softcap=None, **kwargs):
    """The attention function of `attn_implementation="paged|pe"` for transformers'
    continuous batching: query [1, Hq, T, D] packed by `cu_seq_lens_q`, the new
    keys and values [1, Hkv, T, D] (RoPE applied); they are written into the
    layer's paged cache at `write_index` (`pe.append_kv`), then each sequence's
    queries attend causally to its cached keys (`read_index`, `cu_seq_lens_k`)
    with `pe.paged_attention` reading the pages in place. A sliding-window group
    (a ring of rows) is read from whole pages of its own instead (`_window_pages`);
    attention sinks (`s_aux`, gpt-oss) join each row's softmax. Returns [1, T, Hq, D]."""
    if cache is None or cu_seq_lens_q is None or cu_seq_lens_k is None:
        raise ValueError("paged|pe attention is called by transformers' continuous "
                         "batching, with its paged cache and sequence lengths")
    for name in ("read_index", "write_index"):
        if name not in kwargs:
            raise ValueError(f"paged|pe attention needs the call's {name}")
    _check_call(dropout, softcap, {k: v for k, v in kwargs.items()
                                   if k not in ("max_seqlen_q", "max_seqlen_k")})
    # The call's window (Mistral passes it, gpt-oss's layers keep it), and the cache
    # group's kind: a sliding-window group keeps a ring of rows.
    window = sliding_window or None
    ring = cache.sliding_windows[module.layer_idx] != 1
    if isinstance(cu_seq_lens_k, dict):
        cu_seq_lens_k = cu_seq_lens_k["sliding_attention" if ring else "full_attention"]
    group, layer = cache.layer_index_to_group_indices[module.layer_idx]
    page_size, heads, dim = cache.block_size, cache.num_key_value_heads, cache.head_dim
    key_pages = cache.key_cache[layer].view(-1, page_size, heads, dim)
    value_pages = cache.value_cache[layer].view(-1, page_size, heads, value.shape[-1])
    tokens = int(cu_seq_lens_q[-1])
    write = kwargs["write_index"][group][:tokens].to(torch.int64)
    new_keys = key[0, :, :tokens].transpose(0, 1).contiguous()
    new_values = value[0, :, :tokens].transpose(0, 1).contiguous()
    read = kwargs["read_index"][group]
    if ring:  # read before the new rows overwrite the ring
        cu_k = cu_seq_lens_k.to(torch.int64)
        read = read[:int(cu_k[-1])].to(torch.int64)
        if read.numel() == 0:  # whole prompts: the keys are the new rows
            cu_k = cu_seq_lens_q.to(torch.int64)
            read = torch.full((tokens,), cache.sentinel_index, dtype=torch.int64)
        k_pages, table = _window_pages(key_pages, new_keys, read, cache.sentinel_index, cu_k)
        v_pages, _ = _window_pages(value_pages, new_values, read, cache.sentinel_index, cu_k)
    pe_torch.append_kv(new_keys, new_values, key_pages, value_pages, write, layout="nhd")
    if not ring:
        # Without cache reads (whole prompts only) each sequence's keys are its new ones.
        rows, cu_k = (read, cu_seq_lens_k) if read.numel() else (write, cu_seq_lens_q)
        cu_k = cu_k.to(torch.int64)
        table = _sequence_pages(rows, cu_k, page_size)
        k_pages, v_pages = key_pages, value_pages
    lengths = (cu_k[1:] - cu_k[:-1]).to(torch.int32)
    q = query[0, :, :tokens].transpose(0, 1).contiguous()
    out = pe_torch.paged_attention(q, k_pages, v_pages, table, lengths,
                                   cu_seq_lens_q.to(torch.int32), layout="nhd", causal=True,
                                   window=window, scale=scaling, sinks=kwargs.get("s_aux"))
    result = query.new_zeros((1, query.shape[2], query.shape[1], value.shape[-1]))
    result[0, :tokens] = out
    return result, None


def register(name: str = NAME) -> None:
    """Makes `attn_implementation=name` use pe attention, in the models whose
    attention goes through transformers' AttentionInterface; building any
    other model with it raises NotImplementedError naming the model class."""
    from transformers import AttentionInterface, AttentionMaskInterface
    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, _mask)
    AttentionInterface.register("paged|" + name, paged_attention_forward)
    _refuse_other_models({name, "paged|" + name})


def _key_positions(self, past_key_values, positions, keys: int,
                   name: str = "_pe_positions") -> torch.Tensor:
    """The positions of the `keys` keys attention reads ([B, S], or the rope
    streams [B, A, S]: along the last dim): kept on the cache layer beside the
    keys as its attribute `name` (so that copies of a cache carry them), cut
    where the cache was cropped, the newest kept where a sliding-window layer
    dropped old keys; a static cache's by slot."""
    if past_key_values is None:
        return positions
    layer = past_key_values.layers[self.layer_idx]
    if "Static" in type(layer).__name__:
        return _static_key_positions(self, layer, positions, keys, name)
    stored = getattr(layer, name, None)
    past = keys - positions.shape[-1]
    if stored is None or past <= 0:
        stored = positions[..., :0]
    elif stored.shape[-1] > past and not _drops_old_keys(layer):
        stored = stored[..., :past]  # cropped (assisted decoding)
    merged = torch.cat([stored, positions], dim=-1)
    if merged.shape[-1] < keys:
        raise RuntimeError(f"pe fused RoPE: the cache of layer {self.layer_idx} holds {keys} "
                           f"keys but the positions of only {merged.shape[-1]}; it was filled "
                           f"without pe.transformers.fuse_rope")
    setattr(layer, name, merged[..., merged.shape[-1] - keys:])
    return getattr(layer, name)


def _static_key_positions(self, layer, positions, keys: int, name: str) -> torch.Tensor:
    """A static layer (plain, or sliding: it rolls its slots once full) keeps
    the positions of its keys in a shadow layer of its own class (attribute
    `name` + "_shadow"), updated with the positions (as float64, exact below
    2^53; rope streams as its heads) right after the keys: the shadow moves
    them exactly as the layer moves its keys. Empty slots hold position 0;
    transformers' mask hides them."""
    from transformers.cache_utils import StaticLayer, StaticSlidingWindowLayer
    if type(layer) not in (StaticLayer, StaticSlidingWindowLayer):
        raise NotImplementedError(f"pe fused RoPE: cache layers of type "
                                  f"{type(layer).__name__} are not supported")
    sliding = type(layer) is StaticSlidingWindowLayer
    filled = layer.cumulative_length_int if sliding else int(layer.cumulative_length)
    S = positions.shape[-1]
    shadow = getattr(layer, name + "_shadow", None)
    if shadow is None or filled == S:  # a new or reset cache
        shadow = (StaticSlidingWindowLayer(max_cache_len=layer.max_cache_len,
                                           sliding_window=layer.max_cache_len)
                  if sliding else StaticLayer(max_cache_len=layer.max_cache_len))
        setattr(layer, name + "_shadow", shadow)
    streams = positions if positions.dim() == 3 else positions[:, None]
    p = streams.to(torch.float64)[..., None]
    slots, _ = shadow.update(p, p)
    shadow_filled = shadow.cumulative_length_int if sliding else int(shadow.cumulative_length)
    if shadow_filled != filled or slots.shape[2] != keys:
        raise RuntimeError(f"pe fused RoPE: static cache layer {self.layer_idx} holds keys "
                           f"stored without pe.transformers.fuse_rope")
    slots = slots[..., 0].to(torch.int64)
    return (slots if positions.dim() == 3 else slots[:, 0]).contiguous()


def _drops_old_keys(layer) -> bool:
    return "Sliding" in type(layer).__name__ or "Chunked" in type(layer).__name__


class _Layout:
    """Where an attention module keeps its projections and q/k norms, so
    that `project` gives un-rotated q, k, v [B, H, S, D] exactly as the
    module computes them before its RoPE (q_proj/k_proj/v_proj, Phi-3's
    qkv_proj, GPT-NeoX's per-head query_key_value; norms over each head
    (Qwen3, Gemma 3, Cohere, Phi) or over the whole projection (OLMo 2))."""

    def __init__(self, module, heads: int, kv_heads: int, head_dim: int):
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        # Values of their own head dim, scaled after their projection (MiMo-V2-Flash).
        self.value_dim = getattr(module, "v_head_dim", None) or head_dim
        self.value_scale = getattr(module, "v_scale", None)
        self.fused = next((n for n in ("qkv_proj", "query_key_value") if hasattr(module, n)),
                          None)
        if self.fused is None and not all(hasattr(module, n)
                                          for n in ("q_proj", "k_proj", "v_proj")):
            raise ValueError(f"fuse_rope: {type(module).__name__} has no q/k/v projections "
                             "pe knows")
        self.output = next((n for n in ("o_proj", "dense") if hasattr(module, n)), None)
        if self.output is None:
            raise ValueError(f"fuse_rope: {type(module).__name__} has no output projection "
                             "pe knows (o_proj, dense)")
        self.norms = self._norms(module)
        # Llama 4's weightless L2 norm of q and k after their rotation: a rotation keeps
        # the norm of a vector, so it is the same on the un-rotated q and k (for a
        # rotation of magnitude 1, which fuse_rope checks).
        self.rotation_invariant_norm = getattr(module, "qk_norm", None)
        self.sub_norm = getattr(module, "attn_sub_norm", None)  # BitNet, before the output
        self.clip = getattr(getattr(module, "config", None), "clip_qkv", None)  # OLMo
        unknown = [n for n, child in module.named_children()
                   if n not in self.KNOWN and any(True for _ in child.parameters())]
        if unknown:
            raise ValueError(f"fuse_rope: {type(module).__name__} has {', '.join(unknown)}, "
                             "which pe does not know where to apply")

    # The submodules with weights whose place in the computation pe knows.
    KNOWN = ("q_proj", "k_proj", "v_proj", "qkv_proj", "query_key_value", "o_proj", "dense",
             "q_norm", "k_norm", "q_layernorm", "k_layernorm", "attn_sub_norm")

    def _norms(self, module):
        """(q norm, k norm, where) or None; `where` is "projection" (before
        the heads are split: OLMo 2), "heads" (over each head of [B, H, S, D]:
        Qwen3, Gemma 3, StableLM's one norm per head, Phi) or "heads-bshd"
        (a [H, D] weight over [B, S, H, D]: Cohere)."""
        for q_name, k_name, flag in (("q_norm", "k_norm", "use_qk_norm"),
                                     ("q_layernorm", "k_layernorm", "qk_layernorm")):
            if not (hasattr(module, q_name) and hasattr(module, k_name)):
                continue
            if not getattr(module, flag, True):
                return None
            q_norm = getattr(module, q_name)
            weight = getattr(q_norm, "weight", None)
            if hasattr(q_norm, "norms") or (weight is not None and tuple(weight.shape) == (
                    self.head_dim,)):
                where = "heads"
            elif weight is not None and tuple(weight.shape) == (self.heads, self.head_dim):
                where = "heads-bshd"
            elif weight is not None and tuple(weight.shape) == (self.heads * self.head_dim,):
                where = "projection"
            else:
                shape = None if weight is None else tuple(weight.shape)
                raise ValueError(f"fuse_rope: {type(module).__name__}.{q_name} has weights of "
                                 f"shape {shape}: not a norm over a head or the projection")
            return q_norm, getattr(module, k_name), where
        return None

    def project(self, module, hidden):
        shape = hidden.shape[:-1]
        if self.fused == "query_key_value":  # GPT-NeoX: [.., H, 3 D] per head
            qkv = module.query_key_value(hidden).view(*shape, -1, 3 * self.head_dim)
            q, k, v = qkv.transpose(1, 2).chunk(3, dim=-1)
            return self._norm("heads", q, k) + (v,)
        if self.fused == "qkv_proj":  # Phi-3: [q | k | v]
            q, k, v = module.qkv_proj(hidden).split(
                [self.heads * self.head_dim, self.kv_heads * self.head_dim,
                 self.kv_heads * self.value_dim], dim=-1)
        else:
            q, k, v = module.q_proj(hidden), module.k_proj(hidden), module.v_proj(hidden)
        q, k = self._norm("projection", q, k)
        if self.clip is not None:
            q, k, v = (x.clamp(min=-self.clip, max=self.clip) for x in (q, k, v))
        q, k = (x.view(*shape, -1, self.head_dim) for x in (q, k))
        v = v.view(*shape, -1, self.value_dim)
        if self.value_scale is not None:
            v = v * self.value_scale
        q, k = self._norm("heads-bshd", q, k)
        q, k, v = (x.transpose(1, 2) for x in (q, k, v))
        q, k = self._norm("heads", q, k)
        if self.rotation_invariant_norm is not None:
            q, k = self.rotation_invariant_norm(q), self.rotation_invariant_norm(k)
        return q, k, v

    def _norm(self, where: str, q, k):
        if self.norms is not None and self.norms[2] == where:
            return self.norms[0](q), self.norms[1](k)
        return q, k

    def output_projection(self, module, out):
        if self.sub_norm is not None:
            out = self.sub_norm(out)
        return getattr(module, self.output)(out)



def _fused_forward(self, hidden_states, position_embeddings=None, attention_mask=None,
                   past_key_values=None, layer_past=None, **kwargs):
    """The attention module's forward with RoPE fused into pe.attention: its
    projections and norms (`_Layout`), then pe.attention on un-rotated q
    and k with the layer's RoPE, then its output projection."""
    _check_call(0.0 if not self.training else getattr(self, "attention_dropout", 0.0), None,
                kwargs)
    cache = past_key_values if past_key_values is not None else layer_past
    shape = hidden_states.shape[:-1]
    q, k, v = self._pe_layout.project(self, hidden_states)
    if kwargs.get("position_ids") is None:
        # Llama 4's decoder layers keep position_ids from their attention: the
        # layer's call had them (_remember_positions).
        kwargs["position_ids"] = getattr(self, "_pe_position_ids", None)
    streams = _rope_streams(self, shape) if self._pe_kind.rope_streams else None
    if self._pe_kind.temperature is not None or (
            streams is not None and kwargs.get("position_ids") is None):
        # Llama 4 tunes its queries by their place in the cache (its layers with the
        # tuning rotate nothing, so these positions serve the masks as well); M-RoPE
        # models mask in token order where no text positions are given.
        past = cache.get_seq_length(self.layer_idx) if cache is not None else 0
        positions = (past + torch.arange(shape[-1])).expand(*shape).contiguous()
    else:
        positions = _query_positions(kwargs, *shape)
    if cache is not None:
        k, v = cache.update(k, v, self.layer_idx)
    rope_positions = None if streams is None else (streams, _key_positions(
        self, cache, streams, k.shape[2], "_pe_rope_positions"))
    out = _attend(self, q, k, v, positions, cache, attention_mask, kwargs, rope_positions)
    out = out.transpose(1, 2).reshape(*shape, -1).contiguous()
    return self._pe_layout.output_projection(self, out), None


def _rope_streams(self, shape) -> torch.Tensor:
    """The M-RoPE position streams [B, A, S] (int64) of this call: those the
    model's rotary embedding was called with (`_remember_streams`)."""
    streams = getattr(self, "_pe_streams", {}).get("positions")
    A = self._pe_kind.rope_streams
    if streams is None:
        raise ValueError("pe fused M-RoPE: the model's rotary embedding was not called "
                         "before the attention; no position streams to rotate by")
    if streams.dim() == 2:
        streams = streams[None].expand(A, *streams.shape)
    if tuple(streams.shape) != (A, *shape):
        raise ValueError(f"pe fused M-RoPE: position streams of shape {tuple(streams.shape)} "
                         f"for {A} sections and queries {tuple(shape)}")
    return streams.to(torch.int64).transpose(0, 1).contiguous()


def _query_positions(kwargs, B: int, S: int) -> torch.Tensor:
    """The call's position_ids as int64 [B, S]."""
    positions = kwargs.get("position_ids")
    if positions is None:
        raise ValueError("pe fused RoPE needs position_ids")
    return positions.to(torch.int64).expand(B, S).contiguous()


def _attend(self, q, k, v, positions, cache, attention_mask, kwargs,
            rope_positions=None, shared_key=None) -> torch.Tensor:
    """pe.attention of un-rotated q and k (all of the cache's keys) with the
    layer's RoPE (by `rope_positions`, the q and k streams, for M-RoPE), window,
    scale and soft-cap: [B, Hq, S, Dv]. `shared_key` is the key channels every
    head shares (latent attention's k_pe), after k's."""
    k_positions = _key_positions(self, cache, positions, k.shape[2])
    mask, causal, window = _rules(self, attention_mask, self._pe_kind.window, kwargs)
    chunk = self._pe_kind.chunk if mask is None else None  # else the mask holds it
    sinks = getattr(self, "sinks", None) if self._pe_kind.sinks else None
    q_rope, k_rope = rope_positions or (None, None)
    return pe_torch.attention(q.contiguous(), k.contiguous(), v.contiguous(), positions,
                              k_positions, mask=mask, causal=causal, window=window,
                              scale=self.scaling, rope=self._pe_kind.rope_attr,
                              softcap=self._pe_kind.softcap, chunk=chunk,
                              temperature=self._pe_kind.temperature, sinks=sinks,
                              q_rope_positions=q_rope, k_rope_positions=k_rope,
                              shared_key=None if shared_key is None else shared_key.contiguous())


class _LatentLayout:
    """Multi-head latent attention (DeepSeek-V2/V3, GLM-4-MoE-Lite,
    LongCat-Flash, MiniCPM3): q from q_proj or the q_a/q_b LoRA, one latent
    `kv_a_proj_with_mqa` per token holding the normed key/value latent and
    the shared un-rotated key block. After the cache (which keeps the
    latents, as transformers' does) the latent is expanded per head as the
    module's `expand_kv` does, but the shared block is not copied into each
    key head: it is pe.attention's `shared_key`. The rotated block trails
    each q/k head: pe.attention's rope rotates it (`rotary_offset =
    qk_nope_head_dim`)."""

    KNOWN = ("q_proj", "q_a_proj", "q_a_layernorm", "q_b_proj", "kv_a_proj_with_mqa",
             "kv_a_layernorm", "kv_b_proj", "o_proj")

    def __init__(self, module):
        if hasattr(module, "indexer"):
            raise ValueError(f"fuse_rope: {type(module).__name__} selects its keys with a "
                             "sparse-attention indexer, which pe does not fuse")
        unknown = [n for n, child in module.named_children()
                   if n not in self.KNOWN and any(True for _ in child.parameters())]
        if unknown:
            raise ValueError(f"fuse_rope: {type(module).__name__} has {', '.join(unknown)}, "
                             "which pe does not know where to apply")
        missing = [n for n in ("kv_b_proj", "qk_nope_head_dim", "v_head_dim", "qk_head_dim",
                               "qk_rope_head_dim", "kv_lora_rank") if not hasattr(module, n)]
        if missing:
            raise ValueError(f"fuse_rope: {type(module).__name__} lacks {', '.join(missing)} "
                             "of a latent attention layer")

    @staticmethod
    def project(module, hidden):
        """q [B, H, S, nope + rope], the key/value latent [B, 1, S, rank] and
        the key's rotated block [B, 1, S, rope], un-rotated."""
        B, S = hidden.shape[:-1]
        if getattr(module, "q_proj", None) is not None:
            q = module.q_proj(hidden)
        else:
            q = module.q_b_proj(module.q_a_layernorm(module.q_a_proj(hidden)))
        q = q.view(B, S, -1, module.qk_head_dim).transpose(1, 2)
        latent, k_rot = torch.split(module.kv_a_proj_with_mqa(hidden),
                                    [module.kv_lora_rank, module.qk_rope_head_dim], dim=-1)
        latent = module.kv_a_layernorm(latent)
        if hasattr(module, "mla_scale_q_lora"):  # LongCat-Flash's LoRA scales
            q = q * module.mla_scale_q_lora
            latent = latent * module.mla_scale_kv_lora
        return q, latent.view(B, 1, S, -1), k_rot.view(B, 1, S, -1)

    @staticmethod
    def expand(module, latent):
        """The keys' own channels [B, H, S, qk_nope_head_dim] and the values
        [B, H, S, v_head_dim] of the latent [B, 1, S, rank]: `expand_kv`
        without the copy of the shared block into every key head."""
        B, _, S, _ = latent.shape
        nope, value_dim = module.qk_nope_head_dim, module.v_head_dim
        kv = module.kv_b_proj(latent).view(B, S, -1, nope + value_dim).transpose(1, 2)
        k_nope, v = torch.split(kv, [nope, value_dim], dim=-1)
        return k_nope, v


def _fused_latent_forward(self, hidden_states, position_embeddings=None, attention_mask=None,
                          past_key_values=None, **kwargs):
    """The latent-attention module's forward with RoPE fused into pe.attention
    (`_LatentLayout`), then its output projection."""
    _check_call(0.0 if not self.training else getattr(self, "attention_dropout", 0.0), None,
                kwargs)
    B, S = hidden_states.shape[:-1]
    q, latent, k_rot = _LatentLayout.project(self, hidden_states)
    positions = _query_positions(kwargs, B, S)
    if past_key_values is not None:
        latent, k_rot = past_key_values.update(latent, k_rot, self.layer_idx)
    k_nope, v = _LatentLayout.expand(self, latent)
    out = _attend(self, q, k_nope, v, positions, past_key_values, attention_mask, kwargs,
                  shared_key=k_rot)
    out = out.transpose(1, 2).reshape(B, S, -1).contiguous()
    return self.o_proj(out), None


def _self_attentions(model, read) -> list:
    """(module, layout) for each decoder self-attention module of `model`."""
    found = []
    for module in model.modules():
        if not (isinstance(getattr(module, "layer_idx", None), int)
                and hasattr(module, "scaling")):
            continue
        if getattr(module, "is_cross_attention", False):
            continue
        if hasattr(module, "kv_a_proj_with_mqa"):
            found.append((module, _LatentLayout(module)))
            continue
        found.append((module, _Layout(module, read.num_attention_heads,
                                      read.num_key_value_heads, read.head_dim)))
    if not found:
        raise ValueError(f"fuse_rope: no attention layer of {type(model).__name__} is one pe "
                         "can fuse")
    return found


def _remember_streams(holder):
    """A forward pre-hook of a text rotary embedding (called as
    `rotary_emb(x, position_ids)` before the layers) that keeps the position
    streams of the call in `holder`."""
    def hook(rotary, args, kwargs):
        holder["positions"] = args[1] if len(args) > 1 else kwargs.get("position_ids")
    return hook


def _hook_rotary_streams(model, modules) -> None:
    """Each M-RoPE attention module of `modules` reads the position streams of
    the text rotary embeddings of `model` (all but the vision towers')."""
    holder = getattr(model, "_pe_streams", None)
    if holder is None:
        rotaries = [m for m in model.modules() if type(m).__name__.endswith("RotaryEmbedding")
                    and "Vision" not in type(m).__name__]
        if not rotaries:
            raise ValueError(f"fuse_rope: {type(model).__name__} rotates by M-RoPE position "
                             "streams but has no text rotary embedding to read them from")
        holder = model._pe_streams = {}
        for rotary in rotaries:
            rotary.register_forward_pre_hook(_remember_streams(holder), with_kwargs=True)
    for module in modules:
        module._pe_streams = holder


def _remember_positions(attention):
    """A forward pre-hook of the layer around `attention` that keeps the
    position_ids of the layer's call on the attention module."""
    def hook(layer, args, kwargs):
        attention._pe_position_ids = kwargs.get("position_ids")
    return hook


def fuse_rope(model, name: str = NAME):
    """Switches every self-attention layer of `model` to pe attention with
    RoPE fused (and registers `name`, used for the masks). Returns model.
    The model's config must be one pe reads (`pe.config.read`): its RoPE,
    windows and scale come from there. A model it refuses is left as it was."""
    read = pe_config.read(model.config)
    if read.position_encoding != "rope":
        raise ValueError(f"fuse_rope: {read.model_type} models do not use RoPE")
    modules = _self_attentions(model, read)
    kinds = [read.kind(module.layer_idx) for module, _ in modules]
    streamed = [module for (module, _), kind in zip(modules, kinds) if kind.rope_streams]
    if any(isinstance(layout, _LatentLayout) for (_, layout) in modules) and streamed:
        raise ValueError(f"fuse_rope: {read.model_type} has latent attention with M-RoPE")
    register(name)
    for (module, layout), kind in zip(modules, kinds):
        if getattr(layout, "rotation_invariant_norm", None) is not None and kind.rope and \
                reference.rope_attention_factor(kind.rope.get("scaling"),
                                                kind.rope.get("magnitude", 1.0)) != 1.0:
            raise ValueError(f"fuse_rope: layer {module.layer_idx} normalizes q and k after a "
                             "rotation of magnitude != 1, which the norm does not commute with")
    if streamed:
        _hook_rotary_streams(model, streamed)
    parents = {id(child): parent for parent in model.modules() for child in parent.children()}
    for (module, layout), kind in zip(modules, kinds):
        module._pe_kind, module._pe_layout = kind, layout
        parent = parents.get(id(module))
        if parent is not None and not hasattr(module, "_pe_positions_hook"):
            module._pe_positions_hook = parent.register_forward_pre_hook(
                _remember_positions(module), with_kwargs=True)
        forward = _fused_latent_forward if isinstance(layout, _LatentLayout) else _fused_forward
        module.forward = types.MethodType(forward, module)
    model.config._attn_implementation = name
    _allow_mask_skip(model.config, True)
    for sub in model.modules():
        if hasattr(sub, "config") and sub.config is not model.config:
            _allow_mask_skip(sub.config, True)
    return model
