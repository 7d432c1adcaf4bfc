"""GPU check, step 2 (on a machine with an NVIDIA GPU): run, check and time every case.

    python3 benchmarks/gpu/check.py --dir build/gpu-check --small-dir build/gpu-check-small \
        --out RESULTS --budget 480
    .venv/bin/python benchmarks/gpu/check.py --backend=cpu --dir DIR   # dry run, no GPU

Needs the folders of step 1 (`prepare.py`, full and small sizes), the repository's python/ and
numpy; CuPy for the GPU runs; PyTorch (optional) for the side-by-side and the machine's
limits; `compute-sanitizer`, `ncu` and `cuobjdump` when they are on the PATH. No LLVM.

Phases, in order, each case in a worker process (a crash, a CUDA fault - sticky for a
process - or a hang costs that case only: the next worker takes the rest):

1. small: every case at small sizes, checked against the float64 reference (a minute);
2. full: the machine's limits (copy bandwidth, bf16 matmul rate), then every case at full
   size, checked and, where marked, timed (`measure.py`), with PyTorch beside it;
3. sanitizer: compute-sanitizer memcheck, racecheck and synccheck over small cases of each
   kernel family (RoPE, SIMT attention and its decode merge, both tensor-core kernels, the
   KV-cache append and a decode step over pages);
4. profile: the SASS of the prefill target's kernels (cuobjdump) and one Nsight Compute
   profile of its attention launch.

Every result is appended to RESULTS/results.jsonl as it comes, and RESULTS/results.md is
rewritten after each, so a run stopped at any point leaves what it measured; `--budget`
seconds (0: none) stops starting work past it. Exit status 1 if a check failed.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import selectors
import shutil
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402

PROTOCOL = "@@"  # worker -> driver lines: "@@start NAME", "@@result JSON"
SANITIZED = ["rope_llama3_qk_bf16", "attention_gqa_llama3_bf16", "decode_gqa_llama3_bf16",
             "tc_attention_gqa_llama3_d128_bf16", "tc_decode_gqa_llama3_d128_bf16",
             "tc_sync_attention_gqa_llama3_d128_bf16", "tc_one_attention_gqa_llama3_d128_bf16",
             "tc_tma_attention_gqa_llama3_d128_bf16", "append_kv_llama3_bf16",
             "decode_step_append_paged_bf16"]
PROFILED = "tc_prefill_gqa_llama3_d128_bf16"


# ---------------------------------------------------------------------------
# Worker: the cases of one process, one result line each
# ---------------------------------------------------------------------------

def worker(args) -> int:
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything else printed goes to the worker log, not the protocol
    import cases as case_list
    import measure
    with open(os.path.join(args.dir, "index.json")) as f:
        index = json.load(f)
    entries = {e["name"]: e for e in index["cases"]}
    by_name = {c.name: c for c in case_list.cases(index["size"])}
    cp = torch = None
    if args.backend == "cupy":
        import cupy as cp
        if args.torch:
            try:
                import torch
            except ImportError:
                torch = None
    for name in args.only.split(","):
        channel.write(f"{PROTOCOL}start {name}\n")
        try:
            if name == "limits":
                result = {"name": name, **measure.machine_limits(cp, torch, args.repeats)}
            elif name == "c_example":
                result = measure.run_c_example(args.dir)
            else:
                result = measure.run_case(by_name[name], entries[name], args.dir, cp, torch, args)
        except Exception:  # noqa: BLE001 - reported; a fresh process takes the next case
            channel.write(PROTOCOL + "result " + json.dumps(
                {"name": name, "error": traceback.format_exc(limit=6)[-3000:]}) + "\n")
            return 3
        channel.write(PROTOCOL + "result " + json.dumps(result, default=float) + "\n")
    return 0


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

class Run:
    """The run's log, its results as they come, and its deadline."""

    def __init__(self, args):
        self.args = args
        self.out = args.out or args.dir
        os.makedirs(self.out, exist_ok=True)
        self.start = time.time()
        self.deadline = self.start + args.budget if args.budget else float("inf")
        self.log_file = open(os.path.join(self.out, "check.log"), "a")
        self.worker_log = open(os.path.join(self.out, "workers.log"), "a")
        open(os.path.join(self.out, "results.jsonl"), "w").close()
        self.report = {"backend": args.backend, "device": platform.machine(),
                       "loadavg": os.getloadavg()[0], "started": time.strftime("%F %T"),
                       "results": []}
        self.failed = False

    def log(self, line: str) -> None:
        line = f"[{time.time() - self.start:6.1f} s] {line}"
        print(line, flush=True)
        self.log_file.write(line + "\n")
        self.log_file.flush()

    def left(self) -> float:
        return self.deadline - time.time()

    def add(self, phase: str, result: dict) -> None:
        result = {"phase": phase, **result}
        self.failed |= report.failed(result)
        self.report["results"].append(result)
        with open(os.path.join(self.out, "results.jsonl"), "a") as f:
            f.write(json.dumps(result, default=float) + "\n")
        report.write_markdown(self.report, os.path.join(self.out, "results.md"))
        self.log(report.summary_line(result, self.report))

    def finish(self) -> None:
        self.report["seconds"] = time.time() - self.start
        with open(os.path.join(self.out, "results.json"), "w") as f:
            json.dump(self.report, f, indent=1, default=float)
        report.write_markdown(self.report, os.path.join(self.out, "results.md"))


