"""GPU check, the work of one case: run it, compare it with the float64 reference, time it.

Used by `check.py`, which runs these functions in worker processes. Needs the folder of step 1
(`prepare.py`), the repository's python/ and numpy; CuPy for the GPU runs; PyTorch
(optional) for the side-by-side and the machine's limits. No LLVM.

Every case runs two ways: through its GPU library's C interface (`<case>.so`, host buffers,
the launch runtime over the CUDA driver), and - where its manifest is replayable - by
replaying the manifest's steps with CuPy on device buffers. The replay is what is timed: CUDA
events around the whole function (tables, allocations and every kernel) and, in a second
round, around each launch, median (min, max) of `repeats` runs after 3 warm-ups. Results are
compared with the float64 reference of python/pe/reference.py (bf16/f16: ulps from the
correctly rounded value; f32: max |error| over max(1, max |reference|)), RoPE also with
PyTorch as Hugging Face computes it, and attention with Hugging Face's RoPE followed by
PyTorch's scaled_dot_product_attention (flash backend where it applies), timed side by side
with and without the RoPE. The machine's limits: device-to-device copy bandwidth (1 GiB) and
the bf16 matmul rate at 8192^3.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
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
    if len(results) != len(want) or len(want) != len(case.result_types):
        return {"metric": case.metric, "error": float("inf"), "limit": case.limit, "ok": False,
                "message": f"{len(results)} results for {len(want)} references and "
                           f"{len(case.result_types)} result types"}
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
    """The case through its library's C interface: the returned results, then the
    arguments it updates in place as they are after the call."""
    module = runner.load(library, os.path.splitext(library)[0] + ".interface.json")
    args = [host_array(a, t) for a, t in zip(case.args, case.arg_types)]
    return module.call(case.name, *args) + [args[i] for i in case.in_place]


def run_failing(case, entry, folder: str, cp) -> dict:
    """A case that must fail: through the C interface with a message that contains
    `case.error`, through the replay at the check that reports `case.error_report`; the
    arguments updated in place unchanged either way (nothing was written)."""
    out = {"name": case.name, "notes": case.notes}
    unchanged = [case.args[i] for i in case.in_place]

    def outcome(run, expected: str, kind) -> dict:
        try:
            got = run()
        except Exception as e:  # noqa: BLE001 - any other kind of error is a failure too
            message = getattr(e, "message", str(e))
            written = [error(g, w, t, case.metric) for g, w, t in
                       zip(got_in_place, unchanged, case.result_types)]
            ok = isinstance(e, kind) and expected in message and \
                max(written, default=0.0) == 0.0
            return {"metric": "expected error", "error": 0.0 if ok else 1.0, "limit": 0.0,
                    "ok": ok, "message": f"{type(e).__name__}: {message[-300:]}"}
        return {"metric": "expected error", "error": 1.0, "limit": 0.0, "ok": False,
                "message": f"no error (returned {len(got)} results)"}

    library = (os.path.join(folder, entry["library"]) if cp else
               cpu_library(case, os.path.join(folder, "cpu-libraries")))
    module = runner.load(library, os.path.splitext(library)[0] + ".interface.json")
    args = [host_array(a, t) for a, t in zip(case.args, case.arg_types)]
    got_in_place = [args[i] for i in case.in_place]
    out["c_interface"] = outcome(lambda: module.call(case.name, *args), case.error,
                                 runner.KernelError)
    if cp is not None and entry["replayable"]:
        manifest = replay.load_manifest(os.path.join(folder, entry["manifest"]))
        fn = replay.CupyFunction(manifest, os.path.join(folder, entry["binary"]), case.name)
        inputs = [device_array(cp, a, t) for a, t in zip(case.args, case.arg_types)]

        def call():
            try:
                return fn(*inputs)
            finally:
                cp.cuda.Device().synchronize()
                got_in_place[:] = [from_device(cp, inputs[i], case.arg_types[i])
                                   for i in case.in_place]
        out["manifest"] = outcome(call, case.error_report, RuntimeError)
    return out


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
    """Hugging Face's attention as two functions of no arguments - RoPE then attention, and
    the attention alone on tensors rotated once - and the variant they run: RoPE on q and k
    (torch_rope, positions Skv - Sq + i and j), then scaled_dot_product_attention on the
    flash backend with enable_gqa, else with K/V heads repeated (HF's repeat_kv), else on
    PyTorch's own choice. The variant is picked once, by a first call. Causal queries are
    the last Sq tokens: Sq = Skv is SDPA's is_causal, one query sees every key."""
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

    def gqa(qr, kr):
        return sdpa(qr, kr, v, is_causal=causal, enable_gqa=True)

    def repeated(qr, kr):
        return sdpa(qr, kr.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1),
                    is_causal=causal)

    def on_flash(fn):
        def run(qr, kr):
            with flash():
                return fn(qr, kr)
        return run

    variants = [("default, K/V heads repeated", repeated)]
    if flash is not None:
        variants = [("flash, enable_gqa", on_flash(gqa)),
                    ("flash, K/V heads repeated", on_flash(repeated)),
                    ("default, enable_gqa", gqa)] + variants
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qr, kr = rotated()
        for label, fn in variants:
            try:
                fn(qr, kr)
            except (RuntimeError, TypeError):  # no such kernel; no enable_gqa before 2.5
                continue
            return (lambda: fn(*rotated())), (lambda: fn(qr, kr)), label
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
    del src, dst
    if torch is not None:
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        mm = time_gpu(cp, lambda: torch.matmul(a, b), max(5, repeats // 2))
        limits.update(matmul_bf16_TFLOPs=2 * 8192 ** 3 / mm["median_ms"] / 1e9, matmul=mm)
    return limits


def time_launches(cp, fn, inputs, repeats: int) -> dict:
    """Median milliseconds of each kernel of a replayed function, between CUDA events around
    its launches alone (summed per kernel when it launches more than once)."""
    per_kernel = {}
    for run in range(repeats + 2):
        events = []
        fn(*inputs, launch_events=events)
        events[-1][2].synchronize()
        if run < 2:  # warm-ups
            continue
        call = {}
        for name, start, stop in events:
            call[name] = call.get(name, 0.0) + cp.cuda.get_elapsed_time(start, stop)
        for name, ms in call.items():
            per_kernel.setdefault(name, []).append(ms)
    return {name: statistics.median(ms) for name, ms in per_kernel.items()}


# ---------------------------------------------------------------------------
# One case
# ---------------------------------------------------------------------------

def cpu_library(case, workdir: str) -> str:
    """The case as a library of the GPU schedule run on the CPU (the dry run)."""
    os.makedirs(workdir, exist_ok=True)
    src, lib = os.path.join(workdir, case.name + ".mlir"), os.path.join(workdir, case.name + ".so")
    with open(src, "w") as f:
        f.write(case.ir)
    subprocess.run([runner.PE_COMPILE, "--target=gpu-on-cpu", "--emit=shared", src, "-o", lib,
                    f"--interface={os.path.splitext(lib)[0]}.interface.json"],
                   check=True, capture_output=True)
    return lib


def run_case(case, entry, folder: str, cp, torch, options) -> dict:
    """Check (and with `options.time`, time) one case; `cp` None: the CPU dry run.
    `options`: repeats, time, replay_only, reference (False: run only, for a profiler)."""
    if case.error:
        return run_failing(case, entry, folder, cp)
    out = {"name": case.name, "notes": case.notes}
    if cp is None and case.gpu_only:
        out["skipped"] = "GPU only"
        return out
    want = case.reference(case.args, case.sample) if options.reference else None
    if not options.replay_only:
        library = (os.path.join(folder, entry["library"]) if cp else
                   cpu_library(case, os.path.join(folder, "cpu-libraries")))
        got = run_library(library, case)
        if want is not None:
            out["c_interface"] = compare(case, got, want)
    if cp is not None and entry["replayable"]:
        manifest = replay.load_manifest(os.path.join(folder, entry["manifest"]))
        fn = replay.CupyFunction(manifest, os.path.join(folder, entry["binary"]), case.name)
        inputs = [device_array(cp, a, t) for a, t in zip(case.args, case.arg_types)]
        results = fn(*inputs) + [inputs[i] for i in case.in_place]
        cp.cuda.Device().synchronize()
        if want is not None:
            out["manifest"] = compare(case, [from_device(cp, r, t) for r, t in
                                             zip(results, case.result_types)], want)
        if case.timed and options.time:
            out.update(timing(cp, case, fn, inputs, options.repeats))
    if options.time and cp is not None and torch is not None:
        side = torch_side_by_side(cp, torch, case, want, "time" in out, options.repeats)
        if side:
            out["torch"] = side
    return out


def timing(cp, case, fn, inputs, repeats: int) -> dict:
    """The whole function's time, each kernel's, and the rates they reach."""
    out = {"time": time_gpu(cp, lambda: fn(*inputs), repeats),
           "kernels_ms": time_launches(cp, fn, inputs, repeats),
           "bytes_moved": case.bytes_moved}
    out["GBps"] = case.bytes_moved / out["time"]["median_ms"] / 1e6
    if case.flops:
        out["TFLOPs"] = case.flops / out["time"]["median_ms"] / 1e9
        # The attention launch alone: the kernel that takes longest (tables and the decode
        # merge are the others).
        name, ms = max(out["kernels_ms"].items(), key=lambda kv: kv[1])
        out["attention_kernel"] = {"name": name, "median_ms": ms,
                                   "TFLOPs": case.flops / ms / 1e9,
                                   "GBps": case.bytes_moved / ms / 1e6}
    return out


def torch_side_by_side(cp, torch, case, want, timed: bool, repeats: int):
    """PyTorch as Hugging Face computes the case (RoPE; RoPE + SDPA): its error against the
    reference and, for timed cases, its time on the same work."""
    if case.torch_rope is not None:
        x = torch_tensor(torch, case.args[0], "bf16")
        got = torch_rope(torch, x, case.args[-1], case.torch_rope)
        side = {"error": error(sampled(torch_host(torch, got, "bf16"), case), want[0], "bf16",
                               "ulp") if want is not None else None}
        if timed:  # the same work as the case: q and k
            k = torch_tensor(torch, case.args[1], "bf16")
            side["time"] = time_gpu(
                cp, lambda: (torch_rope(torch, x, case.args[-1], case.torch_rope),
                             torch_rope(torch, k, case.args[-1], case.torch_rope)), repeats)
        return side
    if case.torch_attention is not None:
        dtype = case.arg_types[0]
        q, k, v = (torch_tensor(torch, a, dtype) for a in case.args[:3])
        attend, attend_rotated, backend = torch_attention(torch, q, k, v, case.torch_attention)
        side = {"metric": case.metric, "backend": backend, "error": None}
        if want is not None:
            side["error"] = error(sampled(torch_host(torch, attend(), dtype), case), want[0],
                                  dtype, case.metric)
        if timed:  # the same work: RoPE of q and k, then attention; and the attention alone
            side["time"] = time_gpu(cp, attend, repeats)
            side["sdpa_time"] = time_gpu(cp, attend_rotated, repeats)
            if case.flops:
                side["TFLOPs"] = case.flops / side["time"]["median_ms"] / 1e9
                side["sdpa_TFLOPs"] = case.flops / side["sdpa_time"]["median_ms"] / 1e9
        return side
    return None


def run_c_example(folder: str) -> dict:
    proc = subprocess.run([os.path.join(folder, "rope_example")], capture_output=True, text=True,
                          timeout=120)
    return {"name": "c_example", "returncode": proc.returncode,
            "output": (proc.stdout + proc.stderr).strip(), "ok": proc.returncode == 0}
