"""Every causal-LM architecture of the installed transformers against pe attention.

    # from the repository root, with the extras installed in .venv
    PYTHONPATH=python .venv/bin/python -m pe.hf_models            # markdown on stdout
    PYTHONPATH=python .venv/bin/python -m pe.hf_models --write docs/transformers-models.md
    PYTHONPATH=python .venv/bin/python -m pe.hf_models llama gemma3_text  # some types

For each model type of transformers' `MODEL_FOR_CAUSAL_LM_MAPPING` a tiny
random model is built from the type's default config (hidden 64, 2 layers,
4 query and 2 key/value heads of 16, vocabulary 128, windows of 8), once with
eager attention and once with `attn_implementation="pe"` and the same
weights, and both run a batch of 2 x 24 tokens and a greedy generation of 10
tokens, with their attention masks (all ones, as a tokenizer gives them). Each
type ends in one of:

- `equal`: pe attention ran and the logits are within 1e-5 of eager, the
  generated tokens identical;
- `no attention`: no layer calls an attention function (state-space and
  recurrent models) and the results equal eager's;
- `refused`: pe raised an error naming what it does not implement;
- `not built`: the tiny model cannot be built or run even with eager
  attention (a limit of these generic tiny configs, not of pe);
- `WRONG` or `CRASH`: different results, or an error from outside pe. The
  tests (python/tests/test_hf_models.py) fail on these.
"""

from __future__ import annotations

import argparse
import copy
import sys
import warnings
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional

import numpy as np

TOLERANCE = 1e-5  # float32 logits; measured differences are below 1e-6
MAX_PARAMETERS = 20_000_000  # a config the generic shrinking leaves larger is not built
BATCH, LENGTH, NEW_TOKENS, VOCAB = 2, 24, 10, 128

# Sizes of the tiny configs, set where a config has the field.
_SIZES = dict(
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, vocab_size=VOCAB, max_position_embeddings=256,
    n_positions=256, n_ctx=256, max_window_layers=2,
    # mixtures of experts
    num_experts=4, num_local_experts=4, n_routed_experts=4, num_experts_per_tok=2,
    moe_intermediate_size=32, shared_expert_intermediate_size=32, n_shared_experts=1,
    first_k_dense_replace=1, n_group=1, topk_group=1, num_dense_layers=1,
    # encoder-decoder families used as decoders
    d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
    decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
    # hybrids
    attn_layer_period=2, attn_layer_offset=1, expert_layer_period=2, expert_layer_offset=1,
    num_kv_shared_layers=0, mamba_n_heads=8, mamba_d_head=16, mamba_num_heads=8,
    mamba_head_dim=16, mamba_d_ssm=128, mamba_d_state=16, mamba_chunk_size=16,
    linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
    linear_value_head_dim=16,
    # per-layer embeddings, long-context MoE families
    vocab_size_per_layer_input=VOCAB, hidden_size_per_layer_input=16,
    ffn_hidden_size=128, expert_ffn_hidden_size=32, moe_topk=2, zero_expert_num=2,
    shared_intermediate_size=32,
)
# What a type needs beyond the generic sizes.
_TYPE_FIELDS = {
    "bamba": dict(attn_layer_indices=[1]),
    "gpt_neo": dict(attention_types=[[["global", "local"], 1]]),
    "granitemoehybrid": dict(layer_types=["mamba", "attention"]),
    "lfm2_moe": dict(layer_types=["conv", "full_attention"]),
    "longcat_flash": dict(num_layers=1),  # each of its layers holds two attentions
    "mamba2": dict(num_heads=8),
    # MiMo-V2-Flash rotates int(0.334 head_dim) channels: 64 of its 192, but 5 (odd, which pe
    # refuses) of the generic 16; 24 gives 8. Values narrower than the keys, as its 128 < 192.
    "mimo_v2_flash": dict(head_dim=24, v_head_dim=16),
    "reformer": dict(is_decoder=True),
    "zaya": dict(num_experts_per_tok=1),
}
# Fields of a sub-config's dict that its constructor does not take back.
_NOT_FIELDS = ("_name_or_path", "output_attentions", "transformers_version")
# Multi-head latent attention: a rotated part of 8 after a plain part of 8, one
# key per query head, values narrower than the keys (as DeepSeek's 128 < 192).
_LATENT = dict(kv_lora_rank=32, q_lora_rank=32, qk_rope_head_dim=8, qk_nope_head_dim=8,
               v_head_dim=8, qk_head_dim=16, head_dim=8, num_key_value_heads=4)
