#!/usr/bin/env bash
# `pip install .` into a fresh virtual environment builds the native parts
# and installs the `pe` package with them; outside the source tree, the
# installed package compiles and calls a kernel, raises KernelError for bad
# input, and reports the version of its pe-compile. The native parts come
# from the existing ./build (no build isolation, build-dir=build), which the
# CMake build of the package then only relinks.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv="$root/build/package-venv"
rm -rf "$venv"
# The package's configure run sets its own interpreter and install prefix in
# ./build's cache: put the build's back afterwards.
cached() { sed -n "s/^$1:[A-Z]*=//p" "$root/build/CMakeCache.txt"; }
python=$(cached Python3_EXECUTABLE)
prefix=$(cached CMAKE_INSTALL_PREFIX)
trap 'cmake "$root/build" -DPython3_EXECUTABLE="$python" -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DPE_PYTHON_PACKAGE=OFF > /dev/null' EXIT
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q scikit-build-core==1.1.2
"$venv/bin/python" -m pip install -q --no-build-isolation -C build-dir=build "$root"
cd "$(mktemp -d)"
"$venv/bin/python" - "$root/examples/c/rope.mlir" <<'PY'
import subprocess
import sys

import numpy as np

import pe
from pe import runner

assert runner.PE_COMPILE.startswith(pe.__path__[0]), runner.PE_COMPILE
version = subprocess.run([runner.PE_COMPILE, "--version"], capture_output=True, text=True).stdout
assert f"pe-mlir version {pe.__version__}" in version, version
module = runner.compile(open(sys.argv[1]).read())
x = np.ones((1, 8, 3, 64), np.float32)
(y,) = module.call("rope", x, np.arange(3))
assert y.shape == x.shape and np.isfinite(y).all()
try:
    module.call("rope", x, np.arange(2))
except runner.KernelError as error:
    assert error.status == 1, error
else:
    raise AssertionError("no KernelError")
print(f"python-package: pe-mlir {pe.__version__} ok")
PY
# The installed `pe` command reads a model's config with the package's pe-compile.
"$venv/bin/pe" emit "$root/examples/configs/llama-3.1-8b.json" --seq-len 4 > emitted.mlir
grep -q "causal rope(#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3" emitted.mlir
echo "python-package: the pe command ok"