def run_workers(run: Run, phase: str, folder: str, names, flags, per_case: float,
                prefix=()) -> None:
    """Runs `names` in worker processes, adding each result as it comes; a worker that
    dies, faults or passes `per_case` seconds on one case costs that case only."""
    names = list(names)
    while names:
        if run.left() <= 0:
            for name in names:
                run.add(phase, {"name": name, "not_run": "budget spent"})
            return
        cmd = list(prefix) + [sys.executable, os.path.abspath(__file__), "--worker",
                              "--backend", run.args.backend, "--dir", folder,
                              "--repeats", str(run.args.repeats), "--only", ",".join(names)]
        proc = subprocess.Popen(cmd + flags, stdout=subprocess.PIPE, stderr=run.worker_log,
                                text=True)
        current, done = None, set()
        for kind, payload in _lines(proc, per_case):
            if kind == "start":
                current = payload
            elif kind == "result":
                result = json.loads(payload)
                done.add(result["name"])
                run.add(phase, result)
            elif current is None:  # the worker ended before its first case: so would the next
                for name in names:
                    run.add(phase, {"name": name, "error": payload})
                return
            elif current not in done:  # it ended or hung in a case: the rest go on
                run.add(phase, {"name": current, "error": payload})
                done.add(current)
        names = [n for n in names if n not in done]


def _lines(proc, per_case: float):
    """("start" | "result", payload) per protocol line, then ("end", why) if a case was
    cut short: by a timeout (the worker is killed) or by the worker's exit."""
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    case_deadline = time.time() + per_case
    while True:
        wait = case_deadline - time.time()
        if wait <= 0 or not selector.select(timeout=wait):
            proc.kill()
            proc.wait()
            yield "end", f"timed out after {per_case:.0f} s (worker killed)"
            return
        line = proc.stdout.readline()
        if not line:
            code = proc.wait()
            yield "end", f"worker exited with status {code} (see workers.log)"
            return
        if line.startswith(PROTOCOL):
            kind, _, payload = line[len(PROTOCOL):].rstrip("\n").partition(" ")
            if kind == "start":
                case_deadline = time.time() + per_case
            yield kind, payload


def tool(name: str):
    found = shutil.which(name)
    if found:
        return found
    roots = ["/usr/local/cuda/bin", "/usr/local/cuda/compute-sanitizer"] + \
        sorted(glob.glob("/opt/nvidia/nsight-compute/*"), reverse=True)
    for root in roots:
        path = os.path.join(root, name)
        if os.access(path, os.X_OK):
            return path
    return None


