"""The GPU check script without a GPU: step 1 (benchmarks/gpu/prepare.py) at small sizes, the
launch arguments that step 2 builds from each manifest against the kernels' PTX signatures,
and step 2 itself as a dry run on the CPU (--backend=cpu: every case's GPU schedule through the
C interface, checked against the float64 reference)."""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from pe import runner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU_DIR = os.path.join(ROOT, "benchmarks", "gpu")
sys.path.insert(0, GPU_DIR)

from pe import gpu_manifest as replay  # noqa: E402

pytestmark = pytest.mark.skipif(not os.access(runner.PE_COMPILE, os.X_OK),
                                reason=f"pe-compile not found at {runner.PE_COMPILE}")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("gpu-check"))
    proc = subprocess.run([sys.executable, os.path.join(GPU_DIR, "prepare.py"), "--size", "small",
                           "--out", out], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(os.path.join(out, "index.json")) as f:
        return out, json.load(f)


def test_step1_writes_every_case_under_64_mib(prepared):
    out, index = prepared
    names = {c["name"] for c in index["cases"]}
    assert {"rope_llama3_qk_bf16", "rope_tables_f32", "sinusoidal_f32", "learned_bf16",
            "alibi_bias_f32", "attention_gqa_llama3_bf16", "attention_mha_window_yarn_f16",
            "attention_alibi_f32", "attention_d128_bf16", "decode_gqa_llama3_bf16",
            "prefill_gqa_llama3_bf16", "tc_attention_gqa_llama3_d128_bf16",
            "tc_attention_mha_window_yarn_f16", "tc_attention_mqa_alibi_bf16",
            "tc_prefill_gqa_llama3_d128_bf16", "tc_decode_gqa_llama3_d128_bf16",
            "tc_sync_attention_gqa_llama3_d128_bf16", "tc_sync_attention_mha_window_yarn_f16",
            "tc_sync_prefill_gqa_llama3_d128_bf16", "tc_unfused_prefill_gqa_llama3_d128_bf16",
            "tc_one_attention_gqa_llama3_d128_bf16", "tc_one_prefill_gqa_llama3_d128_bf16",
            "tc_tma_attention_gqa_llama3_d128_bf16", "tc_tma_prefill_gqa_llama3_d128_bf16",
            "tc_prefill_positions_gqa_llama3_d128_bf16",
            "paged_decode_gqa_llama3_d128_bf16", "paged_ragged_window_f32",
            "mla_absorbed_decode_bf16", "tc_decode_mla_absorbed_bf16",
            "append_kv_llama3_bf16", "decode_step_append_paged_bf16",
            "append_kv_bad_slot_f32", "tc_attention_mla_heads_bf16", "tc_decode_mla_heads_f16",
            "tc_attention_gemma_d256_bf16"} <= names
    total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    assert total < 64 << 20
    for case in index["cases"]:
        for key in ("binary", "manifest", "library"):
            assert os.path.getsize(os.path.join(out, case[key])) > 0
    # Static shapes: the RoPE, table, sinusoidal, ALiBi, attention and paged attention
    # functions replay (the paged op's checks read cu_seqlens in a check kernel).
    replayable = {c["name"] for c in index["cases"] if c["replayable"]}
    assert {"rope_llama3_qk_bf16", "rope_far_f32", "alibi_bias_f32", "attention_alibi_f32",
            "attention_gqa_llama3_bf16", "decode_gqa_llama3_bf16", "learned_bf16",
            "tc_attention_gqa_llama3_d128_bf16", "tc_prefill_gqa_llama3_d128_bf16",
            "tc_decode_gqa_llama3_d128_bf16", "tc_sync_attention_gqa_llama3_d128_bf16",
            "tc_sync_prefill_gqa_llama3_d128_bf16", "paged_decode_gqa_llama3_d128_bf16",
            "paged_ragged_window_f32", "append_kv_llama3_bf16", "decode_step_append_paged_bf16",
            "append_kv_bad_slot_f32", "tc_tma_attention_gqa_llama3_d128_bf16",
            "tc_tma_prefill_gqa_llama3_d128_bf16"} <= replayable
    # sm_90a: the tensor-core cases on warpgroup MMA, the tc_sync_ ones on mma.sync, the
    # others (--tensor-cores=false for bf16/f16 attention) on no tensor core.
    assert index["chip"] == "sm_90a"
    for case in index["cases"]:
        with open(os.path.join(out, case["name"] + ".ptx")) as f:
            ptx = f.read()
        if not case["name"].startswith("tc_"):
            assert "wgmma" not in ptx and "mma.sync" not in ptx, case["name"]
            continue
        # Value heads over 192 channels (Gemma's 256, absorbed latent attention's 512)
        # take mma.sync on sm_90a too (the kernel's kMaxWarpgroupValueDim).
        sync = case["name"].startswith("tc_sync_") or "_d256_" in case["name"] or \
            "_absorbed_" in case["name"]
        if case["name"].startswith("tc_unfused_"):
            # RoPE kernels write rotated Q and K; the attention kernel reads them.
            assert ptx.count(".entry") >= 3 and "wgmma.mma_async" in ptx
            continue
        assert ("wgmma.mma_async" in ptx) != sync, case["name"]
        assert ("mma.sync.aligned.m16n8k16" in ptx) == sync, case["name"]
        # Prefill on warpgroup MMA, with the default positions or explicit ones, is
        # warp-specialized (a producer warpgroup, registers moved by setmaxnreg);
        # tc_one_ keeps one warpgroup a block, decode always.
        specialized = "setmaxnreg.inc.sync.aligned.u32" in ptx
        if case["name"] in ("tc_attention_gqa_llama3_d128_bf16",
                            "tc_prefill_gqa_llama3_d128_bf16",
                            "tc_prefill_positions_gqa_llama3_d128_bf16"):
            assert specialized and ".maxntid 384, 1, 1" in ptx, case["name"]
        if case["name"].startswith(("tc_one_", "tc_sync_", "tc_decode_")):
            assert not specialized, case["name"]
        # --tma: the warp-specialized kernels of whole 128-byte rows (D = 128, 64) load K
        # and V by TMA instead of cp.async, and only they.
        tma = "cp.async.bulk.tensor" in ptx
        if case["name"].startswith("tc_tma_"):
            assert tma == specialized, case["name"]
            assert not tma or "cp.async.cg" not in ptx, case["name"]
        else:
            assert not tma, case["name"]
        if case["name"] in ("tc_tma_attention_gqa_llama3_d128_bf16",
                            "tc_tma_prefill_gqa_llama3_d128_bf16"):
            assert tma, case["name"]
    # pe.learned's range check: a kernel fills an error record that the host reads and checks.
    manifest = replay.load_manifest(os.path.join(out, "learned_bf16.json"))
    steps = replay.find_function(manifest, "learned_bf16")["steps"]
    ops = [s["op"] for s in steps]
    assert ops.index("read_record") < ops.index("check_record") < len(ops) - 1
    check = steps[ops.index("check_record")]
    assert check["report"] == "pe_runtime_learned_out_of_range" and check["arguments"] == 3
    if index["toolkit"]:
        assert index["kernels"] and all(k["spill_stores"] == 0 for k in index["kernels"].values())


def test_step1_at_full_size_compiles_without_spills(tmp_path):
    """The tensor-core kernels of the device check at the size a GPU run uses (S = 8192
    prefill, 131072-key decode, 512-token variants), where static shapes give ptxas other
    register allocations than the small run's: every `tc_` case compiles and, with a CUDA
    toolkit, `ptxas -v` finds no spill (prepare.py fails on one; the warp-specialized
    kernels take their register budgets only at these sizes). Kernels only: the libraries
    are the small run's concern."""
    proc = subprocess.run([sys.executable, os.path.join(GPU_DIR, "prepare.py"), "--size", "full",
                           "--only", "tc_", "--kernels-only", "--out", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    with open(tmp_path / "index.json") as f:
        index = json.load(f)
    names = [c["name"] for c in index["cases"]]
    assert len(names) >= 20 and all(n.startswith("tc_") for n in names)
    assert "tc_tma_prefill_gqa_llama3_d128_bf16" in names
    assert "tc_attention_mha_window_yarn_f16" in names
    if index["toolkit"]:
        assert index["kernels"] and all(k["spill_stores"] == 0 for k in index["kernels"].values())


_PARAM = re.compile(r"\.param\s+\.(u|b|s|f)(\d+)")


def ptx_signatures(ptx: str):
    """{kernel: [(is_float, bytes)]} from the .entry declarations of a PTX file."""
    out = {}
    for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S):
        out[m.group(1)] = [(kind == "f", int(bits) // 8) for kind, bits in _PARAM.findall(m.group(2))]
    return out


def test_launch_arguments_match_the_ptx_parameters(prepared):
    out, index = prepared
    launches = 0
    for case in index["cases"]:
        if not case["replayable"]:
            continue
        manifest = replay.load_manifest(os.path.join(out, case["manifest"]))
        with open(os.path.join(out, case["name"] + ".ptx")) as f:
            signatures = ptx_signatures(f.read())
        params = {k["name"]: k["params"] for k in manifest["kernels"]}
        for step in replay.find_function(manifest, case["name"])["steps"]:
            if step["op"] != "launch":
                continue
            args = replay.kernel_arguments(params[step["kernel"]], step["args"], lambda v: 4096)
            got = [(np.issubdtype(type(a), np.floating), a.nbytes) for a in args]
            assert got == signatures[step["kernel"]], step["kernel"]
            launches += 1
    assert launches >= 10


def test_tensor_map_steps_encode_the_view(prepared):
    """The replay's arguments of cuTensorMapEncodeTiled from a manifest's tensor_map steps
    (what libpe_cuda_runtime passes for the same view): K and V of the prefill case, [B,
    Hkv, S, D] bf16, as dimensions innermost first, byte strides, boxes of 64 keys x 64
    channels with 128-byte swizzle; the launch passes each map as a pointer."""
    out, _ = prepared
    name = "tc_tma_prefill_gqa_llama3_d128_bf16"
    manifest = replay.load_manifest(os.path.join(out, name + ".json"))
    steps = replay.find_function(manifest, name)["steps"]
    maps = [s for s in steps if s["op"] == "tensor_map"]
    assert len(maps) == 2
    for step in maps:
        view = step["of"]
        b, h, s, d = view["sizes"]
        assert d == 128 and step["box"] == [1, 1, 64, 64]
        assert (step["data_type"], step["swizzle"], step["oob_fill"], step["interleave"]) == \
            (9, 3, 0, 0)  # bf16, 128-byte swizzle, zero fill, no interleave
        args = replay.tensor_map_arguments(step, 1 << 20)
        assert args["dims"] == [d, s, h, b] and args["box"] == [64, 64, 1, 1]
        assert args["strides"] == [2 * view["strides"][2], 2 * view["strides"][1],
                                   2 * view["strides"][0]]
        assert args["address"] == (1 << 20) + 2 * view["offset"]
    launch = next(s for s in steps if s["op"] == "launch" and "attention" in s["kernel"])
    params = {k["name"]: k["params"] for k in manifest["kernels"]}[launch["kernel"]]
    pointers = [a for p, a in zip(params, launch["args"]) if p["kind"] == "pointer"]
    assert pointers == [{"buffer": maps[0]["buffer"]}, {"buffer": maps[1]["buffer"]}]
    bad = dict(maps[0], of=dict(maps[0]["of"], strides=[1, 1, 1, 2]))
    with pytest.raises(ValueError):
        replay.tensor_map_arguments(bad, 0)
    with pytest.raises(ValueError):
        replay.tensor_map_arguments(dict(maps[0], box=[1, 1, 512, 64]), 0)


FAKE_DRIVER = r"""
#include <stdint.h>
#include <string.h>
/* cuTensorMapEncodeTiled that writes its arguments into the map: word 0 the
   enums and rank, 1 the address, 2-6 the sizes, 7-11 box | element stride,
   12-15 the strides. */
int cuTensorMapEncodeTiled(void *map, int type, uint32_t rank, void *address,
                           const uint64_t *dims, const uint64_t *strides,
                           const uint32_t *box, const uint32_t *elementStrides,
                           int interleave, int swizzle, int l2, int oob) {
  uint64_t *w = map;
  if ((uintptr_t)map % 64 != 0 || rank < 1 || rank > 5)
    return 1;
  memset(map, 0, 128);
  w[0] = (uint64_t)type | (uint64_t)rank << 8 | (uint64_t)interleave << 16 |
         (uint64_t)swizzle << 24 | (uint64_t)l2 << 32 | (uint64_t)oob << 40;
  w[1] = (uint64_t)(uintptr_t)address;
  for (uint32_t i = 0; i < rank; ++i) {
    w[2 + i] = dims[i];
    w[7 + i] = box[i] | (uint64_t)elementStrides[i] << 32;
  }
  for (uint32_t i = 0; i + 1 < rank; ++i)
    w[12 + i] = strides[i];
  return dims[0] == 999 ? 701 : 0;
}
"""


def test_encode_tensor_map_passes_the_step_to_the_driver(tmp_path, monkeypatch):
    """The replay's cuTensorMapEncodeTiled call through ctypes, against a stand-in driver
    that echoes its arguments: a 64-byte aligned map, dimensions innermost first, byte
    strides, the box, the enums; a driver error raises."""
    compiler = shutil.which("cc") or shutil.which("clang-22") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    (tmp_path / "fake.c").write_text(FAKE_DRIVER)
    library = tmp_path / "libfakecuda.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library), str(tmp_path / "fake.c")],
                   check=True)
    monkeypatch.setenv("PE_CUDA_DRIVER", str(library))
    view = {"argument": 1, "element": "bf16", "offset": 8, "sizes": [2, 4, 300, 128],
            "strides": [153600, 38400, 128, 1]}
    step = {"op": "tensor_map", "buffer": 0, "of": view, "data_type": 9, "box": [1, 1, 64, 64],
            "interleave": 0, "swizzle": 3, "l2_promotion": 2, "oob_fill": 0}
    words = [int(w) for w in replay.encode_tensor_map(step, 1 << 30)]
    assert words[0] == 9 | 4 << 8 | 3 << 24 | 2 << 32
    assert words[1] == (1 << 30) + 16
    assert words[2:7] == [128, 300, 4, 2, 0]
    assert words[7:12] == [64 | 1 << 32, 64 | 1 << 32, 1 | 1 << 32, 1 | 1 << 32, 0]
    assert words[12:16] == [256, 76800, 307200, 0]
    with pytest.raises(RuntimeError, match="CUDA error 701"):
        replay.encode_tensor_map(dict(step, of=dict(view, sizes=[2, 4, 300, 999])), 0)


def test_kernel_arguments_refuse_a_mismatch():
    params = [{"kind": "memref", "element": "f32", "rank": 1}, {"kind": "scalar", "type": "f32"}]
    view = {"argument": 0, "element": "f32", "offset": 0, "sizes": [4], "strides": [1]}
    args = replay.kernel_arguments(params, [view, {"value": "-inf"}], lambda v: 256)
    assert [type(a) for a in args] == [np.uint64, np.uint64] + [np.int64] * 3 + [np.float32]
    assert np.isneginf(args[-1])
    with pytest.raises(ValueError):
        replay.kernel_arguments(params, [view], lambda v: 256)
    with pytest.raises(ValueError):
        replay.kernel_arguments(params, [{"value": 1}, {"value": 1}], lambda v: 256)
    # A tensor map's pointer: the device address of its buffer.
    assert replay.kernel_arguments([{"kind": "pointer"}], [{"buffer": 3}],
                                   lambda v: 4096 * v["buffer"]) == [np.uint64(12288)]
    with pytest.raises(ValueError):
        replay.kernel_arguments([{"kind": "pointer"}], [{"value": 1}], lambda v: 0)


def test_step2_dry_run_on_the_cpu_passes(prepared):
    out, _ = prepared
    proc = subprocess.run([sys.executable, os.path.join(GPU_DIR, "check.py"), "--backend=cpu",
                           "--dir", out], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(os.path.join(out, "results.json")) as f:
        report = json.load(f)
    cases = report["results"]
    assert len(cases) >= 20
    # The tensor-core cases need a GPU; every other case ran and passed.
    skipped = {c["name"] for c in cases if "skipped" in c}
    assert skipped == {c["name"] for c in cases if c["name"].startswith("tc_")}
    assert all(c["c_interface"]["ok"] for c in cases if "skipped" not in c)
    # The appends' in-place caches are compared (the C interface returns none), and the
    # bad slot's run failed with the op's message.
    by_name = {c["name"]: c for c in cases}
    assert by_name["append_kv_llama3_bf16"]["c_interface"]["metric"] == "ulp"
    failed = by_name["append_kv_bad_slot_f32"]["c_interface"]
    assert failed["metric"] == "expected error" and "is out of range" in failed["message"]
    # Results are appended as they come, one JSON line per case.
    with open(os.path.join(out, "results.jsonl")) as f:
        assert [json.loads(line)["name"] for line in f] == [c["name"] for c in cases]
    with open(os.path.join(out, "results.md")) as f:
        assert "rope_llama3_qk_bf16" in f.read()


def test_gpu_only_cases_have_a_reference():
    """The dry run skips the tensor-core cases, so their float64 references are computed here
    (small sizes): one finite [B, Hq, rows, Dv] output each, rows sampled or all."""
    import cases  # noqa: E402  (benchmarks/gpu, on sys.path above)

    gpu_only = [c for c in cases.cases("small") if c.gpu_only]
    assert len(gpu_only) >= 9
    for case in gpu_only:
        (out,) = case.reference(case.args, case.sample)
        q = case.args[0]
        # The value heads: the IR's result type (absorbed latent attention takes no values).
        dv = int(re.search(r"-> tensor<(?:[\d?]+x)+(\d+)x\w+>", case.ir).group(1))
        rows = q.shape[2] if case.sample is None else len(case.sample)
        assert out.shape == (q.shape[0], q.shape[1], rows, dv), case.name
        assert np.isfinite(out).all(), case.name