_WINDOW = 8
# Llama 4's query temperature steps every 4 positions (not every 8192) in the tiny models.
_FLOOR_SCALE = 4
_LAYER_KIND_FIELDS = ("layer_types", "layers_block_type", "block_types")


def _kinds(kinds: list) -> list:
    """Two layers (or one per kind where there are more) covering every kind."""
    distinct = list(dict.fromkeys(map(str, kinds)))
    return (distinct * 2)[:max(2, len(distinct))]


def _tiny_fields(defaults: dict, aliases: dict) -> dict:
    """The fields that make a default config (as `to_dict`) tiny; `aliases`
    is the config class's `attribute_map` (hidden_size -> n_embd, ...)."""
    def present(sizes):
        named = {aliases.get(k, k): v for k, v in sizes.items()}
        return {k: v for k, v in named.items() if k in defaults}
    fields = present(_SIZES)
    if "qk_rope_head_dim" in defaults:
        fields.update(present(_LATENT))
    if defaults.get("rotary_dim"):
        fields["rotary_dim"] = 8
    for name in ("sliding_window", "attention_window_size", "attention_chunk_size"):
        if defaults.get(name):
            fields[name] = _WINDOW
    if defaults.get("floor_scale"):
        fields["floor_scale"] = _FLOOR_SCALE
    for name in _LAYER_KIND_FIELDS:
        if isinstance(defaults.get(name), list) and defaults[name]:
            fields[name] = _kinds(defaults[name])
            fields["num_hidden_layers"] = len(fields[name])
    layers = defaults.get(aliases.get("num_hidden_layers", "num_hidden_layers"))
    chosen, given = fields.get("layer_types"), defaults.get("layer_types")
    if chosen and isinstance(defaults.get("no_rope_layers"), list) and \
            len(defaults["no_rope_layers"]) == len(given or []):
        # Each chosen layer rotates as the first default layer of its type (Llama 4:
        # its chunked layers rotate, its full-attention layers do not).
        fields["no_rope_layers"] = [defaults["no_rope_layers"][given.index(t)] for t in chosen]
    for name, value in defaults.items():
        if isinstance(value, list) and name not in fields and layers and len(value) == layers > 2:
            fields[name] = value[:2]  # one entry per layer
        if name.endswith("_token_id") and isinstance(value, int) and value >= VOCAB:
            fields[name] = VOCAB - 1 - value % 8  # inside the vocabulary, kept distinct
        if name.endswith("_config") and isinstance(value, dict) and "model_type" in value:
            kept = {k: v for k, v in value.items() if k not in _NOT_FIELDS}
            fields[name] = {**kept, **_tiny_fields(value, _aliases(value["model_type"]))}
    return fields


def _aliases(model_type: str) -> dict:
    from transformers import CONFIG_MAPPING
    try:
        return dict(getattr(CONFIG_MAPPING[model_type], "attribute_map", {}))
    except KeyError:
        return {}


def tiny_config(model_type: str, **overrides):
    """transformers' default config of `model_type`, made tiny (then
    `overrides` set)."""
    from transformers import AutoConfig
    defaults = AutoConfig.for_model(model_type).to_dict()
    fields = {**_tiny_fields(defaults, _aliases(model_type)), **_TYPE_FIELDS.get(model_type, {}),
              **overrides}
    if "layer_types" in fields:
        fields["num_hidden_layers"] = len(fields["layer_types"])
    return AutoConfig.for_model(model_type, **fields)


def causal_lm_types() -> List[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    return sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)


def causal_lm_class(model_type: str) -> str:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    return MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type]


@dataclass
class Row:
    model_type: str
    model_class: str
    status: str  # equal, refused, not built, WRONG, CRASH
    detail: str = ""
    pe_calls: int = 0
    config: str = ""  # what pe's config reader does with the type (see `read_config`)
    fused: str = ""  # the result with pe.transformers.fuse_rope (status: detail)

    @property
    def ok(self) -> bool:
        return (self.status in ("equal", "no attention", "refused", "not built")
                and not self.config.startswith("MISMATCH")
                and not self.fused.startswith(("WRONG", "CRASH")))


