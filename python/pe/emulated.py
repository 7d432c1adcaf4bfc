"""Run libraries under qemu-user: compiled for another architecture, or for
another CPU of this one.

`runner.compile(ir, ["--mtriple=aarch64-linux-gnu", ...])` on an x86-64 machine
returns an `EmulatedModule`: the same `call(name, *arrays, out=...)` as
`runner.Module`, but every call is made by `pe-call --serve` (tools/pe-call,
built for the target by the cross toolchain), one process under `qemu-<arch>`
per module that makes all of its calls, with the tensors passed through
files. Numerics are the target's own; timing is meaningless.

    mod = runner.compile(ir, ["--mtriple=aarch64-linux-gnu", "--mcpu=neoverse-n1"])
    (y,) = mod.call("rope", x, positions)

qemu runs `-cpu max` (every AArch64 extension); a library built for a
fixed SVE vector length (`--sve-vector-bits=N`) runs with that length
(`sve-default-vector-length`), any other with qemu's default of 512 bits.
`PE_QEMU_CPU` replaces the `-cpu` value.

`runner.compile(ir, ["--mcpu=znver2"], qemu_cpu="EPYC-Rome")` runs a library of
this machine's architecture on an emulated CPU model (`qemu-x86_64 -cpu help`
lists them; EPYC-Rome is AMD Zen 2: AVX2, FMA, F16C, no AVX-512), with this
machine's pe-call: an instruction that CPU lacks faults (SIGILL) instead of
running on the wider CPU underneath. `compile_as_host(model, ...)` runs
pe-compile itself on that model, so that what it detects as the host, and
the code it picks for it, are that CPU's.
"""

from __future__ import annotations

import os
import platform
import re
import resource
import shutil
import struct
import subprocess
import tempfile
import threading
import weakref
from typing import List, Optional, Sequence

import numpy as np

from pe import runner

# Debian's multiarch name of each architecture and where its libc lives.
_SYSROOT = "/usr/{arch}-linux-gnu"


def host_arch() -> str:
    machine = platform.machine()
    return {"AMD64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def triple_arch(args: Sequence[str]) -> Optional[str]:
    """The architecture `--mtriple=...` in pe-compile arguments names, if any."""
    for arg in args:
        if arg.startswith("--mtriple="):
            return arg.split("=", 1)[1].split("-", 1)[0]
    return None


def sve_vector_bits(args: Sequence[str]) -> int:
    """The SVE vector length `--sve-vector-bits=N` in pe-compile arguments
    fixes (0: none)."""
    for arg in args:
        if arg.startswith("--sve-vector-bits="):
            return int(arg.split("=", 1)[1])
    return 0


def qemu(arch: str) -> Optional[str]:
    """The qemu-user emulator of `arch` (Debian's qemu-user), or None."""
    return shutil.which(f"qemu-{arch}") or shutil.which(f"qemu-{arch}-static")


def pe_call(arch: str) -> str:
    """pe-call built for `arch`, next to that architecture's pe runtime (this
    machine's beside pe-compile)."""
    if arch == host_arch():
        return os.path.join(os.path.dirname(runner.PE_COMPILE), "pe-call")
    build = os.path.dirname(os.path.dirname(runner.PE_COMPILE))
    return os.path.join(build, "lib", f"{arch}-linux-gnu", "pe-call")


def _qemu_version(arch: str) -> tuple:
    """qemu-<arch>'s version as a tuple of ints ((0,) when unreadable)."""
    proc = subprocess.run([qemu(arch), "--version"], capture_output=True, text=True)
    match = re.search(r"version (\d+)\.(\d+)", proc.stdout)
    return tuple(int(x) for x in match.groups()) if match else (0,)


def missing_cpu_model() -> Optional[str]:
    """Why libraries of this machine cannot run on an emulated x86 CPU model
    here (None when they can): the models (`qemu-x86_64 -cpu EPYC-Rome`, ...)
    are x86's, and qemu translates AVX2 from version 7.2 on."""
    if host_arch() != "x86_64":
        return f"emulated x86 CPU models need an x86-64 machine (this one is {host_arch()})"
    reason = missing("x86_64")
    if reason:
        return reason
    if _qemu_version("x86_64") < (7, 2):
        return "qemu-x86_64 before 7.2 does not translate AVX2"
    return None


def missing(arch: str) -> Optional[str]:
    """Why libraries for `arch` cannot run here under qemu (None when they can)."""
    if qemu(arch) is None:
        return f"qemu-{arch} is not installed (Debian: apt-get install qemu-user)"
    if arch != host_arch() and not os.path.isdir(_SYSROOT.format(arch=arch)):
        return f"no {arch} libc (Debian: apt-get install libc6-dev-{_DEBIAN_ARCH.get(arch, arch)}-cross)"
    if not os.access(pe_call(arch), os.X_OK):
        if arch == host_arch():
            return f"{pe_call(arch)} is missing (build pe-mlir)"
        return (f"{pe_call(arch)} is missing (pe-mlir builds it where the cross compiler "
                f"{arch}-linux-gnu-gcc was found at configure time)")
    return None


_DEBIAN_ARCH = {"aarch64": "arm64"}

_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "index": 8}


