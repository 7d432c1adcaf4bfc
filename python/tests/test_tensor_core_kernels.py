"""The tensor-core attention kernels over the variant space, without a GPU.

Each variant (every RoPE style and scaling, partial rotary, ALiBi, the mask operand, windows,
attention sinks, GQA/MQA, head dims 16 to 256, Dv != D, absorbed latent attention's 576/512,
f16 and bf16, decode) is compiled with
`pe-compile --target=gpu --tensor-cores` for sm_80 (mma.sync) and sm_90a (warpgroup MMA). Its
PTX must hold one attention kernel whose products are the chip's tensor-core instructions,
and (with a CUDA toolkit) `ptxas -v` must assemble every kernel without spills, within the
48 KiB of static shared memory (larger tiles are dynamic shared memory, asked for at launch)
and, on sm_90a, without serializing a wgmma chain. The
kernels' numerics need a GPU: benchmarks/gpu checks them there against float64.
"""

import os
import re
import subprocess
import sys

import pytest

from pe import runner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "gpu"))

import prepare  # noqa: E402

pytestmark = pytest.mark.skipif(not os.access(runner.PE_COMPILE, os.X_OK),
                                reason=f"pe-compile not found at {runner.PE_COMPILE}")

LLAMA3 = "#pe.llama3<factor = 8.0, original_max_position_embeddings = 8192>"
YARN = "#pe.yarn<factor = 4.0, original_max_position_embeddings = 4096>"
LONGROPE = ("#pe.longrope<short_factor = [1.0, 1.5, 2.0, 2.5], long_factor = [4.0, 5.0, 6.0, "
            "7.0], original_max_position_embeddings = 4096>")

