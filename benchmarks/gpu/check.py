"""GPU check, step 2 (on a machine with an NVIDIA GPU): run, check and time every case.

    python3 benchmarks/gpu/check.py [--dir build/gpu-check] [--repeats 20]
    .venv/bin/python benchmarks/gpu/check.py --backend=cpu --dir DIR   # dry run, no GPU

Needs only the folder of step 1 (`prepare.py`), the repository's python/ and numpy; CuPy for
the GPU runs; PyTorch (optional) for the side-by-side and the machine's limits. No LLVM.

Every case runs two ways: through its GPU library's C interface (`<case>.so`, host buffers,
the launch runtime over the CUDA driver), and - where its manifest is replayable - by
replaying the manifest's steps with CuPy on device buffers, which is what is timed: CUDA
events around the whole function (tables, allocations and every kernel), median (min, max)
of --repeats runs after 3 warm-ups. Results are compared with the float64 reference of
python/pe/reference.py (bf16/f16: ulps from the correctly rounded value; f32: max |error|
over max(1, max |reference|)), RoPE also with PyTorch as Hugging Face computes it, and
attention with Hugging Face's RoPE followed by PyTorch's scaled_dot_product_attention
(flash backend where it applies), timed side by side. The
machine's limits are measured in the same run: device-to-device copy bandwidth (1 GiB) and
the bf16 matmul rate at 8192^3. The unchanged C example runs too. Writes results.json and
results.md (and results.png when matplotlib is there) into --dir; exits 1 if a check fails.

--backend=cpu runs the C-interface path of every case with libraries built here by
`pe-compile --target=gpu-on-cpu` (the GPU schedule on the CPU): a dry run of this script.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

import cases as case_list  # noqa: E402
from pe import gpu_manifest as replay  # noqa: E402
from pe import reference as ref  # noqa: E402
from pe import runner  # noqa: E402
from pe.testing import round_to, spacing, ulp_distance  # noqa: E402


# ---------------------------------------------------------------------------
# Comparison with the reference
# ---------------------------------------------------------------------------

# bf16/f16 results are computed in f32 and rounded once: an entry is within its bound when it
# is within `limit` ulps of the correctly rounded reference, or within `limit` ulps plus the
# f32 error before rounding (2e-6 of the scale) where the result is a cancellation.
F32_ALLOWANCE = 2e-6


def error(got, want, dtype: str, metric: str) -> float:
    """The case's metric: ulps (bf16/f16) or scaled absolute error (f32)."""
    got = (runner.to_float32(got) if dtype == "bf16" else np.asarray(got)).astype(np.float64)
    if metric == "ulp":
        finite = np.isfinite(want)
        if not np.array_equal(np.isfinite(got), finite) or \
                not np.array_equal(got[~finite], round_to(want[~finite], dtype)):
            return float("inf")
        g, w = got[finite], want[finite]
        ulps = ulp_distance(g, round_to(w, dtype), dtype)
        scale = max(1.0, float(np.abs(w).max(initial=0)))
        within = np.abs(g - w) <= spacing(w, dtype) + F32_ALLOWANCE * scale
        # Entries within the allowance count as at most 1 ulp.
        return float(np.where(within, np.minimum(ulps, 1.0), ulps).max(initial=0))
    finite = np.isfinite(want)
    if not np.array_equal(np.isfinite(got), finite) or not np.array_equal(got[~finite], want[~finite]):
        return float("inf")
    scale = max(1.0, float(np.abs(want[finite]).max(initial=0)))
    return float(np.abs(got[finite] - want[finite]).max(initial=0)) / scale


def sampled(array, case: case_list.Case):
    if case.sample is None or case.sample_axis is None:
        return array
    return np.take(array, case.sample, axis=case.sample_axis)


def compare(case, results, want) -> dict:
    errors = [error(sampled(g, case), w, t, case.metric)
              for g, w, t in zip(results, want, case.result_types)]
    worst = max(errors)
    return {"metric": case.metric, "error": worst, "limit": case.limit,
            "ok": bool(worst <= case.limit)}


# ---------------------------------------------------------------------------
# The two ways to run a case
# ---------------------------------------------------------------------------

def host_array(values: np.ndarray, dtype: str) -> np.ndarray:
    """A case input as pe.runner takes it (bf16 rounded to nearest even)."""
    if dtype == "bf16":
        return runner.bf16_array(values.astype(np.float32))
    return values.astype({"f32": np.float32, "f16": np.float16,
                          "i32": np.int32, "i64": np.int64}[dtype])


def device_array(cp, values: np.ndarray, dtype: str):
    """A case input on the GPU in its element type (bf16 as 16-bit patterns)."""
    if dtype == "bf16":
        return cp.asarray(runner.to_bf16_bits(values.astype(np.float32)))
    return cp.asarray(host_array(values, dtype))


