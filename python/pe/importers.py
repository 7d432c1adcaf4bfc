"""IR from real importers, made parseable by MLIR 22 for ``pe-compile --raise``.

IREE's ``iree-compile --compile-to=input`` (after an ``iree-turbine`` export of a
PyTorch module) leaves the model as linalg/tensor/arith/math on tensors, wrapped
in IREE's ABI: ``util.func`` with ``!hal.buffer_view`` arguments imported by
``hal.tensor.import``, weights in ``util.global`` with ``dense_resource`` blobs,
and the result exported through ``hal.tensor.barrier``/``hal.tensor.export``.
:func:`iree_input_to_mlir` is the whole clean-up:

* the ``@main$async`` body becomes ``func.func @main`` whose arguments are the
  imported tensors (same SSA names, same order);
* every ``util.global.load`` of a global initialised by a ``dense_resource``
  becomes an ``arith.constant`` of that resource (weights become constants);
* ``hal.tensor.barrier``/``export`` + ``util.return`` become ``func.return`` of
  the barrier's tensor; the synchronous ``@main`` wrapper is dropped;
* the resource blobs, which ``iree-compile`` does not print, are taken from the
  exported module (``iree-turbine``'s ``save_mlir`` output).

Anything else in the body (a ``flow``/``util`` op the input pipeline left) is a
:class:`ValueError`, never silently dropped.

JAX models take the StableHLO path: ``jax.export`` writes the jitted function
as StableHLO, ``iree-compile --iree-input-type=stablehlo --compile-to=input``
converts it to linalg on tensors (IREE's StableHLO input conversion), and
:func:`stablehlo_input_to_mlir` makes its ``util.func`` a ``func.func``
(:func:`stablehlo_input_ir` does all three).
"""

from __future__ import annotations

import re

_IMPORT = re.compile(
    r"^\s*(%[\w.$-]+) = hal\.tensor\.import(?: wait\(%\w+\))? => (%\w+) : "
    r"!hal\.buffer_view -> (tensor<[^>]*>)")
_GLOBAL = re.compile(r"^\s*util\.global private (@[\w.$\"-]+) = (dense_resource<[^>]+>) : "
                     r"(tensor<[^>]*>)")
_LOAD = re.compile(r"^(\s*)(%[\w.$-]+) = util\.global\.load (@[\w.$\"-]+) : (tensor<[^>]*>)")
_BARRIER = re.compile(r"^\s*(%[\w.$-]+) = hal\.tensor\.barrier join\((%[\w.$-]+) : "
                      r"(tensor<[^>]*>)\)")
_RESOURCES = re.compile(r"\{-#.*#-\}", re.S)


def _async_body(text: str) -> list[str]:
    lines = text.splitlines()
    for start, line in enumerate(lines):
        if re.match(r"^\s*util\.func public @main\$async\(", line):
            break
    else:
        raise ValueError("no util.func @main$async: not iree-compile --compile-to=input output")
    indent = len(lines[start]) - len(lines[start].lstrip())
    for end in range(start + 1, len(lines)):
        if lines[end].strip() == "}" and len(lines[end]) - 1 - len(lines[end].lstrip()) < indent + 1:
            return lines[start + 1:end]
    raise ValueError("unterminated @main$async")


def iree_input_to_mlir(input_text: str, exported_text: str, name: str = "main") -> str:
    """The body of IREE's input-level ``@main$async`` as a plain MLIR module."""
    globals_ = {m.group(1): (m.group(2), m.group(3))
                for m in map(_GLOBAL.match, input_text.splitlines()) if m}
    arguments, body, result = [], [], None
    for line in _async_body(input_text):
        if not line.strip():
            continue
        if m := _IMPORT.match(line):
            arguments.append(f"{m.group(1)}: {m.group(3)}")
        elif m := _LOAD.match(line):
            if m.group(3) not in globals_:
                raise ValueError(f"global {m.group(3)} has no dense_resource initializer")
            value, _ = globals_[m.group(3)]
            body.append(f"{m.group(1)}{m.group(2)} = arith.constant {value} : {m.group(4)}")
        elif m := _BARRIER.match(line):
            result = (m.group(2), m.group(3))
        elif "hal.tensor.export" in line or "util.return" in line:
            continue
        elif re.search(r"\b(hal|util|flow|stream|iree_\w+)\.", line):
            raise ValueError(f"an IREE op the clean-up does not know: {line.strip()}")
        else:
            body.append(line)
    if result is None:
        raise ValueError("no hal.tensor.barrier: the result of @main$async is unknown")
    resources = _RESOURCES.search(exported_text)
    out = [f"func.func @{name}({', '.join(arguments)}) -> {result[1]} {{"]
    out += body
    out += [f"  return {result[0]} : {result[1]}", "}"]
    if resources:
        out.append(resources.group(0))
    return "\n".join(out) + "\n"