def _write_tensor(path: str, array: np.ndarray) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack(f"<{2 + array.ndim}q", array.ndim, array.dtype.itemsize,
                            *array.shape))
        f.write(np.ascontiguousarray(array).tobytes())


def _read_tensor(path: str, element: str) -> np.ndarray:
    dtype = np.dtype(runner._NUMPY[element])
    with open(path, "rb") as f:
        rank, _ = struct.unpack("<2q", f.read(16))
        shape = struct.unpack(f"<{rank}q", f.read(8 * rank)) if rank else ()
        data = f.read()
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


class EmulatedModule:
    """A library run under qemu-user (another architecture, or another CPU
    model of this one): `call` as `runner.Module.call`."""

    def __init__(self, arch: str, library: str, interface: str, owner=None, sve_bits: int = 0,
                 cpu: Optional[str] = None):
        reason = missing(arch)
        if reason:
            raise RuntimeError(f"cannot run {arch} code here: {reason}")
        self.arch, self.library = arch, library
        self._last_error, self.entries = runner.read_interface(interface)
        self._owner = owner
        self._cpu = cpu or os.environ.get("PE_QEMU_CPU") or (
            f"max,sve-default-vector-length={sve_bits // 8}" if sve_bits else "max")
        self._lock = threading.Lock()
        self._server: Optional[_Server] = None   # started by the first call

    @property
    def functions(self) -> List[str]:
        return [n for n, e in self.entries.items() if e.outputs == 0]

    def call(self, name: str, *args, out=None) -> List[np.ndarray]:
        if name not in self.entries:
            raise KeyError(f"the library has no function {name!r}; it has "
                           f"{sorted(self.functions)}")
        outs = () if out is None else ([out] if isinstance(out, np.ndarray) else list(out))
        entry = self.entries[name if out is None else name + "_into"]
        inputs = entry.arguments[:len(entry.arguments) - entry.outputs]
        if len(args) != len(inputs):
            raise TypeError(f"{entry.name} takes {len(inputs)} arguments, got {len(args)}")
        if len(outs) != entry.outputs:
            raise TypeError(f"{name} writes {entry.outputs} outputs, got {len(outs)}")
        with tempfile.TemporaryDirectory(prefix="pe-call-") as folder:
            spec = []
            for i, t in enumerate(entry.results):
                if not isinstance(t, runner.TensorType):
                    raise TypeError(f"{entry.name}: scalar results are not returned "
                                    f"through pe-call")
                spec.append(f"result:{t.rank}:{_BYTES[t.element]}:{folder}/r{i}")
            for i, (value, t) in enumerate(zip(args, inputs)):
                where = f"{entry.name}: argument {i}"
                if isinstance(t, runner.TensorType):
                    array = runner._checked_array(value, t, where)
                    runner.dense_descriptor(0, array.shape, t, where)  # shape checks
                    _write_tensor(f"{folder}/a{i}", array)
                    spec.append(f"in:{folder}/a{i}")
                else:
                    spec.append(f"int:{runner._checked_scalar(value, t, where)}")
            for i, (array, t) in enumerate(zip(outs, entry.arguments[len(inputs):])):
                if (not isinstance(array, np.ndarray) or array.dtype != np.dtype(runner._NUMPY[t.element])
                        or not array.flags.c_contiguous or not array.flags.writeable):
                    raise TypeError(f"{entry.name}: output {i}: expected a writeable "
                                    f"C-contiguous array of {np.dtype(runner._NUMPY[t.element])}")
                _write_tensor(f"{folder}/o{i}", array)
                spec.append(f"out:{folder}/o{i}")
            self._run(entry, spec)
            results = [_read_tensor(f"{folder}/r{i}", t.element)
                       for i, t in enumerate(entry.results)]
            for i, (array, t) in enumerate(zip(outs, entry.arguments[len(inputs):])):
                array[...] = _read_tensor(f"{folder}/o{i}", t.element)
        return list(outs) + results

    def _run(self, entry: runner.Entry, spec: List[str]) -> None:
        """One call through the module's pe-call server, started at the first
        call and again after a call that ended it (a fault, a bad argument)."""
        with self._lock:
            if self._server is None:
                self._server = _Server([*_qemu_command(self.arch, self._cpu), pe_call(self.arch),
                                        "--serve", self.library, self._last_error])
                self._stop = weakref.finalize(self, _Server.stop, self._server)
            server = self._server
            try:
                answer = server.call([entry.symbol, *spec])
            except BaseException:
                # Interrupted or unreadable: the process may still answer
                # this call, so it makes no other.
                answer = None
                server.process.kill()
                self._server = None
                self._stop.detach()
                _Server.stop(server)
                raise
            if answer is None:
                self._server = None
                self._stop.detach()
                code, stderr = server.ended()
                raise RuntimeError(f"{entry.name} under qemu-{self.arch} -cpu {self._cpu} "
                                   f"failed (exit {code}): {stderr}")
        status, message = answer
        if status != 0:
            raise runner.KernelError(entry.name, status, message.strip())


