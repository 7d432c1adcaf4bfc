#!/usr/bin/env bash
# The installed pe-mlir without its build tree: `cmake --install` into a
# prefix, the build tree moved out of the way (as if removed) and the prefix
# moved elsewhere (installs are relocatable); then the installed tools run,
# compile a kernel library, and a C program builds against the installed
# header and library and runs. Usage: test/Install/installed-tools.sh [build]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=$(mktemp -d)
away="$build.moved-away"

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test -f "$work/prefix/include/pe-c/Runtime.h"
if find "$work/prefix" -type d -empty | grep .; then
  echo "installed-tools: empty folders in the install (above)" >&2
  exit 1
fi

mv "$build" "$away"
trap 'mv "$away" "$build"; rm -rf "$work"' EXIT
mv "$work/prefix" "$work/moved"
prefix="$work/moved"

for tool in pe-opt pe-compile pe-lsp-server; do
  if ldd "$prefix/bin/$tool" | grep "not found"; then
    echo "installed-tools: $tool lacks a library (above)" >&2
    exit 1
  fi
done
"$prefix/bin/pe-opt" --version | grep "pe-mlir version"
"$prefix/bin/pe-compile" --version | grep "pe-mlir version"
"$prefix/bin/pe-opt" "$root/examples/c/rope.mlir" --pe-cpu-pipeline > /dev/null

"$prefix/bin/pe-compile" "$root/examples/c/rope.mlir" -o "$work/librope.so" \
  --header="$work/rope.h"
# The kernel library finds the installed runtime, not the build tree's.
ldd "$work/librope.so" | grep -F "$prefix/lib/libpe_runtime.so"
cc -std=c11 -Wall -Werror -I"$work" -I"$prefix/include" "$root/examples/c/rope_example.c" \
  -L"$work" -lrope -Wl,-rpath,"$work" -lm -o "$work/rope_example"
"$work/rope_example"
echo "installed-tools: ok"