def _short(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:240]}"


def _is_pe_refusal(error: BaseException) -> bool:
    """An error raised by pe (its message starts with "pe" or "fuse_rope")."""
    return (isinstance(error, (NotImplementedError, ValueError))
            and str(error).startswith(("pe", "fuse_rope")))


def _check_size(config) -> None:
    """Counts the parameters on the meta device (no memory) before building."""
    import torch
    import transformers
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(copy.deepcopy(config),
                                                              attn_implementation="eager")
    count = sum(p.numel() for p in model.parameters())
    if count > MAX_PARAMETERS:
        raise ValueError(f"the tiny config still has {count:,} parameters")


def _run(model, ids):
    """Logits of `ids` and a greedy generation from the first 8 tokens of the
    first row, each with its attention mask, as a tokenizer gives them."""
    import torch
    prompt = ids[:1, :8]
    with torch.no_grad():
        logits = model(ids, attention_mask=torch.ones_like(ids)).logits
        tokens = model.generate(prompt, attention_mask=torch.ones_like(prompt),
                                max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                                do_sample=False, pad_token_id=0)
    return logits, tokens


def _rope_calls_match(config, calls: list) -> bool:
    """Whether the fused model's pe attention calls rotated as its config says:
    in every forward pass, each layer without RoPE (NoPE) once without a rope
    and each other layer once with one."""
    from . import config as pe_config
    read = pe_config.read(config)
    layers = read.num_hidden_layers
    nope = sum(read.kind(i).rope is None for i in range(layers))
    return sum(c is None for c in calls) * layers == len(calls) * nope


def compare(model_type: str, fused: bool = False, **overrides) -> Row:
    """Builds `model_type` tiny, eager and with pe attention (`fused`: the
    eager model with `pe.transformers.fuse_rope`), and compares the two."""
    import torch
    import transformers
    from . import config as pe_config
    from . import torch as pe_torch
    from . import transformers as pe_transformers
    pe_transformers.register()
    name = causal_lm_class(model_type)
    ids = torch.randint(0, VOCAB, (BATCH, LENGTH), generator=torch.Generator().manual_seed(1))
    try:
        config = tiny_config(model_type, **overrides)
        _check_size(config)
        torch.manual_seed(0)
        eager = transformers.AutoModelForCausalLM.from_config(
            copy.deepcopy(config), attn_implementation="eager").eval()
        want = _run(eager, ids)
    except Exception as error:  # noqa: BLE001 - any failure of transformers itself
        return Row(model_type, name, "not built", _short(error))
    calls = []
    original = pe_torch.attention

    def counted(*args, **kwargs):
        calls.append(kwargs.get("rope"))
        return original(*args, **kwargs)
    pe_torch.attention = counted
    try:
        model = transformers.AutoModelForCausalLM.from_config(
            copy.deepcopy(config),
            attn_implementation="eager" if fused else pe_transformers.NAME).eval()
        model.load_state_dict(eager.state_dict())
        if fused:
            pe_transformers.fuse_rope(model)
        got = _run(model, ids)
    except pe_config.ConfigError as error:
        return Row(model_type, name, "refused", "config: " + str(error).splitlines()[0])
    except Exception as error:  # noqa: BLE001 - sorted into refusals and crashes
        status = "refused" if _is_pe_refusal(error) else "CRASH"
        return Row(model_type, name, status, _short(error), len(calls))
    finally:
        pe_torch.attention = original
    difference = (want[0] - got[0]).abs().max().item()
    same_tokens = torch.equal(want[1], got[1])
    if difference <= TOLERANCE and same_tokens and not calls:
        return Row(model_type, name, "no attention", "no layer calls an attention function; "
                   f"max |logits - eager| {difference:.1e}")
    if not calls:
        return Row(model_type, name, "WRONG", "pe attention never ran", 0)
    if fused and not _rope_calls_match(config, calls):
        return Row(model_type, name, "WRONG", "a layer ran pe attention without RoPE fused")
    if difference <= TOLERANCE and same_tokens:
        return Row(model_type, name, "equal", f"max |logits - eager| {difference:.1e}",
                   len(calls))
    return Row(model_type, name, "WRONG", f"max |logits - eager| {difference:.3g}, "
               f"tokens {'equal' if same_tokens else 'differ'}", len(calls))


