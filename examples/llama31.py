"""A LLaMA-3.1-8B attention layer compiled for the CPU and checked against the
float64 reference: llama3-scaled RoPE on Q and K, GQA with 32 query heads and
8 key/value heads, causal, at positions continuing a long context.

    .venv/bin/python examples/llama31.py [--seq 256]
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from pe import reference, runner  # noqa: E402

ROPE = ("#pe.rope<theta = 500000.0, rotary_dim = 128, scaling = #pe.llama3<factor = 8.0, "
        "low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 8192>>")

IR = f"""
func.func @layer(%q: tensor<1x32x?x128xf32>, %k: tensor<1x8x?x128xf32>, %v: tensor<1x8x?x128xf32>,
                 %pos: tensor<?xi32>) -> tensor<1x32x?x128xf32> {{
  %q_rot = pe.rope {ROPE} %q, %pos : tensor<1x32x?x128xf32>, tensor<?xi32>
  %k_rot = pe.rope {ROPE} %k, %pos : tensor<1x8x?x128xf32>, tensor<?xi32>
  %out = pe.attention %q_rot, %k_rot, %v q_positions(%pos : tensor<?xi32>)
           k_positions(%pos : tensor<?xi32>) causal
           : tensor<1x32x?x128xf32>, tensor<1x8x?x128xf32>, tensor<1x8x?x128xf32> -> tensor<1x32x?x128xf32>
  return %out : tensor<1x32x?x128xf32>
}}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=256, help="sequence length")
    parser.add_argument("--offset", type=int, default=100_000, help="position of the first token")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs (the median is shown)")
    args = parser.parse_args()

    start = time.perf_counter()
    module = runner.compile(IR)
    compile_s = time.perf_counter() - start

    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 32, args.seq, 128)).astype(np.float32)
    k = rng.standard_normal((1, 8, args.seq, 128)).astype(np.float32)
    v = rng.standard_normal((1, 8, args.seq, 128)).astype(np.float32)
    pos = (args.offset + np.arange(args.seq)).astype(np.int32)

    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        (out,) = module.call("layer", q, k, v, pos)
        times.append(time.perf_counter() - start)

    rope = {"theta": 500000.0, "rotary_dim": 128,
            "scaling": {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}
    want = reference.attention(q, k, v, q_positions=pos, k_positions=pos, causal=True, rope=rope)
    error = float(np.abs(out - want).max())
    print(f"LLaMA-3.1 layer (llama3 RoPE, GQA 32/8, causal), S = {args.seq}, "
          f"positions {args.offset}..{args.offset + args.seq - 1}, f32 on the CPU")
    print(f"  compile: {compile_s:.2f} s")
    print(f"  run:     {1e3 * float(np.median(times)):.1f} ms (median of {args.repeat})")
    print(f"  max |compiled - float64 reference| = {error:.3g}")
    ok = error <= 1e-4
    print("  OK" if ok else "  FAILED: error above 1e-4")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
