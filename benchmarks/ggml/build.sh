#!/usr/bin/env bash
# Builds ggml's CPU backend (the ggml bundled with llama-cpp-python, pinned
# below, from PyPI) and the benchmark contender ggml_attention into
# build/ggml (about 3 minutes on 2 cores). `benchmarks/run.py` then times
# ggml's RoPE + flash attention beside pe's kernels. Optional: nothing else
# needs it. Run again at no cost.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=0.3.36
out=build/ggml
if [ -x "$out/ggml_attention" ] && [ "$out/ggml_attention" -nt benchmarks/ggml/ggml_attention.c ]; then
  echo "$out/ggml_attention"
  exit 0
fi
mkdir -p "$out"
if [ ! -d "$out/src/vendor/llama.cpp/ggml" ]; then
  .venv/bin/python -m pip download -q --no-deps --no-binary :all: \
    "llama-cpp-python==$VERSION" -d "$out"
  mkdir -p "$out/src"
  tar xzf "$out/llama_cpp_python-$VERSION.tar.gz" -C "$out/src" --strip-components=1
fi
# The sdist leaves out the pkg-config template that ggml's CMake configures.
touch "$out/src/vendor/llama.cpp/ggml/ggml.pc.in"
# ggml as llama.cpp builds it for this CPU (GGML_NATIVE), OpenMP threads.
cmake -G Ninja -S "$out/src/vendor/llama.cpp/ggml" -B "$out/build" -DCMAKE_BUILD_TYPE=Release \
  -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF -DGGML_BUILD_TESTS=OFF \
  -DGGML_BUILD_EXAMPLES=OFF >/dev/null
ninja -C "$out/build" -j2 ggml-cpu ggml-base >/dev/null
inc="$out/src/vendor/llama.cpp/ggml/include"
libs=$(find "$out/build" -name "libggml-cpu.a" -o -name "libggml-base.a" | sort -r)
cc -O2 -std=c11 -I"$inc" benchmarks/ggml/ggml_attention.c $libs -lstdc++ -lm -fopenmp \
  -lpthread -o "$out/ggml_attention"
echo "$out/ggml_attention"