class _Server:
    """A `pe-call --serve` process: requests of NUL-terminated fields on its
    stdin, answers `status N BYTES` + the message on its stdout, stderr in a
    file (read once the process has ended)."""

    def __init__(self, command: List[str]):
        self._stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._stderr, preexec_fn=_no_core_files)

    def call(self, fields: List[str]):
        """(status, message), or None when the process ended instead of answering."""
        request = b"".join(os.fsencode(f) + b"\0" for f in fields) + b"\0"
        try:
            self.process.stdin.write(request)
            self.process.stdin.flush()
        except BrokenPipeError:
            return None
        line = self.process.stdout.readline()
        if not line.startswith(b"status "):
            return None
        _, status, size = line.split()
        return int(status), self.process.stdout.read(int(size)).decode(errors="replace")

    def ended(self):
        """The exit status and stderr (qemu's CPUID notes left out) of the ended process."""
        self.stop(self)
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace")
        return self.process.returncode, _without_cpuid_notes(text)

    @staticmethod
    def stop(server: "_Server") -> None:
        """Ends the process: the end of its input, then a kill if it does not stop."""
        try:
            server.process.stdin.close()
        except OSError:
            pass
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


def _no_core_files() -> None:
    """In a child before exec: no core file (qemu-user writes one in the
    working folder when the emulated program dies of a signal, as a library
    with an instruction its CPU lacks does)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _qemu_command(arch: str, cpu: str) -> List[str]:
    """qemu-user for `arch` on CPU model `cpu`, with the libc of `arch` where
    that is not this machine's."""
    sysroot = [] if arch == host_arch() else ["-L", _SYSROOT.format(arch=arch)]
    return [qemu(arch), *sysroot, "-cpu", cpu]


def _without_cpuid_notes(stderr: str) -> str:
    """A process's stderr without qemu's notes on CPUID bits its translator does
    not model (printed for every model that names one)."""
    return "\n".join(line for line in stderr.splitlines()
                     if "TCG doesn't support requested feature" not in line).strip()


def _stderr(proc: subprocess.CompletedProcess) -> str:
    return _without_cpuid_notes(proc.stderr)


def pe_compile_as_host(cpu: str, args: Sequence[str],
                       timeout: float | None = None) -> subprocess.CompletedProcess:
    """pe-compile `args` run under `qemu-<this arch> -cpu cpu`: with no target
    named in `args`, the host it detects (CPU name, features, the schedule
    chosen from them) is the emulated CPU, as on such a machine. About 15
    times slower than natively. Raises RuntimeError with pe-compile's
    diagnostics when it fails."""
    arch = host_arch()
    reason = missing(arch)
    if reason:
        raise RuntimeError(f"cannot emulate {cpu} here: {reason}")
    command = [*_qemu_command(arch, cpu), runner.PE_COMPILE, *args]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=_no_core_files)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"pe-compile under qemu did not finish within {timeout} s") from None
    if proc.returncode != 0:
        raise RuntimeError(f"pe-compile under qemu -cpu {cpu} failed:\n{_stderr(proc)}")
    return proc


def compile_as_host(cpu: str, ir: str, extra_args: Sequence[str] = (),
                    timeout: float | None = None) -> "EmulatedModule":
    """`runner.compile` as on a machine with CPU model `cpu`: pe-compile run
    there (pe_compile_as_host), and the library run on the same model."""
    folder = tempfile.TemporaryDirectory(prefix="pe-")
    src, lib, interface = (os.path.join(folder.name, n)
                           for n in ("module.mlir", "libmodule.so", "module.json"))
    with open(src, "w") as f:
        f.write(ir)
    pe_compile_as_host(cpu, [src, "--emit=shared", "-o", lib, f"--interface={interface}",
                             *extra_args], timeout)
    return EmulatedModule(host_arch(), lib, interface, owner=folder, cpu=cpu)


def print_target_as_host(cpu: str) -> str:
    """`pe-compile --print-target` on the emulated CPU model: the target
    description and schedule pe-compile picks as that machine's host."""
    return pe_compile_as_host(cpu, ["--print-target"]).stdout
