#!/usr/bin/python3
"""Eager-op cost from Python: dvejit.ops next to the same op in PyTorch on the CPU.

    PYTHONPATH=python /usr/bin/python3 bench/python_eager_bench.py [--tier auto|interp|jit]

Two sizes per op: 1 channel x 8 elements (the per-call overhead: argument handling, the cached
program's lookup, copies through the SBUF views, validation and dispatch) and 128 x 4096
(throughput, in million elements per second of the op's main input). Times are the median of
several repeats of a timed loop; PyTorch uses one thread, like the emulator.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

import dvejit
from dvejit import ops


def per_call(fn, min_time=0.2, repeats=5):
    """Median seconds per call."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time / repeats:
            break
        n *= 2
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return statistics.median(samples)


def cases(c, e, rng):
    x = (rng.normal(size=(c, e)) + 1).astype(np.float32)
    y = rng.normal(size=(c, e)).astype(np.float32)
    a = rng.uniform(0.5, 2, size=c).astype(np.float32)
    b = rng.normal(size=c).astype(np.float32)
    mean, var = ops.batch_norm_stats(x)
    vf = (1 / np.sqrt(var + np.float32(1e-5))).astype(np.float32)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    ta, tb = torch.from_numpy(a)[:, None], torch.from_numpy(b)[:, None]
    tx3, ty3 = tx[None], ty[None]                                    # (1, C, E) for batch norm
    tw, tbias = torch.from_numpy(a), torch.from_numpy(b)
    _, smean, sinv = torch.native_batch_norm(tx3, tw, tbias, None, None, True, 0.1, 1e-5)
    return [
        ("tensor_scalar x*a+b",
         lambda: ops.tensor_scalar(x, "mult", a, op1="add", operand1=b),
         lambda: tx * ta + tb),
        ("tensor_tensor add",
         lambda: ops.tensor_tensor(x, y, "add"),
         lambda: torch.add(tx, ty)),
        ("reciprocal",
         lambda: ops.reciprocal(x),
         lambda: torch.reciprocal(tx)),
        ("bn stats (mean, var)",
         lambda: ops.batch_norm_stats(x),
         lambda: torch.var_mean(tx, dim=1, unbiased=False)),
        ("bn forward (train)",
         lambda: ops.batch_norm_forward(x, a, b),
         lambda: torch.native_batch_norm(tx3, tw, tbias, None, None, True, 0.1, 1e-5)),
        ("bn backward",
         lambda: ops.batch_norm_backward(x, y, mean, vf, a),
         lambda: torch.ops.aten.native_batch_norm_backward(ty3, tx3, tw, None, None, smean, sinv,
                                                           True, 1e-5, [True, True, True])),
        ("max8",
         lambda: ops.max8(x),
         lambda: torch.topk(tx, 8, dim=1)),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tier", default="auto", choices=list(dvejit.tiers))
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per measurement")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ops.set_tier(args.tier)
    rng = np.random.default_rng(0)
    small = cases(1, 8, rng)
    large = cases(128, 4096, rng)
    melem = 128 * 4096 / 1e6

    # The floor under every op: running an already-built one-instruction program.
    m = ops.machine()
    prog = dvejit.Program("TensorScalarArith src=sbuf[0]+0x0[8:1] dst=sbuf[0]+0x40[8:1] "
                          "in_dtype=fp32 out_dtype=fp32 n=1 op0=add imm0=1 op1=bypass")
    floor = per_call(lambda: m.execute(prog, args.tier), args.min_time)

    print(f"dvejit eager ops vs PyTorch {torch.__version__} (CPU, 1 thread); dvejit tier: {args.tier}")
    print(f"Machine.execute of a cached 1-instruction program (1x8): {floor * 1e6:.1f} us\n")
    head = (f"{'op':<22} {'dvejit 1x8':>11} {'torch 1x8':>10} {'ratio':>6} | "
            f"{'dvejit 128x4096':>15} {'Melem/s':>8} {'torch 128x4096':>14} {'Melem/s':>8} {'ratio':>6}")
    print(head)
    print("-" * len(head))
    for (name, d_small, t_small), (_, d_large, t_large) in zip(small, large):
        ds, ts = per_call(d_small, args.min_time), per_call(t_small, args.min_time)
        dl, tl = per_call(d_large, args.min_time), per_call(t_large, args.min_time)
        print(f"{name:<22} {ds * 1e6:>8.1f} us {ts * 1e6:>7.1f} us {ds / ts:>6.1f} | "
              f"{dl * 1e3:>12.2f} ms {melem / dl:>8.0f} {tl * 1e3:>11.2f} ms {melem / tl:>8.0f} "
              f"{dl / tl:>6.1f}")


if __name__ == "__main__":
    main()