def iree_input_ir(module, args, name: str = "main") -> str:
    """``module(*args)`` (a torch.nn.Module) as linalg-on-tensors IR: exported by
    iree-turbine, lowered by ``iree-compile --compile-to=input``, cleaned up by
    :func:`iree_input_to_mlir`. Needs the optional extras (iree-turbine)."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    from iree.turbine import aot

    compiler = os.path.join(os.path.dirname(sys.executable), "iree-compile")
    if not os.path.exists(compiler):
        compiler = shutil.which("iree-compile") or compiler
    with tempfile.TemporaryDirectory(prefix="pe-iree-") as tmp:
        exported = os.path.join(tmp, "exported.mlir")
        lowered = os.path.join(tmp, "input.mlir")
        aot.export(module, *args).save_mlir(exported)
        subprocess.run([compiler, "--compile-to=input", exported, "-o", lowered], check=True)
        with open(lowered) as f_in, open(exported) as f_ex:
            return iree_input_to_mlir(f_in.read(), f_ex.read(), name)


_LOC_DEF = re.compile(r"^#loc.*\n", re.M)
_LOC_USE = re.compile(r" loc\((?:[^()]|\([^()]*\))*\)")


def stablehlo_input_to_mlir(input_text: str, name: str = "main") -> str:
    """IREE's input-level module of a StableHLO program as a plain MLIR
    function: locations dropped, ``util.func public @main`` (plain tensor
    arguments) as ``func.func @NAME``, ``util.return`` as ``return``. Any
    other IREE op is a :class:`ValueError`."""
    text = _LOC_USE.sub("", _LOC_DEF.sub("", input_text))
    if "util.func public @main(" not in text:
        raise ValueError("no util.func @main: not iree-compile --compile-to=input output")
    text = text.replace("util.func public @main(", f"func.func @{name}(")
    text = text.replace("util.return", "return")
    for line in text.splitlines():
        if re.search(r"\b(hal|util|flow|stream|iree_\w+)\.", line):
            raise ValueError(f"an IREE op the clean-up does not know: {line.strip()}")
    return text


def stablehlo_input_ir(function, args, name: str = "main") -> str:
    """``jax.jit(function)`` at the shapes of ``args`` (arrays or
    ``jax.ShapeDtypeStruct``) as linalg-on-tensors IR: ``jax.export`` to
    StableHLO, ``iree-compile --iree-input-type=stablehlo --compile-to=input``,
    :func:`stablehlo_input_to_mlir`. Needs the optional extras (jax)."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    import jax
    from jax import export

    compiler = os.path.join(os.path.dirname(sys.executable), "iree-compile")
    if not os.path.exists(compiler):
        compiler = shutil.which("iree-compile") or compiler
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    exported = export.export(jax.jit(function))(*shapes)
    with tempfile.TemporaryDirectory(prefix="pe-jax-") as tmp:
        source = os.path.join(tmp, "stablehlo.mlir")
        lowered = os.path.join(tmp, "input.mlir")
        with open(source, "w") as f:
            f.write(exported.mlir_module())
        subprocess.run([compiler, "--iree-input-type=stablehlo", "--compile-to=input", source,
                        "-o", lowered], check=True)
        with open(lowered) as f:
            return stablehlo_input_to_mlir(f.read(), name)