def gpu_state() -> str:
    smi = tool("nvidia-smi")
    if not smi:
        return ""
    proc = subprocess.run([smi, "--query-gpu=name,driver_version,clocks.sm,clocks.mem,"
                           "temperature.gpu,power.draw,utilization.gpu",
                           "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
    return proc.stdout.strip()


def sanitizer_phase(run: Run, folder: str) -> None:
    """memcheck, racecheck and synccheck over the small cases of SANITIZED (replay only)."""
    sanitizer = tool("compute-sanitizer")
    if sanitizer is None:
        run.add("sanitizer", {"name": "compute-sanitizer", "not_run": "not on the PATH"})
        return
    log = os.path.join(run.out, "sanitizer.txt")
    for check in ("memcheck", "racecheck", "synccheck"):
        if run.left() <= 0:
            run.add("sanitizer", {"name": check, "not_run": "budget spent"})
            continue
        cmd = [sanitizer, "--tool", check, "--error-exitcode", "9", "--print-limit", "20",
               sys.executable, os.path.abspath(__file__), "--worker", "--dir", folder,
               "--only", ",".join(SANITIZED), "--replay-only", "--no-time", "--no-torch"]
        started = time.time()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=min(90, max(run.left(), 30)))
            text, code = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            text, code = f"{e.stdout or ''}{e.stderr or ''}\ntimed out", None
            text = text if isinstance(text, str) else text.decode(errors="replace")
        with open(log, "a") as f:
            f.write(f"===== {check} ({time.time() - started:.0f} s, status {code})\n{text}\n")
        summary = [l for l in text.splitlines() if "SUMMARY" in l]
        ran = text.count(PROTOCOL + "result")
        run.add("sanitizer", {"name": check, "status": code, "cases": ran,
                              "summary": summary[-1] if summary else text.strip()[-300:],
                              "ok": code == 0 and ran == len(SANITIZED)})


def profile_phase(run: Run, folder: str) -> None:
    """The SASS of the prefill target's kernels and an Nsight Compute profile of its
    attention launch (the kernel the full phase timed longest)."""
    entry = {e["name"]: e for e in json.load(open(os.path.join(folder, "index.json")))["cases"]}
    case = entry.get(PROFILED)
    cuobjdump = tool("cuobjdump")
    if case and cuobjdump and case["binary"].endswith(".cubin"):
        proc = subprocess.run([cuobjdump, "--dump-sass", os.path.join(folder, case["binary"])],
                              capture_output=True, text=True, timeout=120)
        with open(os.path.join(run.out, "sass.txt"), "w") as f:
            f.write(proc.stdout + proc.stderr)
        run.add("profile", {"name": "sass", "file": "sass.txt",
                            "instructions": proc.stdout.count("\n        /*")})
    ncu = tool("ncu")
    timed = [r for r in run.report["results"] if r.get("name") == PROFILED and
             "attention_kernel" in r]
    if ncu is None or not timed or run.left() < 60:
        run.add("profile", {"name": "ncu", "not_run": "no ncu, no timed prefill, or no time"})
        return
    kernel = timed[-1]["attention_kernel"]["name"]
    cmd = [ncu, "--clock-control", "none", "-k", kernel, "-c", "1",
           "--section", "SpeedOfLight", "--section", "Occupancy", "--section", "LaunchStats",
           "--section", "ComputeWorkloadAnalysis", "--section", "MemoryWorkloadAnalysis",
           "--section", "WarpStateStats", "--section", "SchedulerStats",
           "--section", "InstructionStats",
           sys.executable, os.path.abspath(__file__), "--worker", "--dir", folder,
           "--only", PROFILED, "--replay-only", "--no-time", "--no-torch", "--no-reference"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=min(180, max(run.left(), 30)))
        text = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        text = "timed out"
    with open(os.path.join(run.out, "ncu.txt"), "w") as f:
        f.write(text)
    run.add("profile", {"name": "ncu", "kernel": kernel, "file": "ncu.txt",
                        "ok": "Duration" in text})


def ordered(folder: str):
    """The cases of a prepared folder, the tensor-core kernels (the targets) first."""
    with open(os.path.join(folder, "index.json")) as f:
        index = json.load(f)
    names = [c["name"] for c in index["cases"]]
    return index, [n for n in names if n.startswith("tc_")] + \
        [n for n in names if not n.startswith("tc_")]


def driver(args) -> int:
    run = Run(args)
    phases = set(args.phases.split(","))
    only = set(filter(None, args.only.split(",")))
    pick = (lambda names: [n for n in names if n in only]) if only else (lambda names: names)
    index, names = ordered(args.dir)
    run.report.update(chip=index["chip"], size=index["size"], kernels=index["kernels"],
                      gpu_before=gpu_state())
    run.report["tools"] = {t: tool(t) for t in ("compute-sanitizer", "ncu", "cuobjdump")}
    run.log(f"pe-mlir GPU check ({args.backend}): {run.report['gpu_before'] or run.report['device']}"
            f"; tools {run.report['tools']}")
    if args.backend == "cpu":  # the dry run: the full folder's cases on the GPU schedule
        run_workers(run, "full", args.dir, pick(names), ["--no-torch"], 900)
    else:
        if "small" in phases and args.small_dir:
            _, small = ordered(args.small_dir)
            run_workers(run, "small", args.small_dir, pick(small), ["--no-time", "--no-torch"],
                        45)
        if "full" in phases:
            # A case that hung or faulted at small size would again, at full size and cost.
            broken = {r["name"] for r in run.report["results"] if "error" in r}
            for name in pick(names):
                if name in broken:
                    run.add("full", {"name": name, "not_run": "failed at small size"})
            run_workers(run, "full", args.dir,
                        ["limits"] + [n for n in pick(names) if n not in broken] +
                        ["c_example"], [], 120)
        if "sanitizer" in phases and args.small_dir:
            sanitizer_phase(run, args.small_dir)
        if "profile" in phases:
            profile_phase(run, args.dir)
    run.report["gpu_after"] = gpu_state()
    run.finish()
    run.log(f"{'FAILED' if run.failed else 'all checks passed'} in "
            f"{time.time() - run.start:.0f} s; {os.path.join(run.out, 'results.md')}")
    return 1 if run.failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                      "build", "gpu-check"))
    parser.add_argument("--small-dir", default="", help="step 1's folder at --size small")
    parser.add_argument("--out", default="", help="results folder (default: --dir)")
    parser.add_argument("--backend", choices=("cupy", "cpu"), default="cupy")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--budget", type=float, default=0, help="seconds; 0: no limit")
    parser.add_argument("--phases", default="small,full,sanitizer,profile")
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--replay-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-time", dest="time", action="store_false", help=argparse.SUPPRESS)
    parser.add_argument("--no-torch", dest="torch", action="store_false", help=argparse.SUPPRESS)
    parser.add_argument("--no-reference", dest="reference", action="store_false",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    return worker(args) if args.worker else driver(args)


if __name__ == "__main__":
    sys.exit(main())