# name: (dtype, B, Hq, Hkv, Sq, D, Dv, attributes; "positions" adds batched positions,
# "mask" an additive [B, 1, Sq, Skv] mask)
VARIANTS = {
    "llama3_gqa_d128": ("bf16", 1, 8, 2, "?", 128, 128,
                        f"causal rope(#pe.rope<theta = 500000.0, rotary_dim = 128, "
                        f"scaling = {LLAMA3}>)"),
    "interleaved_partial_yarn_f16": ("f16", 2, 4, 4, "?", 64, 64,
                                     f"causal window(100) rope(#pe.rope<rotary_dim = 32, "
                                     f"style = interleaved, scaling = {YARN}>) positions"),
    "linear_d96": ("bf16", 1, 4, 4, "?", 96, 96,
                   "causal rope(#pe.rope<rotary_dim = 96, scaling = #pe.linear<factor = 4.0>>)"),
    "ntk_d112_f16": ("f16", 1, 4, 1, "?", 112, 112,
                     "rope(#pe.rope<rotary_dim = 112, scaling = #pe.ntk<factor = 2.5>>)"),
    "dynamic_ntk_d48": ("bf16", 1, 6, 2, "?", 48, 48,
                        "causal rope(#pe.rope<rotary_dim = 48, scaling = "
                        "#pe.dynamic_ntk<factor = 2.0, max_position_embeddings = 4096>>)"),
    "longrope_partial_d64": ("bf16", 1, 4, 2, "?", 64, 64,
                             f"causal rope(#pe.rope<rotary_dim = 8, scaling = {LONGROPE}>)"),
    "proportional_d80_f16": ("f16", 1, 4, 4, "?", 80, 80,
                             "causal rope(#pe.rope<rotary_dim = 64, scaling = "
                             "#pe.proportional<factor = 2.0, partial_rotary_factor = 0.25>>)"),
    "alibi_mask_mqa_dv128": ("bf16", 2, 8, 1, "?", 64, 128, "alibi(8.0) mask"),
    # A window both ways over explicit positions: the warp-specialized producer finds the
    # hidden tiles from loaded positions (24 registers spill it).
    "window_both_ways_positions_f16": ("f16", 2, 4, 4, 512, 64, 64,
                                       f"window(300) rope(#pe.rope<rotary_dim = 32, "
                                       f"style = interleaved, scaling = {YARN}>) positions"),
    "alibi_causal_positions_f16": ("f16", 1, 12, 12, "?", 64, 64, "causal alibi(8.0) positions"),
    "window_only_d32": ("f16", 1, 4, 2, "?", 32, 32, "window(64)"),
    "plain_d16": ("bf16", 1, 2, 2, "?", 16, 16, ""),
    "decode_llama3_gqa_d128": ("bf16", 1, 32, 8, 1, 128, 128,
                               f"causal rope(#pe.rope<theta = 500000.0, rotary_dim = 128, "
                               f"scaling = {LLAMA3}>)"),
    "decode8_interleaved_d64_f16": ("f16", 2, 8, 2, 8, 64, 64,
                                    "causal rope(#pe.rope<rotary_dim = 64, "
                                    "style = interleaved>)"),
    "sinks_window_gqa_d64": ("bf16", 1, 16, 2, "?", 64, 64,
                             "causal window(128) rope(#pe.rope<theta = 150000.0, "
                             "rotary_dim = 64>) sinks"),
    "decode_sinks_d64_f16": ("f16", 2, 16, 2, 1, 64, 64, "causal sinks"),
    # D = 128 on warpgroup MMA keeps 64-key tiles (65 KiB of dynamic shared
    # memory): every per-score feature at once is its register bound.
    "d128_alibi_mask_positions_sinks": ("bf16", 2, 8, 2, "?", 128, 128,
                                        "causal window(512) alibi(8.0) mask positions sinks"),
    "d128_yarn_window_mask_positions_sinks_f16": (
        "f16", 2, 8, 2, "?", 128, 128,
        f"causal window(512) rope(#pe.rope<theta = 500000.0, rotary_dim = 128, "
        f"scaling = {YARN}>) mask positions sinks"),
    # Latent attention's full-width heads (DeepSeek-V3: 128 channels without
    # RoPE, then 64 rotated with its YaRN; values of 128): 32-key tiles in
    # dynamic shared memory.
    "mla_yarn_d192_dv128": ("bf16", 1, 8, 8, "?", 192, 128,
                            "causal rope(#pe.rope<rotary_dim = 64, style = interleaved, "
                            "rotary_offset = 128, scaling = #pe.yarn<factor = 40.0, "
                            "original_max_position_embeddings = 4096, mscale = 1.0, "
                            "mscale_all_dim = 1.0>>)"),
    "decode_mla_d192_f16": ("f16", 2, 16, 16, 1, 192, 128,
                            "causal rope(#pe.rope<rotary_dim = 64, style = interleaved, "
                            "rotary_offset = 128>)"),
    "window_gqa_d160": ("bf16", 1, 8, 2, "?", 160, 160,
                        "causal window(256) rope(#pe.rope<rotary_dim = 160>)"),
    # Gemma's heads of 256 (its soft-capping aside): 16-key tiles.
    "gemma_gqa_d256": ("bf16", 1, 8, 4, "?", 256, 256,
                       "causal window(4096) rope(#pe.rope<rotary_dim = 256>)"),
    "decode_d256_f16": ("f16", 1, 8, 4, 1, 256, 256, "causal rope(#pe.rope<rotary_dim = 256>)"),
    # The largest tiles (D = 256 with 32-key tiles: 66.5 KiB), the widest values
    # on warpgroup MMA (192), and 256-channel values with every per-score
    # feature (registers: the rows of O take 128 of a thread's 255).
    "d256_dv128_yarn": ("bf16", 1, 8, 2, "?", 256, 128,
                        f"causal rope(#pe.rope<rotary_dim = 128, scaling = {YARN}>)"),
    "d192_dv192_window_f16": ("f16", 1, 4, 4, "?", 192, 192, "window(300)"),
    "d256_alibi_mask_positions_sinks": ("bf16", 2, 8, 2, "?", 256, 256,
                                        "causal window(512) alibi(8.0) mask positions sinks"),
    # Absorbed latent attention (512 latent + 64 rotated channels, values of
    # 512 over one KV head): two channel groups of four warps, 132 KiB of
    # dynamic shared memory; decode with split keys, a prefill with every
    # per-score feature, f16.
    "absorbed_mla_decode": ("bf16", 2, 16, 1, 1, 576, 512,
                            "causal rope(#pe.rope<rotary_dim = 64, style = interleaved, "
                            "rotary_offset = 512, scaling = #pe.yarn<factor = 40.0, "
                            "original_max_position_embeddings = 4096, mscale = 1.0, "
                            "mscale_all_dim = 1.0>>)"),
    "absorbed_mla_features_f16": ("f16", 1, 32, 1, "?", 576, 512,
                                  "causal window(1024) alibi(8.0) mask positions sinks"),
    "d320_dv288": ("bf16", 1, 4, 2, "?", 320, 288, "causal rope(#pe.rope<rotary_dim = 64>)"),
}