def _head_dim(config) -> int:
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def _transformers_rope(config, layer_type):
    """transformers' inverse frequencies and attention factor for a layer type."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    params = config.rope_parameters
    kwargs = {}
    if layer_type in params:
        params, kwargs = params[layer_type], {"layer_type": layer_type}
    if params["rope_type"] == "default":
        base = params["rope_theta"]
        factor = getattr(config, "partial_rotary_factor", None) or params.get(
            "partial_rotary_factor", 1.0)
        dim = int(_head_dim(config) * factor)
        return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim), 1.0
    inv_freq, factor = ROPE_INIT_FUNCTIONS[params["rope_type"]](config, None, **kwargs)
    return inv_freq.double().numpy(), float(factor)


_PROBE = "pe-probe"


def _probe(model, ids) -> Dict[int, tuple]:
    """(scaling, window, key/value heads, head_dim, causal, value head dim,
    the channels before the rotated block, rotated, chunk, sinks) of each layer's
    attention call, as the model makes it with eager attention: the chunk is
    the first query after the first that sees one key again (causal chunked
    attention); else the window is the number of keys the last query sees in
    the mask transformers builds for that layer (None: all of them); causal
    when the first query sees one key; the rotated block
    starts at the module's `qk_nope_head_dim` (latent attention), else 0;
    and whether the layer rotated q and k (a call of its modeling file's
    RoPE function since the previous attention call; None where the file
    has none of the known names)."""
    import sys
    import torch
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import sdpa_mask
    calls = {}
    modeling = sys.modules[type(model).__module__]
    rope_names = [n for n in ("apply_rotary_pos_emb", "apply_rotary_pos_emb_interleave",
                              "apply_rotary_emb") if hasattr(modeling, n)]
    rotated = [False]

    def recording(function):
        def rotate(*args, **kwargs):
            rotated[0] = True
            return function(*args, **kwargs)
        return rotate

    def attention(module, query, key, value, mask, scaling=None, **kwargs):
        keys = key.shape[2]
        visible = int(mask[0, 0, -1].sum()) if mask is not None else keys
        window = visible if visible < keys else None
        causal = mask is not None and int(mask[0, 0, 0].sum()) == 1  # the first query sees one key
        chunk = None
        if causal:
            counts = mask[0, 0].sum(-1).tolist()
            chunk = next((i for i in range(1, len(counts)) if counts[i] == 1), None)
            window = None if chunk else window
        calls.setdefault(module.layer_idx, (scaling, window, key.shape[1], query.shape[3],
                                            causal, value.shape[3],
                                            getattr(module, "qk_nope_head_dim", 0),
                                            rotated[0] if rope_names else None, chunk,
                                            kwargs.get("s_aux") is not None))
        rotated[0] = False
        return sdpa_attention_forward(module, query, key, value, mask, scaling=scaling,
                                      **kwargs)

    def mask(*args, **kwargs):
        kwargs["allow_is_causal_skip"] = False
        return sdpa_mask(*args, **kwargs)
    AttentionInterface.register(_PROBE, attention)
    AttentionMaskInterface.register(_PROBE, mask)
    model.set_attn_implementation(_PROBE)
    originals = {n: getattr(modeling, n) for n in rope_names}
    try:
        for n, function in originals.items():
            setattr(modeling, n, recording(function))
        with torch.no_grad():
            model(ids, attention_mask=torch.ones_like(ids))
    finally:
        for n, function in originals.items():
            setattr(modeling, n, function)
    return calls


# Models that multiply q by 1/sqrt(head_dim) before their attention call
# (which then has scaling 1): pe's attention takes the unscaled projection.
_QUERY_PRESCALED = {"opt"}


def _table_mismatches(model, read) -> List[str]:
    """A learned position table's rows, width and offset as pe reads them
    against the model's position embedding module (`wpe`, `embed_positions`,
    `position_embeddings`; OPT's and BioGPT's add an `offset` to positions)."""
    import torch
    if read.position_encoding != "learned":
        return []
    tables = [m for name, m in model.named_modules()
              if name.split(".")[-1] in ("wpe", "embed_positions", "position_embeddings")
              and isinstance(m, torch.nn.Embedding)]
    if len(tables) != 1:
        return [f"{len(tables)} learned position tables in the model"]
    table = tables[0]
    want = (read.max_position_embeddings + read.position_offset, read.embedding_size,
            read.position_offset)
    got = (table.num_embeddings, table.embedding_dim, getattr(table, "offset", 0))
    return [] if got == want else [
        f"position table [{want[0]}, {want[1]}] at offset {want[2]} against "
        f"[{got[0]}, {got[1]}] at offset {got[2]}"]


def _gpt_neo_mismatches(model, read) -> List[str]:
    """GPT-Neo computes attention in its own code (nothing to probe): its
    layers' causal masks (`attn.attention.bias`, local layers banded) against
    the windows pe reads."""
    if read.model_type != "gpt_neo":
        return []
    found = []
    for i, block in enumerate(model.transformer.h):
        last = block.attn.attention.bias[0, 0, -1]
        visible = int(last.sum())
        window = visible if visible < last.shape[0] else None
        read_window = read.kind(i).window
        if read_window is not None and read_window >= last.shape[0]:
            read_window = None  # no row of the buffer reaches that far back
        if read_window != window:
            found.append(f"layer {i}: window {read.kind(i).window} against {window}")
    return found


def read_mismatches(model_type: str, **overrides) -> Optional[List[str]]:
    """What pe's config reader says of the tiny `model_type` config against
    the transformers model built from it, layer by layer: the score scale,
    window, heads and RoPE frequencies of each attention call. Empty when
    they agree, None when the model calls no attention function to probe;
    raises ConfigError when pe refuses the config."""
    import torch
    import transformers
    from . import config as pe_config
    from . import reference
    config = tiny_config(model_type, **overrides)
    read = pe_config.read(config)
    text = config.get_text_config()
    model = transformers.AutoModelForCausalLM.from_config(copy.deepcopy(config),
                                                          attn_implementation="eager").eval()
    ids = torch.randint(0, VOCAB, (1, LENGTH), generator=torch.Generator().manual_seed(1))
    table = _table_mismatches(model, read) + _gpt_neo_mismatches(model, read)
    calls = _probe(model, ids)
    if not calls:  # GPT-Neo's own attention is checked through its masks
        return table if table or read.model_type == "gpt_neo" else None
    found = table if len(calls) == read.num_hidden_layers else table + [
        f"{len(calls)} attention calls for {read.num_hidden_layers} layers"]
    layer_types = getattr(text, "layer_types", None)
    for i, (scaling, window, heads, head_dim, causal, value_dim, offset, rotated,
            chunk, sinks) in sorted(calls.items()):
        if (read.position_encoding == "rope" and rotated is not None
                and rotated != (read.kind(i).rope is not None)):
            found.append(f"layer {i}: RoPE {'read' if read.kind(i).rope else 'not read'} "
                         f"against {'a' if rotated else 'no'} rotation")
        kind = read.kind(i)
        if kind.causal != causal:
            found.append(f"layer {i}: causal {kind.causal} against {causal}")
        scale = kind.scale if kind.scale is not None else read.head_dim ** -0.5
        if scaling is not None and model_type in _QUERY_PRESCALED:
            scaling *= read.head_dim ** -0.5
        if scaling is not None and abs(scale - scaling) > 1e-6 * scaling:
            found.append(f"layer {i}: scale {scale} against {scaling}")
        if kind.window != window:
            found.append(f"layer {i}: window {kind.window} against {window}")
        if kind.chunk != chunk:
            found.append(f"layer {i}: chunk {kind.chunk} against {chunk}")
        if kind.sinks != sinks:
            found.append(f"layer {i}: sinks {kind.sinks} against {sinks}")
        if (heads, head_dim) != (kind.num_key_value_heads, read.head_dim):
            found.append(f"layer {i}: {kind.num_key_value_heads} key/value heads of "
                         f"{read.head_dim} against {heads} of {head_dim}")
        if value_dim != read.value_head_dim:
            found.append(f"layer {i}: value heads of {read.value_head_dim} against {value_dim}")
        if kind.rope is not None and kind.rope.get("rotary_offset", 0) != offset:
            found.append(f"layer {i}: rotated block at channel "
                         f"{kind.rope.get('rotary_offset', 0)} against {offset}")
        if kind.rope is not None:
            inv_hf, factor_hf = _transformers_rope(text, layer_types[i] if layer_types else None)
            rope = kind.rope_parameters
            inv_pe = reference.rope_inv_freq(rope["theta"], rope["rotary_dim"],
                                             rope.get("scaling"))
            if inv_pe.shape != inv_hf.shape or not np.allclose(inv_pe, inv_hf, rtol=2e-6):
                found.append(f"layer {i}: inverse frequencies differ")
            factor = reference.rope_attention_factor(rope.get("scaling"))
            if abs(factor - factor_hf) > 1e-6 * factor_hf:
                found.append(f"layer {i}: attention factor {factor} against {factor_hf}")
    return found


def read_config(model_type: str) -> str:
    """`read` (pe reads the tiny config and agrees with the model layer by
    layer), `read, not checked` (the model does not call an attention
    function pe could probe), `refused: <reason>`, or `MISMATCH: ...`."""
    from . import config as pe_config
    try:
        found = read_mismatches(model_type)
    except pe_config.ConfigError as error:
        reason = str(error).splitlines()[0]
        if "is not a model type pe reads" in reason:
            return "refused: a family pe does not know"
        return "refused: " + reason.split("config field ", 1)[-1]
    except Exception as error:  # noqa: BLE001 - a model transformers cannot build or run
        return f"not checked ({type(error).__name__})"
    if found is None:
        return "read, not checked"
    return "MISMATCH: " + "; ".join(found) if found else "read"


def fused_result(model_type: str) -> str:
    """`compare(fused=True)` as one cell: the status, and the reason of a
    refusal (the first line, without the error's type)."""
    row = compare(model_type, fused=True)
    if row.status == "refused":
        reason = row.detail.split(": ", 1)[-1]
        if "is not a model type pe reads" in reason:
            reason = "config: a family pe does not know"
        return f"refused: {reason}"
    if row.status in ("equal", "no attention", "not built"):
        return row.status
    return f"{row.status}: {row.detail}"


def config_status(text: str) -> str:
    """A config cell's status: `read`, `read, not checked`, `refused`,
    `not checked` or `MISMATCH`."""
    return text.split(":")[0].split(" (")[0].strip()


def read_table(path: str) -> Dict[str, tuple]:
    """The table `table` wrote: model type -> (result, config status, fused
    status)."""
    import re
    rows = {}
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if len(cells) == 6 and cells[0].startswith("`"):
                rows[cells[0].strip("`")] = (cells[2], config_status(cells[4]),
                                             cells[5].split(":")[0])
    return rows


def table(rows: Iterable[Row]) -> str:
    rows = list(rows)
    counts: Dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    import torch
    import transformers
    lines = [
        "# pe attention in every transformers causal LM",
        "",
        "Generated by `PYTHONPATH=python .venv/bin/python -m pe.hf_models --write "
        "docs/transformers-models.md` with "
        f"transformers {transformers.__version__} and torch {torch.__version__.split('+')[0]}; "
        "checked by `python/tests/test_hf_models.py`. How each model is built and what each "
        "status means: the docstring of `python/pe/hf_models.py`.",
        "",
        "Totals: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + ".",
        "",
        "The config column: what `pe.config.read` (`pe-compile --config`) does with the "
        "same tiny config, checked layer by layer against the attention calls of the model "
        "(scale, window, heads, RoPE frequencies).",
        "",
        "The RoPE fused column: the eager model with `pe.transformers.fuse_rope` (un-rotated "
        "q and k into the kernel, RoPE applied inside), against eager, as above.",
        "",
        "| model type | class | result | detail | config | RoPE fused |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [c.replace("|", "\\|") for c in (row.detail, row.config, row.fused)]
        lines.append(f"| `{row.model_type}` | {row.model_class} | {row.status} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pe.hf_models", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("types", nargs="*", help="model types (default: every causal LM)")
    parser.add_argument("--write", metavar="PATH", help="write the markdown table here")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import transformers
    transformers.logging.set_verbosity_error()
    rows = []
    for model_type in args.types or causal_lm_types():
        rows.append(compare(model_type))
        rows[-1].config = read_config(model_type)
        rows[-1].fused = fused_result(model_type)
        print(f"{model_type}: {rows[-1].status} {rows[-1].detail} | {rows[-1].config} | "
              f"{rows[-1].fused}", file=sys.stderr, flush=True)
    text = table(rows)
    if args.write:
        with open(args.write, "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0 if all(row.ok for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
