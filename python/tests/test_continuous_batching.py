"""pe's paged attention inside transformers' continuous batching (optional extras).

`pe.transformers.register()` adds `attn_implementation="paged|pe"`: each layer
writes its new keys and values into transformers' own paged cache with
`pe.append_kv` and attends over the pages in place with `pe.paged_attention`.
`model.generate_batch` with it must produce what transformers' own paged SDPA
path produces for the same requests: the same greedy tokens and log
probabilities within float32 rounding (1e-5: both compute attention in f32,
in a different order), with prompts long enough to be prefilled in chunks and
pages of 4 tokens, so that decode and chunked prefill run over many pages.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("psutil")  # transformers sizes its CPU cache with it

from transformers import (GenerationConfig, GptOssConfig, GptOssForCausalLM,  # noqa: E402
                          LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM)
from transformers.generation.configuration_utils import ContinuousBatchingConfig  # noqa: E402

import pe.transformers  # noqa: E402


def _generate(model, implementation, prompts, new_tokens):
    model.set_attn_implementation(implementation)
    generation = GenerationConfig(max_new_tokens=new_tokens, do_sample=False,
                                  eos_token_id=None, pad_token_id=0)
    batching = ContinuousBatchingConfig(block_size=4, num_blocks=96, max_batch_tokens=16,
                                        return_logprobs=True)
    out = model.generate_batch(prompts, generation_config=generation, progress_bar=False,
                               continuous_batching_config=batching)
    return {r.request_id: (r.generated_tokens, np.array(r.logprobs)) for r in out.values()}


# Prompt lengths 1 to 30 (prefilled in chunks of at most 16 batch tokens).
PROMPTS = [[1, 2, 3, 4, 5], [7, 8, 9], list(range(10, 40)), [3], list(range(50, 67))]


def _assert_same_as(model, implementation):
    """generate_batch with paged|pe gives `implementation`'s tokens and log
    probabilities."""
    pe.transformers.register()
    want = _generate(model, implementation, PROMPTS, 12)
    got = _generate(model, pe.transformers.PAGED_NAME, PROMPTS, 12)
    assert got.keys() == want.keys()
    for request, (tokens, logprobs) in want.items():
        assert got[request][0] == tokens, request
        assert np.abs(got[request][1] - logprobs).max() <= 1e-5, request


@pytest.mark.parametrize("heads, kv_heads", [(4, 2), (4, 4), (8, 1)])
def test_generate_batch_matches_transformers_paged_sdpa(heads, kv_heads):
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=heads,
                         num_key_value_heads=kv_heads, max_position_embeddings=256)
    model = LlamaForCausalLM(config).eval()
    _assert_same_as(model, "paged|sdpa")


def test_sliding_window_ring_groups():
    """Mistral with a window of 6 tokens over pages of 4: transformers keeps each
    layer's last rows in a ring of two pages that new rows overwrite; pe reads the
    cached rows and the new ones from whole pages of their own (prompts of up to 30
    tokens wrap the ring many times)."""
    torch.manual_seed(1)
    config = MistralConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                           max_position_embeddings=256, sliding_window=6)
    model = MistralForCausalLM(config).eval()
    _assert_same_as(model, "paged|sdpa")


def test_attention_sinks_and_window_groups():
    """gpt-oss: learned sinks (s_aux) in every layer, sliding-window layers (a ring
    group) between full ones, against transformers' paged eager path (its paged
    SDPA has no sinks)."""
    torch.manual_seed(2)
    config = GptOssConfig(vocab_size=128, hidden_size=64, intermediate_size=64,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          head_dim=16, num_local_experts=4, num_experts_per_tok=2,
                          max_position_embeddings=256, sliding_window=6,
                          layer_types=["sliding_attention", "full_attention"])
    model = GptOssForCausalLM(config).eval()
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.sinks.normal_(0.0, 2.0)  # far from 0, so that they matter
    _assert_same_as(model, "paged|eager")


def test_window_pages_form_what_transformers_reads():
    """The cached rows of a ring (wrapped) and the new rows in place of the sentinels,
    each sequence on whole pages of its own."""
    pages = torch.arange(6 * 4, dtype=torch.float32).view(6, 4, 1, 1)
    sentinel = 99
    read = torch.tensor([13, 14, 15, 8, 9, sentinel, sentinel, 2, sentinel])
    cu_k = torch.tensor([0, 7, 9])
    new = torch.tensor([100.0, 101.0, 102.0]).view(3, 1, 1)
    got, table = pe.transformers._window_pages(pages, new, read, sentinel, cu_k)
    assert table.tolist() == [[0, 1], [2, 0]]
    flat = got.view(-1).tolist()
    assert flat[:7] == [13, 14, 15, 8, 9, 100, 101] and flat[8:10] == [2, 102]


def test_rows_outside_page_order_are_refused():
    """A cache group whose rows are not whole pages in position order (a
    sliding-window ring buffer) is refused, never read as if it were."""
    cu = torch.tensor([0, 6, 9])
    rows = torch.tensor([8, 9, 10, 11, 0, 1, 4, 5, 6])
    table = pe.transformers._sequence_pages(rows, cu, 4)
    assert table.tolist() == [[2, 0], [1, 0]]
    ring = torch.tensor([8, 9, 10, 11, 1, 0, 4, 5, 6])
    with pytest.raises(NotImplementedError, match="whole pages in position order"):
        pe.transformers._sequence_pages(ring, cu, 4)