# Variants whose key count is their (static) query count: static shapes, as the device
# check's, on which ptxas allocates registers differently.
STATIC_KEYS = {"window_both_ways_positions_f16"}


def variant_ir(name: str) -> str:
    dtype, b, hq, hkv, sq, d, dv, attrs = VARIANTS[name]
    tensor = lambda *dims: "tensor<" + "x".join(str(x) for x in dims) + f"x{dtype}>"  # noqa: E731
    skv = sq if name in STATIC_KEYS else "?"
    qt, kt, vt, ot = (tensor(b, hq, sq, d), tensor(b, hkv, skv, d), tensor(b, hkv, skv, dv),
                      tensor(b, hq, sq, dv))
    pt = f"tensor<{b}x{skv}xi64>" if skv != "?" else "tensor<?x?xi64>"
    params = [f"%q: {qt}", f"%k: {kt}", f"%v: {vt}"]
    operands, sinks = "", ""
    if attrs.endswith(" sinks"):  # gpt-oss's: one f32 logit per query head
        attrs = attrs[:-len(" sinks")]
        sinks = f" sinks(%s : tensor<{hq}xf32>)"
    if attrs.endswith(" positions"):
        attrs = attrs[:-len(" positions")]
        params += [f"%qp: {pt}", f"%kp: {pt}"]
        operands += f" q_positions(%qp : {pt}) k_positions(%kp : {pt})"
    if attrs.endswith(" mask"):
        attrs = attrs[:-len(" mask")]
        mt = f"tensor<{b}x1x{sq}x?xf32>"
        params.append(f"%m: {mt}")
        operands = f" mask(%m : {mt})" + operands
    if sinks:
        params.append(f"%s: tensor<{hq}xf32>")
        operands += sinks
    return (f"func.func @{name}({', '.join(params)}) -> {ot} {{\n"
            f"  %o = pe.attention %q, %k, %v{operands} {attrs} : {qt}, {kt}, {vt} -> {ot}\n"
            f"  return %o : {ot}\n}}\n")