def from_device(cp, array, dtype: str) -> np.ndarray:
    host = cp.asnumpy(array)
    return runner.from_bf16_bits(host) if dtype == "bf16" else host


def run_library(library: str, case) -> list:
    module = runner.load(library, os.path.splitext(library)[0] + ".interface.json")
    return module.call(case.name, *[host_array(a, t) for a, t in zip(case.args, case.arg_types)])


def time_gpu(cp, call, repeats: int) -> dict:
    """Median (min, max) milliseconds of `call()` between CUDA events, after 3 warm-ups."""
    for _ in range(3):
        call()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
            "runs": repeats}


# ---------------------------------------------------------------------------
# PyTorch: Hugging Face's RoPE, and the machine's limits
# ---------------------------------------------------------------------------

def torch_rope(torch, x, positions, rope: dict):
    """q * cos + rotate_half(q) * sin, cos/sin from float32 inv_freq cast to x's dtype (HF)."""
    inv = torch.tensor(ref.rope_inv_freq(rope["theta"], rope["rotary_dim"], rope.get("scaling"),
                                         int(positions.max()) + 1), dtype=torch.float32,
                       device=x.device)
    p = torch.as_tensor(positions, device=x.device).float()
    freqs = torch.outer(p, inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    factor = ref.rope_attention_factor(rope.get("scaling"))
    cos, sin = (emb.cos() * factor).to(x.dtype), (emb.sin() * factor).to(x.dtype)
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def torch_tensor(torch, values: np.ndarray, dtype: str):
    """A case input as a CUDA tensor of its element type."""
    if dtype == "bf16":
        bits = runner.to_bf16_bits(values.astype(np.float32)).view(np.int16)
        return torch.as_tensor(bits, device="cuda").view(torch.bfloat16)
    return torch.as_tensor(host_array(values, dtype), device="cuda")


def torch_host(torch, tensor, dtype: str) -> np.ndarray:
    """A CUDA tensor back as the C interface returns it (bf16 as 16-bit patterns)."""
    if dtype == "bf16":
        return runner.from_bf16_bits(tensor.view(torch.int16).cpu().numpy().view(np.uint16))
    return tensor.cpu().numpy()


def torch_attention(torch, q, k, v, spec: dict):
    """Hugging Face's attention as a function of no arguments, and the variant it runs: RoPE
    on q and k (torch_rope, positions Skv - Sq + i and j), then scaled_dot_product_attention
    on the flash backend with enable_gqa, else with K/V heads repeated (HF's repeat_kv),
    else on PyTorch's own choice. The variant is picked once, by a first call. Causal
    queries are the last Sq tokens: Sq = Skv is SDPA's is_causal, one query sees every key."""
    sq, skv = q.shape[2], k.shape[2]
    if spec["causal"] and sq not in (1, skv):
        raise ValueError("causal SDPA side-by-side needs Sq = 1 or Sq = Skv")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    causal = spec["causal"] and sq == skv
    group = q.shape[1] // k.shape[1]
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        flash = lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION)  # noqa: E731
    except ImportError:
        flash = None

    def rotated():
        return (torch_rope(torch, q, np.arange(sq) + (skv - sq), spec["rope"]),
                torch_rope(torch, k, np.arange(skv), spec["rope"]))

    def gqa():
        qr, kr = rotated()
        return sdpa(qr, kr, v, is_causal=causal, enable_gqa=True)

    def repeated():
        qr, kr = rotated()
        return sdpa(qr, kr.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1),
                    is_causal=causal)

    def on_flash(fn):
        def run():
            with flash():
                return fn()
        return run

    variants = [("default, K/V heads repeated", repeated)]
    if flash is not None:
        variants = [("flash, enable_gqa", on_flash(gqa)),
                    ("flash, K/V heads repeated", on_flash(repeated)),
                    ("default, enable_gqa", gqa)] + variants
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, fn in variants:
            try:
                fn()
                return fn, label
            except (RuntimeError, TypeError):  # no such kernel; no enable_gqa before 2.5
                continue
    raise RuntimeError("no scaled_dot_product_attention variant ran")


