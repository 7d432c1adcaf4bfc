"""pe command line: a model's config.json to IR, kernels, checks and timings.

    python -m pe emit    CONFIG [--seq-len N] [--kv-len M] [--batch B] [--dtype f32]
    python -m pe compile CONFIG -o OUT [--target cpu|gpu] [--emit shared|obj|ptx|cubin|...]
    python -m pe run     CONFIG [--seq-len N] [--offset P]   # random inputs vs the float64 reference
    python -m pe bench   CONFIG [--seq-len N] [--repeat R]   # median time per kind of layer

Latent attention (DeepSeek-V2/V3, MiniCPM3) takes --shared-key (k without the
rotated block, which is the functions' last argument, k_pe) or --absorbed (the
absorbed form: q and the compressed cache).
`run` times one cold call per kind (the first after loading); `bench` prints
the median of R warm calls. On a terminal, stderr shows what is compiling
(with the seconds elapsed) and a progress bar, each cleared before results.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time

import numpy as np

from . import config as pe_config
from . import runner

_TOLERANCE = {"f32": 1e-4, "f16": 2e-2, "bf16": 6e-2}


def _clear_line() -> None:
    """Clears the status line on stderr (only on a terminal), so that results
    printed next start on a clean line."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _progress(done: int, total: int, label: str) -> None:
    """A one-line progress bar on stderr (only on a terminal), cleared once
    complete."""
    if not sys.stderr.isatty():
        return
    if done >= total:
        _clear_line()
        return
    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    sys.stderr.flush()


@contextlib.contextmanager
def _working(label: str):
    """`label` and the seconds elapsed on stderr while the block runs (only on
    a terminal); the line is cleared afterwards."""
    if not sys.stderr.isatty():
        yield
        return
    done = threading.Event()
    start = time.perf_counter()

    def tick():
        while not done.wait(0.2):
            sys.stderr.write(f"\r{label} {time.perf_counter() - start:.1f} s")
            sys.stderr.flush()
    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        _clear_line()


def _case(model: pe_config.ModelConfig, kind: pe_config.AttentionKind, args, kv: int, rng):
    """One call of `kind`'s function on random inputs (the queries at the positions of
    the last --seq-len of `kv` keys from --offset): its arguments, its float64 reference
    (a function) and the width of its result's rows. With --shared-key, k without the
    rotated block and the block k_pe last; with --absorbed, q and the compressed cache."""
    batch, seq = args.batch, args.seq_len

    def tensor(heads, length, dim):
        x = rng.standard_normal((batch, heads, length, dim)).astype(np.float32)
        return runner.bf16_array(x) if args.dtype == "bf16" else x.astype(
            np.float16 if args.dtype == "f16" else np.float32)
    kp = np.broadcast_to(np.arange(args.offset, args.offset + kv, dtype=np.int64),
                         (batch, kv)).copy()
    qp = kp[:, kv - seq:].copy()
    f32 = runner.to_float32
    if args.absorbed:
        width = model.kv_lora_rank + model.shared_key_dim
        q, cache = tensor(model.num_attention_heads, seq, width), tensor(1, kv, width)
        return ((q, cache, qp, kp),
                lambda: model.absorbed_reference(kind, f32(q), f32(cache), qp, kp),
                model.kv_lora_rank)
    shared = model.shared_key_dim if args.shared_key else 0
    heads = kind.num_key_value_heads
    q = tensor(model.num_attention_heads, seq, model.head_dim)
    k = tensor(heads, kv, model.head_dim - shared)
    v = tensor(heads, kv, model.value_head_dim)
    k_pe = (tensor(1, kv, shared),) if shared else ()
    extra = _sinks(model, kind, rng, qp, kp)
    return ((q, k, v, qp, kp, *extra, *k_pe),
            lambda: kind.reference(f32(q), f32(k), f32(v), qp, kp, *extra,
                                   shared_key=f32(k_pe[0]) if k_pe else None),
            model.value_head_dim)


def _shapes(args):
    return dict(seq_len=args.seq_len, kv_len=args.kv_len, batch=args.batch, dtype=args.dtype,
                shared_key=args.shared_key, absorbed=args.absorbed)


def cmd_emit(args) -> int:
    sys.stdout.write(pe_config.read(args.config).ir(**_shapes(args)))
    return 0


def cmd_compile(args) -> int:
    model = pe_config.read(args.config)
    with _working(f"compiling {len(model.kinds)} kind(s) of layer"):
        model.build(args.output, target=args.target, emit=args.emit, **_shapes(args))
    print(f"wrote {args.output} ({', '.join(k.function for k in model.kinds)})")
    return 0