CHIPS = {"sm_80": r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.(bf16|f16)",
         "sm_90a": r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.(bf16|f16)"}


def entries(ptx: str) -> dict:
    """The text of each kernel of a PTX module, by name."""
    parts = re.split(r"\.visible \.entry (\w+)\(", ptx)
    return dict(zip(parts[1::2], parts[2::2]))


@pytest.mark.parametrize("chip", sorted(CHIPS))
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_on_tensor_cores(tmp_path, name, chip):
    src, ptx = tmp_path / f"{name}.mlir", tmp_path / f"{name}.ptx"
    src.write_text(variant_ir(name))
    proc = subprocess.run([runner.PE_COMPILE, "--target=gpu", f"--chip={chip}", "--tensor-cores",
                           str(src), "-o", str(ptx)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    kernels = entries(ptx.read_text())
    attention = {k: v for k, v in kernels.items() if re.search(r"_attention_\d+$", k)}
    assert list(attention) == [f"{name}_attention_0"], list(kernels)
    body = attention[f"{name}_attention_0"]
    # Value heads over 192 channels take mma.sync on sm_90a too (registers:
    # the kernel's kMaxWarpgroupValueDim).
    engine = "sm_80" if VARIANTS[name][6] > 192 else chip
    assert re.search(CHIPS[engine], body), "no tensor-core product"
    other = CHIPS["sm_90a" if engine == "sm_80" else "sm_80"]
    assert not re.search(other, body), "the other generation's product"
    dtype = VARIANTS[name][0]
    assert f".{dtype}.{dtype}" in body
    toolkit = prepare.find_toolkit()
    if toolkit is None or os.environ.get("PE_HIDE_CUDA") == "1":
        return
    out = subprocess.run([os.path.join(toolkit, "bin", "ptxas"), "-v", f"-arch={chip}",
                          str(ptx), "-o", os.devnull], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "serialized" not in out.stderr, out.stderr
    report = prepare.ptxas_report(os.path.join(toolkit, "bin", "ptxas"), str(ptx), chip)
    for kernel, info in report.items():
        assert info["spill_stores"] == 0 and info["spill_loads"] == 0, (kernel, info)
        assert info["shared_bytes"] <= 48 * 1024, (kernel, info)
    # Warp-specialized (setmaxnreg): the consumers' setmaxnreg.inc draws on the
    # producer's release, which balances only when the block starts with
    # 65536 / 384 = 168 registers a thread.
    if "setmaxnreg.inc" in body:
        assert ".maxntid 384, 1, 1" in body
        assert report[f"{name}_attention_0"]["registers"] == 168, report


ABSORBED = ("tensor<1x16x1x576xbf16>", "tensor<1x1x?x576xbf16>", "tensor<1x1x?x512xbf16>",
            "tensor<1x16x1x512xbf16>")


def attention_ir(q: str, k: str, v: str, o: str) -> str:
    return (f"func.func @absorbed(%q: {q}, %k: {k}, %v: {v}) -> {o} {{\n"
            f"  %o = pe.attention %q, %k, %v : {q}, {k}, {v} -> {o}\n"
            f"  return %o : {o}\n}}\n")


@pytest.mark.parametrize("chip,tensor_cores", [("sm_80", True), ("sm_87", True),
                                               ("sm_90a", True), ("sm_100a", True),
                                               ("sm_86", False), ("sm_89", False),
                                               ("sm_120", False)])
def test_absorbed_heads_where_the_chip_allows_their_tiles(tmp_path, chip, tensor_cores):
    """Absorbed latent attention (D = 576, Dv = 512): its tiles take 132 KiB of
    shared memory, which sm_80, sm_87, sm_90 and sm_100 allow a block: the
    tensor-core kernel with two channel groups (256 threads, mma.sync); on
    chips that allow 99 KiB, the SIMT kernel."""
    src, ptx = tmp_path / "absorbed.mlir", tmp_path / "absorbed.ptx"
    src.write_text(attention_ir(*ABSORBED))
    proc = subprocess.run([runner.PE_COMPILE, "--target=gpu", f"--chip={chip}", str(src),
                           "-o", str(ptx)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    kernels = entries(ptx.read_text())
    attention = [body for name, body in kernels.items() if name == "absorbed_attention_0"]
    assert bool(attention) == tensor_cores, list(kernels)
    if tensor_cores:
        assert ".maxntid 256, 1, 1" in attention[0]
        assert re.search(CHIPS["sm_80"], attention[0])
        assert not re.search(CHIPS["sm_90a"], attention[0])
    else:
        assert not any(re.search(r, body) for body in kernels.values() for r in CHIPS.values())


@pytest.mark.parametrize("dims", [(592, 512), (576, 528), (560, 512)])
def test_heads_beyond_the_kernel_take_the_simt_kernel(tmp_path, dims):
    """Query/key heads over 576 channels, values over 512, and values over 256
    with a head dim that two channel groups cannot halve into whole steps:
    the SIMT kernel, on every chip."""
    d, dv = dims
    src, ptx = tmp_path / "wide.mlir", tmp_path / "wide.ptx"
    src.write_text(attention_ir(f"tensor<1x16x1x{d}xbf16>", f"tensor<1x1x?x{d}xbf16>",
                                f"tensor<1x1x?x{dv}xbf16>", f"tensor<1x16x1x{dv}xbf16>"))
    for chip in sorted(CHIPS):
        proc = subprocess.run([runner.PE_COMPILE, "--target=gpu", f"--chip={chip}", str(src),
                               "-o", str(ptx)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        text = ptx.read_text()
        assert entries(text) and not any(re.search(r, text) for r in CHIPS.values()), chip
