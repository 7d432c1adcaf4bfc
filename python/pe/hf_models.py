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
    "reformer": dict(is_decoder=True),
    "zaya": dict(num_experts_per_tok=1),
}
# Fields of a sub-config's dict that its constructor does not take back.
_NOT_FIELDS = ("_name_or_path", "output_attentions", "transformers_version")
# Multi-head latent attention: a rotated part of 8 and a plain part of 8, one
# key per query head.
_LATENT = dict(kv_lora_rank=32, q_lora_rank=32, qk_rope_head_dim=8, qk_nope_head_dim=8,
               v_head_dim=16, qk_head_dim=16, head_dim=8, num_key_value_heads=4)
_WINDOW = 8
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
    for name in ("sliding_window", "attention_window_size"):
        if defaults.get(name):
            fields[name] = _WINDOW
    for name in _LAYER_KIND_FIELDS:
        if isinstance(defaults.get(name), list) and defaults[name]:
            fields[name] = _kinds(defaults[name])
            fields["num_hidden_layers"] = len(fields[name])
    layers = defaults.get(aliases.get("num_hidden_layers", "num_hidden_layers"))
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


def tiny_config(model_type: str):
    """transformers' default config of `model_type`, made tiny."""
    from transformers import AutoConfig
    defaults = AutoConfig.for_model(model_type).to_dict()
    fields = {**_tiny_fields(defaults, _aliases(model_type)), **_TYPE_FIELDS.get(model_type, {})}
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

    @property
    def ok(self) -> bool:
        return self.status in ("equal", "no attention", "refused", "not built")


def _short(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:240]}"


def _is_pe_refusal(error: BaseException) -> bool:
    """An error raised by pe (its message starts with "pe")."""
    return isinstance(error, (NotImplementedError, ValueError)) and str(error).startswith("pe")


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


def compare(model_type: str) -> Row:
    """Builds `model_type` tiny, eager and pe, and compares the two."""
    import torch
    import transformers
    from . import torch as pe_torch
    from . import transformers as pe_transformers
    pe_transformers.register()
    name = causal_lm_class(model_type)
    ids = torch.randint(0, VOCAB, (BATCH, LENGTH), generator=torch.Generator().manual_seed(1))
    try:
        config = tiny_config(model_type)
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
        calls.append(1)
        return original(*args, **kwargs)
    pe_torch.attention = counted
    try:
        model = transformers.AutoModelForCausalLM.from_config(
            copy.deepcopy(config), attn_implementation=pe_transformers.NAME).eval()
        model.load_state_dict(eager.state_dict())
        got = _run(model, ids)
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
    if difference <= TOLERANCE and same_tokens:
        return Row(model_type, name, "equal", f"max |logits - eager| {difference:.1e}",
                   len(calls))
    return Row(model_type, name, "WRONG", f"max |logits - eager| {difference:.3g}, "
               f"tokens {'equal' if same_tokens else 'differ'}", len(calls))


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
        "| model type | class | result | detail |",
        "|---|---|---|---|",
    ]
    for row in rows:
        detail = row.detail.replace("|", "\\|")
        lines.append(f"| `{row.model_type}` | {row.model_class} | {row.status} | {detail} |")
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
        print(f"{model_type}: {rows[-1].status} {rows[-1].detail}", file=sys.stderr, flush=True)
    text = table(rows)
    if args.write:
        with open(args.write, "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0 if all(row.ok for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