def _compiled(args):
    kv = args.kv_len or args.seq_len
    if args.seq_len < 1 or kv < args.seq_len or args.batch < 1:
        raise ValueError(f"--seq-len ({args.seq_len}) and --batch must be >= 1 and --kv-len "
                         f"({kv}) >= --seq-len: the queries are the last keys")
    model = pe_config.read(args.config)
    start = time.perf_counter()
    with _working(f"compiling {len(model.kinds)} kind(s) of layer"):
        module = model.compile(seq_len=args.seq_len, kv_len=kv, batch=args.batch,
                               dtype=args.dtype, shared_key=args.shared_key,
                               absorbed=args.absorbed)
    return model, module, kv, time.perf_counter() - start


def cmd_run(args) -> int:
    model, module, kv, compile_s = _compiled(args)
    rng = np.random.default_rng(args.seed)
    print(f"{model.model_type}: {len(model.kinds)} kind(s) of layer, compiled in {compile_s:.2f} s; "
          f"B={args.batch} Sq={args.seq_len} Skv={kv} {args.dtype}, positions from {args.offset}")
    worst = 0.0
    for i, kind in enumerate(model.kinds):
        _progress(i, len(model.kinds), "checking")
        call, reference, _ = _case(model, kind, args, kv, rng)
        start = time.perf_counter()
        (out,) = module.call(kind.function, *call)
        seconds = time.perf_counter() - start
        error = float(np.abs(runner.to_float32(out) - reference()).max())
        worst = max(worst, error)
        _clear_line()
        print(f"  {kind.function}: max |pe - float64 reference| = {error:.3g}; "
              f"{1e3 * seconds:.2f} ms (one cold call; `bench` gives medians)")
    _progress(len(model.kinds), len(model.kinds), "checking")
    ok = worst <= _TOLERANCE[args.dtype]
    print("OK" if ok else f"FAILED: error above {_TOLERANCE[args.dtype]}")
    return 0 if ok else 1


def _sinks(model, kind, rng, qp=None, kp=None) -> tuple:
    """The arguments after the positions: an M-RoPE kind's rope positions (its streams
    the positions plus a random offset each), then learned sinks (random, f32 [Hq])."""
    extra = ()
    if kind.rope_streams and qp is not None:
        shift = rng.integers(0, 64, kind.rope_streams)[None, :, None]
        extra += (qp[:, None] + shift, kp[:, None] + shift)
    if kind.sinks:
        extra += (rng.standard_normal(model.num_attention_heads).astype(np.float32),)
    return extra


def cmd_bench(args) -> int:
    model, module, kv, _ = _compiled(args)
    rng = np.random.default_rng(args.seed)
    for kind in model.kinds:
        call, _, width = _case(model, kind, args, kv, rng)
        out = [np.empty(call[0].shape[:3] + (width,), call[0].dtype)]
        module.call(kind.function, *call, out=out)  # warm-up
        times = []
        for r in range(args.repeat):
            _progress(r, args.repeat, kind.function)
            start = time.perf_counter()
            module.call(kind.function, *call, out=out)
            times.append(time.perf_counter() - start)
        _progress(args.repeat, args.repeat, kind.function)
        print(f"{kind.function}: {1e3 * float(np.median(times)):.3f} ms median of {args.repeat} "
              f"warm calls, after one warm-up (B={args.batch} Sq={args.seq_len} Skv={kv} "
              f"{args.dtype})")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pe", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name, function, help, lengths_required=False):
        p = sub.add_parser(name, help=help)
        p.add_argument("config", help="config.json, its folder")
        p.add_argument("--seq-len", type=int, required=lengths_required,
                       default=None, help="queries per call (emit/compile: default any)")
        p.add_argument("--kv-len", type=int, default=None, help="keys per call (default: seq-len)")
        p.add_argument("--batch", type=int, default=1)
        p.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32")
        latent = p.add_mutually_exclusive_group()
        latent.add_argument("--shared-key", action="store_true",
                            help="latent attention: the rotated key block, shared by all "
                                 "heads, as its own argument")
        latent.add_argument("--absorbed", action="store_true",
                            help="latent attention in its absorbed form: q and the "
                                 "compressed cache")
        p.set_defaults(function=function)
        return p

    command("emit", cmd_emit, "print the layers' pe IR")
    p = command("compile", cmd_compile, "write a library (cpu) or PTX/cubin (gpu)")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--target", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--emit", default=None, help="shared, obj, asm (cpu); ptx, cubin, fatbin (gpu)")
    for name, function, help in (("run", cmd_run, "check against the float64 reference"),
                                 ("bench", cmd_bench, "time each kind of layer")):
        p = command(name, function, help, lengths_required=True)
        p.add_argument("--offset", type=int, default=0, help="position of the first key")
        p.add_argument("--seed", type=int, default=0)
        if name == "bench":
            p.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    try:
        return args.function(args)
    except (pe_config.ConfigError, runner.KernelError, runner.LoadError, OSError,
            ValueError) as error:
        print(f"python -m pe {args.command}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
