"""GPU check, step 1 (on the build machine, no GPU needed): compile every case for the GPU.

    .venv/bin/python benchmarks/gpu/prepare.py [--out build/gpu-check] [--size full|small]
                                                 [--chip sm_90a] [--only PREFIX,...]
                                                 [--kernels-only]

Writes into --out, for each case of cases.py: its IR, the kernels (a cubin when a CUDA
toolkit is found, else PTX, which the driver compiles when it loads it) and their manifest,
and the function as a GPU library with the CPU build's C interface (`<case>.so`);
`ptxas -v` of every kernel (registers, shared memory, spills: a spill fails the step); and
the C example built as a GPU library (`pe-compile --target=gpu --emit=shared`) with its C
program and the two runtimes it loads, so that step 2 can call it as a C program would.
`--only` keeps the cases whose names start with one of the prefixes; `--kernels-only`
writes the kernels, manifests and `ptxas -v` report alone (no libraries, no C example: a
check of the kernels, not a folder for step 2).
`index.json` lists it all. The folder stays under 64 MiB: inputs are generated in step 2
from the same seed, not stored. Step 2 is `check.py` on a machine with a GPU, from this
folder and the repository's python/ only (no LLVM there).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import cases as case_list  # noqa: E402

PE_COMPILE = os.environ.get("PE_COMPILE", os.path.join(ROOT, "build", "bin", "pe-compile"))
LIB_DIR = os.path.join(ROOT, "build", "lib")
MAX_BYTES = 64 << 20


def find_toolkit():
    """The CUDA toolkit folder (with bin/ptxas), as pe-compile looks for it, or None."""
    candidates = [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")]
    ptxas = shutil.which("ptxas")
    if ptxas:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(ptxas))))
    candidates.append("/usr/local/cuda")
    for c in candidates:
        if c and os.access(os.path.join(c, "bin", "ptxas"), os.X_OK):
            return c
    return None


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    return proc


def ptxas_report(ptxas: str, ptx: str, chip: str) -> dict:
    """Registers, shared memory and spills of every kernel, from `ptxas -v`."""
    out = run([ptxas, "-v", f"-arch={chip}", ptx, "-o", os.devnull]).stderr
    kernels, name = {}, None
    for line in out.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            name = m.group(1)
            kernels[name] = {}
            continue
        if name is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m:
            kernels[name].update(stack=int(m.group(1)), spill_stores=int(m.group(2)),
                                 spill_loads=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            kernels[name]["registers"] = int(m.group(1))
            smem = re.search(r"(\d+) bytes smem", line)
            kernels[name]["shared_bytes"] = int(smem.group(1)) if smem else 0
    return kernels


def build_c_example(out: str, chip: str, toolkit) -> dict:
    """examples/c as a GPU library + its unchanged C program, runnable from `out`."""
    lib = os.path.join(out, "librope.so")
    cmd = [PE_COMPILE, "--target=gpu", f"--chip={chip}", "--emit=shared",
           os.path.join(ROOT, "examples", "c", "rope.mlir"), "-o", lib,
           "--header", os.path.join(out, "rope.h")]
    if toolkit:
        cmd.append(f"--cuda-toolkit={toolkit}")
    run(cmd)
    exe = os.path.join(out, "rope_example")
    cc = shutil.which("cc") or shutil.which("clang-22") or shutil.which("clang")
    run([cc, "-std=c11", "-O2", f"-I{out}", os.path.join(ROOT, "examples", "c", "rope_example.c"),
         f"-L{out}", "-lrope", "-Wl,-rpath,$ORIGIN", "-lm", "-o", exe])
    for runtime in ("libpe_runtime.so", "libpe_cuda_runtime.so"):
        shutil.copy(os.path.join(LIB_DIR, runtime), os.path.join(out, runtime))
    return {"library": "librope.so", "program": "rope_example"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "gpu-check"))
    parser.add_argument("--size", choices=("full", "small"), default="full")
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--only", default="",
                        help="comma-separated prefixes of the case names to prepare")
    parser.add_argument("--kernels-only", action="store_true",
                        help="kernels, manifests and ptxas -v only (no libraries)")
    args = parser.parse_args()
    prefixes = tuple(p for p in args.only.split(",") if p)

    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    toolkit = find_toolkit()
    ptxas = os.path.join(toolkit, "bin", "ptxas") if toolkit else None
    index = {"chip": args.chip, "size": args.size, "toolkit": toolkit, "cases": [],
             "kernels": {}}
    for case in case_list.cases(args.size):
        if prefixes and not case.name.startswith(prefixes):
            continue
        stem = os.path.join(args.out, case.name)
        with open(stem + ".mlir", "w") as f:
            f.write(case.ir)
        base = [PE_COMPILE, "--target=gpu", f"--chip={args.chip}", stem + ".mlir"] + case.flags
        run(base + ["--emit=ptx", "-o", stem + ".ptx", f"--manifest={stem}.json"])
        binary = case.name + ".ptx"
        if toolkit:
            run(base + ["--emit=cubin", f"--cuda-toolkit={toolkit}", "-o", stem + ".cubin"])
            binary = case.name + ".cubin"
            report = ptxas_report(ptxas, stem + ".ptx", args.chip)
            spilled = {k: v for k, v in report.items() if v.get("spill_stores") or v.get("spill_loads")}
            if spilled:
                raise SystemExit(f"{case.name}: kernels spill: {spilled}")
            index["kernels"].update(report)
        # The same function as a GPU library with the C interface (host buffers).
        library = [f"--cuda-toolkit={toolkit}"] if toolkit else []
        if not args.kernels_only:
            run(base + library + ["--emit=shared", "-o", stem + ".so",
                                  f"--interface={stem}.interface.json"])
        with open(stem + ".json") as f:
            manifest = json.load(f)
        fn = manifest["functions"][0]
        index["cases"].append({"name": case.name, "binary": binary,
                               "manifest": case.name + ".json",
                               "library": None if args.kernels_only else case.name + ".so",
                               "replayable": fn["replayable"],
                               "kernels": len(manifest["kernels"])})
        steps = f"{len(fn['steps'])} steps" if fn["replayable"] else "not replayable"
        print(f"{case.name}: {len(manifest['kernels'])} kernels, {steps}")
    if not args.kernels_only:
        index["c_example"] = build_c_example(args.out, args.chip, toolkit)
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    total = sum(os.path.getsize(os.path.join(args.out, f)) for f in os.listdir(args.out))
    if total > MAX_BYTES:
        raise SystemExit(f"{args.out} holds {total} bytes, more than {MAX_BYTES}")
    print(f"{len(index['cases'])} cases in {args.out} ({total / 2**20:.1f} MiB, "
          f"{'cubin, ptxas -v: no spills' if toolkit else 'PTX only: no CUDA toolkit found'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