def machine_limits(cp, torch, repeats: int) -> dict:
    """Device-to-device copy bandwidth (1 GiB) and the bf16 matmul rate at 8192^3."""
    n = 1 << 30
    src, dst = cp.empty(n, dtype=cp.uint8), cp.empty(n, dtype=cp.uint8)
    src.fill(1)
    stream = cp.cuda.get_current_stream().ptr
    copy = time_gpu(cp, lambda: cp.cuda.runtime.memcpyAsync(
        dst.data.ptr, src.data.ptr, n, cp.cuda.runtime.memcpyDeviceToDevice, stream), repeats)
    limits = {"copy_bytes": n, "copy_GBps": 2 * n / copy["median_ms"] / 1e6, "copy": copy}
    if torch is not None:
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        mm = time_gpu(cp, lambda: torch.matmul(a, b), max(5, repeats // 2))
        limits.update(matmul_bf16_TFLOPs=2 * 8192 ** 3 / mm["median_ms"] / 1e9, matmul=mm)
    return limits


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def cpu_library(case, workdir: str) -> str:
    src, lib = os.path.join(workdir, case.name + ".mlir"), os.path.join(workdir, case.name + ".so")
    with open(src, "w") as f:
        f.write(case.ir)
    subprocess.run([runner.PE_COMPILE, "--target=gpu-on-cpu", "--emit=shared", src, "-o", lib,
                    f"--interface={os.path.splitext(lib)[0]}.interface.json"],
                   check=True, capture_output=True)
    return lib


def run_case(case, entry, args, cp, torch, workdir) -> dict:
    out = {"name": case.name, "notes": case.notes}
    if cp is None and case.gpu_only:
        out["skipped"] = "GPU only"
        return out
    want = case.reference(case.args, case.sample)
    library = os.path.join(args.dir, entry["library"]) if cp else cpu_library(case, workdir)
    out["c_interface"] = compare(case, run_library(library, case), want)
    if cp is not None and entry["replayable"]:
        manifest = replay.load_manifest(os.path.join(args.dir, entry["manifest"]))
        fn = replay.CupyFunction(manifest, os.path.join(args.dir, entry["binary"]), case.name)
        inputs = [device_array(cp, a, t) for a, t in zip(case.args, case.arg_types)]
        results = fn(*inputs)
        out["manifest"] = compare(case, [from_device(cp, r, t) for r, t in
                                         zip(results, case.result_types)], want)
        if case.timed:
            out["time"] = time_gpu(cp, lambda: fn(*inputs), args.repeats)
            out["bytes_moved"] = case.bytes_moved
            out["GBps"] = case.bytes_moved / out["time"]["median_ms"] / 1e6
            if case.flops:
                out["TFLOPs"] = case.flops / out["time"]["median_ms"] / 1e9
    if cp is not None and torch is not None and case.torch_rope is not None:
        x = torch.as_tensor(runner.to_bf16_bits(case.args[0].astype(np.float32)).view(np.int16),
                            device="cuda").view(torch.bfloat16)
        got = torch_rope(torch, x, case.args[-1], case.torch_rope)
        host = runner.from_bf16_bits(got.view(torch.int16).cpu().numpy().view(np.uint16))
        out["torch"] = {"error": error(sampled(host, case), want[0], "bf16", "ulp")}
        if "time" in out:  # the same work as the case: q and k
            k = torch.as_tensor(runner.to_bf16_bits(case.args[1].astype(np.float32))
                                .view(np.int16), device="cuda").view(torch.bfloat16)
            out["torch"]["time"] = time_gpu(
                cp, lambda: (torch_rope(torch, x, case.args[-1], case.torch_rope),
                             torch_rope(torch, k, case.args[-1], case.torch_rope)), args.repeats)
    if cp is not None and torch is not None and case.torch_attention is not None:
        dtype = case.arg_types[0]
        q, k, v = (torch_tensor(torch, a, dtype) for a in case.args[:3])
        attend, backend = torch_attention(torch, q, k, v, case.torch_attention)
        out["torch"] = {"error": error(sampled(torch_host(torch, attend(), dtype), case),
                                       want[0], dtype, case.metric), "metric": case.metric,
                        "backend": backend}
        if "time" in out:  # the same work: RoPE of q and k, then attention
            out["torch"]["time"] = time_gpu(cp, attend, args.repeats)
    return out


def run_c_example(folder: str) -> dict:
    proc = subprocess.run([os.path.join(folder, "rope_example")], capture_output=True, text=True)
    return {"returncode": proc.returncode, "output": (proc.stdout + proc.stderr).strip(),
            "ok": proc.returncode == 0}


def write_markdown(report: dict, path: str) -> None:
    lines = [f"# pe-mlir GPU check ({report['backend']})", "",
             f"Device: {report['device']}. Load average at start: {report['loadavg']}.", ""]
    limits = report.get("limits", {})
    if limits:
        lines += [f"Copy bandwidth (device to device, 1 GiB): {limits['copy_GBps']:.0f} GB/s"]
        if "matmul_bf16_TFLOPs" in limits:
            lines += [f"bf16 matmul 8192^3 (torch): {limits['matmul_bf16_TFLOPs']:.0f} TFLOP/s"]
        lines += [""]
    lines += ["| case | C interface | manifest | median ms (min-max) | GB/s | of copy BW | torch |",
              "|---|---|---|---|---|---|---|"]
    for c in report["cases"]:
        def cell(key):
            r = c.get(key)
            return "-" if r is None else f"{'ok' if r['ok'] else 'FAIL'} {r['error']:.3g} ({r['metric']} <= {r['limit']:g})"
        t = c.get("time")
        timing = f"{t['median_ms']:.3f} ({t['min_ms']:.3f}-{t['max_ms']:.3f})" if t else "-"
        gbps = f"{c['GBps']:.0f}" if "GBps" in c else "-"
        frac = f"{100 * c['GBps'] / limits['copy_GBps']:.0f} %" if "GBps" in c and limits else "-"
        if "TFLOPs" in c:  # compute-bound: the matmul rate is its limit
            gbps += f"; {c['TFLOPs']:.0f} TFLOP/s"
            if "matmul_bf16_TFLOPs" in limits:
                frac += f"; {100 * c['TFLOPs'] / limits['matmul_bf16_TFLOPs']:.0f} % of matmul"
        torch_cell = "-"
        if "torch" in c:
            torch_cell = f"{c['torch']['error']:.3g} {c['torch'].get('metric', 'ulp')}"
            if "backend" in c["torch"]:
                torch_cell += f" (SDPA {c['torch']['backend']})"
            if "time" in c["torch"]:
                torch_cell += f", {c['torch']['time']['median_ms']:.3f} ms"
        if "skipped" in c:
            lines.append(f"| {c['name']} | {c['skipped']} | - | - | - | - | - |")
            continue
        lines.append(f"| {c['name']} | {cell('c_interface')} | {cell('manifest')} | {timing} | "
                     f"{gbps} | {frac} | {torch_cell} |")
    if "c_example" in report:
        lines += ["", f"C example (unchanged CPU program, GPU library): {report['c_example']['output']}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_plot(report: dict, path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    timed = [c for c in report["cases"] if "GBps" in c]
    if not timed:
        return
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.barh([c["name"] for c in timed], [c["GBps"] for c in timed], label="pe-mlir")
    if "copy_GBps" in report.get("limits", {}):
        ax.axvline(report["limits"]["copy_GBps"], color="k", ls="--", label="copy bandwidth")
    ax.set_xlabel("GB/s (bytes read + written / median time)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=os.path.join(ROOT, "build", "gpu-check"))
    parser.add_argument("--backend", choices=("cupy", "cpu"), default="cupy")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()
    with open(os.path.join(args.dir, "index.json")) as f:
        index = json.load(f)
    cp = torch = None
    device = platform.processor() or platform.machine()
    if args.backend == "cupy":
        import cupy as cp
        props = cp.cuda.runtime.getDeviceProperties(0)
        device = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        try:
            import torch
        except ImportError:
            torch = None
    report = {"backend": args.backend, "device": device, "size": index["size"],
              "chip": index["chip"], "loadavg": os.getloadavg()[0], "kernels": index["kernels"],
              "cases": []}
    start = time.time()
    if cp is not None:
        report["limits"] = machine_limits(cp, torch, args.repeats)
    entries = {e["name"]: e for e in index["cases"]}
    only = set(filter(None, args.only.split(",")))
    workdir = os.path.join(args.dir, "cpu-libraries")
    os.makedirs(workdir, exist_ok=True)
    failed = False
    for case in case_list.cases(index["size"]):
        if only and case.name not in only:
            continue
        result = run_case(case, entries[case.name], args, cp, torch, workdir)
        checks = [result[k] for k in ("c_interface", "manifest") if k in result]
        failed |= not all(c["ok"] for c in checks)
        report["cases"].append(result)
        if "skipped" in result:
            print(f"{case.name}: skipped ({result['skipped']})", flush=True)
            continue
        print(f"{case.name}: " + ", ".join(f"{k} {'ok' if result[k]['ok'] else 'FAIL'} "
                                            f"{result[k]['error']:.3g}"
                                            for k in ("c_interface", "manifest") if k in result)
              + (f", {result['time']['median_ms']:.3f} ms, {result['GBps']:.0f} GB/s"
                 if "time" in result else ""), flush=True)
    if cp is not None:
        report["c_example"] = run_c_example(args.dir)
        failed |= not report["c_example"]["ok"]
    report["seconds"] = time.time() - start
    with open(os.path.join(args.dir, "results.json"), "w") as f:
        json.dump(report, f, indent=1, default=float)
    write_markdown(report, os.path.join(args.dir, "results.md"))
    write_plot(report, os.path.join(args.dir, "results.png"))
    print(f"{'FAILED' if failed else 'all checks passed'} in {report['seconds']:.0f} s; "
          f"{os.path.join(args.dir, 'results.md')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
